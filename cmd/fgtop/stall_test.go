package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestStalledRecorderIsAGap: a recorder stopped for a minute (SIGSTOP,
// then SIGCONT) wrote nothing meanwhile, not even its heartbeat. That
// minute is a gap: snapshot --at inside it gives the node as last
// recorded, says on stderr what is missing and exits 1; history across it
// lists it missing, ends the kernel that left in it with "?", and exits 1.
// Before, both answered for the minute as if watched, exit 0.
func TestStalledRecorderIsAGap(t *testing.T) {
	hist := t.TempDir()
	begin := time.Now().Add(-time.Hour).Truncate(time.Second)
	now := begin
	rec, err := history.Open(history.Options{Dir: hist, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	kernel := func(id model.KernelID) *model.Kernel {
		return &model.Kernel{ID: id, Agent: "a", State: model.KernelOK,
			Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}
	}
	seq := uint64(0)
	observe := func(ks ...*model.Kernel) {
		seq++
		s := &model.Snapshot{Seq: seq, Time: now, Node: "gpu-node01"}
		s.SetKernels(ks)
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	stays, leaves := kernel("k1"), kernel("k2")
	for range 3 {
		now = now.Add(time.Second)
		observe(stays, leaves)
	}
	stalled := now
	now = now.Add(time.Minute) // stopped: nothing written
	observe(stays)
	now = now.Add(time.Second)
	observe(stays)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	inside := stalled.Add(30 * time.Second).Format(time.RFC3339)
	code, out := runCLI(t, "snapshot", "--at", inside, "--history", hist, "--compact")
	if code != exitProblem || !strings.Contains(out, "heartbeat") || !strings.Contains(out, "k2") {
		t.Errorf("snapshot --at inside the stall: exit %d, want %d, the node as last recorded (k2) and what is missing:\n%s", code, exitProblem, out)
	}
	code, out = runCLI(t, "history", "--history", hist, "--device", "cuda:0",
		"--since", begin.Add(time.Second).Format(time.RFC3339), "--until", now.Format(time.RFC3339))
	if code != exitProblem || !strings.Contains(out, "heartbeat") || !strings.Contains(out, "?") {
		t.Errorf("history across the stall: exit %d, want %d, the stall missing and k2 ending in it (?):\n%s", code, exitProblem, out)
	}
}

package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestStalledRecorderIsAGap: a recorder whose process did not run for a
// while (stopped with SIGSTOP, then continued; here its loop held inside
// a read of its clock) wrote nothing meanwhile, not even its heartbeat.
// That stretch is a gap: snapshot --at inside it gives the node as last
// recorded, says on stderr what is missing and exits 1; history across
// it lists it missing, ends the kernel that left in it with "?", and
// exits 1. Before, both answered for it as if watched, exit 0.
func TestStalledRecorderIsAGap(t *testing.T) {
	hist := t.TempDir()
	const stall = time.Second
	var hold atomic.Bool
	clock := func() time.Time {
		if hold.CompareAndSwap(true, false) {
			time.Sleep(stall)
		}
		return time.Now()
	}
	rec, err := history.Open(history.Options{Dir: hist, Clock: clock, BeatEvery: 100 * time.Millisecond, FlushEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	snaps := make(chan *model.Snapshot)
	done := make(chan error, 1)
	go func() { done <- rec.Run(context.Background(), snaps) }()
	kernel := func(id model.KernelID) *model.Kernel {
		return &model.Kernel{ID: id, Agent: "a", State: model.KernelOK,
			Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}
	}
	seq := uint64(0)
	send := func(ks ...*model.Kernel) time.Time {
		seq++
		s := &model.Snapshot{Seq: seq, Time: time.Now(), Node: "gpu-node01"}
		s.SetKernels(ks)
		snaps <- s
		time.Sleep(30 * time.Millisecond)
		return s.Time
	}
	stays, leaves := kernel("k1"), kernel("k2")
	begin := send(stays, leaves)
	send(stays, leaves)
	before := send(stays, leaves)
	hold.Store(true) // the loop's next read of its clock waits
	time.Sleep(stall + 200*time.Millisecond)
	send(stays)
	end := send(stays)
	close(snaps)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	inside := before.Add(stall / 2).Format(time.RFC3339Nano)
	code, out := runCLI(t, "snapshot", "--at", inside, "--history", hist, "--compact")
	if code != exitProblem || !strings.Contains(out, "recorder was not running") || !strings.Contains(out, `"k2"`) {
		t.Errorf("snapshot --at inside the stall: exit %d, want %d, the node as last recorded (k2) and what is missing:\n%s", code, exitProblem, out)
	}
	code, out = runCLI(t, "history", "--history", hist, "--device", "cuda:0",
		"--since", begin.Format(time.RFC3339Nano), "--until", end.Format(time.RFC3339Nano))
	if code != exitProblem || !strings.Contains(out, "recorder was not running") || !strings.Contains(out, "?") {
		t.Errorf("history across the stall: exit %d, want %d, the stall missing and k2 ending in it (?):\n%s", code, exitProblem, out)
	}
}

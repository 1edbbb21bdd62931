package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// otherNodesRecord is a record of a few minutes of node, as its own
// recorder wrote it, and the listing of its files.
func otherNodesRecord(t *testing.T, node string) (dir, files string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "history")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	now := t0
	rec, err := history.Open(history.Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		now = t0.Add(time.Duration(i) * time.Minute)
		rec.Observe(&model.Snapshot{Seq: uint64(i + 1), Time: now, Node: node})
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, listing(t, dir)
}

// runRecord runs `fgtop record` into dir on the demo node's files, with
// extra flags, for two seconds (a recorder that took the directory
// records until stopped: it is then interrupted), and returns its stderr
// and exit status.
func runRecord(t *testing.T, node *demo.Node, dir string, extra ...string) (string, int) {
	t.Helper()
	args := append([]string{"record", "--dir", dir, "--config", filepath.Join(node.Dir, "agent.toml"),
		"--devices", filepath.Join(node.Dir, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(node.Dir, "mock-accelerator.etcd.json"),
		"--host-cpus", "0-31", "--host-mem", "256g"}, extra...)
	rec := fgtopChild(args...)
	var errb bytes.Buffer
	rec.Stderr = &errb
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Second, func() { rec.Process.Signal(os.Interrupt) })
	rec.Wait()
	timer.Stop()
	return errb.String(), rec.ProcessState.ExitCode()
}

func listing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && e.Name() != "LOCK" {
			b.WriteString(e.Name() + " " + fi.ModTime().String() + "\n")
		}
	}
	return b.String()
}

// TestRecordRefusesAnotherNodesRecord: `fgtop record` into a copy of
// another node's record exits 2 naming that node, and writes nothing
// into it; the console's, serve's and exporter's recording
// (startRecording) says it does not record there and leaves it as it
// was. Both appended this node's kernels to the other node's record.
func TestRecordRefusesAnotherNodesRecord(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 0.0001})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()

	dir, before := otherNodesRecord(t, "gpu-node-17")
	stderr, code := runRecord(t, node, dir)
	if code != 2 || !strings.Contains(stderr, `record of node "gpu-node-17"`) || !strings.Contains(stderr, "--history DIR") {
		t.Errorf("record into another node's record: exit %d, want 2 naming it:\n%s", code, stderr)
	}
	if after := listing(t, dir); after != before {
		t.Errorf("record wrote into it:\n%s\nnow:\n%s", before, after)
	}

	// Its own record under serve's --node: record --node takes it.
	if stderr, code := runRecord(t, node, dir, "--node", "gpu-node-17"); code != 0 {
		t.Errorf("record --node gpu-node-17: exit %d\n%s", code, stderr)
	}
	if rd, err := history.OpenReader(dir); err != nil {
		t.Error(err)
	} else if _, to, err := rd.Span(); err != nil {
		t.Error(err)
	} else if res, err := rd.At(to); err != nil || res.Snap.Node != "gpu-node-17" || !to.After(time.Now().Add(-time.Minute)) {
		t.Errorf("record --node gpu-node-17 left the record at %s naming %v (%v)", to, res, err)
	}
	before = listing(t, dir)

	// The demo console, serve --demo or exporter --demo given the real
	// node's record with --history.
	eng := engine.New(node.EngineOptions())
	go eng.Run(ctx)
	var note bytes.Buffer
	stop := startRecording(ctx, eng, dir, demo.NodeName, true, &note)
	time.Sleep(1500 * time.Millisecond)
	stop()
	if !strings.Contains(note.String(), `fgtop: not recording: `+dir+` holds the record of node "gpu-node-17"`) {
		t.Errorf("the demo's recording said %q", note.String())
	}
	if after := listing(t, dir); after != before {
		t.Errorf("the demo recorded into it:\n%s\nnow:\n%s", before, after)
	}

	// serve --node gpu3 recorded last, into the directory fgtop record
	// writes (no recorder ran meanwhile): its kernels run here, so
	// record, which knows only the host name, takes it and says why.
	served := filepath.Join(t.TempDir(), "history")
	note.Reset()
	gopts := node.EngineOptions()
	gopts.Node = "gpu3"
	geng := engine.New(gopts)
	go geng.Run(ctx)
	stop = startRecording(ctx, geng, served, "gpu3", false, &note)
	time.Sleep(1500 * time.Millisecond)
	stop()
	if note.Len() > 0 {
		t.Fatalf("serve --node gpu3's recording said %q", note.String())
	}
	if stderr, code := runRecord(t, node, served); code != 0 || !strings.Contains(stderr, `was last recorded as node "gpu3"; its kernel`) {
		t.Errorf("record after serve --node gpu3: exit %d\n%s", code, stderr)
	}

	// Its own record is recorded into.
	own, before := otherNodesRecord(t, demo.NodeName)
	note.Reset()
	stop = startRecording(ctx, eng, own, demo.NodeName, true, &note)
	time.Sleep(1500 * time.Millisecond)
	stop()
	if note.Len() > 0 || listing(t, own) == before {
		t.Errorf("the demo's own record: said %q, recorded: %v", note.String(), listing(t, own) != before)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/replay"
)

// recordDemo runs the demo for d with a recorder beside it, as the demo
// command does, and returns the history directory.
func recordDemo(t *testing.T, speed float64, d time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 5, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	eng := engine.New(node.EngineOptions())
	go eng.Run(ctx)
	dir := filepath.Join(t.TempDir(), "history")
	var note bytes.Buffer
	stop := startRecording(ctx, eng, dir, &note)
	time.Sleep(d)
	time.Sleep(1500 * time.Millisecond) // the last batch
	stop()
	if note.Len() > 0 {
		t.Fatalf("recording said: %s", note.String())
	}
	return dir
}

// TestReplayDemoFidelity: the demo's simulated agents place their kernels
// with the allocators simulate runs; replayed under the partition that was
// in force, its own record refuses nothing that ran, and every session
// lands where it really did.
func TestReplayDemoFidelity(t *testing.T) {
	dir := recordDemo(t, 20, 8*time.Second)
	var out bytes.Buffer
	rf := replayFlags{span: "1h", dir: dir}
	err := runPlanReplay(context.Background(), &out, &sourceFlags{}, &changeFlags{}, &rf, true)
	var doc replay.Doc
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("%v\n%s", jerr, out.String())
	}
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if doc.Schema != "fgtop.replay/v1" || doc.Sessions < 5 || doc.Proposal {
		t.Fatalf("doc %+v", doc)
	}
	if doc.AsItWas.Refused != 0 || len(doc.AsItWas.Disagreements) != 0 {
		t.Fatalf("as it was: %d refused, disagreements %+v", doc.AsItWas.Refused, doc.AsItWas.Disagreements)
	}
	if doc.AsItWas.Compared < 3 {
		t.Fatalf("only %d placements compared of %d sessions", doc.AsItWas.Compared, doc.Sessions)
	}
	t.Logf("%d sessions, %d running at the start, %d placements compared", doc.Sessions, doc.Before, doc.AsItWas.Compared)
}

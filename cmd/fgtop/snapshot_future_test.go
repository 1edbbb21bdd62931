package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestSnapshotAtFutureWhileRecording: snapshot --at a moment to come,
// while a recorder holds the directory, says the moment is in the future
// (exit 1); it blamed the recorder ("a full disk?").
func TestSnapshotAtFutureWhileRecording(t *testing.T) {
	hist := t.TempDir()
	rec, err := history.Open(history.Options{Dir: hist})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	rec.Observe(&model.Snapshot{Seq: 1, Time: time.Now().Add(-time.Minute), Node: "gpu-node01"})
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(3 * time.Hour).Format(time.RFC3339)
	code, out := runCLI(t, "snapshot", "--at", ahead, "--history", hist)
	wantCode(t, code, exitProblem, out, "is in the future")
	if strings.Contains(out, "disk") {
		t.Errorf("a moment to come blamed the recorder:\n%s", out)
	}
}

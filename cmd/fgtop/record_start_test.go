package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/history"
)

// TestRecordStartsWithTheKernelsAlreadyThere: a recording started on a
// node whose kernels run already writes them into its first checkpoint,
// so `history` marks them "<" (held since before the record) and a replay
// places them as running at the start. Before, the recorder took the
// engine's first snapshots, published while the scratch roots were still
// being read: every running kernel seemed to begin a moment after the
// record did (seen with `fgtop record` on a frozen demo tree).
func TestRecordStartsWithTheKernelsAlreadyThere(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A demo node slowed down so far that its seeded kernels stay as
	// they are while it is recorded.
	node, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 0.0001})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	// fgtop record, as an operator starts it on the node (a child
	// process); the race it lost does not show every time, so it records
	// several times.
	for i := 0; i < 4; i++ {
		dir := filepath.Join(t.TempDir(), "history")
		if stderr, code := runRecord(t, node, dir); code != 0 {
			t.Fatalf("record: exit %d\n%s", code, stderr)
		}
		checkHeldSinceStart(t, dir)
	}
}

// checkHeldSinceStart fails t for every interval of the record in dir
// that does not say it was held already when the record began.
func checkHeldSinceStart(t *testing.T, dir string) {
	t.Helper()
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) == 0 {
		t.Fatal("the record holds no interval: the demo's seeded kernels hold nothing")
	}
	for _, iv := range res.Intervals {
		if iv.Device.Name != "cuda" {
			continue
		}
		if !iv.Since {
			t.Errorf("kernel %s on %s: from %s (the record began %s) without \"<\": it ran before the record began",
				iv.Kernel, iv.Device, iv.From.Format(time.RFC3339Nano), res.From.Format(time.RFC3339Nano))
		}
	}
}

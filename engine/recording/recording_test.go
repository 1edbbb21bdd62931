package recording

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/history"
)

func TestRefusal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("/h holds the record of node %q: %w", "gpu1", history.ErrOtherNode), `not recording: /h holds the record of node "gpu1"`},
		{fmt.Errorf("/h: %w", history.ErrLocked), "/h: " + history.ErrLocked.Error() + "; not recording, the other one does"},
		{errors.New("/h: permission denied"), "history off: /h: permission denied"},
	} {
		if got := refusal(c.err); !strings.HasPrefix(got, c.want) {
			t.Errorf("refusal(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// A demo engine recorded on the side: "off" writes nothing, the first
// lineOn says each line on w.
func lineOn(w *bytes.Buffer) func(string) {
	return func(line string) { w.WriteString(line + "\n") }
}

// Start writes segments, a second one on the same directory says the
// first one records and writes nothing of its own.
func TestStartAndRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 3, Speed: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	eng := engine.New(node.EngineOptions())
	go func() { _ = eng.Run(ctx) }()

	var note bytes.Buffer
	Start(ctx, eng, "off", nil, false, lineOn(&note))()
	dir := filepath.Join(t.TempDir(), "history")
	stop := Start(ctx, eng, dir, []string{demo.NodeName}, false, lineOn(&note))
	var second bytes.Buffer
	Start(ctx, eng, dir, []string{demo.NodeName}, false, lineOn(&second))()
	time.Sleep(1500 * time.Millisecond)
	stop()
	if note.Len() > 0 {
		t.Errorf("the first recorder said %q", note.String())
	}
	if !strings.Contains(second.String(), "not recording, the other one does") {
		t.Errorf("the second recorder said %q", second.String())
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(segs) == 0 {
		t.Error("Start recorded no segment")
	}
	if _, err := os.Stat("off"); err == nil {
		t.Error(`Start "off" made ./off`)
	}

	// Record: the whole of fgtop record, ended by ctx; a directory
	// another process writes is refused.
	own := filepath.Join(t.TempDir(), "run")
	o := history.Options{Dir: own, Names: []string{demo.NodeName}}
	rctx, rcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer rcancel()
	started := false
	if err := Record(rctx, node.EngineOptions(), o, func() { started = true }); err != nil || !started {
		t.Errorf("Record: %v, started %v", err, started)
	}
	if segs, _ := filepath.Glob(filepath.Join(own, "seg-*")); len(segs) == 0 {
		t.Error("Record recorded no segment")
	}
	held, err := history.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := Record(ctx, node.EngineOptions(), o, func() { t.Error("started on a directory another recorder writes") }); !errors.Is(err, history.ErrLocked) {
		t.Errorf("Record on a held directory: %v, want ErrLocked", err)
	}
}

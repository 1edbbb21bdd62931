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
	"github.com/fgtop/fgtop/engine/scratch"
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

// TestKernelsVouchOnlyUnderTheRoots: a record the demo wrote names its
// kernels' files, which are on this host while the demo runs. A real
// node recording into it (a copy of the demo's record given to `fgtop
// record` beside the running demo) is refused: those files lie outside
// its scratch roots. A node following the roots the files lie under (a
// renamed host, serve --node) still takes it, and says so.
func TestKernelsVouchOnlyUnderTheRoots(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 0.0001})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	dir := filepath.Join(t.TempDir(), "history")
	dctx, dcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer dcancel()
	if err := Record(dctx, node.EngineOptions(), history.Options{Dir: dir, Names: []string{demo.NodeName}}, func() {}); err != nil {
		t.Fatalf("the demo's record: %v", err)
	}

	// This node's own roots, with no kernel of the demo's in them.
	vm := node.EngineOptions()
	vm.Node = "vm"
	vm.Roots = []scratch.Root{{Path: filepath.Join(t.TempDir(), "scratches"), Agent: vm.Roots[0].Agent}}
	if err := os.MkdirAll(vm.Roots[0].Path, 0o755); err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	logf := func(format string, a ...any) { said.WriteString(fmt.Sprintf(format, a...) + "\n") }
	o := history.Options{Dir: dir, Names: []string{"vm"}, KernelsVouch: true, Logf: logf}
	// Bounded: a recorder that took the record records until stopped.
	vctx, vcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer vcancel()
	if err := Record(vctx, vm, o, func() { t.Error("recorded into the demo's record") }); !errors.Is(err, history.ErrOtherNode) {
		t.Errorf("Record beside the demo into its record: %v (said %q), want ErrOtherNode", err, said.String())
	}
	var note bytes.Buffer
	Start(ctx, engine.New(vm), dir, []string{"vm"}, true, lineOn(&note))()
	if !strings.Contains(note.String(), `not recording: `+dir+` holds the record of node "fgtop-demo"`) {
		t.Errorf("Start beside the demo into its record said %q", note.String())
	}

	// The roots the demo's kernels lie under: this node's record.
	renamed := node.EngineOptions()
	renamed.Node = "vm"
	rctx, rcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer rcancel()
	said.Reset()
	if err := Record(rctx, renamed, o, func() {}); err != nil || !strings.Contains(said.String(), `was last recorded as node "fgtop-demo"; its kernel`) {
		t.Errorf("Record under the demo's roots: %v, said %q", err, said.String())
	}
}

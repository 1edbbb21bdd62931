package scratch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withSide folds the companion into the test value: "text|side" or
// "text|missing" / "text|error".
func withSide(v string, _ string, data []byte, err error) string {
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return v + "|missing"
	case err != nil:
		return v + "|error"
	}
	return v + "|" + string(data)
}

var side = Companion[string]{Name: "recovery.json", Fold: withSide}

func TestCompanionScan(t *testing.T) {
	root := t.TempDir()
	mkKernel(t, root, kid(1), "one\n")
	p2 := mkKernel(t, root, kid(2), "two\n")
	writeFile(t, filepath.Join(filepath.Dir(p2), "recovery.json"), "rec2")
	p3 := mkKernel(t, root, kid(3), "three\n")
	// A symlinked companion is refused like a symlinked resource.txt.
	symlink(t, "/etc/hostname", filepath.Join(filepath.Dir(p3), "recovery.json"))
	got := map[string]string{}
	ScanEachWith(context.Background(), []Root{{Path: root, Agent: "a"}}, parseText, side, 2, func(ev Event[string]) {
		if ev.Kind == KernelUpdated {
			got[string(ev.Kernel)] = ev.Value
		}
	})
	want := map[string]string{kid(1): "one\n|missing", kid(2): "two\n|rec2", kid(3): "three\n|error"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestCompanionWatched: a companion written after resource.txt (as the
// agent may) brings a new event, though resource.txt did not change.
func TestCompanionWatched(t *testing.T) {
	root := t.TempDir()
	p := mkKernel(t, root, kid(1), "one\n")
	r := startWatcher(t, []Root{{Path: root, Agent: "a"}}, Options{}, func(w *Watcher[string]) { w.SetCompanion(side) })
	r.waitFor("initial", func(evs []Event[string]) bool { return count(evs, 0, isUpdate(kid(1), "one\n|missing")) == 1 })
	r.waitArmed(root)
	writeFile(t, filepath.Join(filepath.Dir(p), "recovery.json"), "rec")
	r.waitFor("companion", func(evs []Event[string]) bool { return count(evs, 0, isUpdate(kid(1), "one\n|rec")) == 1 })
}

// TestFIFONotRegular: a FIFO in place of resource.txt is "not a regular
// file", read without blocking, not an empty (torn) file.
func TestFIFONotRegular(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, kid(1), "config", "resource.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	evs := Scan(context.Background(), []Root{{Path: root, Agent: "a"}}, parseText, 1)
	var got *Event[string]
	for i := range evs {
		if evs[i].Kind == KernelUpdated {
			got = &evs[i]
		}
	}
	if got == nil || got.Err == nil || !strings.Contains(got.Err.Error(), "not a regular file") {
		t.Fatalf("events %+v", evs)
	}
}

// TestRootFIFONoBlock: a scratch root path that names a FIFO (a mistyped
// --scratch-root) is a root that is not a directory, reported at once; the
// scan must not block in open(2) waiting for a writer.
func TestRootFIFONoBlock(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := syscall.Mkfifo(root, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan []Event[string], 1)
	go func() { done <- Scan(context.Background(), []Root{{Path: root, Agent: "a"}}, parseText, 1) }()
	var evs []Event[string]
	select {
	case evs = <-done:
	case <-time.After(5 * time.Second):
		// Unblock the leaked open so the test binary can exit.
		if f, err := os.OpenFile(root, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("Scan blocked opening a FIFO scratch root")
	}
	for _, ev := range evs {
		if ev.Kind == RootMissing {
			return
		}
	}
	t.Fatalf("no RootMissing event for a FIFO root: %+v", evs)
}

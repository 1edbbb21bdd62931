package scratch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// kid returns a deterministic canonical kernel id.
func kid(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

// parseText is the test parser: the file's text, or an error for files
// containing "BAD" (to see parse errors travel).
func parseText(_ string, data []byte) (string, error) {
	if strings.Contains(string(data), "BAD") {
		return string(data), errors.New("bad file")
	}
	return string(data), nil
}

// mkKernel makes <root>/<id>/config/resource.txt with the text.
func mkKernel(t testing.TB, root, id, text string) string {
	t.Helper()
	cfg := filepath.Join(root, id, "config")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(cfg, "resource.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, text string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// evString is a compact form of an event for failure messages and
// order checks.
func evString(e Event[string]) string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	if e.Kernel != "" {
		b.WriteString(" " + string(e.Kernel)[:8])
	}
	switch e.Kind {
	case KernelUpdated:
		fmt.Fprintf(&b, " %q", e.Value)
		if e.Err != nil {
			fmt.Fprintf(&b, " err=%v", e.Err)
		}
	case Resynced:
		ids := make([]string, len(e.Present))
		for i, k := range e.Present {
			ids[i] = string(k)[:8]
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(ids, ","))
	}
	if e.Issue != nil {
		fmt.Fprintf(&b, " {%s %s %s}", e.Issue.Code, e.Issue.Severity, e.Issue.File)
	}
	return b.String()
}

func evStrings(evs []Event[string]) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = evString(e)
	}
	return out
}

func present(ids ...string) []model.KernelID {
	out := make([]model.KernelID, len(ids))
	for i, id := range ids {
		out[i] = model.KernelID(id)
	}
	slices.Sort(out)
	return out
}

// run starts a watcher and collects its events until the test ends.
type run struct {
	t      *testing.T
	w      *Watcher[string]
	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	events  []Event[string]
	batches int
	changed chan struct{} // closed and replaced on every batch
}

// startWatcher starts a watcher on the roots. setup, if set, runs before Run
// (to install fault hooks).
func startWatcher(t *testing.T, roots []Root, opts Options, setup func(*Watcher[string])) *run {
	t.Helper()
	w, err := NewWatcher(roots, parseText, opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{t: t, w: w, cancel: cancel, done: make(chan error, 1), changed: make(chan struct{})}
	out := make(chan []Event[string])
	go func() { r.done <- w.Run(ctx, out) }()
	go func() {
		for {
			select {
			case b := <-out:
				r.mu.Lock()
				r.events = append(r.events, b...)
				r.batches++
				close(r.changed)
				r.changed = make(chan struct{})
				r.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// stop cancels the watcher and waits for Run to return.
func (r *run) stop() {
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("Run returned %v", err)
		}
		r.done <- nil // later stop calls return at once
	case <-time.After(5 * time.Second):
		r.t.Fatal("Run did not return after cancel")
	}
}

// snapshot returns the events so far.
func (r *run) snapshot() []Event[string] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFor waits until pred holds for the events collected so far (all of
// them, from the start) and returns the index just past the first prefix
// for which it held.
func (r *run) waitFor(what string, pred func([]Event[string]) bool) []Event[string] {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		evs := slices.Clone(r.events)
		ch := r.changed
		r.mu.Unlock()
		if pred(evs) {
			return evs
		}
		select {
		case <-ch:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; events:\n  %s", what, strings.Join(evStrings(evs), "\n  "))
		}
	}
}

// waitEvent waits for an event after index from matching match, and returns
// its index.
func (r *run) waitEvent(what string, from int, match func(Event[string]) bool) int {
	r.t.Helper()
	idx := -1
	r.waitFor(what, func(evs []Event[string]) bool {
		for i := from; i < len(evs); i++ {
			if match(evs[i]) {
				idx = i
				return true
			}
		}
		return false
	})
	return idx
}

// waitArmed waits for Run's start to finish (two Resynced per root that
// exists: the initial reads, then the check after the kernel watches are
// set) and returns the index of the last one.
func (r *run) waitArmed(roots ...string) int {
	r.t.Helper()
	last := -1
	r.waitFor("the watcher's start", func(evs []Event[string]) bool {
		for _, root := range roots {
			n := 0
			for i, e := range evs {
				if e.Kind == Resynced && e.Root == root {
					n++
					if n == 2 {
						last = max(last, i)
						break
					}
				}
			}
			if n < 2 {
				return false
			}
		}
		return true
	})
	return last
}

func isKind(k EventKind, id string) func(Event[string]) bool {
	return func(e Event[string]) bool { return e.Kind == k && (id == "" || string(e.Kernel) == id) }
}

func isUpdate(id, value string) func(Event[string]) bool {
	return func(e Event[string]) bool {
		return e.Kind == KernelUpdated && string(e.Kernel) == id && e.Value == value
	}
}

func isIssue(code, id string) func(Event[string]) bool {
	return func(e Event[string]) bool {
		return e.Issue != nil && e.Issue.Code == code && (id == "" || string(e.Kernel) == id)
	}
}

// count counts the events from index from that match.
func count(evs []Event[string], from int, match func(Event[string]) bool) int {
	n := 0
	for _, e := range evs[from:] {
		if match(e) {
			n++
		}
	}
	return n
}

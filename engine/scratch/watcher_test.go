package scratch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/fgtop/fgtop/model"
)

// fast is the options the tests use: short timers, so waits are short.
var fast = Options{Debounce: 10 * time.Millisecond, RootPoll: 20 * time.Millisecond, FallbackRescan: 50 * time.Millisecond}

func resynced(root string, ids ...string) func(Event[string]) bool {
	want := present(ids...)
	return func(e Event[string]) bool {
		return e.Kind == Resynced && e.Root == root && slices.Equal(e.Present, want)
	}
}

func TestNewWatcherErrors(t *testing.T) {
	tests := []struct {
		name  string
		roots []Root
		parse ParseFunc[string]
	}{
		{"no roots", nil, parseText},
		{"nil parse", []Root{{Path: "/x"}}, nil},
		{"empty path", []Root{{Path: ""}}, parseText},
		{"duplicate", []Root{{Path: "/x"}, {Path: "/x/"}}, parseText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewWatcher(tt.roots, tt.parse, Options{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestWatcherKernelLifecycle: initial scan, create, rewrite, delete.
func TestWatcherKernelLifecycle(t *testing.T) {
	root := t.TempDir()
	a, b := kid(1), kid(2)
	mkKernel(t, root, a, "a1")
	r := startWatcher(t, []Root{{Path: root, Agent: "ag"}}, fast, nil)
	armed := r.waitArmed(root)
	evs := r.snapshot()
	// The initial reads, then the check once the kernel watches are set,
	// which finds nothing new.
	if got, want := evStrings(evs[:armed+1]), []string{`kernel-updated 00000001 "a1"`, `resynced [00000001]`, `resynced [00000001]`}; !slices.Equal(got, want) {
		t.Fatalf("initial: %v, want %v", got, want)
	}

	pb := mkKernel(t, root, b, "b1")
	i := r.waitEvent("new kernel", armed, isUpdate(b, "b1"))
	writeFile(t, pb, "b2")
	i = r.waitEvent("rewrite", i+1, isUpdate(b, "b2"))
	if e := r.snapshot()[i]; e.ModTime.IsZero() || e.Size != 2 {
		t.Errorf("re-read after a change: modtime %v size %d", e.ModTime, e.Size)
	}
	if err := os.RemoveAll(filepath.Join(root, a)); err != nil {
		t.Fatal(err)
	}
	r.waitEvent("removal", i+1, isKind(KernelRemoved, a))
	// Truncate-and-write in place (what Python's open("w") does).
	f, err := os.OpenFile(pb, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("b3")
	f.Close()
	r.waitEvent("in-place write", i+1, isUpdate(b, "b3"))
	for _, e := range r.snapshot() {
		if e.Agent != "ag" || e.Root != root {
			t.Errorf("%s: agent %q root %q", evString(e), e.Agent, e.Root)
		}
	}
}

// TestWatcherBurstDebounce: a burst of writes gives one read, of the last
// content. The check that no other read follows uses a barrier: a kernel
// created after the burst, whose event can only come after every read the
// burst could have caused.
func TestWatcherBurstDebounce(t *testing.T) {
	root := t.TempDir()
	a := kid(1)
	p := mkKernel(t, root, a, "v0")
	opts := fast
	opts.Debounce = 150 * time.Millisecond
	r := startWatcher(t, []Root{{Path: root}}, opts, nil)
	start := r.waitArmed(root)

	const n = 40
	burstStart := time.Now()
	for i := 1; i <= n; i++ {
		writeFile(t, p, fmt.Sprintf("v%d", i))
	}
	if el := time.Since(burstStart); el > opts.Debounce/2 {
		t.Skipf("burst took %v, too slow for a %v debounce on this machine", el, opts.Debounce)
	}
	mkKernel(t, root, kid(2), "barrier")
	evs := r.waitFor("barrier", func(evs []Event[string]) bool {
		return count(evs, start, isUpdate(kid(2), "barrier")) == 1
	})
	updates := count(evs, start, isKind(KernelUpdated, a))
	last := count(evs, start, isUpdate(a, fmt.Sprintf("v%d", n)))
	if updates != 1 || last != 1 {
		t.Fatalf("burst of %d writes gave %d reads (%d of the last content); events:\n  %s",
			n, updates, last, strings.Join(evStrings(evs[start:]), "\n  "))
	}
}

// TestWatcherDebounceCap: a file written without pause is still read,
// at least every 5×Debounce.
func TestWatcherDebounceCap(t *testing.T) {
	root := t.TempDir()
	a := kid(1)
	p := mkKernel(t, root, a, "v0")
	opts := fast
	opts.Debounce = 30 * time.Millisecond
	r := startWatcher(t, []Root{{Path: root}}, opts, nil)
	start := r.waitArmed(root)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				os.WriteFile(p, []byte(fmt.Sprintf("w%d", i)), 0o644)
			}
		}
	}()
	r.waitFor("a read during continuous writes", func(evs []Event[string]) bool {
		return count(evs, start, isKind(KernelUpdated, a)) >= 1
	})
	close(stop)
	<-done
}

// TestWatcherAtomicRename: writers that write a temp file and rename it
// over resource.txt.
func TestWatcherAtomicRename(t *testing.T) {
	root := t.TempDir()
	a := kid(1)
	p := mkKernel(t, root, a, "v0")
	r := startWatcher(t, []Root{{Path: root}}, fast, nil)
	i := r.waitArmed(root)
	for n := 1; n <= 3; n++ {
		tmp := filepath.Join(filepath.Dir(p), ".resource.txt.tmp")
		writeFile(t, tmp, fmt.Sprintf("r%d", n))
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
		i = r.waitEvent("renamed-in content", i+1, isUpdate(a, fmt.Sprintf("r%d", n)))
	}
	// A file renamed away: the kernel is pending again.
	if err := os.Rename(p, p+".old"); err != nil {
		t.Fatal(err)
	}
	r.waitEvent("renamed away", i+1, isKind(KernelPending, a))
}

// TestWatcherDirBeforeConfig: the kernel directory appears first, then
// config/, then the file (the agent's order), with each step observed.
func TestWatcherDirBeforeConfig(t *testing.T) {
	root := t.TempDir()
	r := startWatcher(t, []Root{{Path: root}}, fast, nil)
	i := r.waitArmed(root)
	a := kid(1)
	mkdir(t, filepath.Join(root, a))
	i = r.waitEvent("pending kernel", i, isKind(KernelPending, a))
	mkdir(t, filepath.Join(root, a, "config"))
	i = r.waitEvent("pending kernel with config", i+1, isKind(KernelPending, a))
	writeFile(t, filepath.Join(root, a, "config", "resource.txt"), "late")
	r.waitEvent("file", i+1, isUpdate(a, "late"))

	// All at once (mkdir -p and write before any event is handled).
	b := kid(2)
	mkKernel(t, root, b, "at-once")
	r.waitEvent("kernel made at once", 0, isUpdate(b, "at-once"))

	// config/ removed and made again: the kernel directory is watched again.
	if err := os.RemoveAll(filepath.Join(root, a, "config")); err != nil {
		t.Fatal(err)
	}
	i = r.waitEvent("config removed", i+1, isKind(KernelPending, a))
	mkKernel(t, root, a, "again")
	r.waitEvent("config made again", i+1, isUpdate(a, "again"))
}

// TestWatcherRootRemovedAndRestored: a root that disappears and comes back
// with other kernels gets RootMissing, RootRestored, its kernels, and a
// Resynced listing exactly the new set.
func TestWatcherRootRemovedAndRestored(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "scratches")
	other := filepath.Join(base, "other")
	a, b, c := kid(1), kid(2), kid(3)
	mkKernel(t, root, a, "a")
	mkKernel(t, root, b, "b")
	mkKernel(t, other, kid(9), "o")
	r := startWatcher(t, []Root{{Path: root}, {Path: other}}, fast, nil)
	armed := r.waitArmed(root, other)
	r.waitEvent("initial scan", 0, resynced(root, a, b))
	r.waitEvent("initial scan of the other root", 0, resynced(other, kid(9)))

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	i := r.waitEvent("root missing", armed, isKind(RootMissing, ""))
	// By then each of its kernels was reported removed (RemoveAll is not
	// atomic, so some may go before the root does): while the root is gone
	// they hold nothing, as a re-scan would say.
	for _, id := range []string{a, b} {
		var last Event[string]
		for _, e := range r.snapshot()[armed : i+1] {
			if string(e.Kernel) == id {
				last = e
			}
		}
		if last.Kind != KernelRemoved {
			t.Errorf("kernel %s: last event before root-missing is %s, want kernel-removed", id[:8], evString(last))
		}
	}
	// The new root is built aside and renamed into place, so the poll sees
	// it whole (the test then knows exactly which Resynced to expect).
	staging := filepath.Join(base, "staging")
	mkKernel(t, staging, b, "b2")
	mkKernel(t, staging, c, "c")
	if err := os.Rename(staging, root); err != nil {
		t.Fatal(err)
	}
	j := r.waitEvent("root restored", i, isKind(RootRestored, ""))
	k := r.waitEvent("resynced", j, resynced(root, b, c))
	evs := r.snapshot()
	for _, want := range []func(Event[string]) bool{isUpdate(b, "b2"), isUpdate(c, "c")} {
		if count(evs[j:k], 0, want) != 1 {
			t.Errorf("restored root's kernels not all read: %v", evStrings(evs[j:k]))
		}
	}
	// The restored root is watched again.
	mkKernel(t, root, kid(4), "d")
	r.waitEvent("kernel in the restored root", k, isUpdate(kid(4), "d"))
	// The other root was not disturbed.
	writeFile(t, filepath.Join(other, kid(9), "config", "resource.txt"), "o2")
	r.waitEvent("other root", k, isUpdate(kid(9), "o2"))

	// Renamed away and back.
	if err := os.Rename(root, root+".moved"); err != nil {
		t.Fatal(err)
	}
	i = r.waitEvent("root renamed away", k, isKind(RootMissing, ""))
	if n := count(r.snapshot()[k:i], 0, isKind(KernelRemoved, "")); n != 3 {
		t.Errorf("root renamed away: %d kernels reported removed, want 3", n)
	}
	if err := os.Rename(root+".moved", root); err != nil {
		t.Fatal(err)
	}
	r.waitEvent("root renamed back", i, resynced(root, b, c, kid(4)))
}

// TestWatcherRootMissingAtStart: a root that does not exist yet is reported
// and picked up when it appears.
func TestWatcherRootMissingAtStart(t *testing.T) {
	root := filepath.Join(t.TempDir(), "later")
	r := startWatcher(t, []Root{{Path: root, Agent: "ag"}}, fast, nil)
	i := r.waitEvent("missing root", 0, func(e Event[string]) bool {
		return e.Kind == RootMissing && e.Issue != nil && e.Issue.Code == "scratch-root-missing" && e.Issue.Agent == "ag"
	})
	staging := root + ".new"
	mkKernel(t, staging, kid(1), "x")
	if err := os.Rename(staging, root); err != nil {
		t.Fatal(err)
	}
	r.waitEvent("restored", i, isKind(RootRestored, ""))
	r.waitEvent("resynced", i, resynced(root, kid(1)))
}

// TestWatcherOverflow: an inotify overflow gives a Problem and a
// reconciling rescan that reads only changed files.
func TestWatcherOverflow(t *testing.T) {
	root := t.TempDir()
	a, b, c := kid(1), kid(2), kid(3)
	mkKernel(t, root, a, "a")
	pb := mkKernel(t, root, b, "b")
	mkKernel(t, root, c, "c")
	opts := fast
	// Events are left waiting in the debounce, so only the rescan can
	// report the changes below.
	opts.Debounce = time.Hour
	r := startWatcher(t, []Root{{Path: root}}, opts, nil)
	start := r.waitArmed(root)
	writeFile(t, pb, "b2-longer")
	if err := os.RemoveAll(filepath.Join(root, c)); err != nil {
		t.Fatal(err)
	}
	r.w.injectWatchError(fsnotify.ErrEventOverflow)
	end := r.waitEvent("resynced", start+1, resynced(root, a, b))
	evs := r.snapshot()[start+1 : end+1]
	got := evStrings(evs)
	want := []string{
		`problem {watch warning ` + root + `}`,
		`kernel-updated 00000002 "b2-longer"`,
		`resynced [00000001,00000002]`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after overflow:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if !strings.Contains(evs[0].Issue.Message, "overflow") {
		t.Errorf("problem message %q", evs[0].Issue.Message)
	}
}

// TestWatcherOtherWatchError: other fsnotify errors are reported and the
// watcher goes on.
func TestWatcherOtherWatchError(t *testing.T) {
	root := t.TempDir()
	r := startWatcher(t, []Root{{Path: root}}, fast, nil)
	r.waitArmed(root)
	r.w.injectWatchError(syscall.EIO)
	i := r.waitEvent("problem", 0, isIssue("watch", ""))
	mkKernel(t, root, kid(1), "still working")
	r.waitEvent("still working", i, isUpdate(kid(1), "still working"))
}

// TestWatcherSymlinks: symlinks planted while the watcher runs are refused
// and reported, and no watch follows them out of the root.
func TestWatcherSymlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	secret := mkKernel(t, outside, kid(99), "SECRET")
	a := kid(1)
	pa := mkKernel(t, root, a, "a")
	r := startWatcher(t, []Root{{Path: root}}, fast, nil)
	start := r.waitArmed(root)

	// A kernel directory that is a symlink out of the root.
	symlink(t, filepath.Join(outside, kid(99)), filepath.Join(root, kid(2)))
	r.waitEvent("escaping kernel dir", start, func(e Event[string]) bool {
		return isIssue("symlink-escape", kid(2))(e) && e.Issue.Severity.String() == "error" && e.Path == filepath.Join(root, kid(2))
	})
	// resource.txt replaced by a symlink out of the root.
	if err := os.Remove(pa); err != nil {
		t.Fatal(err)
	}
	symlink(t, secret, pa)
	i := r.waitEvent("escaping resource.txt", start, func(e Event[string]) bool {
		return isIssue("symlink-escape", a)(e) && e.Path == pa
	})
	// Writes outside the root cause nothing: the barrier kernel's event
	// comes after anything they could have caused.
	writeFile(t, secret, "SECRET2")
	mkKernel(t, root, kid(3), "barrier")
	evs := r.waitFor("barrier", func(evs []Event[string]) bool { return count(evs, i, isUpdate(kid(3), "barrier")) == 1 })
	for _, e := range evs {
		if strings.Contains(e.Value, "SECRET") {
			t.Fatalf("read through a symlink: %s", evString(e))
		}
	}
	if n := count(evs, i+1, isKind(Problem, kid(2))); n != 0 {
		t.Errorf("a write outside the root reached the watcher: %v", evStrings(evs[i+1:]))
	}
	// Back to a real file: the kernel recovers.
	os.Remove(pa)
	writeFile(t, pa, "a2")
	r.waitEvent("recovered", i, isUpdate(a, "a2"))
}

// TestWatcherWatchLimit: ENOSPC from inotify (injected: the real limit is
// per user and shared with the rest of the machine) gives an IssueWatch
// naming fs.inotify.max_user_watches, and the root falls back to rescans
// that still find changes in the kernel that could not be watched.
func TestWatcherWatchLimit(t *testing.T) {
	root := t.TempDir()
	a, b := kid(1), kid(2)
	mkKernel(t, root, a, "a")
	pb := mkKernel(t, root, b, "b")
	unwatchable := filepath.Join(root, b)
	var limited atomic.Bool
	limited.Store(true)
	r := startWatcher(t, []Root{{Path: root}}, fast, func(w *Watcher[string]) {
		w.s.fault = func(op faultOp, p string) error {
			if op == faultWatch && strings.HasPrefix(p, unwatchable) && limited.Load() {
				return syscall.ENOSPC
			}
			return nil
		}
	})
	i := r.waitEvent("watch limit", 0, func(e Event[string]) bool {
		return isIssue("watch", "")(e) && strings.Contains(e.Issue.Message, "fs.inotify.max_user_watches")
	})
	r.waitArmed(root)
	writeFile(t, pb, "b2")
	r.waitEvent("change found by a fallback rescan", i, isUpdate(b, "b2"))
	evs := r.snapshot()
	if n := count(evs, 0, isIssue("watch", "")); n != 1 {
		t.Errorf("watch limit reported %d times, want once: %v", n, evStrings(evs))
	}
	// Room for watches again: the next fallback rescan sets them all and
	// replaces the warning with a notice; then changes are seen live.
	limited.Store(false)
	j := r.waitEvent("watches set again", i+1, func(e Event[string]) bool {
		return isIssue("watch", "")(e) && e.Issue.Severity == model.SevInfo && strings.Contains(e.Issue.Message, "set again")
	})
	writeFile(t, pb, "b3")
	r.waitEvent("change seen live", j, isUpdate(b, "b3"))
}

// TestWatcherNoInotify: the watcher works by rescans when no watch can be
// set at all.
func TestWatcherNoInotify(t *testing.T) {
	root := t.TempDir()
	r := startWatcher(t, []Root{{Path: root}}, fast, func(w *Watcher[string]) {
		w.s.fault = func(op faultOp, p string) error {
			if op == faultWatch {
				return syscall.ENOSPC
			}
			return nil
		}
	})
	i := r.waitArmed(root)
	mkKernel(t, root, kid(1), "found by rescan")
	r.waitEvent("rescan", i, isUpdate(kid(1), "found by rescan"))
}

// TestWatcherRescanInterval: the safety-net rescan runs and, with nothing
// changed, reports only Resynced.
func TestWatcherRescanInterval(t *testing.T) {
	root := t.TempDir()
	mkKernel(t, root, kid(1), "x")
	opts := fast
	opts.RescanInterval = 30 * time.Millisecond
	r := startWatcher(t, []Root{{Path: root}}, opts, nil)
	evs := r.waitFor("start and two rescans", func(evs []Event[string]) bool { return count(evs, 0, isKind(Resynced, "")) >= 4 })
	if n := count(evs, 0, isKind(KernelUpdated, "")); n != 1 {
		t.Errorf("unchanged kernel read %d times: %v", n, evStrings(evs))
	}
}

// TestWatcherCancelNoLeak: Run returns after cancel and leaves no
// goroutine behind (its own, fsnotify's, the pool's).
func TestWatcherCancelNoLeak(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		mkKernel(t, root, kid(i), "x")
	}
	before := runtime.NumGoroutine()
	for range 3 {
		w, err := NewWatcher([]Root{{Path: root}, {Path: filepath.Join(root, "missing")}}, parseText, fast)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan []Event[string])
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, out) }()
		<-out // the first batch: Run is in full swing
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
		if err := w.Run(context.Background(), out); err == nil {
			t.Fatal("second Run did not fail")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWatcherSlowConsumerCancel: Run also returns when cancelled while
// blocked sending to a consumer that stopped reading.
func TestWatcherSlowConsumerCancel(t *testing.T) {
	root := t.TempDir()
	mkKernel(t, root, kid(1), "x")
	w, err := NewWatcher([]Root{{Path: root}}, parseText, fast)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, make(chan []Event[string])) }()
	time.Sleep(20 * time.Millisecond) // let it block on the send; not needed for correctness
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

// TestWatcherRealOverflow overflows the real inotify queue: the consumer
// stops reading, so the watcher blocks on a send and stops draining
// inotify, and more events than fs.inotify.max_queued_events are made. A
// kernel made while the queue is full is only found by the rescan the
// overflow triggers.
func TestWatcherRealOverflow(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to read: %v", err)
	}
	var limit int
	if _, err := fmt.Sscan(string(b), &limit); err != nil || limit > 1<<17 {
		t.Skipf("queue limit %q: too large to overflow quickly", strings.TrimSpace(string(b)))
	}
	root := t.TempDir()
	a := kid(1)
	pa := mkKernel(t, root, a, "a")
	w, err := NewWatcher([]Root{{Path: root}}, parseText, fast)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan []Event[string])
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, out) }()
	defer func() {
		cancel()
		<-done
	}()
	next := func() []Event[string] {
		select {
		case b := <-out:
			return b
		case <-time.After(10 * time.Second):
			t.Fatal("no batch")
			return nil
		}
	}
	for n := 0; n < 2; {
		for _, e := range next() {
			if e.Kind == Resynced {
				n++
			}
		}
	}
	// A change whose batch nobody takes: the watcher blocks sending it.
	writeFile(t, pa, "a2")
	// Events on two files in turn: inotify only merges an event with an
	// identical one queued just before it.
	pair := [2]string{filepath.Join(root, a, "config", "x0"), filepath.Join(root, a, "config", "x1")}
	for _, p := range pair {
		writeFile(t, p, "")
	}
	// The watcher drains events until its debounce fires (~10ms) and it
	// blocks on the send: three queues' worth leaves ample margin.
	for i := range 3 * limit {
		if err := os.Chmod(pair[i%2], os.FileMode(0o600+i%2)); err != nil {
			t.Fatal(err)
		}
	}
	bk := kid(2)
	mkKernel(t, root, bk, "made during the overflow")

	var evs []Event[string]
	deadline := time.After(20 * time.Second)
	for count(evs, 0, resynced(root, a, bk)) == 0 {
		select {
		case batch := <-out:
			evs = append(evs, batch...)
		case <-deadline:
			t.Fatalf("no rescan after the overflow; events:\n  %s", strings.Join(evStrings(evs), "\n  "))
		}
	}
	if count(evs, 0, func(e Event[string]) bool {
		return isIssue("watch", "")(e) && strings.Contains(e.Issue.Message, "overflow")
	}) == 0 {
		t.Errorf("no overflow problem; events:\n  %s", strings.Join(evStrings(evs), "\n  "))
	}
	if count(evs, 0, isUpdate(bk, "made during the overflow")) != 1 {
		t.Errorf("kernel made during the overflow not read; events:\n  %s", strings.Join(evStrings(evs), "\n  "))
	}
}

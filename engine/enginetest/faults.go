package enginetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// Phase is one state a fault scenario reached: the snapshot the live
// engine published once the state held, and what the state is about.
type Phase struct {
	Name string
	Snap *model.Snapshot
	// Kernel, Path, Root and Device name what the fault touched, for the
	// console's tests to look for.
	Kernel model.KernelID
	Path   string
	Root   string
	Device model.DeviceKey
}

// Scenario is one fault injected into a live engine on real files. Run
// checks the engine's account at every phase (failing t) and returns the
// phases, so that the console's tests can render the same snapshots.
type Scenario struct {
	Name string
	// AsNobody: the scenario needs a user that permission bits stop; run
	// as root, testfix.ReexecAsNobody re-runs the test as user nobody.
	AsNobody bool
	Run      func(t *testing.T) []Phase
}

// Scenarios are the fault scenarios of issue 7 that need no NVML (see
// also NVMLScenarios).
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "root-removed-and-recreated", Run: RootRemoved},
		{Name: "kernel-dir-symlinked-outside", Run: SymlinkEscape},
		{Name: "resource-100MB", Run: HugeFile},
		{Name: "resource-nul-bytes", Run: NULBytes},
		{Name: "permission-denied", AsNobody: true, Run: PermissionDenied},
	}
}

// fastWatch makes the watcher quick enough for tests: 5 ms debounce, roots
// polled every 50 ms, a root whose watches could not all be set rescanned
// every 200 ms.
var fastWatch = scratch.Options{Debounce: 5 * time.Millisecond, RootPoll: 50 * time.Millisecond, FallbackRescan: 200 * time.Millisecond}

// waitTime bounds every wait: generous for a loaded 2-core machine with
// the race detector.
const waitTime = 20 * time.Second

func share(dev int, amt string) []Share {
	return []Share{{Dev: MockDevices[dev], Amount: model.MustDec(amt)}}
}

func newOpts(t *testing.T, roots ...scratch.Root) engine.Options {
	return engine.Options{Roots: roots, Inventory: MockSource(t), Node: "fault-node", Watch: fastWatch}
}

// converged waits until the live snapshot equals a full re-scan and cond
// holds.
func converged(t *testing.T, l *Live, what string, cond func(*model.Snapshot) error) *model.Snapshot {
	t.Helper()
	return l.Wait(t, what, waitTime, func(s *model.Snapshot) error {
		if cond != nil {
			if err := cond(s); err != nil {
				return err
			}
		}
		return l.Converged(s)
	})
}

func allocOf(s *model.Snapshot, dev model.DeviceID) string {
	if v, ok := s.AllocMap()[dev]; ok {
		return v.String()
	}
	return "none"
}

func wantAlloc(s *model.Snapshot, dev model.DeviceID, want string) error {
	if got := allocOf(s, dev); got != want {
		return fmt.Errorf("alloc map %s = %s, want %s", dev, got, want)
	}
	return nil
}

// RootRemoved removes one of two scratch roots while the engine runs, then
// builds it again aside and renames it into place. While it is gone its
// kernels must vanish from the account (a re-scan finds none) with an
// issue naming the root; the other root is untouched; once it is back, its
// kernels are counted again and the issue clears.
func RootRemoved(t *testing.T) []Phase {
	f := NewFiles(t)
	base := t.TempDir()
	root, other := filepath.Join(base, "scratches-a"), filepath.Join(base, "scratches-b")
	k1, k2, k3 := KernelID(1), KernelID(2), KernelID(3)
	MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.50")))
	MustWriteKernel(t, root, k2, f.Resource(root, k2, share(1, "0.25")))
	MustWriteKernel(t, other, k3, f.Resource(other, k3, share(2, "0.40")))
	l := Start(t, newOpts(t, scratch.Root{Path: root, Agent: "agent-a"}, scratch.Root{Path: other, Agent: "agent-b"}))
	before := converged(t, l, "initial scan", nil)

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	gone := converged(t, l, "root removed", func(s *model.Snapshot) error {
		if FindIssue(s, model.IssueRootMissing, func(i model.Issue) bool { return i.File == root && i.Severity == model.SevError }) == nil {
			return fmt.Errorf("no scratch-root-missing error naming %s: %v", root, s.Issues)
		}
		if s.Kernel(model.KernelID(k1)) != nil || s.Kernel(model.KernelID(k2)) != nil {
			return fmt.Errorf("kernels of the removed root still counted: %v", kernelIDs(s))
		}
		if s.Kernel(model.KernelID(k3)) == nil {
			return fmt.Errorf("the other root's kernel is gone")
		}
		return wantAlloc(s, MockDevices[0], "none")
	})

	staging := filepath.Join(base, "staging")
	k4 := KernelID(4)
	MustWriteKernel(t, staging, k1, f.Resource(root, k1, share(0, "0.50")))
	MustWriteKernel(t, staging, k4, f.Resource(root, k4, share(3, "0.75")))
	if err := os.Rename(staging, root); err != nil {
		t.Fatal(err)
	}
	back := converged(t, l, "root recreated", func(s *model.Snapshot) error {
		if FindIssue(s, model.IssueRootMissing, nil) != nil {
			return fmt.Errorf("root-missing issue still shown")
		}
		if s.Kernel(model.KernelID(k1)) == nil || s.Kernel(model.KernelID(k4)) == nil || s.Kernel(model.KernelID(k2)) != nil {
			return fmt.Errorf("kernels after the root came back: %v", kernelIDs(s))
		}
		return wantAlloc(s, MockDevices[3], "0.75")
	})
	return []Phase{
		{Name: "before", Snap: before, Root: root},
		{Name: "root-missing", Snap: gone, Root: root, Kernel: model.KernelID(k1)},
		{Name: "root-back", Snap: back, Root: root, Kernel: model.KernelID(k4)},
	}
}

// issueCleared waits briefly for the issue with code and file to go: a
// kernel's symlink or permission issue must clear once the kernel reads
// fine again. It returns the last snapshot.
func issueCleared(t *testing.T, l *Live, s *model.Snapshot, code, file string) *model.Snapshot {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		s = l.Eng.Latest()
		if FindIssue(s, code, func(i model.Issue) bool { return i.File == file }) == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Errorf("%s issue naming %s still shown after the fix", code, file)
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func kernelIDs(s *model.Snapshot) []string {
	var out []string
	for _, k := range s.Kernels() {
		out = append(out, string(k.ID)[:8]+"/"+string(k.State))
	}
	return out
}

// SymlinkEscape replaces a kernel directory with a symlink to a kernel
// directory outside the root. The link must never be followed (the
// outside file's 0.90 shares are never counted) and an error issue must
// name the link; the kernel drops out of the account, as in a re-scan.
func SymlinkEscape(t *testing.T) []Phase {
	f := NewFiles(t)
	base := t.TempDir()
	root, outside := filepath.Join(base, "scratches"), filepath.Join(base, "elsewhere")
	k1, k2, kx := KernelID(1), KernelID(2), KernelID(0xbad)
	MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.30")))
	MustWriteKernel(t, root, k2, f.Resource(root, k2, share(1, "0.20")))
	MustWriteKernel(t, outside, kx, f.Resource(outside, kx, share(0, "0.90")))
	l := Start(t, newOpts(t, scratch.Root{Path: root, Agent: "agent-a"}))
	before := converged(t, l, "initial scan", func(s *model.Snapshot) error { return wantAlloc(s, MockDevices[0], "0.30") })

	link := filepath.Join(root, k1)
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, kx), link); err != nil {
		t.Fatal(err)
	}
	// A write through the link's target must not reach the account either.
	MustWriteKernel(t, outside, kx, f.Resource(outside, kx, share(0, "0.95")))
	during := converged(t, l, "symlink refused", func(s *model.Snapshot) error {
		if FindIssue(s, model.IssueSymlinkEscape, func(i model.Issue) bool {
			return i.File == link && i.Severity == model.SevError && strings.Contains(i.Message, "outside")
		}) == nil {
			return fmt.Errorf("no symlink-escape error naming %s: %v", link, s.Issues)
		}
		if s.Kernel(model.KernelID(k1)) != nil {
			return fmt.Errorf("the symlinked kernel is still counted")
		}
		return wantAlloc(s, MockDevices[0], "none")
	})

	// A real directory again.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.30")))
	after := converged(t, l, "real directory again", func(s *model.Snapshot) error { return wantAlloc(s, MockDevices[0], "0.30") })
	after = issueCleared(t, l, after, model.IssueSymlinkEscape, link)

	// A new kernel directory that is a symlink (never a kernel), then
	// removed: its error goes with it (it stayed for good).
	link3 := filepath.Join(root, KernelID(3))
	if err := os.Symlink(filepath.Join(outside, kx), link3); err != nil {
		t.Fatal(err)
	}
	converged(t, l, "a new symlinked kernel directory", func(s *model.Snapshot) error {
		if FindIssue(s, model.IssueSymlinkEscape, func(i model.Issue) bool { return i.File == link3 }) == nil {
			return fmt.Errorf("no symlink-escape error naming %s: %v", link3, s.Issues)
		}
		return nil
	})
	if err := os.Remove(link3); err != nil {
		t.Fatal(err)
	}
	issueCleared(t, l, after, model.IssueSymlinkEscape, link3)
	return []Phase{
		{Name: "before", Snap: before},
		{Name: "symlinked", Snap: during, Path: link, Kernel: model.KernelID(k1)},
		{Name: "fixed", Snap: after, Kernel: model.KernelID(k1)},
	}
}

// HugeFileBytes is the size of HugeFile's runaway resource.txt.
const HugeFileBytes = 100 << 20

// HugeHeapBound is how much the heap may grow while the engine meets a
// 100 MB resource.txt. The reader stops at 16 MiB, growing its buffer by
// doubling: about 32 MiB allocated in all (36-40 MiB peak measured, 55
// MiB under the race detector). Reading the whole file would take over
// 100 MB. (Refusing a file whose size is over the limit before reading
// it brings the growth to ~0; see the reliability notes.)
const HugeHeapBound = 80 << 20

// HugeFile replaces a kernel's resource.txt with a 100 MB file (moved into
// place whole, so exactly one change is seen). The read must stop early,
// the kernel keep its last good figures with an issue naming the file, and
// the heap stay within HugeHeapBound of where it was.
func HugeFile(t *testing.T) []Phase {
	f := NewFiles(t)
	root := filepath.Join(t.TempDir(), "scratches")
	k1, k2 := KernelID(1), KernelID(2)
	p1 := MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.40")))
	MustWriteKernel(t, root, k2, f.Resource(root, k2, share(1, "0.10")))
	l := Start(t, newOpts(t, scratch.Root{Path: root, Agent: "agent-a"}))
	before := converged(t, l, "initial scan", nil)

	// The big file is written beside, in 1 MiB pieces: the test itself
	// must not hold 100 MB.
	good := f.Resource(root, k1, share(0, "0.40"))
	tmp := filepath.Join(filepath.Dir(p1), ".resource.txt.new")
	w, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("#"), 1<<20)
	if _, err := w.Write(good); err != nil {
		t.Fatal(err)
	}
	for written := len(good); written < HugeFileBytes; written += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	chunk = nil
	runtime.GC()
	hs := sampleHeap(2 * time.Millisecond)
	if err := os.Rename(tmp, p1); err != nil {
		t.Fatal(err)
	}
	huge := l.Wait(t, "100 MB file refused", waitTime, func(s *model.Snapshot) error {
		k := s.Kernel(model.KernelID(k1))
		if k == nil || k.State != model.KernelStale || k.Problem == nil {
			return fmt.Errorf("kernel = %+v, want stale with a problem", k)
		}
		if k.Problem.File != p1 || !strings.Contains(k.Problem.Message, "too large") {
			return fmt.Errorf("problem %+v does not name %s as too large", k.Problem, p1)
		}
		return wantAlloc(s, MockDevices[0], "0.40")
	})
	base, peak := hs.stop()
	t.Logf("100 MB resource.txt: live heap %.1f MiB before, peak %.1f MiB (sampled every 2ms), growth bound %d MiB",
		float64(base)/(1<<20), float64(peak)/(1<<20), HugeHeapBound>>20)
	if peak > base+HugeHeapBound {
		t.Errorf("heap grew from %.1f to %.1f MiB reading a 100 MB resource.txt (bound %d MiB)", float64(base)/(1<<20), float64(peak)/(1<<20), HugeHeapBound>>20)
	}

	if err := os.WriteFile(p1, f.Resource(root, k1, share(0, "0.45")), 0o644); err != nil {
		t.Fatal(err)
	}
	after := converged(t, l, "normal file again", func(s *model.Snapshot) error {
		if k := s.Kernel(model.KernelID(k1)); k == nil || k.State != model.KernelOK {
			return fmt.Errorf("kernel = %+v", k)
		}
		if FindIssue(s, model.IssueParse, nil) != nil {
			return fmt.Errorf("parse issue still shown")
		}
		return wantAlloc(s, MockDevices[0], "0.45")
	})
	return []Phase{
		{Name: "before", Snap: before},
		{Name: "huge", Snap: huge, Path: p1, Kernel: model.KernelID(k1)},
		{Name: "fixed", Snap: after, Kernel: model.KernelID(k1)},
	}
}

// heapSampler records the live heap before and its peak during a phase.
type heapSampler struct {
	base  uint64
	stopc chan struct{}
	done  chan uint64
}

func sampleHeap(every time.Duration) *heapSampler {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapSampler{base: ms.HeapAlloc, stopc: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		peak := h.base
		var ms runtime.MemStats
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-h.stopc:
				h.done <- peak
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) stop() (base, peak uint64) {
	close(h.stopc)
	return h.base, <-h.done
}

// NULBytes writes NUL bytes into resource.txt files: into a share amount
// of a kernel that had a good file (it keeps its last good figures, stale,
// with a parse issue naming the file and line), and a file of nothing but
// NULs for a new kernel (as a crash can leave a preallocated file: broken,
// no contribution). Both converge once the files are whole.
func NULBytes(t *testing.T) []Phase {
	f := NewFiles(t)
	root := filepath.Join(t.TempDir(), "scratches")
	k1, k2 := KernelID(1), KernelID(2)
	p1 := MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.30")))
	l := Start(t, newOpts(t, scratch.Root{Path: root, Agent: "agent-a"}))
	before := converged(t, l, "initial scan", nil)

	bad := bytes.Replace(f.Resource(root, k1, share(0, "0.35")), []byte(":0.35"), []byte(":0.3\x005"), 1)
	if !bytes.Contains(bad, []byte{0}) {
		t.Fatal("no NUL planted")
	}
	line := bytes.Count(bad[:bytes.IndexByte(bad, 0)], []byte("\n")) + 1
	if err := os.WriteFile(p1, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	p2 := MustWriteKernel(t, root, k2, make([]byte, 4096))
	// A stale kernel keeps figures a re-scan cannot know: no comparison.
	during := l.Wait(t, "NUL bytes", waitTime, func(s *model.Snapshot) error {
		k := s.Kernel(model.KernelID(k1))
		if k == nil || k.State != model.KernelStale || k.Problem == nil || k.Problem.File != p1 || k.Problem.Line != line {
			return fmt.Errorf("kernel 1 = %+v (problem %+v), want stale, problem at %s:%d", k, problemOf(k), p1, line)
		}
		k = s.Kernel(model.KernelID(k2))
		if k == nil || k.State != model.KernelBroken || k.Problem == nil || k.Problem.File != p2 || len(k.Alloc) != 0 {
			return fmt.Errorf("kernel 2 = %+v (problem %+v), want broken with a problem naming %s", k, problemOf(k), p2)
		}
		if FindIssue(s, model.IssueParse, func(i model.Issue) bool { return i.File == p1 && i.Line == line }) == nil {
			return fmt.Errorf("no parse issue at %s:%d: %v", p1, line, s.Issues)
		}
		return wantAlloc(s, MockDevices[0], "0.30")
	})
	if err := os.WriteFile(p1, f.Resource(root, k1, share(0, "0.35")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p2, f.Resource(root, k2, share(2, "0.50")), 0o644); err != nil {
		t.Fatal(err)
	}
	after := converged(t, l, "whole files again", func(s *model.Snapshot) error {
		if FindIssue(s, model.IssueParse, nil) != nil {
			return fmt.Errorf("parse issue still shown")
		}
		return wantAlloc(s, MockDevices[2], "0.50")
	})
	return []Phase{
		{Name: "before", Snap: before},
		{Name: "nul", Snap: during, Path: p1, Kernel: model.KernelID(k1)},
		{Name: "nul-only", Snap: during, Path: p2, Kernel: model.KernelID(k2)},
		{Name: "fixed", Snap: after},
	}
}

func problemOf(k *model.Kernel) *model.Issue {
	if k == nil {
		return nil
	}
	return k.Problem
}

// PermissionDenied makes a kernel's resource.txt unreadable and another
// kernel's directory unsearchable while the engine runs. Both keep their
// last figures with an error issue naming the path; restoring the modes
// clears the issues. It needs a user permission bits stop (not root).
func PermissionDenied(t *testing.T) []Phase {
	f := NewFiles(t)
	root := filepath.Join(t.TempDir(), "scratches")
	k1, k2, k3 := KernelID(1), KernelID(2), KernelID(3)
	p1 := MustWriteKernel(t, root, k1, f.Resource(root, k1, share(0, "0.30")))
	MustWriteKernel(t, root, k2, f.Resource(root, k2, share(1, "0.20")))
	MustWriteKernel(t, root, k3, f.Resource(root, k3, share(2, "0.10")))
	d2 := filepath.Join(root, k2)
	t.Cleanup(func() {
		os.Chmod(p1, 0o644)
		os.Chmod(d2, 0o755)
	})
	l := Start(t, newOpts(t, scratch.Root{Path: root, Agent: "agent-a"}))
	before := converged(t, l, "initial scan", nil)

	if err := os.Chmod(p1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(p1); err == nil {
		t.Skip("permission bits do not stop this user")
	}
	// Touch the file so a change is seen (chmod alone is not watched for
	// files), then lock the directory.
	now := time.Now()
	if err := os.Chtimes(p1, now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d2, "config", "resource.txt"), f.Resource(root, k2, share(1, "0.25")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d2, 0); err != nil {
		t.Fatal(err)
	}
	denied := l.Wait(t, "permission denied", waitTime, func(s *model.Snapshot) error {
		for _, p := range []string{p1, d2} {
			if FindIssue(s, model.IssuePermission, func(i model.Issue) bool { return i.File == p && i.Severity == model.SevError }) == nil {
				return fmt.Errorf("no permission-denied error naming %s: %v", p, s.Issues)
			}
		}
		if k := s.Kernel(model.KernelID(k1)); k == nil {
			return fmt.Errorf("kernel 1 dropped")
		}
		// Each unreadable kernel is stale, under its permission issue:
		// not "ok" on figures that are no longer read.
		for _, id := range []string{k1, k2} {
			k := s.Kernel(model.KernelID(id))
			if k == nil || k.State != model.KernelStale || k.Problem == nil || k.Problem.Code != model.IssuePermission {
				return fmt.Errorf("kernel %s unreadable: %+v, want stale under a permission issue", id, k)
			}
		}
		// Last known figures stay: 0.30 and whichever of 0.20/0.25 was
		// read before the directory closed.
		if err := wantAlloc(s, MockDevices[0], "0.30"); err != nil {
			return err
		}
		if a := allocOf(s, MockDevices[1]); a != "0.20" && a != "0.25" {
			return fmt.Errorf("kernel 2's figures lost: %s", a)
		}
		return nil
	})
	// A one-shot read (snapshot, --alloc-map) lists both, broken under
	// their issue and holding nothing, beside kernel 3: it left them out
	// without a word.
	one, err := l.Rescan()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{k1, k2} {
		k := one.Kernel(model.KernelID(id))
		if k == nil || k.State != model.KernelBroken || k.Problem == nil || k.Problem.Code != model.IssuePermission || len(k.Alloc) != 0 {
			t.Errorf("one-shot, kernel %s unreadable: %+v, want broken under a permission issue", id, k)
		}
	}
	if k := one.Kernel(model.KernelID(k3)); k == nil || k.State != model.KernelOK {
		t.Errorf("one-shot, kernel 3: %+v", k)
	}
	if err := os.Chmod(p1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d2, 0o755); err != nil {
		t.Fatal(err)
	}
	// Modes alone raise no event on the file: a write does.
	if err := os.WriteFile(p1, f.Resource(root, k1, share(0, "0.35")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d2, "config", "resource.txt"), f.Resource(root, k2, share(1, "0.25")), 0o644); err != nil {
		t.Fatal(err)
	}
	after := converged(t, l, "readable again", func(s *model.Snapshot) error {
		if err := wantAlloc(s, MockDevices[0], "0.35"); err != nil {
			return err
		}
		return wantAlloc(s, MockDevices[1], "0.25")
	})
	after = issueCleared(t, l, after, model.IssuePermission, p1)
	after = issueCleared(t, l, after, model.IssuePermission, d2)
	for _, id := range []string{k1, k2} {
		if k := after.Kernel(model.KernelID(id)); k == nil || k.State != model.KernelOK || k.Problem != nil {
			t.Errorf("kernel %s readable again: %+v, want ok", id, k)
		}
	}
	// The locked directory could not be watched, so the root fell back to
	// periodic rescans with a warning; its next rescan sets every watch
	// and replaces the warning with a notice.
	after = l.Wait(t, "watches set again", waitTime, func(s *model.Snapshot) error {
		if i := FindIssue(s, model.IssueWatch, func(i model.Issue) bool { return i.Severity >= model.SevWarning }); i != nil {
			return fmt.Errorf("watch warning still shown: %v", *i)
		}
		return nil
	})
	return []Phase{
		{Name: "before", Snap: before},
		{Name: "denied-file", Snap: denied, Path: p1, Kernel: model.KernelID(k1)},
		{Name: "denied-dir", Snap: denied, Path: d2, Kernel: model.KernelID(k2)},
		{Name: "fixed", Snap: after},
	}
}

// Package enginetest holds what tests of the live engine share: real
// resource.txt files in the agent writer's format, a live engine with a
// wait-for-state helper, an exact live-versus-rescan comparison, resource
// counters (goroutines, file descriptors, heap) and the fault scenarios
// that both the engine's and the console's tests run. Nothing in the fgtop
// binary imports it.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/model"
)

// Fixtures returns the repo's fixture directory of Backend.AI's files
// (testdata/fixtures/backendai at the module root).
func Fixtures(t testing.TB) string { return testfix.Dir(t, "backendai") }

// MockDevices are the GPU ids of the fixtures' mock-accelerator.toml.
var MockDevices = []model.DeviceID{
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01",
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d02",
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d03",
	"c59395cd-ac91-4cd3-a1b0-3d2568aa2d04",
}

// MockSource is the fixtures' mock-accelerator.toml with its etcd settings
// (fractional, four A100s).
func MockSource(t testing.TB) inventory.Source {
	t.Helper()
	fx := Fixtures(t)
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), filepath.Join(fx, "mock-accelerator.etcd.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// KernelID returns a deterministic kernel id in canonical form.
func KernelID(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

// KernelIDOf is KernelID as a model.KernelID.
func KernelIDOf(i int) model.KernelID { return model.KernelID(KernelID(i)) }

// Files writes resource.txt contents the way the agent does: the fixture
// resource.cuda-shares-split.txt (a real fGPU kernel: 24 mounts, SLOTS,
// shares on two GPUs, CPU cores, memory, plugin lines, CID) with the
// kernel's own paths and shares, formatted by resourcefile's writer.
type Files struct {
	base *resourcefile.Spec
}

// fixtureKernel is the kernel id inside the fixture's mount paths.
const fixtureKernel = "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63"

// NewFiles reads the fixture the files are modelled on.
func NewFiles(t testing.TB) *Files {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Fixtures(t), "resource.cuda-shares-split.txt"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := resourcefile.Parse(data, model.DefaultSlotTypes())
	if err != nil {
		t.Fatalf("fixture does not parse: %v", err)
	}
	return &Files{base: spec}
}

// Share is an amount of cuda.shares on one device.
type Share struct {
	Dev    model.DeviceID
	Amount model.Dec
}

// Resource returns the resource.txt of kernel kid under root holding
// shares (in order). An empty shares list gives a CPU-only kernel.
func (f *Files) Resource(root, kid string, shares []Share) []byte {
	return f.ResourceAsking(root, kid, shares, nil)
}

// ResourceAsking is Resource with SLOTS saying asked where it names a
// slot, as Backend.AI writes a kernel that asked more than it got on a
// device (each device's share rounded down to the quantum) and memory
// asked in bytes: its MEM_SHARES line is that amount in BinarySize's
// lossy text (4294967295 bytes as "4g").
func (f *Files) ResourceAsking(root, kid string, shares []Share, asked model.ResourceSlot) []byte {
	s := *f.base
	s.Mounts = slices.Clone(f.base.Mounts)
	for i := range s.Mounts {
		s.Mounts[i].Source = strings.Replace(s.Mounts[i].Source, "/var/lib/backend.ai/scratches/"+fixtureKernel, filepath.Join(root, kid), 1)
	}
	s.Slots = model.ResourceSlot{}
	for k, v := range f.base.Slots {
		s.Slots[k] = v
	}
	s.Alloc = model.Allocations{}
	for k, v := range f.base.Alloc {
		if k != model.SlotCUDAShares {
			s.Alloc[k] = v
		}
	}
	if m, ok := asked[model.SlotMem]; ok {
		s.Alloc[model.SlotMem] = map[model.DeviceID]model.Dec{"root": m}
	}
	format := func() []byte {
		for k, v := range asked {
			s.Slots[k] = v
		}
		return s.Format()
	}
	s.DeviceOrder = map[model.SlotName][]model.DeviceID{}
	for k, v := range f.base.DeviceOrder {
		if k != model.SlotCUDAShares {
			s.DeviceOrder[k] = v
		}
	}
	s.AllocOrder = slices.DeleteFunc(slices.Clone(f.base.AllocOrder), func(n model.SlotName) bool { return n == model.SlotCUDAShares })
	s.SlotOrder = slices.Clone(f.base.SlotOrder)
	s.Extra = slices.DeleteFunc(slices.Clone(f.base.Extra), func(kv resourcefile.KV) bool { return strings.HasPrefix(kv.Key, "CUDA_") })
	if len(shares) == 0 {
		delete(s.Slots, model.SlotCUDAShares)
		s.SlotOrder = slices.DeleteFunc(s.SlotOrder, func(n model.SlotName) bool { return n == model.SlotCUDAShares })
		return format()
	}
	m := map[model.DeviceID]model.Dec{}
	var order []model.DeviceID
	var total model.Dec
	var ids, mems []string
	for i, sh := range shares {
		if _, dup := m[sh.Dev]; !dup {
			order = append(order, sh.Dev)
		}
		m[sh.Dev] = sh.Amount
		total = total.Add(sh.Amount)
		ids = append(ids, fmt.Sprintf("%d:%s", i, sh.Dev))
		mems = append(mems, fmt.Sprintf("%s:%d", sh.Dev, 40<<30))
	}
	s.Alloc[model.SlotCUDAShares] = m
	s.DeviceOrder[model.SlotCUDAShares] = order
	s.AllocOrder = append([]model.SlotName{model.SlotCUDAShares}, s.AllocOrder...)
	s.Slots[model.SlotCUDAShares] = total
	// The plugin's own lines, as the fGPU plugin writes them, before CID.
	s.Extra = append([]resourcefile.KV{
		{Key: "CUDA_GLOBAL_DEVICE_IDS", Value: strings.Join(ids, ",")},
		{Key: "CUDA_RESOURCE_VIRTUALIZED", Value: "1"},
		{Key: "CUDA_MEMORY_LIMITS", Value: strings.Join(mems, ",")},
	}, s.Extra...)
	return format()
}

// Random returns the resource.txt of a kernel holding 0.1 to 0.5 shares on
// one or two of devs (none, one time in eight: a CPU-only kernel).
func (f *Files) Random(root, kid string, devs []model.DeviceID, rng *rand.Rand) []byte {
	if rng.IntN(8) == 0 {
		return f.Resource(root, kid, nil)
	}
	n := 1 + rng.IntN(2)
	var shares []Share
	for _, i := range rng.Perm(len(devs))[:n] {
		shares = append(shares, Share{Dev: devs[i], Amount: model.NewDec(int64(1+rng.IntN(5)), -1)})
	}
	return f.Resource(root, kid, shares)
}

// WriteKernel makes <root>/<kid>/config/resource.txt with data and returns
// its path.
func WriteKernel(root, kid string, data []byte) (string, error) {
	dir := filepath.Join(root, kid, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "resource.txt")
	return p, os.WriteFile(p, data, 0o644)
}

// MustWriteKernel is WriteKernel failing the test on error.
func MustWriteKernel(t testing.TB, root, kid string, data []byte) string {
	t.Helper()
	p, err := WriteKernel(root, kid, data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Live is an engine running on its own goroutine.
type Live struct {
	Eng    *engine.Engine
	Opts   engine.Options
	cancel context.CancelFunc
	done   chan error
	ctx    context.Context
}

// Start runs an engine with opts and waits for its first full scan. The
// engine is stopped when the test ends (Stop stops it earlier).
func Start(t testing.TB, opts engine.Options) *Live {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &Live{Eng: engine.New(opts), Opts: opts, cancel: cancel, done: make(chan error, 1), ctx: ctx}
	go func() { l.done <- l.Eng.Run(ctx) }()
	t.Cleanup(func() { l.Stop(t) })
	select {
	case <-l.Eng.Ready():
	case err := <-l.done:
		l.done <- err
		t.Fatalf("engine stopped before its first scan: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("engine not ready after 30s")
	}
	return l
}

// Context is the engine's context: done once the engine is stopped.
func (l *Live) Context() context.Context { return l.ctx }

// Stop cancels the engine and waits for Run to return; Run's error fails
// the test. Calling it again does nothing.
func (l *Live) Stop(t testing.TB) {
	t.Helper()
	if l.done == nil {
		return
	}
	l.cancel()
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("engine Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("engine Run did not return 30s after cancel")
	}
	l.done = nil
}

// Wait polls the latest snapshot until cond accepts it, and returns that
// snapshot; it fails the test with cond's last complaint after d.
func (l *Live) Wait(t testing.TB, what string, d time.Duration, cond func(*model.Snapshot) error) *model.Snapshot {
	t.Helper()
	deadline := time.Now().Add(d)
	err := errors.New("no snapshot yet")
	for {
		if s := l.Eng.Latest(); s != nil {
			if err = cond(s); err == nil {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v: %v", what, d, err)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Rescan is a full one-off scan of the same tree with the same inventory
// (engine.Build), the reference the live state must equal.
func (l *Live) Rescan() (*model.Snapshot, error) {
	o := l.Opts
	o.Clock = nil
	return engine.Build(context.Background(), o)
}

// Converged reports whether the latest snapshot equals a full re-scan.
func (l *Live) Converged(s *model.Snapshot) error {
	full, err := l.Rescan()
	if err != nil {
		return err
	}
	return Diff(s, full)
}

// Diff compares a live snapshot with a full re-scan exactly: the same
// kernels (id, agent, state, path) with the same requested slots and
// per-device allocations (decimal strings, so 0.5 and 0.50 differ), the
// same alloc map, the same totals per device and slot (and holdings), and
// the same per-agent totals.
func Diff(live, full *model.Snapshot) error {
	lk, fk := live.Kernels(), full.Kernels()
	if len(lk) != len(fk) {
		return fmt.Errorf("kernels: live %d, re-scan %d%s", len(lk), len(fk), kernelSetDiff(live, full))
	}
	for i := range lk {
		a, b := lk[i], fk[i]
		if a.ID != b.ID || a.State != b.State || a.Agent != b.Agent || a.Path != b.Path {
			return fmt.Errorf("kernel %d: live %s/%s/%s, re-scan %s/%s/%s", i, a.ID, a.Agent, a.State, b.ID, b.Agent, b.State)
		}
		if x, y := fmtSlots(a.Slots), fmtSlots(b.Slots); x != y {
			return fmt.Errorf("kernel %s slots: live %s, re-scan %s", a.ID, x, y)
		}
		if x, y := FmtAlloc(a.Alloc), FmtAlloc(b.Alloc); x != y {
			return fmt.Errorf("kernel %s alloc: live %s, re-scan %s", a.ID, x, y)
		}
	}
	la, fa := live.AllocMap(), full.AllocMap()
	if len(la) != len(fa) {
		return fmt.Errorf("alloc map: live %v, re-scan %v", la, fa)
	}
	for k, v := range fa {
		if w, ok := la[k]; !ok || w.String() != v.String() {
			return fmt.Errorf("alloc map %s: live %s, re-scan %s", k, la[k], v)
		}
	}
	if len(live.Usage) != len(full.Usage) {
		return fmt.Errorf("devices held: live %d, re-scan %d", len(live.Usage), len(full.Usage))
	}
	for k, u := range full.Usage {
		l := live.Usage[k]
		if l == nil {
			return fmt.Errorf("device %s: held in the re-scan, not live", k)
		}
		if x, y := fmtSlots(l.Held), fmtSlots(u.Held); x != y {
			return fmt.Errorf("device %s held: live %s, re-scan %s", k, x, y)
		}
		lh, fh := live.Holdings(k), full.Holdings(k)
		if len(lh) != len(fh) {
			return fmt.Errorf("device %s: live %d holdings, re-scan %d", k, len(lh), len(fh))
		}
		for i := range fh {
			a, b := lh[i], fh[i]
			if a.Kernel != b.Kernel || a.Slot != b.Slot || a.Amount.String() != b.Amount.String() {
				return fmt.Errorf("device %s holding %d: live %+v, re-scan %+v", k, i, a, b)
			}
		}
	}
	if len(live.Agents) != len(full.Agents) {
		return fmt.Errorf("agents: live %d, re-scan %d", len(live.Agents), len(full.Agents))
	}
	for i := range full.Agents {
		a, b := live.Agents[i], full.Agents[i]
		if a.ID != b.ID || a.Kernels != b.Kernels {
			return fmt.Errorf("agent %d: live %s with %d kernels, re-scan %s with %d", i, a.ID, a.Kernels, b.ID, b.Kernels)
		}
		if x, y := fmtSlots(a.Held), fmtSlots(b.Held); x != y {
			return fmt.Errorf("agent %s held: live %s, re-scan %s", a.ID, x, y)
		}
	}
	return nil
}

func kernelSetDiff(live, full *model.Snapshot) string {
	in := map[model.KernelID]bool{}
	for _, k := range full.Kernels() {
		in[k.ID] = true
	}
	var extra, missing []string
	for _, k := range live.Kernels() {
		if !in[k.ID] {
			extra = append(extra, string(k.ID))
		}
		delete(in, k.ID)
	}
	for id := range in {
		missing = append(missing, string(id))
	}
	slices.Sort(missing)
	const show = 3
	return fmt.Sprintf(" (live only: %d %v; re-scan only: %d %v)", len(extra), extra[:min(show, len(extra))], len(missing), missing[:min(show, len(missing))])
}

func fmtSlots(r model.ResourceSlot) string {
	var parts []string
	for _, n := range r.Names() {
		if !r[n].IsZero() {
			parts = append(parts, string(n)+"="+r[n].String())
		}
	}
	return strings.Join(parts, ",")
}

// FmtAlloc prints allocations in a stable order with each amount's exact
// decimal string.
func FmtAlloc(a model.Allocations) string {
	var parts []string
	for slot, devs := range a {
		for id, v := range devs {
			parts = append(parts, fmt.Sprintf("%s/%s=%s", slot, id, v))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// FindIssue returns the first issue with the code that match accepts (nil:
// any), or nil.
func FindIssue(s *model.Snapshot, code string, match func(model.Issue) bool) *model.Issue {
	for i := range s.Issues {
		if s.Issues[i].Code == code && (match == nil || match(s.Issues[i])) {
			return &s.Issues[i]
		}
	}
	return nil
}

// OpenFDs counts this process's open file descriptors (Linux /proc).
func OpenFDs() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	return len(ents), nil
}

// Settle waits until the goroutine count is at most want and the open file
// descriptors at most wantFDs (-1: not checked), and fails the test with
// both counts otherwise. Goroutines that end on their own (timers, a
// cancelled subscription's closer) get d to do so.
func Settle(t testing.TB, want, wantFDs int, d time.Duration) (goroutines, fds int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		goroutines = runtime.NumGoroutine()
		fds = -1
		if wantFDs >= 0 {
			fds, _ = OpenFDs()
		}
		if goroutines <= want && fds <= wantFDs {
			return goroutines, fds
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("leak: %d goroutines (want ≤ %d), %d fds (want ≤ %d) after %v\n%s", goroutines, want, fds, wantFDs, d, buf)
			return goroutines, fds
		}
		time.Sleep(20 * time.Millisecond)
	}
}

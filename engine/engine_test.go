package engine

import (
	"context"
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfix.Dir(t, "backendai"), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	kernelA = "7f3c2a1e-5b4d-4c8e-9a21-3d6f0b8e4c17" // cpu only
	kernelB = "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8" // 0.50 on 2d04
	kernelC = "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63" // 0.60 + 0.60
)

func writeKernel(t testing.TB, root, id string, data []byte) string {
	t.Helper()
	dir := filepath.Join(root, id, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "resource.txt")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mockSource(t testing.TB) inventory.Source {
	t.Helper()
	fx := testfix.Dir(t, "backendai")
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), filepath.Join(fx, "mock-accelerator.etcd.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func fixtureTree(t testing.TB) (string, Options) {
	t.Helper()
	root := t.TempDir()
	writeKernel(t, root, kernelA, readFixture(t, "resource.cpu-only.txt"))
	writeKernel(t, root, kernelB, readFixture(t, "resource.cuda-shares-single.txt"))
	writeKernel(t, root, kernelC, readFixture(t, "resource.cuda-shares-split.txt"))
	opts := Options{
		Roots:     []scratch.Root{{Path: root, Agent: "i-gpu-node01"}},
		Inventory: mockSource(t),
		Node:      "test-node",
		Clock:     func() time.Time { return time.Unix(1700000000, 0) },
		Watch:     scratch.Options{Debounce: 5 * time.Millisecond},
	}
	return root, opts
}

func TestBuildFixtureAllocMap(t *testing.T) {
	_, opts := fixtureTree(t)
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range snap.AllocMap() {
		got[string(k)] = v.String()
	}
	want := map[string]string{
		"c59395cd-ac91-4cd3-a1b0-3d2568aa2d04": "0.50",
		"c59395cd-ac91-4cd3-a1b0-3d2568aa2d02": "0.60",
		"c59395cd-ac91-4cd3-a1b0-3d2568aa2d03": "0.60",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("alloc map = %v, want %v", got, want)
	}
	if n := len(snap.Kernels()); n != 3 || snap.NumKernels() != 3 {
		t.Fatalf("kernels = %d (NumKernels %d), want 3", n, snap.NumKernels())
	}
	key02 := model.DeviceKey{Name: "cuda", ID: "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"}
	u := snap.Usage[key02]
	if hs := snap.Holdings(key02); u == nil || u.Total().String() != "0.60" || len(hs) != 1 || hs[0].Kernel != kernelC {
		t.Fatalf("usage of 2d02 = %+v, holdings %+v", u, hs)
	}
	mem := snap.Usage[model.DeviceKey{Name: "mem", ID: "root"}]
	if mem == nil || mem.Total().String() != fmt.Sprint(int64(4+16+32)<<30) {
		t.Fatalf("mem held = %v", mem)
	}
	// The mock source here has no host part, so the cpu and mem entries
	// are reported as warnings about the inventory; the GPUs must be clean.
	for _, iss := range snap.Issues {
		if iss.Severity >= model.SevError || (iss.Severity >= model.SevWarning && iss.Device.Name == "cuda") {
			t.Errorf("unexpected issue on the fixture node: %v", iss)
		}
	}
}

func TestBuildIssues(t *testing.T) {
	root, opts := fixtureTree(t)
	// A kernel on a device the inventory does not list, one over capacity,
	// and a torn file.
	split := string(readFixture(t, "resource.cuda-shares-split.txt"))
	unknown := strings.ReplaceAll(split, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03:0.60", "ffffffff-0000-0000-0000-000000000000:0.60")
	writeKernel(t, root, "11111111-1111-4111-8111-111111111111", []byte(unknown))
	over := strings.ReplaceAll(split, "2d02:0.60,", "2d02:0.90,")
	writeKernel(t, root, "22222222-2222-4222-8222-222222222222", []byte(over))
	torn := split[:len(split)/2]
	tornPath := writeKernel(t, root, "33333333-3333-4333-8333-333333333333", []byte(torn))
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]model.Issue{}
	for _, iss := range snap.Issues {
		if iss.Device.Name == "cpu" || iss.Device.Name == "mem" {
			continue
		}
		if _, dup := codes[iss.Code]; !dup || strings.Contains(iss.Message, "2d02") {
			codes[iss.Code] = iss
		}
	}
	if iss, ok := codes[model.IssueUnknownDevice]; !ok || !strings.Contains(iss.Message, "ffffffff") {
		t.Errorf("no unknown-device issue: %v", snap.Issues)
	} else if iss.Kernel != "11111111-1111-4111-8111-111111111111" || !strings.HasSuffix(iss.Message, "; kernel 11111111-1111-4111-8111-111111111111") {
		// Whose allocation it is: the issue opens the kernel.
		t.Errorf("the unknown-device issue names no kernel: %+v", iss)
	}
	if iss, ok := codes[model.IssueOverCapacity]; !ok || !strings.Contains(iss.Message, "2d02") || !strings.Contains(iss.Message, "2.10 of 1.00") {
		t.Errorf("no over-capacity issue for 2d02 at 2.10 of 1.00: %v", snap.Issues)
	}
	if iss, ok := codes[model.IssueParse]; !ok || iss.File != tornPath {
		t.Errorf("no parse issue naming %s: %v", tornPath, snap.Issues)
	}
	if k := snap.Kernel("33333333-3333-4333-8333-333333333333"); k == nil || k.State != model.KernelBroken || len(k.Alloc) != 0 {
		t.Errorf("torn kernel = %+v, want broken with no contribution", k)
	}
}

// equalToRescan compares a live snapshot with a full re-scan: the same
// kernels in the same states with the same allocations, the same totals per
// device, per agent and in the alloc map (numerically).
func equalToRescan(live, full *model.Snapshot) error {
	lk, fk := live.Kernels(), full.Kernels()
	if len(lk) != len(fk) {
		return fmt.Errorf("kernels: live %d, re-scan %d", len(lk), len(fk))
	}
	for i := range lk {
		a, b := lk[i], fk[i]
		if a.ID != b.ID || a.State != b.State || a.Agent != b.Agent {
			return fmt.Errorf("kernel %d: live %s/%s, re-scan %s/%s", i, a.ID, a.State, b.ID, b.State)
		}
		if fmtAlloc(a.Alloc) != fmtAlloc(b.Alloc) {
			return fmt.Errorf("kernel %s: live alloc %s, re-scan %s", a.ID, fmtAlloc(a.Alloc), fmtAlloc(b.Alloc))
		}
	}
	if len(live.Usage) != len(full.Usage) {
		return fmt.Errorf("devices held: live %d, re-scan %d", len(live.Usage), len(full.Usage))
	}
	for k, u := range full.Usage {
		l := live.Usage[k]
		if l == nil {
			return fmt.Errorf("device %s missing live", k)
		}
		if lh, fh := live.Holdings(k), full.Holdings(k); !l.Total().Equal(u.Total()) || len(lh) != len(fh) {
			return fmt.Errorf("device %s: live %s (%d holdings), re-scan %s (%d)", k, l.Total(), len(lh), u.Total(), len(fh))
		}
		for s, v := range u.Held {
			if !l.Held[s].Equal(v) {
				return fmt.Errorf("device %s slot %s: live %s, re-scan %s", k, s, l.Held[s], v)
			}
		}
	}
	la, fa := live.AllocMap(), full.AllocMap()
	if len(la) != len(fa) {
		return fmt.Errorf("alloc map: live %v, re-scan %v", la, fa)
	}
	for k, v := range fa {
		if !la[k].Equal(v) {
			return fmt.Errorf("alloc map %s: live %s, re-scan %s", k, la[k], v)
		}
	}
	for i := range full.Agents {
		a, b := live.Agents[i], full.Agents[i]
		if a.Kernels != b.Kernels {
			return fmt.Errorf("agent %s kernels: live %d, re-scan %d", a.ID, a.Kernels, b.Kernels)
		}
		for s, v := range b.Held {
			if !a.Held[s].Equal(v) {
				return fmt.Errorf("agent %s slot %s: live %s, re-scan %s", a.ID, s, a.Held[s], v)
			}
		}
	}
	return nil
}

func fmtAlloc(a model.Allocations) string {
	var parts []string
	for slot, devs := range a {
		for id, v := range devs {
			parts = append(parts, fmt.Sprintf("%s/%s=%s", slot, id, v.Normalize()))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

func TestLiveEngineConvergesToRescan(t *testing.T) {
	before := runtime.NumGoroutine()
	root, opts := fixtureTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	eng := New(opts)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("engine not ready after 10s")
	}
	sub := eng.Subscribe(ctx)
	converged := func() error {
		full, err := Build(context.Background(), opts)
		if err != nil {
			return err
		}
		return equalToRescan(eng.Latest(), full)
	}
	waitFor(t, "initial scan", 5*time.Second, converged)

	split := readFixture(t, "resource.cuda-shares-split.txt")
	single := readFixture(t, "resource.cuda-shares-single.txt")
	// New kernels, a rewrite, a torn rewrite that is then completed, a
	// deletion.
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		data := split
		if i%2 == 0 {
			data = single
		}
		writeKernel(t, root, id, data)
	}
	waitFor(t, "20 new kernels", 10*time.Second, converged)

	pathC := filepath.Join(root, kernelC, "config", "resource.txt")
	if err := os.WriteFile(pathC, split[:len(split)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "torn file keeps last good", 10*time.Second, func() error {
		k := eng.Latest().Kernel(kernelC)
		if k == nil || k.State != model.KernelStale {
			return fmt.Errorf("kernel C = %+v, want stale", k)
		}
		if got := k.Alloc[model.SlotCUDAShares]["c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"]; !got.Equal(model.MustDec("0.60")) {
			return fmt.Errorf("kernel C on 2d03 = %s, want the last good 0.60", got)
		}
		if k.Problem == nil || k.Problem.File != pathC {
			return fmt.Errorf("kernel C problem = %v, want one naming %s", k.Problem, pathC)
		}
		return nil
	})
	if err := os.WriteFile(pathC, split, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "completed file converges", 10*time.Second, converged)
	waitFor(t, "the parse issue clears once the file is whole", 5*time.Second, func() error {
		for _, iss := range eng.Latest().Issues {
			if iss.Code == model.IssueParse && iss.File == pathC {
				return fmt.Errorf("issue still shown: %v", iss)
			}
		}
		return nil
	})

	if err := os.RemoveAll(filepath.Join(root, kernelB)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "deletion converges", 10*time.Second, func() error {
		if eng.Latest().Kernel(kernelB) != nil {
			return fmt.Errorf("kernel B still present")
		}
		return converged()
	})

	// A slow subscriber only ever sees the newest snapshot.
	var last *model.Snapshot
	for drained := false; !drained; {
		select {
		case s := <-sub:
			last = s
		default:
			drained = true
		}
	}
	if last != nil && last.Seq > eng.Latest().Seq {
		t.Fatalf("subscriber saw seq %d beyond latest %d", last.Seq, eng.Latest().Seq)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	waitFor(t, "goroutines released", 5*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > before+1 {
			return fmt.Errorf("%d goroutines, %d before", n, before)
		}
		return nil
	})
}

func TestSubscribeLatestWins(t *testing.T) {
	e := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	slow := e.Subscribe(ctx)
	for i := uint64(1); i <= 100; i++ {
		e.publish(&model.Snapshot{Seq: i})
	}
	// The engine never blocked, and the slow reader gets only the newest.
	if s := <-slow; s.Seq != 100 {
		t.Fatalf("slow subscriber got seq %d, want 100", s.Seq)
	}
	select {
	case s := <-slow:
		t.Fatalf("unexpected queued snapshot %d", s.Seq)
	default:
	}
	late := e.Subscribe(ctx)
	if s := <-late; s.Seq != 100 {
		t.Fatalf("late subscriber got seq %d, want the latest", s.Seq)
	}
	cancel()
	waitFor(t, "subscriptions end", 2*time.Second, func() error {
		if n := e.Subscribers(); n != 0 {
			return fmt.Errorf("%d subscribers left", n)
		}
		return nil
	})
	if _, ok := <-slow; ok {
		t.Fatal("channel not closed after cancel")
	}
}

func TestReadyWithMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "not-there")
	eng := New(Options{Roots: []scratch.Root{{Path: missing, Agent: "a"}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("engine never ready with a missing root")
	}
	found := false
	for _, iss := range eng.Latest().Issues {
		if iss.Code == model.IssueRootMissing && iss.File == missing {
			found = true
		}
	}
	if !found {
		t.Fatalf("no scratch-root-missing issue naming %s: %v", missing, eng.Latest().Issues)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBuildStreamedEqualsSorted checks Build, which folds files in listing
// order as they are read (appending, sorting once), against folding the
// same tree's events in kernel order into a state that keeps its lists
// sorted at every step: the same kernels, holdings (in order), totals and
// issues.
func TestBuildStreamedEqualsSorted(t *testing.T) {
	root, opts := fixtureTree(t)
	files := [][]byte{readFixture(t, "resource.cpu-only.txt"), readFixture(t, "resource.cuda-shares-single.txt"),
		readFixture(t, "resource.cuda-shares-split.txt"), []byte("SLOTS={broken\n")}
	for i := range 300 {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919%100003, i)
		if i%17 == 0 {
			if err := os.MkdirAll(filepath.Join(root, id), 0o755); err != nil { // pending
				t.Fatal(err)
			}
			continue
		}
		writeKernel(t, root, id, files[i%len(files)])
	}
	got, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}

	st := newState(&opts)
	types := st.takeInventory(opts.Inventory.Poll(context.Background()))
	for _, ev := range scratch.Scan(context.Background(), opts.Roots, parser(types, nil), 1) {
		st.applyEvent(ev)
	}
	want := st.snapshot()

	if err := equalToRescan(got, want); err != nil {
		t.Fatal(err)
	}
	gk, wk := got.Kernels(), want.Kernels()
	for i := range wk {
		if gk[i].ID != wk[i].ID || gk[i].Path != wk[i].Path {
			t.Fatalf("kernel %d: %s, want %s", i, gk[i].ID, wk[i].ID)
		}
	}
	for k := range want.Usage {
		same := func(a, b model.Holding) bool {
			return a.Kernel == b.Kernel && a.Agent == b.Agent && a.Slot == b.Slot && a.Amount.String() == b.Amount.String()
		}
		if !slices.EqualFunc(got.Holdings(k), want.Holdings(k), same) {
			t.Fatalf("device %s: holdings\n%v\nwant\n%v", k, got.Holdings(k), want.Holdings(k))
		}
	}
	if !reflect.DeepEqual(got.Issues, want.Issues) {
		t.Fatalf("issues:\n%v\nwant\n%v", got.Issues, want.Issues)
	}
	if n := len(got.Issues); n < 300/len(files) {
		t.Fatalf("%d issues; the broken files are missing", n)
	}
}

// TestOverCapacityNamesTheAgents: a device two agents' kernels put over
// its capacity (main's slot-based form: every agent allocates over every
// device) says what each agent holds there, terms that add up to the total,
// so that an operator sees why; one agent's overcommit keeps the plain
// message.
func TestOverCapacityNamesTheAgents(t *testing.T) {
	rootA, rootB := t.TempDir(), t.TempDir()
	split := string(readFixture(t, "resource.cuda-shares-split.txt"))
	writeKernel(t, rootA, kernelC, []byte(split))
	writeKernel(t, rootB, "22222222-2222-4222-8222-222222222222", []byte(strings.ReplaceAll(split, "2d02:0.60,", "2d02:0.90,")))
	writeKernel(t, rootB, "44444444-4444-4444-8444-444444444444", []byte(strings.ReplaceAll(strings.ReplaceAll(split, "2d02:0.60,", "2d01:0.60,"), "2d02", "2d01")))
	writeKernel(t, rootB, "55555555-5555-4555-8555-555555555555", []byte(strings.ReplaceAll(strings.ReplaceAll(split, "2d02:0.60,", "2d01:0.60,"), "2d02", "2d01")))
	_, opts := fixtureTree(t)
	opts.Roots = []scratch.Root{{Path: rootA, Agent: "i-a"}, {Path: rootB, Agent: "i-b"}}
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, iss := range snap.Issues {
		if iss.Code == model.IssueOverCapacity && iss.Device.Name == "cuda" {
			got[string(iss.Device.ID)[len(iss.Device.ID)-4:]] = iss.Message
		}
	}
	want := map[string]string{
		"2d02": "cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d02 is held beyond its capacity: 1.50 of 1.00 (i-a 0.60 + i-b 0.90: each agent's allocator sees only its own kernels)",
		// i-b's two kernels on 2d01: one agent, the plain message.
		"2d01": "cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d01 is held beyond its capacity: 1.20 of 1.00",
	}
	for dev, w := range want {
		if got[dev] != w {
			t.Errorf("%s:\n got %q\nwant %q", dev, got[dev], w)
		}
	}
}

// TestTimeSharedCoresAreOneWarning: CPU cores that two agents' kernels
// hold beyond capacity together (main's slot-based agents each allocate
// over every core) are one node-level warning that lists them and the
// agents, whose identity stays the same as cores join and leave it; a
// core one agent overbooks alone, and a GPU two agents overbook, stay
// errors of their own device.
func TestTimeSharedCoresAreOneWarning(t *testing.T) {
	split := string(readFixture(t, "resource.cuda-shares-split.txt"))
	onCores := func(cores string) []byte {
		return []byte(strings.Replace(split, "CPU_SHARES=0:1,20:1,1:1,21:1,2:1,22:1,3:1,23:1", "CPU_SHARES="+cores, 1))
	}
	rootA, rootB := t.TempDir(), t.TempDir()
	_, opts := fixtureTree(t)
	opts.Roots = []scratch.Root{{Path: rootA, Agent: "i-a"}, {Path: rootB, Agent: "i-b"}}
	fx := testfix.Dir(t, "backendai")
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), filepath.Join(fx, "mock-accelerator.etcd.json"),
		inventory.NewHost(inventory.HostOptions{CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, MemBytes: 1 << 40}))
	if err != nil {
		t.Fatal(err)
	}
	opts.Inventory = src
	build := func() (shared []model.Issue, perCore map[string]model.Severity, gpuErrs int) {
		t.Helper()
		snap, err := Build(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		perCore = map[string]model.Severity{}
		for _, iss := range snap.Issues {
			if iss.Code != model.IssueOverCapacity {
				continue
			}
			switch iss.Device.Name {
			case "":
				shared = append(shared, iss)
			case "cpu":
				perCore[string(iss.Device.ID)] = iss.Severity
			case "cuda":
				if iss.Severity == model.SevError {
					gpuErrs++
				}
			}
		}
		return shared, perCore, gpuErrs
	}

	writeKernel(t, rootA, "11111111-1111-4111-8111-111111111111", onCores("2:1,10:1"))
	writeKernel(t, rootB, "22222222-2222-4222-8222-222222222222", onCores("10:1,2:1"))
	first, perCore, gpuErrs := build()
	if len(first) != 1 || len(perCore) != 0 {
		t.Fatalf("two time-shared cores: %d node-level issues, per core %v; want one warning and none per core", len(first), perCore)
	}
	want := "2 CPU core(s) time-shared across agents, each held beyond its capacity by several agents' kernels together (each agent within it): cpu:2 2 of 1, cpu:10 2 of 1 (agents i-a, i-b: each agent's allocator sees only its own kernels)"
	if first[0].Severity != model.SevWarning || first[0].Message != want {
		t.Errorf("got %s %q\nwant warning %q", first[0].Severity, first[0].Message, want)
	}
	if gpuErrs != 2 {
		t.Errorf("%d GPU over-capacity errors, want 2 (2d02 and 2d03 at 1.20 of 1.00)", gpuErrs)
	}

	// A third core joins: the message changes, the identity does not.
	writeKernel(t, rootA, "33333333-3333-4333-8333-333333333333", onCores("5:1"))
	writeKernel(t, rootB, "44444444-4444-4444-8444-444444444444", onCores("5:1"))
	second, perCore, _ := build()
	if len(second) != 1 || len(perCore) != 0 || !strings.Contains(second[0].Message, "3 CPU core(s)") || !strings.Contains(second[0].Message, "cpu:5 2 of 1") {
		t.Fatalf("a third time-shared core: %v, per core %v", second, perCore)
	}
	if first[0].Identity() != second[0].Identity() {
		t.Errorf("the identity changed as a core joined: %q, then %q", first[0].Identity(), second[0].Identity())
	}

	// Agent i-a alone now holds core 2 twice: that core is an error of
	// its own; the warning keeps the others.
	writeKernel(t, rootA, "55555555-5555-4555-8555-555555555555", onCores("2:1"))
	third, perCore, _ := build()
	if perCore["2"] != model.SevError || len(perCore) != 1 {
		t.Errorf("core 2 overbooked by one agent: per core %v, want cpu:2 an error", perCore)
	}
	if len(third) != 1 || strings.Contains(third[0].Message, "cpu:2 ") || !strings.Contains(third[0].Message, "2 CPU core(s)") {
		t.Errorf("the warning after cpu:2 became an error: %v", third)
	}
}

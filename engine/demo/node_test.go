package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/model"
)

// startNode starts a demo node in a test directory and closes it (checking
// that its files are gone) when the test ends.
// readyEngine runs an engine on n until the test ends and waits for its
// first scan.
func readyEngine(t *testing.T, n *Node) *engine.Engine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	eng := engine.New(n.EngineOptions())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-eng.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("engine not ready")
	}
	return eng
}

func startNode(t *testing.T, opts Options) *Node {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	n, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(n.Dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists after Close (%v)", n.Dir, err)
		}
	})
	return n
}

// resourceFiles returns every kernel's resource.txt under the node's roots,
// path → content.
func resourceFiles(t *testing.T, n *Node) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, r := range n.Roots {
		paths, err := filepath.Glob(filepath.Join(r.Path, "*", "config", "resource.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	return out
}

// TestNodeFiles checks what the node writes: a valid agent.toml and mock
// plugin files, the documented host, and resource.txt files that parse and
// have the agent's line order.
func TestNodeFiles(t *testing.T) {
	// A speed this low runs no step during the test: the files are the
	// warm-up's.
	n := startNode(t, Options{Seed: 5, Speed: 1e-6, WarmUp: 3 * time.Minute})

	cfg, err := agentconfig.Load(n.ConfigPath)
	if err != nil {
		t.Fatalf("agent.toml: %v", err)
	}
	if len(cfg.Agents) != 2 {
		t.Fatalf("agent.toml: %d agents", len(cfg.Agents))
	}
	// Backend.AI main's slot-based form by default: amounts, not devices.
	if cfg.AllocFormat != agentconfig.FormatSlotBased || cfg.IsDraftFormat() || !cfg.Verdict.Main {
		t.Errorf("agent.toml: format %s, draft %v, loads on main %v", cfg.AllocFormat, cfg.IsDraftFormat(), cfg.Verdict.Main)
	}
	for _, a := range cfg.Agents {
		if a.Alloc == nil || a.Alloc.CPUCount.String() != "15" || a.Alloc.Mem.String() != "128849018880" || a.Alloc.Slots[model.SlotCUDAShares].String() != "2.0" {
			t.Errorf("agent %s: partition %+v", a.ID, a.Alloc)
		}
	}
	if !slices.Equal(rootsOf(cfg.ScratchRoots()), rootPaths(n)) {
		t.Fatalf("config roots %v, node roots %v", cfg.ScratchRoots(), n.Roots)
	}
	for _, r := range n.Roots {
		if !strings.HasPrefix(r.Path, n.Dir+string(filepath.Separator)) {
			t.Errorf("scratch root %s is not in the node's directory", r.Path)
		}
	}
	src, err := inventory.NewMock(n.MockTOML, n.MockEtcd, nil)
	if err != nil {
		t.Fatalf("mock files: %v", err)
	}
	inv, err := n.Source().Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	count := map[model.SlotName]int{}
	numa := map[int]int{}
	for _, d := range inv.Devices {
		count[d.Slot]++
		if d.Name == "cpu" {
			numa[d.NUMANode]++
		}
		if d.Slot == model.SlotCUDAShares && !d.Capacity.Equal(model.One) {
			t.Errorf("%s has %s shares, want 1.00", d.Key(), d.Capacity)
		}
	}
	want := map[model.SlotName]int{"cpu": 32, "mem": 1, "cuda.shares": 4, "cuda.device:20g-mig": 1, "cuda.device:10g-mig": 1, "cuda.device:5g-mig": 2}
	for slot, c := range want {
		if count[slot] != c {
			t.Errorf("%d devices of slot %s, want %d", count[slot], slot, c)
		}
	}
	if numa[0] != 16 || numa[1] != 16 {
		t.Errorf("cores per NUMA node %v, want 16 and 16", numa)
	}
	if inv.HostMemBytes != 256<<30 {
		t.Errorf("host memory %d, want 256 GiB", inv.HostMemBytes)
	}
	_ = src.Close()

	files := resourceFiles(t, n)
	if len(files) == 0 {
		t.Fatal("no resource.txt after three minutes of warm-up")
	}
	withCID := 0
	for p, b := range files {
		kid := filepath.Base(filepath.Dir(filepath.Dir(p)))
		spec, err := resourcefile.Parse(b, inv.SlotTypes)
		if err != nil {
			// A slow write may be caught halfway; nothing else may fail.
			if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
				continue
			}
			t.Errorf("%s: %v\n%s", p, err, b)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		keys := make([]string, len(lines))
		for i, l := range lines {
			keys[i], _, _ = strings.Cut(l, "=")
		}
		if !slices.Equal(keys[:4], []string{"SCRATCH_SIZE", "MOUNTS", "SLOTS", "UNIFIED_DEVICES"}) {
			t.Errorf("%s: starts with %v", p, keys[:4])
		}
		if lines[0] != "SCRATCH_SIZE=0m" || lines[3] != "UNIFIED_DEVICES=[]" {
			t.Errorf("%s: %q, %q", p, lines[0], lines[3])
		}
		if !strings.Contains(lines[1], filepath.Join(filepath.Dir(filepath.Dir(p)), "config")+":/home/config:ro") {
			t.Errorf("%s: MOUNTS lacks the kernel's own config directory", p)
		}
		if keys[len(keys)-1] == "CID" {
			withCID++
			if len(strings.TrimPrefix(lines[len(lines)-1], "CID=")) != 64 {
				t.Errorf("%s: %s", p, lines[len(lines)-1])
			}
			base, err := os.ReadFile(filepath.Join(filepath.Dir(p), "resource_base.txt"))
			if err != nil || !bytes.Equal(base, b[:len(b)-len(lines[len(lines)-1])-1]) {
				t.Errorf("%s: resource_base.txt is not the file before its CID line (%v)", p, err)
			}
		}
		i := slices.Index(keys, "CUDA_GLOBAL_DEVICE_IDS")
		if i < 0 || !slices.Equal(keys[i:i+5], []string{"CUDA_GLOBAL_DEVICE_IDS", "CUDA_RESOURCE_VIRTUALIZED", "CUDA_MEMORY_LIMITS", "CUDA_PROCESSOR_LIMITS", "CUDA_RESERVED_MEMORY"}) {
			t.Errorf("%s: mock plugin lines missing or out of order: %v", p, keys)
		}
		for _, k := range keys[4:i] {
			if !strings.HasSuffix(k, "_SHARES") {
				t.Errorf("%s: %s between UNIFIED_DEVICES and the plugin lines", p, k)
			}
		}
		if spec.Slots[model.SlotCPU].IsZero() || spec.Slots[model.SlotMem].IsZero() {
			t.Errorf("%s: SLOTS without cpu or mem", p)
		}
		if _, ok := spec.Slots[model.SlotCUDAShares]; !ok {
			t.Errorf("%s (%s): SLOTS lacks cuda.shares (normalize_slots adds every known slot)", p, kid)
		}
	}
	if withCID == 0 {
		t.Error("no kernel has its CID line")
	}
}

func rootsOf(rs []agentconfig.Root) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}

func rootPaths(n *Node) []string {
	var out []string
	for _, r := range n.Roots {
		out = append(out, r.Path)
	}
	return out
}

// TestNodeSameSeedSameFiles: two nodes with one seed write the same files
// (their directories aside).
func TestNodeSameSeedSameFiles(t *testing.T) {
	tree := func(seed int64) map[string]string {
		n := startNode(t, Options{Seed: seed, Speed: 1e-6, WarmUp: 2 * time.Minute})
		out := map[string]string{}
		for p, b := range resourceFiles(t, n) {
			rel, _ := filepath.Rel(n.Dir, p)
			out[rel] = string(bytes.ReplaceAll(b, []byte(n.Dir), []byte("$DIR")))
		}
		return out
	}
	a, b, c := tree(9), tree(9), tree(10)
	if len(a) == 0 {
		t.Fatal("no kernel files")
	}
	if !mapsEqual(a, b) {
		t.Error("the same seed wrote different files")
	}
	if mapsEqual(a, c) {
		t.Error("different seeds wrote the same files")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestNodeDeterministicActions: two nodes run at wall-clock pace with the
// same seed act identically, however many steps each gets through.
func TestNodeDeterministicActions(t *testing.T) {
	record := func() []string {
		var mu sync.Mutex
		var lines []string
		n := startNode(t, Options{Seed: 21, Speed: 200, WarmUp: 10 * time.Second, OnAction: func(a Action) {
			mu.Lock()
			lines = append(lines, a.String())
			mu.Unlock()
		}})
		// At least 700 ms, and on a loaded machine until it has acted
		// enough to compare (at most 10 s).
		time.Sleep(700 * time.Millisecond)
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			enough := len(lines) >= 60
			mu.Unlock()
			if enough {
				break
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(lines)
	}
	a, b := record(), record()
	m := min(len(a), len(b))
	if m < 50 {
		t.Fatalf("only %d actions in common", m)
	}
	for i := 0; i < m; i++ {
		if a[i] != b[i] {
			t.Fatalf("action %d differs:\n%s\n%s", i, a[i], b[i])
		}
	}
}

// comparable is a snapshot's report without what differs between two
// readings of the same files: sequence number, time, and the kernels'
// file modification times (the live watcher reports them; the one-shot
// scan behind engine.Build does not stat the files).
func comparable(t *testing.T, s *model.Snapshot) []byte {
	t.Helper()
	r := report.FromSnapshot(s)
	r.Seq, r.Time = 0, ""
	r.IdleKernels = 0
	for i := range r.Kernels {
		r.Kernels[i].ModTime = ""
		if u := r.Kernels[i].Use; u != nil {
			// How long a kernel has been at 0 % is history a re-scan
			// cannot know.
			u.IdleSince, u.Idle = "", false
		}
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// agreeAfterPause pauses the node and waits until the engine's latest
// snapshot equals a full re-scan of the same roots; it returns the
// re-scan.
func agreeAfterPause(t *testing.T, n *Node, eng *engine.Engine) *model.Snapshot {
	t.Helper()
	n.Pause()
	defer n.Resume()
	opts := n.EngineOptions()
	deadline := time.Now().Add(10 * time.Second)
	for {
		want, err := engine.Build(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		live := eng.Latest()
		if live != nil {
			a, b := comparable(t, live), comparable(t, want)
			if bytes.Equal(a, b) {
				return want
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the pause the engine never matched a re-scan (- engine, + re-scan):\n%s", lineDiff(string(a), string(b)))
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// runWithEngine runs the node with the engine attached for d of wall time,
// a subscriber draining snapshots as the console would, and checks every
// interval that the engine agrees with a re-scan once the node is paused.
func runWithEngine(t *testing.T, opts Options, d, every time.Duration) {
	n := startNode(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	eng := engine.New(n.EngineOptions())
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	var wg sync.WaitGroup
	var seen int
	var bad []string
	sub := eng.Subscribe(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for s := range sub {
			seen++
			for _, is := range s.Issues {
				// The demo never places a kernel outside its agent's
				// partition; torn files come and go. With device lists
				// (the draft) it never over-commits a device either; in
				// main's slot-based form it does, as main's agents do (each
				// allocates over every device, blind to the other's
				// kernels), and fgtop says so.
				over := is.Code == model.IssueOverCapacity && opts.Partition == agentconfig.FormatDeviceBased
				if over || is.Code == model.IssueDriftNotOwner || is.Code == model.IssueUnknownDevice {
					bad = append(bad, is.String())
				}
			}
		}
	}()
	select {
	case <-eng.Ready():
	case err := <-errc:
		t.Fatalf("engine: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("engine not ready after 10 s")
	}
	checks, kernels := 0, map[model.KernelID]bool{}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(every)
		s := agreeAfterPause(t, n, eng)
		checks++
		for _, k := range s.Kernels() {
			kernels[k.ID] = true
		}
		if len(s.Agents) != 2 || s.Mode != modeManual {
			t.Fatalf("snapshot: %d agents, mode %q", len(s.Agents), s.Mode)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("engine: %v", err)
	}
	wg.Wait()
	if err := n.Err(); err != nil {
		t.Fatalf("node: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("%d bad issues, first: %s", len(bad), bad[0])
	}
	t.Logf("%d agreement checks, %d kernels seen in them, %d snapshots received, %s virtual",
		checks, len(kernels), seen, n.VirtualTime())
	if len(kernels) < 5 {
		t.Errorf("only %d kernels seen", len(kernels))
	}
}

// TestNodeEngineAgrees runs the demo with the engine attached (shortened:
// about 12 s at 20× speed) and checks, while it runs, that after each pause
// the live engine agrees with a full re-scan of the scratch roots.
func TestNodeEngineAgrees(t *testing.T) {
	d := 12 * time.Second
	if testing.Short() {
		d = 4 * time.Second
	}
	runWithEngine(t, Options{Seed: 3, Speed: 20, WarmUp: 30 * time.Second}, d, 1500*time.Millisecond)
}

// TestNodeEngineAgreesDeviceBased is TestNodeEngineAgrees with the
// BEP-1044 draft's device lists (--partition device-based): no device is
// ever over-committed there.
func TestNodeEngineAgreesDeviceBased(t *testing.T) {
	runWithEngine(t, Options{Seed: 3, Speed: 20, WarmUp: 30 * time.Second, Partition: agentconfig.FormatDeviceBased}, 4*time.Second, 1500*time.Millisecond)
}

// TestNodeEngineAgreesLong is the full check: a minute of wall time at real
// speed (FGTOP_DEMO_LONG=1; FGTOP_DEMO_SPEED changes the speed), e.g.
//
//	FGTOP_DEMO_LONG=1 go test -race -run Long ./engine/demo
func TestNodeEngineAgreesLong(t *testing.T) {
	if os.Getenv("FGTOP_DEMO_LONG") == "" {
		t.Skip("set FGTOP_DEMO_LONG=1 for the minute-long run")
	}
	speed := 1.0
	if s := os.Getenv("FGTOP_DEMO_SPEED"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		speed = v
	}
	runWithEngine(t, Options{Seed: 1, Speed: speed}, time.Minute, 5*time.Second)
}

// TestNodePause: a paused node writes nothing; Resume goes on.
func TestNodePause(t *testing.T) {
	n := startNode(t, Options{Seed: 4, Speed: 100, WarmUp: -1})
	time.Sleep(200 * time.Millisecond)
	n.Pause()
	at := n.VirtualTime()
	before := resourceFiles(t, n)
	time.Sleep(300 * time.Millisecond)
	if got := n.VirtualTime(); got != at {
		t.Fatalf("virtual time went from %s to %s while paused", at, got)
	}
	if after := resourceFiles(t, n); len(after) != len(before) {
		t.Fatalf("%d files before, %d after, while paused", len(before), len(after))
	}
	n.Resume()
	deadline := time.Now().Add(5 * time.Second)
	for n.VirtualTime() == at {
		if time.Now().After(deadline) {
			t.Fatal("Resume did not resume")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNodeClose: Close stops the node's goroutine and removes its files,
// also after its context was cancelled, and can be called twice.
func TestNodeClose(t *testing.T) {
	base := runtime.NumGoroutine()
	for _, cancelFirst := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		n, err := Start(ctx, Options{Seed: 1, Speed: 50, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if cancelFirst {
			cancel()
			select {
			case <-n.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the node did not stop with its context")
			}
			if _, err := os.Stat(n.Dir); err != nil {
				t.Fatalf("files gone before Close: %v", err)
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		if err := n.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		cancel()
		if _, err := os.Stat(n.Dir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s still there after Close", n.Dir)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"negative speed", Options{Speed: -1}},
		{"NaN speed", Options{Speed: math.NaN()}},
		{"infinite speed", Options{Speed: math.Inf(1)}},
		{"missing parent directory", Options{Dir: "/nonexistent/fgtop-demo-test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, err := Start(context.Background(), tt.opts); err == nil {
				_ = n.Close()
				t.Fatal("Start succeeded")
			}
		})
	}
}

func TestTOMLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/tmp/fgtop-demo-1", `"/tmp/fgtop-demo-1"`},
		{`/tmp/a "b"\c`, `"/tmp/a \"b\"\\c"`},
		{"/tmp/tab\there", `"/tmp/tab\u0009here"`},
	}
	for _, tt := range tests {
		if got := tomlString(tt.in); got != tt.want {
			t.Errorf("tomlString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// And such a path really loads.
	raw, err := renderAgentTOML(`/tmp/a "b"\c`, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := agentconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Agents[0].ScratchRoot; got != `/tmp/a "b"\c/i-demo-numa0` {
		t.Errorf("scratch root %q", got)
	}
}

// lineDiff lists the lines only in a (-) or only in b (+), in order, with
// one line of context: a longest-common-subsequence diff, fine for the few
// thousand lines of a snapshot.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	prev := ""
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			prev = x[i]
			i, j = i+1, j+1
			continue
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("  " + prev + "\n+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("  " + prev + "\n- " + x[i] + "\n")
			i++
		}
		prev = ""
	}
	return out.String()
}

// TestCommandFlags: the flags the headless demo prints point a command at
// the node's own files and at the host its files simulate (the cores and
// memory of its sys and proc trees), not at the machine it runs on.
func TestCommandFlags(t *testing.T) {
	n := startNode(t, Options{Seed: 1, Speed: 1e-6})
	flags := n.CommandFlags()
	if len(flags)%2 != 0 {
		t.Fatalf("flags %q are not pairs", flags)
	}
	got := map[string]string{}
	for i := 0; i < len(flags); i += 2 {
		got[flags[i]] = flags[i+1]
	}
	for flag, want := range map[string]string{"--config": n.ConfigPath, "--devices": n.MockTOML, "--mock-etcd": n.MockEtcd} {
		if got[flag] != want {
			t.Errorf("%s %q, want %q", flag, got[flag], want)
		}
	}
	online, err := os.ReadFile(filepath.Join(n.Dir, "host", "sys", "devices", "system", "cpu", "online"))
	if err != nil {
		t.Fatal(err)
	}
	wantCPUs, err := inventory.ParseCPUList(strings.TrimSpace(string(online)))
	if err != nil {
		t.Fatal(err)
	}
	if cpus, err := inventory.ParseCPUList(got["--host-cpus"]); err != nil || !slices.Equal(cpus, wantCPUs) {
		t.Errorf("--host-cpus %q (%v), want the node's %s", got["--host-cpus"], err, online)
	}
	meminfo, err := os.ReadFile(filepath.Join(n.Dir, "host", "proc", "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	var kib int64
	if _, err := fmt.Sscanf(string(meminfo), "MemTotal: %d kB", &kib); err != nil {
		t.Fatal(err)
	}
	mem, err := model.ParseFiniteBinarySize(got["--host-mem"])
	if err != nil {
		t.Fatalf("--host-mem %q: %v", got["--host-mem"], err)
	}
	if b, err := mem.Int64(); err != nil || b != kib<<10 {
		t.Errorf("--host-mem %q is %d bytes, want the node's MemTotal %d kB", got["--host-mem"], b, kib)
	}
}

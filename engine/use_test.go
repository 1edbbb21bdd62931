package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/procmap"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

const (
	cidB = "a3f9c2e17b4d8f6a0e5c9b2d7f1a4e8c3b6d9f2a5e8c1b4d7f0a3e6c9b2d5f8a" // kernel B's CID= line
	cidC = "0b7e4d1a9c6f3e8b2d5a0c7f4e1b8d3a6c9f2e5b0d7a4c1f8e3b6d9a2c5f0e7b" // kernel C's
	// cidOther is a container no kernel names.
	cidOther = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
)

// procSource wraps a device source and lists GPU processes on its cuda
// devices, named through inventory.ProcessReader over a fake /proc, the
// path NVML's processes take.
type procSource struct {
	inventory.Source
	reader *inventory.ProcessReader
	procs  map[model.DeviceID][]inventory.RawProcess
}

func (p *procSource) Poll(ctx context.Context) (*inventory.Inventory, error) {
	inv, err := p.Source.Poll(ctx)
	if err != nil {
		return nil, err
	}
	out := *inv
	out.Devices = append([]model.Device(nil), inv.Devices...)
	defer p.reader.EndPoll()
	for i := range out.Devices {
		d := &out.Devices[i]
		if d.Name != "cuda" {
			continue
		}
		mark := p.reader.Mark()
		d.Telemetry = &model.Telemetry{Processes: p.reader.Read(p.procs[d.ID], mark), ProcUtil: model.Some(true),
			UtilGPU: model.Some[uint32](0)}
	}
	return &out, nil
}

func writeProc(t *testing.T, root string, pid int, comm string, start uint64, cgroup string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 100 10\n", pid, comm, pid, pid, start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProcessesToKernels: GPU processes are credited to the kernel whose
// CID= line names their container; a host process and a container no
// kernel names are not Backend.AI's; a PID gone is credited to nobody. Per
// kernel: its share beside its processes' memory and utilisation, and
// "holding but idle" after IdleAfter at 0 %.
func TestProcessesToKernels(t *testing.T) {
	root, opts := fixtureTree(t)
	proc := t.TempDir()
	if err := os.WriteFile(filepath.Join(proc, "uptime"), []byte("1000.00 1.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeProc(t, proc, 100, "python3", 500, "0::/system.slice/docker-"+cidB+".scope\n")
	writeProc(t, proc, 101, "train", 600, "12:memory:/docker/"+cidC+"\n")
	writeProc(t, proc, 102, "worker", 700, "0::/kubepods.slice/cri-containerd-"+cidC+".scope\n")
	writeProc(t, proc, 103, "Xorg", 10, "0::/system.slice/display-manager.service\n")
	writeProc(t, proc, 104, "other", 800, "0::/docker/"+cidOther+"\n")
	src := &procSource{Source: opts.Inventory, reader: inventory.NewProcessReader(proc), procs: map[model.DeviceID][]inventory.RawProcess{
		gpu04: {{PID: 100, UsedMem: model.Some[uint64](2 << 30), SMUtil: model.Some[uint32](0)}},
		gpu02: {{PID: 101, UsedMem: model.Some[uint64](1 << 30), SMUtil: model.Some[uint32](30)},
			{PID: 103, UsedMem: model.Some[uint64](1 << 20), SMUtil: model.Some[uint32](1)}},
		gpu03: {{PID: 102, UsedMem: model.Some[uint64](3 << 30), SMUtil: model.Some[uint32](70)},
			{PID: 104, SMUtil: model.Some[uint32](5)}, {PID: 105}},
	}}
	opts.Inventory = src
	now := time.Unix(1700000000, 0)
	opts.Clock = func() time.Time { return now }
	opts.IdleAfter = 10 * time.Minute
	s, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[uint32]string{}
	for _, d := range s.Devices {
		if d.Telemetry == nil {
			continue
		}
		for _, p := range d.Telemetry.Processes {
			owners[p.PID] = string(p.Owner) + ":" + string(p.Kernel)
		}
	}
	want := map[uint32]string{
		100: "kernel:" + kernelB, 101: "kernel:" + kernelC, 102: "kernel:" + kernelC,
		103: "not-backendai:", 104: "not-backendai:", 105: "gone:",
	}
	for pid, w := range want {
		if owners[pid] != w {
			t.Errorf("pid %d: %q, want %q", pid, owners[pid], w)
		}
	}
	kb, kc, ka := s.Kernel(kernelB), s.Kernel(kernelC), s.Kernel(kernelA)
	if kb.Container != cidB || kc.Container != cidC {
		t.Errorf("containers %q %q", kb.Container, kc.Container)
	}
	if ka.Use != nil {
		t.Errorf("a CPU-only kernel without processes has a use: %+v", ka.Use)
	}
	u := kc.Use
	if u == nil || u.Procs != 2 || u.MemUsed != model.Some[uint64](4<<30) || u.Util != model.Some[uint32](70) || u.Idle || !u.IdleSince.IsZero() ||
		len(u.Devices) != 2 || u.Devices[0].Held.String() != "0.60" || u.Devices[0].Capacity.String() != "1.00" ||
		u.Devices[0].Util != model.Some[uint32](30) || u.Devices[1].Util != model.Some[uint32](70) {
		t.Errorf("kernel C use: %+v", u)
	}
	u = kb.Use
	if u == nil || u.Procs != 1 || u.Util != model.Some[uint32](0) || !u.IdleSince.Equal(now) || u.Idle || s.IdleKernels != 0 {
		t.Errorf("kernel B use (at 0 %%, not yet idle): %+v, idle kernels %d", u, s.IdleKernels)
	}

	// The live path: B's process is gone (it holds the GPU and runs
	// nothing); after IdleAfter at 0 % B is marked idle, by time alone.
	busy := src.procs[gpu04]
	src.procs[gpu04] = nil
	st := newState(&opts)
	st.takeInventory(src.Poll(context.Background()))
	// Before its CID= line (the container is still being created) B holds
	// its share at 0 % but is not on the idle clock.
	kbRead := kernelRead{root: root, id: kernelB, path: kb.Path, spec: specOf(t, kb.Path), mod: kb.ModTime}
	unborn := *kbRead.spec
	unborn.CID = ""
	st.upsertKernel(kernelRead{root: root, id: kernelB, path: kb.Path, spec: &unborn, mod: kb.ModTime})
	if u := st.snapshot().Kernel(kernelB).Use; u == nil || !u.IdleSince.IsZero() || u.Util != model.Some[uint32](0) {
		t.Errorf("B without a container: %+v", u)
	}
	now = now.Add(time.Minute)
	for _, k := range s.Kernels() {
		st.upsertKernel(kernelRead{root: root, id: k.ID, path: k.Path, spec: specOf(t, k.Path), mod: k.ModTime})
	}
	first := st.snapshot()
	if first.Kernel(kernelB).Use == nil || first.Kernel(kernelB).Use.Idle {
		t.Fatalf("B at start: %+v", first.Kernel(kernelB).Use)
	}
	now = now.Add(9 * time.Minute)
	st.takeInventory(src.Poll(context.Background()))
	if s := st.snapshot(); s.IdleKernels != 0 || s.Kernel(kernelB) != first.Kernel(kernelB) {
		t.Errorf("after 9 min: idle %d, B republished without a change: %v", s.IdleKernels, s.Kernel(kernelB) != first.Kernel(kernelB))
	}
	now = now.Add(time.Minute)
	st.takeInventory(src.Poll(context.Background()))
	s = st.snapshot()
	if s.IdleKernels != 1 || !s.Kernel(kernelB).Use.Idle || s.Kernel(kernelB).Use.Procs != 0 || s.Kernel(kernelC).Use.Idle {
		t.Errorf("after 10 min: idle %d, B %+v", s.IdleKernels, s.Kernel(kernelB).Use)
	}
	// B gets busy: no longer idle, and its clock starts again.
	src.procs[gpu04] = busy
	src.procs[gpu04][0].SMUtil = model.Some[uint32](12)
	now = now.Add(time.Second)
	st.takeInventory(src.Poll(context.Background()))
	s = st.snapshot()
	if s.IdleKernels != 0 || s.Kernel(kernelB).Use.Idle || !s.Kernel(kernelB).Use.IdleSince.IsZero() {
		t.Errorf("busy again: idle %d, B %+v", s.IdleKernels, s.Kernel(kernelB).Use)
	}
	// B's container goes (its CID line is lost with the kernel): its
	// process is no longer credited to it.
	st.removeKernel(kernelB)
	s = st.snapshot()
	for _, d := range s.Devices {
		if d.ID == gpu04 && (d.Telemetry.Processes[0].Kernel != "" || d.Telemetry.Processes[0].Owner != model.ProcForeign) {
			t.Errorf("after B is removed: %+v", d.Telemetry.Processes[0])
		}
	}
}

func specOf(t *testing.T, path string) *resourcefile.Spec {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := resourcefile.ParseOptions{FiguresOnly: true}.Parse(b, model.DefaultSlotTypes())
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// BenchmarkPollUses is one inventory poll's process join and use update
// on a node of 10,000 kernels holding GPU shares, 8 GPUs listing their
// processes (one per 100 kernels): the steady state of a big node.
func BenchmarkPollUses(b *testing.B) {
	const kernels, gpus = 10_000, 8
	devs := make([]model.Device, gpus)
	for g := range devs {
		devs[g] = model.Device{ID: model.DeviceID(fmt.Sprintf("GPU-%d", g)), Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("100")}
	}
	now := time.Unix(1700000000, 0)
	opts := Options{Clock: func() time.Time { return now }, Roots: []scratch.Root{{Path: "/r", Agent: "a"}}}
	st := newState(&opts)
	inv := func() *inventory.Inventory {
		out := &inventory.Inventory{Devices: append([]model.Device(nil), devs...), SlotTypes: model.DefaultSlotTypes()}
		for g := range out.Devices {
			var ps []model.Process
			for k := g; k < kernels; k += 100 * gpus {
				ps = append(ps, model.Process{PID: uint32(1000 + k), Container: fmt.Sprintf("%064x", k), UsedMem: model.Some[uint64](1 << 30), SMUtil: model.Some[uint32](uint32(k % 7))})
			}
			out.Devices[g].Telemetry = &model.Telemetry{Processes: ps, ProcUtil: model.Some(true)}
		}
		return out
	}
	st.takeInventory(inv(), nil)
	for k := 0; k < kernels; k++ {
		spec := &resourcefile.Spec{Alloc: model.Allocations{model.SlotCUDAShares: {devs[k%gpus].ID: model.MustDec("0.01")}}, CID: fmt.Sprintf("%064x", k)}
		st.upsertKernel(kernelRead{root: "/r", id: model.KernelID(fmt.Sprintf("k%05d", k)), path: "/r/x", spec: spec})
	}
	st.snapshot()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		st.takeInventory(inv(), nil)
		st.snapshot()
	}
}

// TestNormalID checks the shortcut setContainer takes before
// procmap.NormalizeID: it may only say "already normal" where NormalizeID
// would return the id unchanged.
func TestNormalID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"", true},
		{"53e9eedc101e04ad82d86422c4536cd3fd30d7e838f23dffec9c922d618896f0", true},
		{"53E9EEDC101E04AD", false},
		{" 53e9", false},
		{"53e9\n", false},
		{"53e9\u00a0", false},
		{"abc\u0130", false},
		{"a-b_c.d", true},
	} {
		if got := normalID(tc.id); got != tc.want {
			t.Errorf("normalID(%q) = %v, want %v", tc.id, got, tc.want)
		}
		if normalID(tc.id) && procmap.NormalizeID(tc.id) != tc.id {
			t.Errorf("normalID(%q) but NormalizeID gives %q", tc.id, procmap.NormalizeID(tc.id))
		}
	}
}

// FuzzNormalID holds normalID to procmap.NormalizeID on any input.
func FuzzNormalID(f *testing.F) {
	for _, s := range []string{"", "53e9eedc101e04ad", "ABC", " a ", "\u00a0x", "\u0130"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if normalID(id) && procmap.NormalizeID(id) != id {
			t.Fatalf("normalID(%q) but NormalizeID gives %q", id, procmap.NormalizeID(id))
		}
	})
}

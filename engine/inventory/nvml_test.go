//go:build cgo && linux

package inventory

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// dgx is a go-nvml mock server and its devices.
type dgx struct {
	lib  nvml.Interface
	devs []*dgxa100.Device // an alias of the shared server.Device
}

func newDGX(t testing.TB, kind string) *dgx {
	t.Helper()
	var srv interface {
		nvml.Interface
	}
	var devices []nvml.Device
	switch kind {
	case "dgxa100":
		s := dgxa100.New()
		srv, devices = s, s.Devices
	case "dgxh100":
		s := dgxh100.New()
		srv, devices = s, s.Devices
	default:
		t.Fatalf("unknown mock %q", kind)
	}
	d := &dgx{lib: srv}
	for _, dev := range devices {
		d.devs = append(d.devs, dev.(*dgxa100.Device))
	}
	return d
}

// nvmlOpts points sysfs and procfs at an empty temp dir so tests never
// read the real machine.
func nvmlOpts(t testing.TB, o NVMLOptions) NVMLOptions {
	dir := t.TempDir()
	if o.SysRoot == "" {
		o.SysRoot = dir
	}
	if o.ProcRoot == "" {
		o.ProcRoot = dir
	}
	return o
}

func gpus(inv *Inventory) []model.Device {
	var out []model.Device
	for _, d := range accelerators(inv) {
		if !d.IsMIG() {
			out = append(out, d)
		}
	}
	return out
}

func TestNVMLMockServers(t *testing.T) {
	for _, kind := range []string{"dgxa100", "dgxh100"} {
		for _, style := range []IDStyle{"", IDStyleUUID, IDStyleIndex} {
			t.Run(fmt.Sprintf("%s/%q", kind, style), func(t *testing.T) {
				m := newDGX(t, kind)
				src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{IDStyle: style}), nil)
				defer src.Close()
				if src.InitErr() != nil {
					t.Fatal(src.InitErr())
				}
				inv := poll(t, src)
				if inv.Source.Kind != KindNVML || inv.Source.Health != HealthOK || len(inv.Issues) != 0 {
					t.Errorf("source %+v issues %v", inv.Source, inv.Issues)
				}
				if !strings.Contains(inv.Source.Detail, "driver 550.54.15") || !strings.Contains(inv.Source.Detail, "8 GPU(s)") {
					t.Errorf("detail %q", inv.Source.Detail)
				}
				gs := gpus(inv)
				if len(gs) != 8 || len(inv.Devices) != 8 {
					t.Fatalf("%d GPUs, %d devices", len(gs), len(inv.Devices))
				}
				for i, d := range gs {
					md := m.devs[i]
					wantID := md.UUID
					if style == IDStyleIndex {
						wantID = fmt.Sprint(i)
					}
					if string(d.ID) != wantID || "GPU-"+d.UUID != md.UUID || d.Index != i {
						t.Errorf("GPU %d: id %q uuid %q index %d, want id %q uuid %q", i, d.ID, d.UUID, d.Index, wantID, md.UUID)
					}
					if d.Name != "cuda" || d.Slot != model.SlotCUDADevice || d.SlotType != model.SlotTypeCount || d.Capacity.String() != "1" {
						t.Errorf("GPU %d: %s %s %s %s", i, d.Name, d.Slot, d.SlotType, d.Capacity)
					}
					if d.Model != md.Config.Name || d.MemoryBytes != int64(md.Config.MemoryMB)<<20 {
						t.Errorf("GPU %d: model %q mem %d", i, d.Model, d.MemoryBytes)
					}
					tel := d.Telemetry
					if tel == nil {
						t.Fatalf("GPU %d: no telemetry", i)
					}
					if !tel.MemTotal.Valid || tel.MemTotal.V != md.Config.MemoryMB<<20 || !tel.MemUsed.Valid || tel.MemUsed.V != 0 {
						t.Errorf("GPU %d: memory %+v / %+v", i, tel.MemUsed, tel.MemTotal)
					}
					// What the mock does not implement (it panics) is N/A,
					// never 0, and not an error.
					if tel.UtilGPU.Valid || tel.UtilMem.Valid || tel.TempC.Valid || tel.PowerMW.Valid || tel.PowerCapMW.Valid || tel.Processes != nil {
						t.Errorf("GPU %d: unimplemented calls gave values: %+v", i, tel)
					}
					if d.NUMANode != -1 || tel.Lost || len(tel.Errors) != 0 {
						t.Errorf("GPU %d: numa %d lost %v errors %v", i, d.NUMANode, tel.Lost, tel.Errors)
					}
					if !tel.MIGMode.Valid || tel.MIGMode.V {
						t.Errorf("GPU %d: MIG mode %+v", i, tel.MIGMode)
					}
				}
				if inv.SlotTypes[model.SlotCUDADevice] != model.SlotTypeCount || inv.Fractional {
					t.Errorf("slot types %v fractional %v", inv.SlotTypes, inv.Fractional)
				}
			})
		}
	}
}

func TestNVMLTelemetry(t *testing.T) {
	m := newDGX(t, "dgxa100")
	dir := t.TempDir()
	writeFile(t, dir, "proc/uptime", "5000.00 100.00\n")
	writeFile(t, dir, "proc/4242/stat", statLine(4242, "python3", 360000))
	writeFile(t, dir, "proc/4242/cgroup", "0::/system.slice/docker-"+cidA+".scope\n")
	writeFile(t, dir, "sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n")
	d := m.devs[2]
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 87, Memory: 0}, nvml.SUCCESS }
	d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
		if s != nvml.TEMPERATURE_GPU {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return 0, nvml.SUCCESS // a real 0 °C reading stays a value
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 251_000, nvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 3 << 30}, {Pid: 7, UsedGpuMemory: math.MaxUint64}}, nvml.SUCCESS
	}
	d.GetNumaNodeIdFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS }
	d.MemoryInfo.Used = 5 << 30
	// GPU 3: NUMA from sysfs through its PCI bus id; GPU 4: NVML says the
	// calls are not supported.
	m.devs[3].GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		var p nvml.PciInfo
		for i, c := range "00000000:3B:00.0" {
			p.BusId[i] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	m.devs[4].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	m.devs[4].GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	m.devs[5].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	m.devs[5].GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NO_PERMISSION }

	src := NewNVML(m.lib, NVMLOptions{SysRoot: dir + "/sys", ProcRoot: dir + "/proc"}, nil)
	defer src.Close()
	inv := poll(t, src)
	g := inv.Devices[2].Telemetry
	want := model.Telemetry{
		MemUsed: model.Some[uint64](5 << 30), MemTotal: model.Some[uint64](40960 << 20),
		UtilGPU: model.Some[uint32](87), UtilMem: model.Some[uint32](0), TempC: model.Some[uint32](0),
		PowerMW: model.Some[uint32](251_000), PowerCapMW: model.Some[uint32](400_000), MIGMode: model.Some(false),
		Processes: []model.Process{
			{PID: 4242, UsedMem: model.Some[uint64](3 << 30), Name: "python3", Start: 360000, Container: cidA},
			{PID: 7, Owner: model.ProcGone}, // memory not attributable: N/A; no /proc entry: gone
		},
		ProcUtil: model.Some(false), // the mock has no per-process samples: memory only
	}
	if !reflect.DeepEqual(*g, want) {
		t.Errorf("telemetry\n got %+v\nwant %+v", *g, want)
	}
	if inv.Devices[2].NUMANode != 1 || inv.Devices[3].NUMANode != 1 || inv.Devices[0].NUMANode != -1 {
		t.Errorf("numa: %d %d %d", inv.Devices[2].NUMANode, inv.Devices[3].NUMANode, inv.Devices[0].NUMANode)
	}
	if g4 := inv.Devices[4].Telemetry; g4.TempC.Valid || len(g4.Errors) != 0 || g4.Processes == nil || len(g4.Processes) != 0 {
		t.Errorf("not supported / no processes: %+v", g4)
	}
	if g5 := inv.Devices[5].Telemetry; g5.TempC.Valid || g5.PowerMW.Valid ||
		!reflect.DeepEqual(g5.Errors, []string{"temperature: " + nvml.ERROR_UNKNOWN.Error(), "power: " + nvml.ERROR_NO_PERMISSION.Error()}) {
		t.Errorf("errors: %+v", g5)
	}
	if inv.Source.Health != HealthOK {
		t.Errorf("telemetry errors made the source %s", inv.Source.Health)
	}
}

func TestNVMLGPULost(t *testing.T) {
	m := newDGX(t, "dgxa100")
	var lost atomic.Bool
	var tempCalls atomic.Int64
	d := m.devs[3]
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		if lost.Load() {
			return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
		}
		return d.MemoryInfo, nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		tempCalls.Add(1)
		return 60, nvml.SUCCESS
	}
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{}), nil)
	defer src.Close()

	inv := poll(t, src)
	if inv.Devices[3].Telemetry.Lost || inv.Source.Health != HealthOK || tempCalls.Load() != 1 {
		t.Fatalf("before: %+v %s", inv.Devices[3].Telemetry, inv.Source.Health)
	}
	lost.Store(true)
	for round := 0; round < 3; round++ {
		inv = poll(t, src)
		for i, g := range inv.Devices {
			if g.Telemetry.Lost != (i == 3) {
				t.Errorf("round %d: GPU %d lost = %v", round, i, g.Telemetry.Lost)
			}
		}
		lostDev := inv.Devices[3]
		if lostDev.Telemetry.MemTotal.Valid || lostDev.Telemetry.TempC.Valid || lostDev.ID != model.DeviceID(d.UUID) {
			t.Errorf("round %d: lost GPU reports values: %+v", round, lostDev)
		}
		if inv.Source.Health != HealthDegraded || !strings.Contains(inv.Source.Detail, "1 lost") {
			t.Errorf("round %d: source %+v", round, inv.Source)
		}
		if len(inv.Issues) != 1 || inv.Issues[0].Device != lostDev.Key() || inv.Issues[0].Severity != model.SevError || !strings.Contains(inv.Issues[0].Message, "is lost") {
			t.Errorf("round %d: issues %v", round, inv.Issues)
		}
	}
	// The lost GPU is not asked again: the first call found it lost, and
	// later polls skip it.
	if n := tempCalls.Load(); n != 1 {
		t.Errorf("lost GPU queried again: %d temperature calls", n)
	}
}

// countingLib is a mock.Interface where every method counts its call and
// returns zero values, so a test sees any call at all.
type countingLib struct {
	*mock.Interface
	mu    sync.Mutex
	calls []string
}

func newCountingLib(initRet nvml.Return) *countingLib {
	c := &countingLib{Interface: &mock.Interface{}}
	v := reflect.ValueOf(c.Interface).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, ft := v.Field(i), v.Type().Field(i)
		if ft.Type.Kind() != reflect.Func || !strings.HasSuffix(ft.Name, "Func") {
			continue
		}
		name, typ := strings.TrimSuffix(ft.Name, "Func"), ft.Type
		f.Set(reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			c.record(name)
			out := make([]reflect.Value, typ.NumOut())
			for j := range out {
				out[j] = reflect.Zero(typ.Out(j))
			}
			return out
		}))
	}
	c.InitFunc = func() nvml.Return {
		c.record("Init")
		return initRet
	}
	return c
}

func (c *countingLib) record(name string) {
	c.mu.Lock()
	c.calls = append(c.calls, name)
	c.mu.Unlock()
}

func (c *countingLib) called() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func TestNVMLInitFailure(t *testing.T) {
	tests := []struct {
		ret    nvml.Return
		reason InitFailure
		msg    string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, InitLibraryNotFound, "libnvidia-ml.so.1) not found"},
		{nvml.ERROR_DRIVER_NOT_LOADED, InitDriverNotLoaded, "kernel driver is not loaded"},
		{nvml.ERROR_NO_PERMISSION, InitNoPermission, "no permission"},
		{nvml.ERROR_LIB_RM_VERSION_MISMATCH, InitVersionMismatch, "version mismatch"},
		{nvml.ERROR_UNKNOWN, InitOther, "NVML initialisation failed (NVML error 999)"},
	}
	for _, tc := range tests {
		t.Run(string(tc.reason), func(t *testing.T) {
			lib := newCountingLib(tc.ret)
			host := fakeHost(t, hostLayout{online: "0-1", memKB: 1})
			src := NewNVML(lib, nvmlOpts(t, NVMLOptions{}), host)
			ie := src.InitErr()
			if ie == nil || ie.Reason != tc.reason || ie.Code != int(tc.ret) || !strings.Contains(ie.Error(), tc.msg) {
				t.Fatalf("InitErr = %#v (%v)", ie, ie)
			}
			for i := 0; i < 2; i++ {
				inv := poll(t, src)
				if inv.Source.Kind != KindNVML || inv.Source.Health != HealthUnavailable {
					t.Errorf("source %+v", inv.Source)
				}
				if cpus := len(inv.Devices); cpus != 3 || len(accelerators(inv)) != 0 {
					t.Errorf("devices %v", inv.Devices)
				}
				if len(inv.Issues) != 1 || inv.Issues[0].Severity != model.SevError || !strings.Contains(inv.Issues[0].Message, tc.msg) {
					t.Errorf("issues %v", inv.Issues)
				}
			}
			if err := src.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			// Nothing after a failed Init, Shutdown included: the real
			// library would kill the process.
			if got := lib.called(); !reflect.DeepEqual(got, []string{"Init"}) {
				t.Errorf("calls = %v, want only Init", got)
			}
		})
	}
}

func TestNVMLInitPanics(t *testing.T) {
	src := NewNVML(&mock.Interface{}, NVMLOptions{}, nil)
	if ie := src.InitErr(); ie == nil || ie.Reason != InitOther {
		t.Fatalf("InitErr = %v", ie)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNVMLRealLibrary uses the machine's NVML. Without an NVIDIA driver
// Init returns ERROR_LIBRARY_NOT_FOUND; any call after that would end the
// test binary (exit 127), so getting to the end is the assertion.
func TestNVMLRealLibrary(t *testing.T) {
	src := NewNVML(nvml.New(), NVMLOptions{}, NewHost(HostOptions{}))
	ie := src.InitErr()
	if ie == nil {
		inv := poll(t, src)
		if err := src.Close(); err != nil {
			t.Error(err)
		}
		t.Skipf("NVML initialised on this machine: %s", inv.Source.Detail)
	}
	if ie.Reason != InitLibraryNotFound {
		t.Logf("NVML Init failed as %s (%v); expected library-not-found on a machine without a driver", ie.Reason, ie)
	}
	inv := poll(t, src)
	if inv.Source.Health != HealthUnavailable || len(accelerators(inv)) != 0 || inv.HostMemBytes <= 0 {
		t.Errorf("inventory %+v", inv.Source)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAutoClassified(t *testing.T) {
	defer func(f func() nvml.Interface) { newSystemLib = f }(newSystemLib)
	tests := []struct {
		spec string
		ret  nvml.Return
		kind string
		sev  model.Severity
	}{
		{"auto", nvml.ERROR_LIBRARY_NOT_FOUND, KindNone, model.SevInfo},
		{"auto", nvml.ERROR_DRIVER_NOT_LOADED, KindNone, model.SevError},
		{"", nvml.ERROR_NO_PERMISSION, KindNone, model.SevError},
		{"nvml", nvml.ERROR_LIBRARY_NOT_FOUND, KindNVML, model.SevError},
		{"nvml", nvml.ERROR_LIB_RM_VERSION_MISMATCH, KindNVML, model.SevError},
	}
	for _, tc := range tests {
		lib := newCountingLib(tc.ret)
		newSystemLib = func() nvml.Interface { return lib }
		src, err := Open(tc.spec, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		inv := poll(t, src)
		_ = src.Close()
		if inv.Source.Kind != tc.kind || inv.Source.Health != HealthUnavailable || len(inv.Issues) != 1 || inv.Issues[0].Severity != tc.sev {
			t.Errorf("%q/%v: source %+v issues %v", tc.spec, tc.ret, inv.Source, inv.Issues)
		}
		if inv.HostMemBytes <= 0 {
			t.Errorf("%q/%v: no host devices", tc.spec, tc.ret)
		}
		if got := lib.called(); !reflect.DeepEqual(got, []string{"Init"}) {
			t.Errorf("%q/%v: calls %v", tc.spec, tc.ret, got)
		}
	}
	// A working NVML is used as is.
	m := newDGX(t, "dgxh100")
	newSystemLib = func() nvml.Interface { return m.lib }
	src, err := Open("auto", OpenOptions{NVML: nvmlOpts(t, NVMLOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if inv := poll(t, src); inv.Source.Kind != KindNVML || len(gpus(inv)) != 8 {
		t.Errorf("auto with NVML: %+v", inv.Source)
	}
}

func TestNVMLClose(t *testing.T) {
	m := newDGX(t, "dgxa100")
	var shutdowns atomic.Int64
	srv := m.lib.(*dgxa100.Server)
	srv.ShutdownFunc = func() nvml.Return { shutdowns.Add(1); return nvml.SUCCESS }
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{}), nil)
	poll(t, src)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if shutdowns.Load() != 1 {
		t.Errorf("%d Shutdown calls, want 1", shutdowns.Load())
	}
	if _, err := src.Poll(t.Context()); err == nil {
		t.Error("Poll after Close succeeded")
	}
}

func TestNVMLFractional(t *testing.T) {
	m := newDGX(t, "dgxa100")
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{
		IDStyle:       IDStyleIndex,
		Fractional:    true,
		Shares:        map[model.DeviceID]model.Dec{"1": model.MustDec("13.50")},
		DefaultShares: model.MustDec("2.00"),
	}), nil)
	defer src.Close()
	inv := poll(t, src)
	if !inv.Fractional || inv.Quantum.String() != "0.01" || inv.SlotTypes[model.SlotCUDAShares] != model.SlotTypeCount {
		t.Errorf("fractional %v quantum %s slots %v", inv.Fractional, inv.Quantum, inv.SlotTypes)
	}
	for i, d := range inv.Devices {
		want := "2.00"
		if i == 1 {
			want = "13.50"
		}
		if d.Slot != model.SlotCUDAShares || d.Capacity.String() != want {
			t.Errorf("GPU %d: %s %s, want %s", i, d.Slot, d.Capacity, want)
		}
	}
}

// TestNVMLMIGInstances: the mock has no MIG device handles, so the source
// walks the GPU and compute instance tables.
func TestNVMLMIGInstances(t *testing.T) {
	m := newDGX(t, "dgxa100")
	d := m.devs[0]
	if ret, _ := d.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	mkGI := func(profile int) nvml.GpuInstance {
		info, ret := d.GetGpuInstanceProfileInfo(profile)
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		gi, ret := d.CreateGpuInstance(&info)
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		ciInfo, ret := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		if _, ret := gi.CreateComputeInstance(&ciInfo); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		return gi
	}
	mkGI(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	mkGI(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 10, UsedGpuMemory: 1 << 30, GpuInstanceId: 1, ComputeInstanceId: 0}}, nvml.SUCCESS
	}

	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{}), nil)
	defer src.Close()
	inv := poll(t, src)
	if len(inv.Devices) != 10 {
		t.Fatalf("%d devices, want 8 GPUs + 2 MIG", len(inv.Devices))
	}
	if !inv.Devices[0].Telemetry.MIGMode.V {
		t.Error("MIG mode not reported")
	}
	type row struct {
		id, slot, parent string
		mem              int64
		procs            int
	}
	want := []row{
		{fmt.Sprintf("MIG-%s/0/0", d.UUID), "cuda.device:3g.20gb-mig", d.UUID, 19968 << 20, 0},
		{fmt.Sprintf("MIG-%s/1/0", d.UUID), "cuda.device:1g.5gb-mig", d.UUID, 4864 << 20, 1},
	}
	for i, w := range want {
		c := inv.Devices[1+i]
		got := row{string(c.ID), string(c.Slot), string(c.Parent), c.MemoryBytes, len(c.Telemetry.Processes)}
		if got != w || c.SlotType != model.SlotTypeUnique || c.Capacity.String() != "1" || !c.IsMIG() {
			t.Errorf("MIG %d = %+v, want %+v", i, got, w)
		}
		if inv.SlotTypes[c.Slot] != model.SlotTypeUnique {
			t.Errorf("slot type of %s missing", c.Slot)
		}
	}
	if inv.Devices[3].ID != model.DeviceID(m.devs[1].UUID) {
		t.Errorf("GPU 1 not right after GPU 0's MIG devices: %s", inv.Devices[3].ID)
	}
}

// TestNVMLMIGHandles: with MIG device handles (what real drivers have),
// the slices carry NVML's MIG UUIDs and names.
func TestNVMLMIGHandles(t *testing.T) {
	m := newDGX(t, "dgxh100")
	d := m.devs[1]
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS }
	slice := &mock.Device{
		GetUUIDFunc:       func() (string, nvml.Return) { return "MIG-5c89b5a9-1d4f-5a1e-9f57-3b1c0e6d2a11", nvml.SUCCESS },
		GetNameFunc:       func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3 MIG 1g.10gb", nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 10 << 30, Used: 1 << 30}, nvml.SUCCESS },
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 3, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 {
			return slice, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{IDStyle: IDStyleIndex}), nil)
	defer src.Close()
	inv := poll(t, src)
	if len(inv.Devices) != 9 {
		t.Fatalf("%d devices", len(inv.Devices))
	}
	c := inv.Devices[2]
	if c.ID != "MIG-5c89b5a9-1d4f-5a1e-9f57-3b1c0e6d2a11" || c.Parent != "1" || c.Slot != "cuda.device:1g.10gb-mig" || c.Index != 1 || c.MemoryBytes != 10<<30 {
		t.Errorf("MIG device = %+v", c)
	}
	tel := c.Telemetry
	if !tel.MemUsed.Valid || tel.MemUsed.V != 1<<30 || tel.Processes != nil || len(tel.Errors) != 0 {
		t.Errorf("MIG telemetry = %+v", tel)
	}
	if inv.Devices[3].ID != "2" {
		t.Errorf("order: %s after the MIG device", inv.Devices[3].ID)
	}
}

func TestMIGProfileNames(t *testing.T) {
	if got := migProfileFromName("NVIDIA A100-SXM4-40GB MIG 3g.20gb"); got != "3g.20gb" {
		t.Errorf("from name: %q", got)
	}
	if got := migProfileFromName("NVIDIA A100"); got != "" {
		t.Errorf("no MIG in name: %q", got)
	}
	for _, tc := range []struct {
		info nvml.GpuInstanceProfileInfo
		want string
	}{
		{nvml.GpuInstanceProfileInfo{Id: nvml.GPU_INSTANCE_PROFILE_1_SLICE, SliceCount: 1, MemorySizeMB: 4864}, "1g.5gb"},
		{nvml.GpuInstanceProfileInfo{Id: nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, SliceCount: 1, MemorySizeMB: 4864}, "1g.5gb+me"},
		{nvml.GpuInstanceProfileInfo{Id: nvml.GPU_INSTANCE_PROFILE_7_SLICE, SliceCount: 7, MemorySizeMB: 40192}, "7g.40gb"},
	} {
		if got := gpuInstanceProfileName(tc.info); got != tc.want {
			t.Errorf("profile %d: %q, want %q", tc.info.Id, got, tc.want)
		}
	}
}

func TestNVMLLostAtStart(t *testing.T) {
	for _, style := range []IDStyle{IDStyleUUID, IDStyleIndex} {
		m := newDGX(t, "dgxa100")
		var nameCalls atomic.Int64
		d := m.devs[6]
		d.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		d.GetNameFunc = func() (string, nvml.Return) { nameCalls.Add(1); return "x", nvml.SUCCESS }
		m.devs[7].GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{IDStyle: style}), nil)
		inv := poll(t, src)
		_ = src.Close()
		if inv.Source.Health != HealthDegraded || nameCalls.Load() != 0 {
			t.Errorf("%s: health %s, %d name calls", style, inv.Source.Health, nameCalls.Load())
		}
		switch style {
		case IDStyleUUID:
			// Without a UUID there is no device id: not listed, but said.
			if len(inv.Devices) != 6 || len(inv.Issues) != 2 || !strings.Contains(inv.Issues[0].Message, "index 6: cannot read its UUID") {
				t.Errorf("uuid style: %d devices, issues %v", len(inv.Devices), inv.Issues)
			}
			// Each is kept as index ids would list it, for a plugin that
			// registers GPUs by index: 6 lost (said by index), 7 read.
			u := inv.Unidentified
			if len(u) != 2 || len(u[0].Devices) != 1 || len(u[1].Devices) != 1 {
				t.Fatalf("uuid style: unidentified %+v, want GPUs 6 and 7", u)
			}
			if d := u[0].Devices[0]; d.ID != "6" || d.Index != 6 || !d.Telemetry.Lost || u[0].NotListed != inv.Issues[0] ||
				len(u[0].Issues) != 1 || u[0].Issues[0].Device != (model.DeviceKey{Name: "cuda", ID: "6"}) || !strings.Contains(u[0].Issues[0].Message, "GPU 6 (index 6) is lost") {
				t.Errorf("uuid style: lost GPU kept as %+v, issues %v", d, u[0].Issues)
			}
			if d := u[1].Devices[0]; d.ID != "7" || d.Telemetry.Lost || !d.Telemetry.MemTotal.Valid || u[1].NotListed != inv.Issues[1] || len(u[1].Issues) != 0 {
				t.Errorf("uuid style: GPU without UUID kept as %+v, issues %v", d, u[1].Issues)
			}
		case IDStyleIndex:
			if len(inv.Devices) != 8 || !inv.Devices[6].Telemetry.Lost || inv.Devices[6].ID != "6" || inv.Devices[7].Telemetry.Lost {
				t.Errorf("index style: %+v", inv.Devices)
			}
			if len(inv.Issues) != 1 || inv.Issues[0].Device != (model.DeviceKey{Name: "cuda", ID: "6"}) || len(inv.Unidentified) != 0 {
				t.Errorf("index style issues: %v, unidentified %v", inv.Issues, inv.Unidentified)
			}
		}
	}
}

// TestNVMLHostileNames: a driver (or a fake library) that names a device
// with escape sequences gives a model and id shown escaped.
func TestNVMLHostileNames(t *testing.T) {
	m := newDGX(t, "dgxa100")
	m.devs[0].GetNameFunc = func() (string, nvml.Return) { return "A100\x1b]52;c;eA==\x07\u009b", nvml.SUCCESS }
	m.devs[0].GetUUIDFunc = func() (string, nvml.Return) { return "GPU-x\x1b[2J", nvml.SUCCESS }
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{IDStyle: IDStyleUUID}), nil)
	inv := poll(t, src)
	_ = src.Close()
	found := false
	for _, d := range inv.Devices {
		for _, s := range []string{d.Model, d.UUID, string(d.ID)} {
			if !untrusted.Safe(s) {
				t.Errorf("device %q: %q entered raw", d.ID, s)
			}
		}
		if d.Model == `A100\x1b]52;c;eA==\x07\u009b` {
			found = true
		}
	}
	if !found {
		t.Errorf("the planted name is not shown escaped: %+v", inv.Devices)
	}
}

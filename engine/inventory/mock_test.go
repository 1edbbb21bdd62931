package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// The fixtures are copies of shared/fixtures/backendai/mock-accelerator.*.
const (
	fixtureTOML = "testdata/mock-accelerator.toml"
	fixtureEtcd = "testdata/mock-accelerator.etcd.json"
)

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func poll(t *testing.T, s Source) *Inventory {
	t.Helper()
	inv, err := s.Poll(context.Background())
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return inv
}

// accelerators returns the devices that are neither cpu nor mem.
func accelerators(inv *Inventory) []model.Device {
	var out []model.Device
	for _, d := range inv.Devices {
		if d.IsAccelerator() {
			out = append(out, d)
		}
	}
	return out
}

const formatsTOML = `
[attributes]
[formats.device]
display_unit = "GPU"
display_icon = "gpu1"
human_readable_name = "GPU"
description = "CUDA-capable GPU"
number_format = { binary = false, round_length = 0 }
[formats.shares]
display_unit = "fGPU"
display_icon = "gpu1"
human_readable_name = "fGPU"
description = "fractional"
number_format = { binary = false, round_length = 2 }
[formats."*-mig"]
display_unit = "GPU"
display_icon = "gpu1"
human_readable_name = "GPU"
description = "MIG"
number_format = { binary = false, round_length = 0 }
`

func a100(uuid string, numa int) string {
	return fmt.Sprintf(`{ mother_uuid = %q, model_name = "NVIDIA A100-SXM4-40GB", numa_node = %d, subproc_count = 108, memory_size = "40G", is_mig_device = false }`, uuid, numa)
}

func mockTOML(devices ...string) string {
	return "slot_name = \"cuda\"\ndevice_plugin_name = \"CUDADevice\"\ndevices = [\n  " + strings.Join(devices, ",\n  ") + "\n]\n" + formatsTOML
}

func TestMockFixtures(t *testing.T) {
	src, err := NewMock(fixtureTOML, fixtureEtcd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv := poll(t, src)
	if inv.Source.Kind != KindMock || inv.Source.Health != HealthOK {
		t.Errorf("source = %+v", inv.Source)
	}
	if len(inv.Issues) != 0 {
		t.Errorf("issues = %v", inv.Issues)
	}
	if !inv.Fractional || inv.Quantum.String() != "0.1" {
		t.Errorf("fractional=%v quantum=%s", inv.Fractional, inv.Quantum)
	}
	if len(inv.Devices) != 4 {
		t.Fatalf("%d devices, want 4", len(inv.Devices))
	}
	wantNUMA := []int{0, 1, 0, 1}
	for i, d := range inv.Devices {
		wantID := fmt.Sprintf("c59395cd-ac91-4cd3-a1b0-3d2568aa2d0%d", i+1)
		if string(d.ID) != wantID || d.UUID != wantID {
			t.Errorf("device %d: id %q uuid %q, want %q", i, d.ID, d.UUID, wantID)
		}
		if d.Name != "cuda" || d.Slot != model.SlotCUDAShares || d.SlotType != model.SlotTypeCount {
			t.Errorf("device %d: name %q slot %q type %q", i, d.Name, d.Slot, d.SlotType)
		}
		if d.Capacity.String() != "1.00" {
			t.Errorf("device %d: capacity %s, want 1.00", i, d.Capacity)
		}
		if d.NUMANode != wantNUMA[i] || d.Index != i {
			t.Errorf("device %d: numa %d index %d", i, d.NUMANode, d.Index)
		}
		if d.MemoryBytes != 40<<30 || d.Processors != 108 || d.Model != "NVIDIA A100-SXM4-40GB" {
			t.Errorf("device %d: mem %d procs %d model %q", i, d.MemoryBytes, d.Processors, d.Model)
		}
		if d.Telemetry != nil || d.IsMIG() {
			t.Errorf("device %d: telemetry %v mig %v", i, d.Telemetry, d.IsMIG())
		}
	}
	want := model.SlotTypes{"cuda.shares": "count", "cpu": "count", "mem": "bytes"}
	if fmt.Sprint(inv.SlotTypes) != fmt.Sprint(want) {
		t.Errorf("slot types = %v, want %v", inv.SlotTypes, want)
	}
	if got := src.Config().Attributes["nvidia_driver"]; got != "535.104.05" {
		t.Errorf("attributes.nvidia_driver = %v", got)
	}
	if s := src.Settings(); s.UnitMem != 40<<30 || s.UnitProc != 108 || s.ReservedMemory != 64<<20 {
		t.Errorf("settings = %+v", s)
	}
}

// TestMockCapacity covers §4.4 with temp files: the plugin's defaults, the
// fixture's unit sizes, discrete mode and the float rounding.
func TestMockCapacity(t *testing.T) {
	dir := t.TempDir()
	toml := writeFile(t, dir, "mock-accelerator.toml", mockTOML(a100("u0", 0), a100("u1", 1)))
	tests := []struct {
		name       string
		etcd       string // "" = no settings file
		slot       model.SlotName
		capacity   string
		fractional bool
		infoIssue  bool
	}{
		{"defaults fractional", `{"allocation_mode": "fractional"}`, "cuda.shares", "13.50", true, false},
		{"nested form", `{"config":{"plugins":{"accelerator":{"mock":{"allocation_mode":"fractional","unit_mem":"20g"}}}}}`, "cuda.shares", "2.00", true, false},
		{"proc bound", `{"allocation_mode":"fractional","unit_mem":"1g","unit_proc":7}`, "cuda.shares", "15.42", true, false},
		{"no settings: discrete", "", "cuda.device", "1", false, true},
		{"mode unset: discrete", `{"unit_mem":"4g"}`, "cuda.device", "1", false, true},
		{"explicit discrete", `{"allocation_mode":"discrete"}`, "cuda.device", "1", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			etcd := ""
			if tc.etcd != "" {
				etcd = writeFile(t, t.TempDir(), "etcd.json", tc.etcd)
			}
			src, err := NewMock(toml, etcd, nil)
			if err != nil {
				t.Fatal(err)
			}
			inv := poll(t, src)
			if len(inv.Devices) != 2 {
				t.Fatalf("%d devices", len(inv.Devices))
			}
			for _, d := range inv.Devices {
				if d.Slot != tc.slot || d.Capacity.String() != tc.capacity {
					t.Errorf("%s: slot %s capacity %s, want %s %s", d.ID, d.Slot, d.Capacity, tc.slot, tc.capacity)
				}
			}
			if inv.Fractional != tc.fractional || inv.SlotTypes[tc.slot] != model.SlotTypeCount {
				t.Errorf("fractional %v slot types %v", inv.Fractional, inv.SlotTypes)
			}
			if tc.fractional != !inv.Quantum.IsZero() {
				t.Errorf("quantum %s in fractional=%v", inv.Quantum, tc.fractional)
			}
			hasInfo := len(inv.Issues) == 1 && inv.Issues[0].Severity == model.SevInfo
			if hasInfo != tc.infoIssue || (!tc.infoIssue && len(inv.Issues) != 0) {
				t.Errorf("issues = %v", inv.Issues)
			}
		})
	}
}

func TestSharesFloatSemantics(t *testing.T) {
	s := DefaultMockSettings()
	tests := []struct {
		mem      int64
		procs    int
		unitMem  int64
		unitProc int
		want     string
	}{
		{40 << 30, 108, 2 << 30, 8, "13.50"},
		{40 << 30, 108, 40 << 30, 108, "1.00"},
		{10 << 30, 108, 3 << 30, 8, "3.33"},
		// 29/100 is 0.28999… in binary floating point: the plugin, which
		// divides floats, gets 0.28, not 0.29.
		{29 * (512 << 20), 1000, 100 * (512 << 20), 2, "0.28"},
		{0, 108, 2 << 30, 8, "0.00"},
	}
	for _, tc := range tests {
		s.UnitMem, s.UnitProc = tc.unitMem, tc.unitProc
		if got := s.Shares(tc.mem, tc.procs); got.String() != tc.want {
			t.Errorf("Shares(%d, %d) with %d/%d = %s, want %s", tc.mem, tc.procs, tc.unitMem, tc.unitProc, got, tc.want)
		}
	}
}

func TestMockMIG(t *testing.T) {
	dir := t.TempDir()
	mig := func(mother, profile string) string {
		return fmt.Sprintf(`{ mother_uuid = %q, model_name = "MIG-%s", numa_node = 0, subproc_count = 14, memory_size = "10g", is_mig_device = true }`, mother, profile)
	}
	// MIG slices of u0 listed after u1, and one whose mother is not listed.
	toml := writeFile(t, dir, "mock-accelerator.toml", mockTOML(a100("u0", 0), a100("u1", 1), mig("u0", "10g"), mig("u0", "20g"), mig("orphan", "10g")))
	etcd := writeFile(t, dir, "etcd.json", `{"allocation_mode":"fractional"}`)
	src, err := NewMock(toml, etcd, nil)
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, src)
	type row struct {
		id, slot, cap, parent string
		typ                   model.SlotType
	}
	want := []row{
		{"u0", "cuda.shares", "13.50", "", "count"},
		{"MIG-u0/2/0", "cuda.device:10g-mig", "1", "u0", "unique"},
		{"MIG-u0/3/0", "cuda.device:20g-mig", "1", "u0", "unique"},
		{"u1", "cuda.shares", "13.50", "", "count"},
		{"MIG-orphan/4/0", "cuda.device:10g-mig", "1", "orphan", "unique"},
	}
	if len(inv.Devices) != len(want) {
		t.Fatalf("%d devices, want %d", len(inv.Devices), len(want))
	}
	for i, w := range want {
		d := inv.Devices[i]
		got := row{string(d.ID), string(d.Slot), d.Capacity.String(), string(d.Parent), d.SlotType}
		if got != w {
			t.Errorf("device %d = %+v, want %+v", i, got, w)
		}
	}
	for _, s := range []model.SlotName{"cuda.device:10g-mig", "cuda.device:20g-mig"} {
		if inv.SlotTypes[s] != model.SlotTypeUnique {
			t.Errorf("slot type of %s = %q", s, inv.SlotTypes[s])
		}
	}
	if len(inv.Issues) != 0 {
		t.Errorf("issues: %v", inv.Issues)
	}
}

// TestMockUnreadCapacityUnknown: with the plugin's settings in etcd not
// read, the mode decides each GPU's slot and capacity and the mode is a
// guess: the GPUs' capacities are unknown (never the discrete guess's 1,
// which kernels' cuda.shares read as an over-committed GPU against), and
// the source detail gives no total of them. A MIG slice is a unique slot
// of capacity 1 in either mode: known. Settings read: known again.
func TestMockUnreadCapacityUnknown(t *testing.T) {
	dir := t.TempDir()
	mig := `{ mother_uuid = "u0", model_name = "MIG-10g", numa_node = 0, subproc_count = 14, memory_size = "10g", is_mig_device = true }`
	cfg, err := LoadMockConfig(writeFile(t, dir, "mock-accelerator.toml", mockTOML(a100("u0", 0), a100("u1", 1), mig)))
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, NewMockFromConfig(cfg, UnreadMockSettings("etcd at 127.0.0.1:1: connection refused"), nil))
	type row struct {
		id, cap string
		unknown bool
	}
	want := []row{{"u0", "0", true}, {"MIG-u0/2/0", "1", false}, {"u1", "0", true}}
	if len(inv.Devices) != len(want) {
		t.Fatalf("%d devices, want %d", len(inv.Devices), len(want))
	}
	for i, w := range want {
		d := inv.Devices[i]
		if got := (row{string(d.ID), d.Capacity.String(), d.CapacityUnknown}); got != w {
			t.Errorf("device %d = %+v, want %+v", i, got, w)
		}
	}
	if !strings.HasSuffix(inv.Source.Detail, "discrete mode, ? cuda.device") {
		t.Errorf("source detail %q: want no total of the guessed GPUs", inv.Source.Detail)
	}
	inv = poll(t, NewMockFromConfig(cfg, DefaultMockSettings(), nil))
	if model.AnyCapacityUnknown(inv.Devices) || !strings.HasSuffix(inv.Source.Detail, "discrete mode, 2 cuda.device") {
		t.Errorf("settings read (none set): capacities unknown %v, detail %q", model.AnyCapacityUnknown(inv.Devices), inv.Source.Detail)
	}
}

func TestMockGenericPlugin(t *testing.T) {
	// A non-cuda slot name: is_mig_device is not required and not read.
	dir := t.TempDir()
	toml := writeFile(t, dir, "m.toml", `
slot_name = "rocm"
device_plugin_name = "MockDevice"
devices = [{ mother_uuid = "r0", model_name = "MI250", numa_node = 1, subproc_count = 220, memory_size = 68719476736, is_mig_device = true }]
[attributes]
[formats.device]
display_unit = "GPU"
display_icon = "gpu"
human_readable_name = "ROCm"
description = "mock"
number_format = { binary = false, round_length = 0 }
`)
	src, err := NewMock(toml, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, src)
	if len(inv.Devices) != 1 {
		t.Fatalf("devices: %+v", inv.Devices)
	}
	d := inv.Devices[0]
	if d.ID != "r0" || d.Name != "rocm" || d.Slot != "rocm.device" || d.IsMIG() || d.MemoryBytes != 64<<30 {
		t.Errorf("device = %+v", d)
	}
	if _, ok := src.Config().Attributes["nvidia_driver"]; ok {
		t.Error("cuda attribute defaults applied to a rocm mock")
	}
}

func TestMockMissingFormat(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(mockTOML(a100("u0", 0)), "[formats.shares]", "[formats.sharez]", 1)
	toml := writeFile(t, dir, "m.toml", text)
	etcd := writeFile(t, dir, "e.json", `{"allocation_mode":"fractional"}`)
	src, err := NewMock(toml, etcd, nil)
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, src)
	if len(inv.Issues) != 1 || inv.Issues[0].Severity != model.SevWarning || !strings.Contains(inv.Issues[0].Message, "[formats.shares]") {
		t.Errorf("issues = %v", inv.Issues)
	}
}

func TestMockInvalidModeDisablesPlugin(t *testing.T) {
	dir := t.TempDir()
	toml := writeFile(t, dir, "m.toml", mockTOML(a100("u0", 0)))
	for _, mode := range []string{`"Fractional"`, `""`, `"shared"`} {
		etcd := writeFile(t, dir, "e.json", `{"allocation_mode":`+mode+`}`)
		src, err := NewMock(toml, etcd, nil)
		if err != nil {
			t.Fatal(err)
		}
		inv := poll(t, src)
		if len(accelerators(inv)) != 0 || inv.Source.Health != HealthUnavailable {
			t.Errorf("mode %s: devices %v health %s", mode, inv.Devices, inv.Source.Health)
		}
		if len(inv.Issues) != 1 || inv.Issues[0].Severity != model.SevError || !strings.Contains(inv.Issues[0].Message, "disables itself") {
			t.Errorf("mode %s: issues %v", mode, inv.Issues)
		}
	}
}

func TestMockConfigErrors(t *testing.T) {
	good := a100("u0", 0)
	dev := func(repl ...string) string {
		return strings.NewReplacer(repl...).Replace(good)
	}
	tests := []struct {
		name, toml, key, msg string
	}{
		{"syntax", "slot_name = \n", "", "TOML syntax"},
		{"no slot_name", strings.Replace(mockTOML(good), `slot_name = "cuda"`, "", 1), "slot_name", "required key is missing"},
		{"slot_name type", strings.Replace(mockTOML(good), `slot_name = "cuda"`, "slot_name = 1", 1), "slot_name", "must be a string, got an integer"},
		{"slot_name dot", strings.Replace(mockTOML(good), `slot_name = "cuda"`, `slot_name = "cu.da"`, 1), "slot_name", "without '.'"},
		{"no plugin name", strings.Replace(mockTOML(good), `device_plugin_name = "CUDADevice"`, "", 1), "device_plugin_name", "required key is missing"},
		{"no devices", strings.Replace(mockTOML(good), "devices = [\n  "+good+"\n]\n", "", 1), "devices", "required key is missing"},
		{"devices not array", strings.Replace(mockTOML(good), "devices = [\n  "+good+"\n]\n", "devices = 3\n", 1), "devices", "must be an array of tables"},
		{"device not table", strings.Replace(mockTOML(good), good, `"x"`, 1), "devices[0]", "must be a table"},
		{"no mother_uuid", mockTOML(dev(`mother_uuid = "u0", `, "")), "devices[0].mother_uuid", "required key is missing"},
		{"model_name type", mockTOML(dev(`"NVIDIA A100-SXM4-40GB"`, "7")), "devices[0].model_name", "must be a string"},
		{"negative numa", mockTOML(dev("numa_node = 0", "numa_node = -1")), "devices[0].numa_node", "must be an integer >= 0, got -1"},
		{"float numa", mockTOML(dev("numa_node = 0", "numa_node = 0.5")), "devices[0].numa_node", "must be an integer >= 0, got a float 0.5"},
		{"zero subproc", mockTOML(dev("subproc_count = 108", "subproc_count = 0")), "devices[0].subproc_count", "must be an integer >= 1"},
		{"bad memory", mockTOML(dev(`"40G"`, `"40 gigs"`)), "devices[0].memory_size", "must be a binary size"},
		{"bare fraction memory", mockTOML(dev(`"40G"`, `"1.5"`)), "devices[0].memory_size", "must be a binary size"},
		{"no is_mig_device", mockTOML(dev(`, is_mig_device = false`, "")), "devices[0].is_mig_device", "required key is missing"},
		{"bad is_mig_device", mockTOML(dev(`is_mig_device = false`, `is_mig_device = "maybe"`)), "devices[0].is_mig_device", "must be a boolean"},
		{"second device", mockTOML(good, dev("subproc_count = 108", `subproc_count = "108"`)), "devices[1].subproc_count", "must be an integer"},
		{"duplicate id", mockTOML(good, good), "devices[1].mother_uuid", "must be unique"},
		{"mig without profile", mockTOML(dev("is_mig_device = false", "is_mig_device = true", `"NVIDIA A100-SXM4-40GB"`, `"MIG"`)), "devices[0].model_name", "MIG device's model_name"},
		{"no attributes", strings.Replace(mockTOML(good), "[attributes]\n", "", 1), "attributes", "required key is missing"},
		{"driver type", strings.Replace(mockTOML(good), "[attributes]\n", "[attributes]\nnvidia_driver = 535\n", 1), "attributes.nvidia_driver", "must be a string"},
		{"driver type, empty formats", strings.SplitN(strings.Replace(mockTOML(good), "[attributes]\n", "[attributes]\ncuda_runtime = 12.2\n", 1), "[formats.device]", 2)[0] + "[formats]\n", "attributes.cuda_runtime", "must be a string, got a float"},
		{"no formats", strings.SplitN(mockTOML(good), "[formats.device]", 2)[0], "formats", "required key is missing"},
		{"format field", strings.Replace(mockTOML(good), `display_unit = "fGPU"`, "", 1), "formats.shares.display_unit", "required key is missing"},
		{"round_length", strings.Replace(mockTOML(good), "round_length = 2", "round_length = -1", 1), "formats.shares.number_format.round_length", "must be an integer >= 0"},
		{"binary type", strings.Replace(mockTOML(good), "binary = false, round_length = 2", `binary = "no", round_length = 2`, 1), "formats.shares.number_format.binary", "must be a boolean"},
		{"quoted format key", strings.Replace(mockTOML(good), `description = "MIG"`, "", 1), `formats."*-mig".description`, "required key is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "mock-accelerator.toml", tc.toml)
			_, err := NewMock(path, "", nil)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("key %q msg %q, want key %q msg containing %q", ce.Key, ce.Msg, tc.key, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), path) || (tc.key != "" && !strings.Contains(err.Error(), tc.key)) {
				t.Errorf("error %q does not name the file and key", err)
			}
		})
	}
}

func TestMockConfigAccepts(t *testing.T) {
	// Extra keys anywhere, [[devices]] tables, a byte-count memory_size and
	// trafaret ToBool's string booleans.
	text := `
slot_name = "cuda"
device_plugin_name = "CUDADevice"
comment = "extra"
[[devices]]
mother_uuid = "u0"
model_name = "A100"
numa_node = 0
subproc_count = 108
memory_size = 42949672960
is_mig_device = "no"
vendor = "extra"
[attributes]
anything = [1, 2]
[formats.device]
display_unit = "GPU"
display_icon = "gpu1"
human_readable_name = "GPU"
description = "d"
number_format = { binary = false, round_length = 0, extra = 1 }
`
	cfg, err := ParseMockConfig("x.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Devices) != 1 || cfg.Devices[0].MemoryBytes != 40<<30 || cfg.Devices[0].IsMIG {
		t.Errorf("devices = %+v", cfg.Devices)
	}
	if cfg.Attributes["nvidia_driver"] != "450.00.00" || cfg.Attributes["cuda_runtime"] != "11.0" {
		t.Errorf("attribute defaults = %v", cfg.Attributes)
	}
}

func TestMockSettings(t *testing.T) {
	tests := []struct {
		name, json string
		check      func(*MockSettings) string
	}{
		{"defaults", `{}`, func(s *MockSettings) string {
			if s.AllocationModeSet || s.Mode() != ModeDiscrete || s.UnitMem != 2<<30 || s.UnitProc != 8 || s.QuantumSize.String() != "0.1" || s.ReservedMemory != 0 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
		{"fractional reserved default", `{"allocation_mode":"fractional"}`, func(s *MockSettings) string {
			if s.ReservedMemory != 64<<20 {
				return fmt.Sprint(s.ReservedMemory)
			}
			return ""
		}},
		{"discrete ignores reserved", `{"allocation_mode":"discrete","reserved_memory":"junk"}`, func(s *MockSettings) string {
			if s.ReservedMemory != 0 {
				return fmt.Sprint(s.ReservedMemory)
			}
			return ""
		}},
		{"numbers", `{"unit_mem": 1073741824, "unit_proc": 8.9, "quantum_size": 0.25, "allocation_mode":"fractional", "reserved_memory": 0}`, func(s *MockSettings) string {
			if s.UnitMem != 1<<30 || s.UnitProc != 8 || s.QuantumSize.String() != "0.25" || s.ReservedMemory != 0 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
		{"strings", `{"unit_mem":"512m","unit_proc":" 16 ","quantum_size":"0.01"}`, func(s *MockSettings) string {
			if s.UnitMem != 512<<20 || s.UnitProc != 16 || s.QuantumSize.String() != "0.01" {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
		{"null is unset", `{"allocation_mode":null,"unit_mem":null}`, func(s *MockSettings) string {
			if s.AllocationModeSet || s.UnitMem != 2<<30 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		}},
		{"device mask", `{"device_mask":"a,b"}`, func(s *MockSettings) string {
			if fmt.Sprint(s.DeviceMask) != "[a b]" {
				return fmt.Sprint(s.DeviceMask)
			}
			return ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseMockSettings("e.json", []byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(s); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestMockSettingsErrors(t *testing.T) {
	tests := []struct {
		name, json, key, msg string
	}{
		{"bad json", `{"unit_mem":`, "", "JSON"},
		{"trailing", `{} {}`, "", "trailing data"},
		{"unit_mem small", `{"unit_mem":"256m"}`, "unit_mem", "below the plugin's minimum of 512 MiB"},
		{"unit_mem junk", `{"unit_mem":"lots"}`, "unit_mem", "must be a binary size"},
		{"unit_mem inf", `{"unit_mem":"inf"}`, "unit_mem", "must be a binary size"},
		{"unit_proc small", `{"unit_proc":"1"}`, "unit_proc", "below the plugin's minimum of 2"},
		{"unit_proc fraction string", `{"unit_proc":"8.5"}`, "unit_proc", "must be an integer"},
		{"unit_proc bool", `{"unit_proc":true}`, "unit_proc", "must be a string or a number"},
		{"quantum", `{"quantum_size":"a tenth"}`, "quantum_size", "positive decimal"},
		{"reserved", `{"allocation_mode":"fractional","reserved_memory":"64m"}`, "reserved_memory", "byte count"},
		{"mask", `{"device_mask":3}`, "device_mask", "comma-separated"},
		{"nested missing mock", `{"config":{"plugins":{"accelerator":{"cuda":{}}}}}`, "config.plugins.accelerator", `entry-point name "mock"`},
		{"nested error key", `{"config":{"plugins":{"accelerator":{"mock":{"unit_proc":"x"}}}}}`, "config.plugins.accelerator.mock.unit_proc", "must be an integer"},
		{"nested not object", `{"config":{"plugins":3}}`, "config.plugins", "must be an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMockSettings("etcd.json", []byte(tc.json))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("key %q msg %q, want key %q msg containing %q", ce.Key, ce.Msg, tc.key, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "etcd.json") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestMockWithHost(t *testing.T) {
	h := fakeHost(t, hostLayout{online: "0-3", nodes: map[int]string{0: "0-1", 1: "2-3"}, memKB: 1024})
	src, err := NewMock(fixtureTOML, fixtureEtcd, h)
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, src)
	var names []string
	for _, d := range inv.Devices {
		names = append(names, string(d.Name)+":"+string(d.ID))
	}
	want := "cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d01 cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d02 cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d03 cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d04 cpu:0 cpu:1 cpu:2 cpu:3 mem:root"
	if strings.Join(names, " ") != want {
		t.Errorf("devices = %v", names)
	}
	if inv.HostMemBytes != 1024*1024 {
		t.Errorf("HostMemBytes = %d", inv.HostMemBytes)
	}
	// Nothing changed: the same devices array is handed out again.
	inv2 := poll(t, src)
	if &inv2.Devices[0] != &inv.Devices[0] {
		t.Error("unchanged poll rebuilt the device list")
	}
}

// TestMockRetryUnread: settings that could not be read at start are read
// again until they can be, and the devices are registered with them from
// the next Poll on (a console started while etcd was down kept the
// defaults' guess for its life); Close ends the reads.
func TestMockRetryUnread(t *testing.T) {
	cfg, err := LoadMockConfig(fixtureTOML)
	if err != nil {
		t.Fatal(err)
	}
	good, err := LoadMockSettings(fixtureEtcd)
	if err != nil {
		t.Fatal(err)
	}
	src := NewMockFromConfig(cfg, UnreadMockSettings("etcd at 127.0.0.1:1: connection refused"), nil)
	if inv := poll(t, src); inv.Fractional || inv.Source.Health != HealthDegraded {
		t.Fatalf("unread settings: fractional %v, health %s", inv.Fractional, inv.Source.Health)
	}
	var calls atomic.Int32
	src.RetryUnread(5*time.Millisecond, func(context.Context) *MockSettings {
		if calls.Add(1) < 3 {
			return UnreadMockSettings("still down")
		}
		return good
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		inv := poll(t, src)
		if inv.Fractional && inv.Source.Health == HealthOK && inv.Devices[0].Slot == model.SlotCUDAShares {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the settings read at the third try were never taken: %+v", inv.Source)
		}
		time.Sleep(5 * time.Millisecond)
	}
	n := calls.Load()
	time.Sleep(30 * time.Millisecond)
	if calls.Load() != n {
		t.Error("reads went on after the settings were read")
	}

	// Close ends the reads of a source that never could.
	src2 := NewMockFromConfig(cfg, UnreadMockSettings("down"), nil)
	var calls2 atomic.Int32
	src2.RetryUnread(5*time.Millisecond, func(context.Context) *MockSettings { calls2.Add(1); return nil })
	for deadline := time.Now().Add(5 * time.Second); calls2.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no read of settings that could not be read")
		}
	}
	src2.Close()
	time.Sleep(10 * time.Millisecond)
	m := calls2.Load()
	time.Sleep(30 * time.Millisecond)
	if m == 0 || calls2.Load() != m {
		t.Errorf("reads before Close %d, after %d: want some, then none", m, calls2.Load())
	}
}

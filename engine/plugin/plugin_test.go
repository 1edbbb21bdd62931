package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

const h100Mem = 81559 << 20 // an H100 80GB as NVML reports it (85,520,809,984 bytes)

func TestCapacityRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   map[string]string
		mem  int64
		sms  int
		want string
		ok   bool
	}{
		{"defaults H100", nil, h100Mem, 132, "16.50", true},
		{"unit_mem 20g H100", map[string]string{"unit_mem": "20g"}, h100Mem, 132, "3.98", true},
		{"A100 40G defaults", nil, 40 << 30, 108, "13.50", true},
		{"whole GPU", map[string]string{"unit_mem": "40g", "unit_proc": "108"}, 40 << 30, 108, "1.00", true},
		{"no SM count", nil, h100Mem, 0, "", false},
		{"bad unit_mem", map[string]string{"unit_mem": "1m"}, h100Mem, 132, "", false},
		{"bad unit_proc", map[string]string{"unit_proc": "x"}, h100Mem, 132, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse(tc.kv)
			got, ok := s.Capacity(tc.mem, tc.sms)
			if ok != tc.ok || (ok && got.String() != tc.want) {
				t.Fatalf("Capacity = %s, %v; want %s, %v (problems %v)", got, ok, tc.want, tc.ok, s.Problems)
			}
		})
	}
	// Exact arithmetic: 29/100 in float64 is 0.28999…, which a float
	// floor would turn into 0.28.
	s := Parse(map[string]string{"unit_mem": "1g", "unit_proc": "100"})
	got, ok := s.Capacity(1<<30*29/100+1, 29)
	if !ok || got.String() != "0.29" {
		t.Fatalf("Capacity = %s, %v; want 0.29 (min of 0.29 and 0.29)", got, ok)
	}
}

func TestParseProblems(t *testing.T) {
	s := Parse(map[string]string{"allocation_mode": "fractionl", "quantum_size": "-1", "device_mask": " a, ,b ,"})
	if len(s.Problems) != 2 {
		t.Fatalf("problems %v, want 2 (allocation_mode, quantum_size)", s.Problems)
	}
	if s.AllocationMode != "" || !s.Quantum.Equal(DefaultQuantum) {
		t.Fatalf("bad values were taken: %q %s", s.AllocationMode, s.Quantum)
	}
	if strings.Join(s.DeviceMask, "|") != "a|b" {
		t.Fatalf("device_mask %q", s.DeviceMask)
	}
}

func TestParseFile(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"json", `{"cuda": {"allocation_mode": "fractional", "unit_mem": "20g", "unit_proc": 8, "quantum_size": "0.01"}}`},
		{"toml", "[cuda]\nallocation_mode = \"fractional\"\nunit_mem = \"20g\"\nunit_proc = 8\nquantum_size = \"0.01\"\n"},
		{"etcd root", `{"config": {"plugins": {"accelerator": {"cuda": {"allocation_mode": "fractional", "unit_mem": "20g", "unit_proc": "8", "quantum_size": "0.01"}}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseFile("x", []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if !s.Fractional() || s.UnitMem != 20<<30 || s.UnitProc != 8 || s.Quantum.String() != "0.01" || len(s.Problems) > 0 {
				t.Fatalf("got %+v", s)
			}
		})
	}
	for _, bad := range []string{`{"mock": {}}`, `{"cuda": 5}`, `{"cuda": {}} x`, "[cuda\n"} {
		if _, err := ParseFile("x", []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func gpu(i int, uuid string) model.Device {
	return model.Device{ID: model.DeviceID("GPU-" + uuid), Name: "cuda", Slot: model.SlotCUDADevice, SlotType: model.SlotTypeCount,
		Capacity: model.One, Index: i, UUID: uuid, MemoryBytes: h100Mem, Processors: 132, NUMANode: -1}
}

func fourGPUs() []model.Device {
	devs := []model.Device{}
	for i, u := range []string{"aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000",
		"cccccccc-0000-0000-0000-000000000000", "dddddddd-0000-0000-0000-000000000000"} {
		devs = append(devs, gpu(i, u))
	}
	return append(devs, model.Device{ID: "0", Name: "cpu", Slot: "cpu", Capacity: model.One})
}

func ids(devs []model.Device) string {
	var out []string
	for _, d := range devs {
		if d.Name == "cuda" {
			c := d.Capacity.String()
			if d.CapacityUnknown {
				c = "?"
			}
			out = append(out, string(d.ID)+"="+c+"/"+string(d.Slot))
		}
	}
	return strings.Join(out, " ")
}

func TestRegister(t *testing.T) {
	mask := Parse(map[string]string{"device_mask": "cccccccc-0000-0000-0000-000000000000"})
	for _, tc := range []struct {
		name string
		kind string
		s    *Settings
		c    string
		want string
	}{
		{"open, mask leaves a gap", model.PluginCUDAOpen, mask, "",
			"0=1/cuda.device 1=1/cuda.device 3=1/cuda.device"},
		{"open, no settings", model.PluginCUDAOpen, nil, "",
			"0=1/cuda.device 1=1/cuda.device 2=1/cuda.device 3=1/cuda.device"},
		{"fractional 20g", model.PluginCUDAFractional, Parse(map[string]string{"unit_mem": "20g"}), "",
			"GPU-aaaaaaaa-0000-0000-0000-000000000000=3.98/cuda.shares GPU-bbbbbbbb-0000-0000-0000-000000000000=3.98/cuda.shares " +
				"GPU-cccccccc-0000-0000-0000-000000000000=3.98/cuda.shares GPU-dddddddd-0000-0000-0000-000000000000=3.98/cuda.shares"},
		{"fractional never read: unknown", model.PluginCUDAFractional, nil, "",
			"GPU-aaaaaaaa-0000-0000-0000-000000000000=?/cuda.shares GPU-bbbbbbbb-0000-0000-0000-000000000000=?/cuda.shares " +
				"GPU-cccccccc-0000-0000-0000-000000000000=?/cuda.shares GPU-dddddddd-0000-0000-0000-000000000000=?/cuda.shares"},
		{"fractional override", model.PluginCUDAFractional, nil, "8,1=2.5,GPU-dddddddd-0000-0000-0000-000000000000=4",
			"GPU-aaaaaaaa-0000-0000-0000-000000000000=8/cuda.shares GPU-bbbbbbbb-0000-0000-0000-000000000000=2.5/cuda.shares " +
				"GPU-cccccccc-0000-0000-0000-000000000000=8/cuda.shares GPU-dddddddd-0000-0000-0000-000000000000=4/cuda.shares"},
		{"fractional mask", model.PluginCUDAFractional, Parse(map[string]string{"device_mask": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "unit_mem": "40g"}), "",
			"GPU-bbbbbbbb-0000-0000-0000-000000000000=1.99/cuda.shares GPU-cccccccc-0000-0000-0000-000000000000=1.99/cuda.shares " +
				"GPU-dddddddd-0000-0000-0000-000000000000=1.99/cuda.shares"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Capacities
			if tc.c != "" {
				var err error
				if c, err = ParseCapacities(tc.c); err != nil {
					t.Fatal(err)
				}
			}
			r := Register(fourGPUs(), tc.kind, tc.s, c)
			if got := ids(r.Devices); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if r.Devices[len(r.Devices)-1].Name != "cpu" {
				t.Fatal("the cpu device did not pass through")
			}
			if tc.s == nil && tc.c == "" && tc.kind == model.PluginCUDAFractional &&
				(len(r.Issues) != 2 || !strings.Contains(r.Issues[0].Message, "capacity unknown") || !strings.Contains(r.Issues[1].Message, "quantum_size unknown (the plugin settings were never read)")) {
				t.Fatalf("issues %v: want one saying the capacity is unknown, one the quantum", r.Issues)
			}
			if tc.kind == model.PluginCUDAFractional {
				if known := tc.s != nil; r.Quantum.Sign() > 0 != known || (r.QuantumWhy == "") != known {
					t.Fatalf("quantum %s (%q) with settings read %v", r.Quantum, r.QuantumWhy, known)
				}
			}
		})
	}
}

// TestRegisterMIGFollowsParent: cuda_open registers one cuda.device per
// GPU and no MIG slot, so a GPU's MIG slices are not its devices (an info
// issue names the GPU by its index id); under the fractional plugin a
// slice stays, and goes with its GPU when that GPU is masked. The same
// whether NVML lists the slices after their GPU or before it.
func TestRegisterMIGFollowsParent(t *testing.T) {
	gpus := fourGPUs()[:2]
	mig := model.Device{ID: "MIG-x", Name: "cuda", Slot: "cuda.device:1g.10gb-mig", Capacity: model.One, Parent: gpus[1].ID}
	for name, devs := range map[string][]model.Device{
		"slices after their GPU": {gpus[0], gpus[1], mig},
		"slices first":           {mig, gpus[0], gpus[1]},
	} {
		t.Run(name, func(t *testing.T) {
			r := Register(devs, model.PluginCUDAOpen, nil, Capacities{})
			if got := ids(r.Devices); got != "0=1/cuda.device 1=1/cuda.device" {
				t.Fatalf("cuda_open registered %s, want GPUs 0 and 1 and no MIG slot", got)
			}
			var said bool
			for _, is := range r.Issues {
				said = said || strings.Contains(is.Message, "MIG slices of GPU 1 (1) not registered")
			}
			if !said {
				t.Errorf("no issue names GPU 1's unregistered MIG slice: %v", r.Issues)
			}
			r = Register(devs, model.PluginCUDAFractional, nil, Capacities{})
			var parents []model.DeviceID
			for _, d := range r.Devices {
				if d.IsMIG() {
					parents = append(parents, d.Parent)
				}
			}
			if len(r.Devices) != 3 || len(parents) != 1 || parents[0] != gpus[1].ID {
				t.Fatalf("fractional: %s (parents %v), want the MIG slice under its GPU", ids(r.Devices), parents)
			}
			masked := Parse(map[string]string{"device_mask": gpus[1].UUID})
			r = Register(devs, model.PluginCUDAFractional, masked, Capacities{})
			if len(r.Devices) != 1 {
				t.Fatalf("a masked GPU's MIG slice stayed: %s", ids(r.Devices))
			}
		})
	}
}

func TestParseCapacities(t *testing.T) {
	for _, bad := range []string{"", "x", "-1", "1.234", "a=1,a=2", "1,2", "=3"} {
		if _, err := ParseCapacities(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	c, err := ParseCapacities("16.5")
	if err != nil || !c.HasAll || c.All.String() != "16.5" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestDecide(t *testing.T) {
	frac := Parse(map[string]string{"allocation_mode": "fractional"})
	for _, tc := range []struct {
		name       string
		in         Inputs
		kind, rule string
		issues     int
	}{
		{"flag wins", Inputs{Flag: "open", Settings: frac, Evidence: Evidence{Shares: 1}}, "open", RuleFlag, 1},
		{"allowlist open only", Inputs{AllowSet: true, Allow: []string{"ai.backend.accelerator.cuda_open"}, Settings: frac}, "open", RuleAgent, 0},
		{"allowlist prefix: both", Inputs{AllowSet: true, Allow: []string{"ai.backend.accelerator"}, Settings: frac}, "fractional", RuleSettings, 0},
		{"blocklist drops open", Inputs{Block: []string{"ai.backend.accelerator.cuda_open"}}, "fractional", RuleAgent, 0},
		{"cuda item is not a prefix of cuda_open", Inputs{AllowSet: true, Allow: []string{"ai.backend.accelerator.cuda"}}, "fractional", RuleAgent, 0},
		{"settings", Inputs{Settings: frac}, "fractional", RuleSettings, 0},
		{"discrete", Inputs{Settings: Parse(map[string]string{"allocation_mode": "discrete"})}, "open", RuleSettings, 0},
		{"scratch", Inputs{Settings: Parse(nil), Evidence: Evidence{Shares: 2}}, "fractional", RuleScratch, 0},
		{"evidence disagrees", Inputs{Evidence: Evidence{Shares: 2, Device: 1}}, "open", RuleDefault, 1},
		{"default", Inputs{}, "open", RuleDefault, 0},
		{"mock only", Inputs{AllowSet: true, Allow: []string{"ai.backend.accelerator.mock"}}, "open", RuleDefault, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, issues := Decide(tc.in)
			if info.Kind != tc.kind || info.Source != tc.rule || len(issues) != tc.issues {
				t.Fatalf("got %s by %s with %v; want %s by %s with %d issue(s)", info.Kind, info.Source, issues, tc.kind, tc.rule, tc.issues)
			}
		})
	}
}

func TestScanEvidence(t *testing.T) {
	root := t.TempDir()
	write := func(k, text string) {
		d := filepath.Join(root, k, "config")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "resource.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("k1", "CID=x\nSLOTS={\"cuda.shares\": \"0.5\"}\nCUDA.SHARES_SHARES=GPU-a:0.5\n")
	write("k2", "CUDA_RESOURCE_VIRTUALIZED=1\nCUDA_MEMORY_LIMITS=\n")
	e := ScanEvidence([]string{root})
	if e.Files != 2 || e.Shares != 2 || e.Device != 0 || e.Kind() != model.PluginCUDAFractional {
		t.Fatalf("%+v", e)
	}
	write("k3", "CUDA.DEVICE_SHARES=0:1\nCUDA_RESOURCE_VIRTUALIZED=0\n")
	e = ScanEvidence([]string{root})
	if !e.Disagrees() || e.Kind() != "" {
		t.Fatalf("%+v", e)
	}
}

func TestRelKey(t *testing.T) {
	p := GlobalPrefix("local")
	for key, want := range map[string]string{
		p + "unit_mem":     "unit_mem",
		p + "a%2Fb/c":      "a/b/c",
		p + "bad%zzescape": "bad%zzescape",
	} {
		got, ok := RelKey(p, key)
		if !ok || got != want {
			t.Errorf("RelKey(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := RelKey(p, p); ok {
		t.Error("the prefix itself is a key")
	}
}

// TestParseEscapesUntrusted: keys and values enter through
// untrusted.Text, so every string the settings give for display is safe
// for a terminal; values with nothing to escape are kept as they are.
func TestParseEscapesUntrusted(t *testing.T) {
	s := Parse(map[string]string{"device_mask": "a\x1b[2J, b\u202e", "unit_mem": "\x1b]8;;x\x07", "k\u009b": "v", "unit_proc": "16"})
	if got := strings.Join(s.DeviceMask, "|"); got != `a\x1b[2J|b\u202e` {
		t.Errorf("device_mask %q", got)
	}
	for _, txt := range append([]string{s.String()}, s.Problems...) {
		if !untrusted.Safe(txt) {
			t.Errorf("raw text: %q", txt)
		}
	}
	if !s.BadUnits || s.UnitProc != 16 || s.Raw[`k\u009b`] != "v" {
		t.Errorf("settings %+v", s)
	}
}

// TestRegisterCapacityKeysNamed: a --fgpu-capacity key that names no
// registered GPU (a typo, a masked GPU) is a warning naming it and the
// GPUs that are registered, as is the
// flag on a node registered as cuda_open, where it changes nothing.
func TestRegisterCapacityKeysNamed(t *testing.T) {
	mask := Parse(map[string]string{"device_mask": "cccccccc-0000-0000-0000-000000000000", "unit_mem": "20g"})
	for _, tc := range []struct {
		name, kind, c string
		want          []string // substrings of the one warning; none: no warning
	}{
		{"every key used", model.PluginCUDAFractional, "0=2,GPU-bbbbbbbb-0000-0000-0000-000000000000=3,dddddddd-0000-0000-0000-000000000000=4", nil},
		{"a typo and a masked GPU", model.PluginCUDAFractional, "0=2,9=3,GPU-cccccccc-0000-0000-0000-000000000000=4",
			[]string{"--fgpu-capacity names 9, GPU-cccccccc-0000-0000-0000-000000000000,", "no GPU registered",
				"registered: GPU-aaaaaaaa-0000-0000-0000-000000000000 (index 0), GPU-bbbbbbbb-0000-0000-0000-000000000000 (index 1), GPU-dddddddd-0000-0000-0000-000000000000 (index 3)"}},
		{"one value for all", model.PluginCUDAFractional, "8", nil},
		{"cuda_open", model.PluginCUDAOpen, "8", []string{"--fgpu-capacity is not used", "cuda_open"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCapacities(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			r := Register(fourGPUs(), tc.kind, mask, c)
			var got []string
			for _, is := range r.Issues {
				if strings.Contains(is.Message, "--fgpu-capacity") {
					got = append(got, is.Message)
					if is.Code != model.IssueFlagUnmatched {
						t.Errorf("code %s, want %s (one-shot reports print it)", is.Code, model.IssueFlagUnmatched)
					}
				}
			}
			if len(tc.want) == 0 {
				if len(got) > 0 {
					t.Fatalf("unexpected warning(s): %q", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("warnings %q, want one", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("%q lacks %q", got[0], w)
				}
			}
		})
	}
}

// TestRegisterFractionalMIGParent: a GPU in MIG mode (with MIG slices, or
// MIG mode on without any) gets no cuda.shares: CUDA work runs only in its
// slices, which keep their own slots; the other GPUs keep the rule's.
func TestRegisterFractionalMIGParent(t *testing.T) {
	devs := fourGPUs()
	devs[2].Telemetry = &model.Telemetry{MIGMode: model.Some(true)}
	devs = append(devs[:2], append([]model.Device{{ID: "MIG-x", Name: "cuda", Slot: "cuda.device:1g.10gb-mig", Capacity: model.One, Parent: devs[1].ID}}, devs[2:]...)...)
	r := Register(devs, model.PluginCUDAFractional, Parse(map[string]string{"unit_mem": "20g"}), Capacities{})
	want := "GPU-aaaaaaaa-0000-0000-0000-000000000000=3.98/cuda.shares GPU-bbbbbbbb-0000-0000-0000-000000000000=0/cuda.shares " +
		"MIG-x=1/cuda.device:1g.10gb-mig GPU-cccccccc-0000-0000-0000-000000000000=0/cuda.shares GPU-dddddddd-0000-0000-0000-000000000000=3.98/cuda.shares"
	if got := ids(r.Devices); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	found := false
	for _, is := range r.Issues {
		if strings.Contains(is.Message, "GPU-bbbbbbbb-0000-0000-0000-000000000000, GPU-cccccccc-0000-0000-0000-000000000000 in MIG mode") {
			found = true
		}
	}
	if !found {
		t.Errorf("no issue names the GPUs in MIG mode: %v", r.Issues)
	}
	// A figure the operator gives for the GPU wins.
	c, err := ParseCapacities("1=5,7")
	if err != nil {
		t.Fatal(err)
	}
	r = Register(devs, model.PluginCUDAFractional, nil, c)
	if got := ids(r.Devices); !strings.Contains(got, "GPU-bbbbbbbb-0000-0000-0000-000000000000=5/") || !strings.Contains(got, "GPU-cccccccc-0000-0000-0000-000000000000=0/") {
		t.Errorf("with --fgpu-capacity 1=5,7: %s", got)
	}
}

// A quantum_size the plugin would not load with is not replaced by the
// default: the registration says the quantum is unknown, and why.
func TestRegisterQuantum(t *testing.T) {
	for _, tc := range []struct {
		kv      map[string]string
		want    string
		unknown string
	}{
		{map[string]string{}, "0.1", ""},
		{map[string]string{"quantum_size": "0.25"}, "0.25", ""},
		{map[string]string{"quantum_size": "banana"}, "0", "its quantum_size is not a positive decimal"},
		{map[string]string{"quantum_size": "-0.1"}, "0", "its quantum_size is not a positive decimal"},
	} {
		s := Parse(tc.kv)
		r := Register(fourGPUs(), model.PluginCUDAFractional, s, Capacities{})
		if r.Quantum.String() != tc.want || r.QuantumWhy != tc.unknown {
			t.Errorf("%v: quantum %s (%q), want %s (%q)", tc.kv, r.Quantum, r.QuantumWhy, tc.want, tc.unknown)
		}
		said := false
		for _, iss := range r.Issues {
			said = said || strings.Contains(iss.Message, "quantum_size unknown")
		}
		if said != (tc.unknown != "") {
			t.Errorf("%v: issues %v", tc.kv, r.Issues)
		}
	}
}

package plugin

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// TestOpenMaskAsWritten: cuda_open splits device_mask at commas and
// nothing else (raw_device_mask.split(",")) and skips a GPU whose bare
// UUID is one of the items exactly, so an item with a space, GPU- or
// upper case masks no GPU there; the fractional plugin's items are
// trimmed and taken with or without GPU- (assumed). fgtop must leave out
// only what the plugin leaves out, and say which items mask nothing.
func TestOpenMaskAsWritten(t *testing.T) {
	const a, c = "aaaaaaaa-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"
	for _, tc := range []struct {
		name, kind, mask, want, stray string
	}{
		{"open, exact items", model.PluginCUDAOpen, a + "," + c,
			"1=1/cuda.device 3=1/cuda.device", ""},
		{"open, a space after the comma", model.PluginCUDAOpen, a + ", " + c,
			"1=1/cuda.device 2=1/cuda.device 3=1/cuda.device", `" ` + c + `"`},
		{"open, GPU- and upper case", model.PluginCUDAOpen, "GPU-" + a + "," + strings.ToUpper(c),
			"0=1/cuda.device 1=1/cuda.device 2=1/cuda.device 3=1/cuda.device", "GPU-" + a},
		{"fractional, a space after the comma", model.PluginCUDAFractional, "GPU-" + a + ", " + c,
			"GPU-bbbbbbbb-0000-0000-0000-000000000000=16.50/cuda.shares GPU-dddddddd-0000-0000-0000-000000000000=16.50/cuda.shares", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Register(fourGPUs(), tc.kind, Parse(map[string]string{"device_mask": tc.mask}), Capacities{})
			if got := ids(r.Devices); got != tc.want {
				t.Errorf("device_mask %q:\n got  %s\n want %s", tc.mask, got, tc.want)
			}
			var stray string
			for _, is := range r.Issues {
				if strings.Contains(is.Message, "masks no GPU") {
					stray = is.Message
				}
			}
			if (stray == "") != (tc.stray == "") || !strings.Contains(stray, tc.stray) {
				t.Errorf("device_mask %q: issue %q, want one naming %s", tc.mask, stray, tc.stray)
			}
		})
	}
}

// TestAgentsOpenMasksAsWritten: two agents of a cuda_open node, one
// masking GPU 3 by its bare UUID and one with "GPU-<uuid>", which masks
// nothing under cuda_open: the second agent registers GPU 3, so the node
// shows it (and its kernels there are on a registered GPU), and says it
// is not i-a's. Masks alike are no issue.
func TestAgentsOpenMasksAsWritten(t *testing.T) {
	const d = "dddddddd-0000-0000-0000-000000000000"
	for _, tc := range []struct {
		name, maskB, want, leftOut string
		unregistered               map[model.AgentID]map[model.DeviceID]bool
	}{
		{"both bare", d, "0=1/cuda.device 1=1/cuda.device 2=1/cuda.device", "", nil},
		{"GPU- on one", "GPU-" + d, "0=1/cuda.device 1=1/cuda.device 2=1/cuda.device 3=1/cuda.device", "left out: none",
			map[model.AgentID]map[model.DeviceID]bool{"i-a": {"3": true}}},
		{"upper case on one", strings.ToUpper(d), "0=1/cuda.device 1=1/cuda.device 2=1/cuda.device 3=1/cuda.device", "left out: none",
			map[model.AgentID]map[model.DeviceID]bool{"i-a": {"3": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
				SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
				Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
			src := NewSource(inner, Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a", "i-b"}}})
			defer src.Close()
			src.take(EtcdReading{Settings: map[model.AgentID]*Settings{
				"i-a": Parse(map[string]string{"allocation_mode": "discrete", "device_mask": d}),
				"i-b": Parse(map[string]string{"allocation_mode": "discrete", "device_mask": tc.maskB})}})
			inv, err := src.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(inv.Devices); got != tc.want {
				t.Errorf("i-a masks %s, i-b %s:\n got  %s\n want %s", d, tc.maskB, got, tc.want)
			}
			var msg string
			for _, is := range inv.Issues {
				if strings.Contains(is.Message, "mask different GPUs") {
					msg = is.Message
				}
			}
			if (msg == "") != (tc.leftOut == "") || !strings.Contains(msg, tc.leftOut) {
				t.Errorf("issue %q, want one saying %q", msg, tc.leftOut)
			}
			// GPU 3 is shown for i-b; i-a's own mask leaves it out.
			if !maps.EqualFunc(inv.AgentUnregistered, tc.unregistered, maps.Equal) {
				t.Errorf("AgentUnregistered %v, want %v", inv.AgentUnregistered, tc.unregistered)
			}
		})
	}
}

// TestRegisterOpenMixedModels: cuda_open's ids are the CUDA runtime's
// order, which is NVML's PCI bus order only for identical GPUs (or with
// CUDA_DEVICE_ORDER=PCI_BUS_ID, which fgtop cannot see): on a node of
// several models fgtop says its numbering may not be the agent's, and
// says nothing where the GPUs are alike or under the fractional plugin
// (ids by UUID).
func TestRegisterOpenMixedModels(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		models     []string
		warn       bool
	}{
		{"alike", model.PluginCUDAOpen, []string{"H100", "H100", "H100", "H100"}, false},
		{"mixed", model.PluginCUDAOpen, []string{"Tesla T4", "H100", "H100", "H100"}, true},
		{"mixed, fractional", model.PluginCUDAFractional, []string{"Tesla T4", "H100", "H100", "H100"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devs := fourGPUs()
			for i, m := range tc.models {
				devs[i].Model = m
			}
			r := Register(devs, tc.kind, Parse(map[string]string{}), Capacities{})
			var warned bool
			for _, is := range r.Issues {
				warned = warned || (is.Severity == model.SevWarning && strings.Contains(is.Message, "GPUs of different models (Tesla T4, H100)"))
			}
			if warned != tc.warn {
				t.Errorf("models %v under %s: warned %v, want %v (%v)", tc.models, tc.kind, warned, tc.warn, r.Issues)
			}
		})
	}
}

// TestAgentUnregisteredWhenSettingsDiffer: agents whose settings differ
// beyond device_mask are shown as the first registers the GPUs; a GPU the
// other's own mask leaves out is still named as not that agent's.
func TestAgentUnregisteredWhenSettingsDiffer(t *testing.T) {
	const d = "dddddddd-0000-0000-0000-000000000000"
	inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
		SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
		Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
	src := NewSource(inner, Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a", "i-b"}}})
	defer src.Close()
	src.take(EtcdReading{Settings: map[model.AgentID]*Settings{
		"i-a": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}),
		"i-b": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "10g", "device_mask": d})}})
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[model.AgentID]map[model.DeviceID]bool{"i-b": {"GPU-" + d: true}}
	if inv.Plugin == nil || !inv.Plugin.SettingsDiffer || !maps.EqualFunc(inv.AgentUnregistered, want, maps.Equal) {
		t.Errorf("plugin %+v, AgentUnregistered %v; want settings differing and %v", inv.Plugin, inv.AgentUnregistered, want)
	}
}

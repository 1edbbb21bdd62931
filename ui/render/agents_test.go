package render

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// spansText is the text of spans, without their levels.
func spansText(sp []kit.Span) string {
	var b strings.Builder
	for _, s := range sp {
		b.WriteString(s.Text)
	}
	return b.String()
}

// TestAgentPartitionUnknownCapacity: an agent owning a GPU whose
// capacity is unknown reads held/? for that slot, never held over the
// other GPUs' sum (which would also mark it over capacity).
func TestAgentPartitionUnknownCapacity(t *testing.T) {
	held := model.MustDec("1.50")
	s := &model.Snapshot{
		Devices: []model.Device{
			{Name: "cuda", ID: "GPU-a", Slot: model.SlotCUDAShares, CapacityUnknown: true},
			{Name: "cuda", ID: "GPU-b", Slot: model.SlotCUDAShares, Capacity: model.MustDec("3.98")},
			{Name: "cuda", ID: "GPU-c", Slot: model.SlotCUDAShares, Capacity: model.MustDec("3.98")},
		},
		Agents: []model.Agent{
			{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"GPU-a", "GPU-b"}}, Held: model.ResourceSlot{model.SlotCUDAShares: held.Add(held).Add(held)}},
			{ID: "a2", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"GPU-c"}}, Held: model.ResourceSlot{model.SlotCUDAShares: held}},
		},
	}
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for i, want := range []string{"4.50/?", "1.50/3.98"} {
		var text string
		for _, l := range d.partitionLines(&s.Agents[i]) {
			text += spansText(l)
			for _, sp := range l {
				if strings.Contains(sp.Text, want) && i == 0 && sp.Lvl == kit.LvlCrit {
					t.Errorf("agent %d: %q marked over capacity", i, sp.Text)
				}
			}
		}
		if !strings.Contains(text, want) {
			t.Errorf("agent %d: %q lacks %s", i, text, want)
		}
	}
}

// TestAgentPartitionMockUnread: the mock plugin's settings unread, its
// GPUs are registered in the guessed (discrete) mode with unknown
// capacities while kernels hold cuda.shares on them. The agent's line read
// "shares 1.40/0", marked over capacity, and "devices 0/?": the shares
// held against the guessed mode's none. Both are unknown.
func TestAgentPartitionMockUnread(t *testing.T) {
	gpu := model.Device{Name: "cuda", ID: "u0", Slot: model.SlotCUDADevice, CapacityUnknown: true}
	s := &model.Snapshot{
		Devices: []model.Device{gpu},
		Usage: map[model.DeviceKey]*model.DeviceUsage{gpu.Key(): {Key: gpu.Key(),
			Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.40")}, Kernels: 2}},
		Agents: []model.Agent{{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"u0"}},
			Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.40")}}},
	}
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	var text string
	for _, l := range d.partitionLines(&s.Agents[0]) {
		text += spansText(l)
		for _, sp := range l {
			if sp.Lvl == kit.LvlCrit {
				t.Errorf("%q marked over capacity", sp.Text)
			}
		}
	}
	if !strings.Contains(text, "shares 1.40/?") || !strings.Contains(text, "devices 0/?") {
		t.Errorf("%q: want shares 1.40/? and devices 0/?", text)
	}
}

// TestAgentGivenWholeUnits: on a slot-based partition an agent's held MIG
// slices read as the devices pane reads them, "1" beside a given "1",
// not the "1.00" a kernel's resource.txt may write; shares keep their
// decimals and memory its units.
func TestAgentGivenWholeUnits(t *testing.T) {
	const mig = model.SlotName("cuda.device:5g-mig")
	s := &model.Snapshot{
		Devices: []model.Device{
			{Name: "cuda", ID: "GPU-a", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")},
			{Name: "cuda", ID: "GPU-a/mig", Slot: mig, Capacity: model.MustDec("1")},
		},
		Agents: []model.Agent{{ID: "a1",
			Given: model.ResourceSlot{mig: model.MustDec("1"), model.SlotCUDAShares: model.MustDec("1.0"), model.SlotMem: model.MustDec("1073741824")},
			Held:  model.ResourceSlot{mig: model.MustDec("1.00"), model.SlotCUDAShares: model.MustDec("0.50"), model.SlotMem: model.MustDec("536870912")}}},
	}
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	var text string
	for _, l := range d.givenLines(&s.Agents[0]) {
		text += spansText(l) + "\n"
	}
	for _, want := range []string{"cuda.device:5g-mig 1 of 1  held 1\n", "held 0.50\n", "held 512m"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
}

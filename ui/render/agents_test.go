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

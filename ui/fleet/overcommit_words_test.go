package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// TestOvercommitSpansNameTheDevice: a CPU core a fit would put over
// capacity is named as a core ("cpu 4", not a bare "4"), and memory is
// said as a size.
func TestOvercommitSpansNameTheDevice(t *testing.T) {
	f := fleet.Fit{Devices: []placement.DeviceAfter{
		{Slot: model.SlotCPU, Device: "4", TotalAfter: model.MustDec("2"), Capacity: model.MustDec("1"), Overcommit: true},
		{Slot: model.SlotMem, Device: "root", TotalAfter: model.MustDec("549755813888"), Capacity: model.MustDec("274877906944"), Overcommit: true},
		{Slot: model.SlotCUDAShares, Device: "GPU-x", TotalAfter: model.MustDec("1.50"), Capacity: model.MustDec("1.00"), Overcommit: true},
	}}
	var b strings.Builder
	for _, sp := range overcommitSpans(f, map[model.DeviceID]string{"GPU-x": "GPU0"}) {
		b.WriteString(sp.Text)
	}
	got := b.String()
	want := " · cpu 4 would hold 2/1 across all agents · mem would hold 512g/256g across all agents · GPU0 would hold 1.50/1.00 across all agents"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

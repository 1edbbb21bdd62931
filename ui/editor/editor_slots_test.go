package editor

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestHeldBeyond: what an agent's kernels hold is beyond its amount only
// against an amount: memory that is not partitioned (shared mode, 0) is
// the node's, and no holding is beyond it.
func TestHeldBeyond(t *testing.T) {
	d := model.MustDec
	for _, c := range []struct {
		slot         model.SlotName
		amount, held string
		want         bool
	}{
		{model.SlotCUDAShares, "1.0", "1.40", true},
		{model.SlotCUDAShares, "2.0", "1.40", false},
		{model.SlotCUDAShares, "0", "0.10", true},
		{model.SlotCPU, "15", "16", true},
		{model.SlotMem, "128849018880", "137438953472", true},
		{model.SlotMem, "0", "137438953472", false},
	} {
		if got := heldBeyond(c.slot, d(c.amount), d(c.held)); got != c.want {
			t.Errorf("%s: %s held of %s: beyond %v, want %v", c.slot, c.held, c.amount, got, c.want)
		}
	}
}

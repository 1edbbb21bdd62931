package editor

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestHeldAmountText: the editor's "held" of a whole-unit slot prints as
// the console's device rows do ("held 1", not the "1.00" a MIG slice's
// resource.txt gives; h27demo); shares and memory print as before.
func TestHeldAmountText(t *testing.T) {
	for _, c := range []struct {
		slot model.SlotName
		v    string
		want string
	}{
		{"cuda.device:5g-mig", "1.00", "1"},
		{model.SlotCPU, "20", "20"},
		{model.SlotCUDAShares, "2.10", "2.10"},
		{model.SlotMem, "163208757248", "152g"},
	} {
		if got := heldAmountText(c.slot, model.MustDec(c.v)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.slot, c.v, got, c.want)
		}
	}
}

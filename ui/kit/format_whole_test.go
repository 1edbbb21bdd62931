package kit

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestFmtWhole: a whole-unit slot's whole amount prints as cores do, with
// no fraction digits (h27demo: a MIG slice held showed "1.00/1"); a
// fraction, and any amount of a fractional slot, print as written.
func TestFmtWhole(t *testing.T) {
	for _, c := range []struct {
		slot model.SlotName
		v    string
		want string
	}{
		{"cuda.device:20g-mig", "1.00", "1"},
		{"cuda.device:5g-mig", "2.0", "2"},
		{"cuda.device:5g-mig", "1", "1"},
		{"cuda.device:5g-mig", "10.00", "10"},
		{"cuda.device:5g-mig", "0.00", "0"},
		{model.SlotCUDADevice, "1.00", "1"},
		{model.SlotCPU, "20.0", "20"},
		{model.SlotCPU, "1.5", "1.5"},
		{model.SlotCUDAShares, "1.00", "1.00"},
		{model.SlotCUDAShares, "0.40", "0.40"},
		{"rocm.device", "3.00", "3"},
	} {
		if got := FmtWhole(c.slot, model.MustDec(c.v)); got != c.want {
			t.Errorf("FmtWhole(%s, %s) = %q, want %q", c.slot, c.v, got, c.want)
		}
	}
}

package placement

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// The device table writes a bytes slot's amounts as binary sizes, the
// overcommitted FREE (negative) too: it printed -114310483968 beside
// "23.54g" and "130g".
func TestAmountText(t *testing.T) {
	types := model.DefaultSlotTypes()
	for _, c := range []struct {
		v    model.Dec
		slot model.SlotName
		want string
	}{
		{model.NewDec(130<<30, 0), model.SlotMem, "130g"},
		{model.NewDec(-(130 << 30), 0), model.SlotMem, "-130g"},
		{model.Zero, model.SlotMem, "0"},
		{model.NewDec(-4, -1), model.SlotCUDAShares, "-0.4"},
		{model.NewDec(-1, 0), model.SlotCPU, "-1"},
	} {
		if got := amountText(c.v, c.slot, types); got != c.want {
			t.Errorf("amountText(%s, %s) = %q, want %q", c.v, c.slot, got, c.want)
		}
	}
}

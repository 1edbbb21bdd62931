package render

import (
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestKernelListHeldWhole: a MIG slice a resource.txt writes as "1.00"
// (the demo's agents do) reads 1 in the kernel list, in its slot's column
// and in the ON column of the slice, as the devices pane reads it (1/1);
// an fGPU's shares keep their digits, and the record keeps its amount.
func TestKernelListHeldWhole(t *testing.T) {
	s := fake.Node(fake.Options{})
	const migSlot = model.SlotName("cuda.device:10g-mig")
	var mig, shares *model.Kernel
	for _, k := range s.Kernels() {
		if m, ok := k.Alloc[migSlot]; ok {
			m[fake.MIG(3)] = model.MustDec("1.00")
			k.Slots[migSlot] = model.MustDec("1.00")
			mig = k
		}
		if m, ok := k.Alloc[model.SlotCUDAShares]; ok && shares == nil && len(m) == 1 {
			for id := range m {
				m[id] = model.MustDec("1.00")
			}
			k.Slots[model.SlotCUDAShares] = model.MustDec("1.00")
			shares = k
		}
	}
	if mig == nil || shares == nil {
		t.Fatal("the fake node has no MIG kernel or no single-GPU fGPU kernel")
	}
	fake.Finish(s)
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for _, c := range []struct {
		k    *model.Kernel
		slot model.SlotName
		want string
	}{{mig, migSlot, "1"}, {shares, model.SlotCUDAShares, "1.00"}} {
		ki, ok := d.KernelIndex(c.k.ID)
		ci := slices.Index(d.SlotCols, c.slot)
		if !ok || ci < 0 {
			t.Fatalf("kernel %s or column %s not derived", c.k.ID, c.slot)
		}
		if got := d.Kernels[ki].SlotVals[ci]; got != c.want {
			t.Errorf("kernel %s, column %s: %q, want %q", c.k.ID[:8], c.slot, got, c.want)
		}
		found := false
		for _, r := range d.Devs {
			if n := slices.Index(r.Kernels, ki); n >= 0 && r.Dev.Slot == c.slot {
				found = true
				if r.OnDev[n] != c.want {
					t.Errorf("kernel %s on %s: %q, want %q", c.k.ID[:8], r.Label, r.OnDev[n], c.want)
				}
			}
		}
		if !found {
			t.Errorf("kernel %s is on no device of slot %s", c.k.ID[:8], c.slot)
		}
	}
	if got := mig.Alloc[migSlot][fake.MIG(3)].String(); got != "1.00" {
		t.Errorf("the record's amount became %q, want it kept as written, 1.00", got)
	}
}

package alloc

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestShortNeverRefusesWhatAllocatePlaces: on random fractional (and
// discrete) maps, loaded at random and sometimes overcommitted, with
// random requests of one or two plugins, Short says true only of a
// request Allocate refuses; and it says so of most requests that ask
// more than the free total (else the check is not worth its place).
func TestShortNeverRefusesWhatAllocatePlaces(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	short, refusedOverTotal, placed := 0, 0, 0
	quanta := []string{"0.01", "0.05", "0.1", "0.25"}
	amountOf := func(max int) model.Dec {
		// Up to three decimals: some fall between hundredths, where
		// EVENLY compares rounded amounts.
		return model.NewDec(int64(rng.IntN(max*1000+1)), -3)
	}
	for round := range 3000 {
		n := 1 + rng.IntN(6)
		var cuda, fpga []DeviceSlot
		for i := range n {
			cuda = append(cuda, DeviceSlot{ID: model.DeviceID(fmt.Sprint(i)), Slot: model.SlotCUDAShares, Capacity: model.NewDec(int64(1+rng.IntN(4)), 0)})
			fpga = append(fpga, DeviceSlot{ID: model.DeviceID(fmt.Sprint(i)), Slot: "fpga.device", Capacity: model.NewDec(int64(rng.IntN(3)), 0)})
		}
		strategy := Strategy(rng.IntN(2))
		fm := NewFractionMap(cuda, strategy, model.MustDec(quanta[rng.IntN(len(quanta))]), nil)
		dm := NewDiscreteMap(fpga, strategy, nil)
		computers := map[model.DeviceName]Map{"cuda": fm, "fpga": dm}
		order := []model.DeviceName{"fpga", "cuda"}
		// Load what is already held, past capacity now and then.
		for i := range cuda {
			if rng.IntN(3) > 0 {
				fm.set(i, amountOf(5))
			}
		}
		opts := Options{ForbidFragmentation: rng.IntN(4) == 0}
		for range 5 {
			req := Request{{Slot: model.SlotCUDAShares, Amount: amountOf(8)}}
			if rng.IntN(4) == 0 {
				req = append(req, SlotAmount{Slot: "fpga.device", Amount: model.NewDec(int64(rng.IntN(4)), 0)})
			}
			if rng.IntN(10) == 0 {
				// Named twice: the last amount counts, as in Allocate.
				req = append(req, SlotAmount{Slot: model.SlotCUDAShares, Amount: amountOf(2)})
			}
			s := Short(computers, req)
			_, err := Try(computers, req, order, Interleaved, opts)
			if s && err == nil {
				t.Fatalf("seed %d round %d: Short refuses %v, Allocate places it (%s, strategy %v, held %v)", seed, round, req, opts.ContextTag, strategy, fm.alloc)
			}
			if s {
				short++
			}
			if err == nil {
				placed++
			}
			last := req.dedup()
			if err != nil && fm.SlotFreeTotal(model.SlotCUDAShares).Less(last[0].Amount) {
				refusedOverTotal++
			}
		}
	}
	if short == 0 || placed == 0 || short*2 < refusedOverTotal {
		t.Fatalf("seed %d: Short said %d refusals of %d asking over the free total (%d placed): the check is not exercised", seed, short, refusedOverTotal, placed)
	}
	t.Logf("seed %d: %d short, %d refused asking over the free total, %d placed", seed, short, refusedOverTotal, placed)
}

// shortRef is short as first written: every device's free capacity by
// subtraction, the positive ones summed.
func (m *FractionMap) shortRef(slot model.SlotName, amount model.Dec) bool {
	si, ok := m.slotIdx[slot]
	if !ok {
		return false
	}
	sum := model.Zero
	for _, i := range m.slots[si].devs {
		if free := m.devs[i].Capacity.Sub(m.alloc[i]); free.Sign() > 0 {
			sum = sum.Add(free)
		}
	}
	if !sum.IsFinite() {
		return false
	}
	if m.strategy == Fill {
		return sum.Less(amount)
	}
	q, rq := quantize2(sum), quantize2(amount)
	if !q.IsFinite() || !rq.IsFinite() {
		return false
	}
	return q.Less(rq)
}

// TestShortIsTheSubtraction: short, which skips a device whose
// allocation reaches its capacity without subtracting, says what the
// subtraction says, on maps held exactly full, past full (in other
// exponents: 1.00 held of 1), empty and in between; and Short without
// dedup's map is Short of the deduplicated request.
func TestShortIsTheSubtraction(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 28))
	held := []string{"0", "0.0", "0.5", "1", "1.00", "1.000001", "2", "0.999", "3.5", "-0.5"}
	full := 0
	for round := range 2000 {
		n := 1 + rng.IntN(6)
		var cuda []DeviceSlot
		for i := range n {
			cuda = append(cuda, DeviceSlot{ID: model.DeviceID(fmt.Sprint(i)), Slot: model.SlotCUDAShares, Capacity: model.NewDec(int64(1+rng.IntN(2)), 0)})
		}
		fm := NewFractionMap(cuda, Strategy(rng.IntN(2)), model.MustDec("0.01"), nil)
		for i := range cuda {
			fm.set(i, model.MustDec(held[rng.IntN(len(held))]))
			if !fm.alloc[i].Less(cuda[i].Capacity) {
				full++
			}
		}
		for range 5 {
			amt := model.NewDec(int64(rng.IntN(4000)), -3)
			if got, want := fm.short(model.SlotCUDAShares, amt), fm.shortRef(model.SlotCUDAShares, amt); got != want {
				t.Fatalf("seed %d round %d: short %v of %s held %v, the subtraction says %v", seed, round, got, amt, fm.alloc, want)
			}
			req := Request{{Slot: model.SlotCUDAShares, Amount: amt}}
			if rng.IntN(3) == 0 {
				req = append(req, SlotAmount{Slot: model.SlotCUDAShares, Amount: model.NewDec(int64(rng.IntN(4000)), -3)})
			}
			computers := map[model.DeviceName]Map{"cuda": fm}
			want := false
			for _, e := range req.dedup() {
				if e.Amount.Sign() > 0 && fm.shortRef(e.Slot, e.Amount) {
					want = true
				}
			}
			if got := Short(computers, req); got != want {
				t.Fatalf("seed %d round %d: Short %v of %v, deduplicated %v", seed, round, got, req, want)
			}
		}
	}
	if full == 0 {
		t.Fatalf("seed %d: no device held full: the skip is not exercised", seed)
	}
}

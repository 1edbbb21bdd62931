package alloc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// refEvenlySlot is the straightforward model.Dec transcription of
// DiscretePropertyAllocMap._allocate_evenly (every value recomputed as a
// decimal in every round, the order fetched every round), kept as the
// oracle for the integer version in discrete.go.
func (m *DiscreteMap) refEvenlySlot(s SlotAmount, hint *AffinityHint, opts Options) ([]Share, error) {
	idxs := m.slotDevs(s.Slot)
	added := make([]int64, len(m.devs))
	diffs := make([]int64, len(m.devs))
	candidate := make([]bool, len(m.devs))
	remaining := pyInt(s.Amount)
	leftFree := func(i int) model.Dec {
		return m.free(i).Sub(model.NewDec(added[i], 0))
	}
	rounds := 0
	for ; remaining > 0; rounds++ {
		if rounds >= maxEvenlyRounds {
			return nil, &Error{kind: KindResourceError, Slot: s.Slot}
		}
		sum := model.Zero
		for _, i := range idxs {
			sum = sum.Add(leftFree(i))
		}
		total := pyInt(sum)
		if total < remaining {
			return nil, errInsufficient("DiscretePropertyAllocMap", s.Slot, opts.ContextTag, "amount",
				s.Amount.String(), model.NewDec(total, 0).String())
		}
		devs := m.ordered(hint, s.Slot)
		nonzero := 0
		for _, d := range devs {
			candidate[d.idx] = leftFree(d.idx).Sign() > 0
			if candidate[d.idx] {
				nonzero++
			}
		}
		if nonzero == 0 {
			return nil, errInsufficient("DiscretePropertyAllocMap", s.Slot, opts.ContextTag, "candidate devices",
				s.Amount.String(), model.NewDec(total, 0).String())
		}
		base, extra := remaining/int64(nonzero), remaining%int64(nonzero)
		k := int64(0)
		for _, d := range devs {
			want := int64(0)
			if candidate[d.idx] {
				want = base
				if k < extra {
					want++
				}
				k++
			}
			diffs[d.idx] = min(pyInt(leftFree(d.idx)), want)
		}
		for _, d := range devs {
			added[d.idx] += diffs[d.idx]
			remaining -= diffs[d.idx]
			if remaining == 0 {
				break
			}
		}
	}
	shares := []Share{}
	if rounds == 0 {
		return shares, nil
	}
	for _, i := range idxs {
		amt := model.NewDec(added[i], 0)
		m.alloc[i] = m.alloc[i].Add(amt)
		if added[i] > 0 {
			shares = append(shares, Share{m.devs[i].ID, amt})
		}
	}
	return shares, nil
}

// TestDiscreteEvenlyMatchesReference runs both versions on random maps,
// including fractional capacities and over-committed devices (negative
// free capacity), and compares results, errors and the resulting map.
func TestDiscreteEvenlyMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	capacities := []string{"1", "1.0", "2", "0.5", "1.5", "3", "4"}
	used := []string{"0", "0", "1", "0.5", "2", "3.5", "-1"}
	for iter := 0; iter < 3000; iter++ {
		n := 1 + rng.IntN(12)
		devs := make([]DeviceSlot, n)
		for i := range devs {
			devs[i] = DeviceSlot{ID: model.DeviceID(fmt.Sprint(i)), Slot: "cpu",
				Capacity: dec(capacities[rng.IntN(len(capacities))]), NUMANode: intp(rng.IntN(3))}
		}
		a := NewDiscreteMap(devs, Evenly, nil)
		for i := range devs {
			a.alloc[i] = dec(used[rng.IntN(len(used))])
		}
		b := a.Clone().(*DiscreteMap)
		var hint *AffinityHint
		switch rng.IntN(3) {
		case 1:
			hint = &AffinityHint{Policy: AffinityPolicy(rng.IntN(2))}
		case 2:
			hint = &AffinityHint{Devices: []HintDevice{{NUMANode: intp(rng.IntN(3))}}}
		}
		s := SlotAmount{"cpu", model.NewDec(int64(rng.IntN(2*n+2)), 0)}
		got, err1 := a.evenlySlot(s, hint, Options{})
		want, err2 := b.refEvenlySlot(s, hint, Options{})
		if kindOf(err1) != kindOf(err2) {
			t.Fatalf("iter %d: errors differ: %v vs %v", iter, err1, err2)
		}
		if err1 != nil {
			continue
		}
		g := Allocation{{Slot: "cpu", Shares: got}}.String()
		w := Allocation{{Slot: "cpu", Shares: want}}.String()
		if g != w {
			t.Fatalf("iter %d: request %s: got %s, want %s", iter, s.Amount, g, w)
		}
		if ga, wa := a.Allocations().String(), b.Allocations().String(); ga != wa {
			t.Fatalf("iter %d: map %s, want %s", iter, ga, wa)
		}
	}
}

func kindOf(err error) string {
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Kind()
	}
	return fmt.Sprint(err)
}

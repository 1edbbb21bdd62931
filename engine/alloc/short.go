package alloc

import (
	"github.com/fgtop/fgtop/model"
)

// Short reports whether Allocate(computers, req, ...) certainly fails for
// want of room, found without the attempt: a slot of a fractional map
// asks more than the free capacity of all its devices together, which
// is the first capacity check both of its strategies make (every other
// step only looks at fewer devices). It never says true of a request
// Allocate would place; false means only that the attempt must decide.
// Discrete maps are left to the attempt: their EVENLY strategy places
// the request truncated to whole units.
func Short(computers map[model.DeviceName]Map, req Request) bool {
	for _, e := range req.dedup() {
		if !e.Amount.IsFinite() || e.Amount.Sign() <= 0 {
			continue
		}
		m, ok := computers[e.Slot.DeviceName()].(*FractionMap)
		if !ok || m == nil {
			continue
		}
		if m.short(e.Slot, e.Amount) {
			return true
		}
	}
	return false
}

// short: the sum of the positive free capacities of slot's devices is
// less than amount, as the strategy compares them (EVENLY in hundredths,
// half-even; FILL exactly).
func (m *FractionMap) short(slot model.SlotName, amount model.Dec) bool {
	si, ok := m.slotIdx[slot]
	if !ok {
		return false
	}
	// The free capacities as derive computes them; exact (amounts of a
	// few decimals, far from the context's 28 digits), so their sum over
	// all the slot's devices is at least the sum over any of them.
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

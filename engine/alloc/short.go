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
	// A request made of a ResourceSlot names each slot once: dedup's map
	// is made only for one that repeats (a replay asks this of 200,000
	// sessions).
	if req.repeats() {
		req = req.dedup()
	}
	for _, e := range req {
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
		// A device whose finite allocation reaches its finite capacity
		// has no positive free capacity: said by a comparison, without
		// the subtraction's decimal (a replay of a week asks this of a
		// full node hundreds of thousands of times).
		c, a := m.devs[i].Capacity, m.alloc[i]
		if c.IsFinite() && a.IsFinite() && !a.Less(c) {
			continue
		}
		if free := c.Sub(a); free.Sign() > 0 {
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

// repeats reports whether r names a slot twice (dedup then changes it).
func (r Request) repeats() bool {
	if len(r) > 16 {
		return true // dedup decides, through its map
	}
	for i := range r {
		for j := range i {
			if r[j].Slot == r[i].Slot {
				return true
			}
		}
	}
	return false
}

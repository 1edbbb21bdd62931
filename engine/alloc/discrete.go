package alloc

import (
	"github.com/fgtop/fgtop/model"
)

// maxEvenlyRounds is the discrete EVENLY allocator's guard against a loop
// that makes no progress (devices with less than one unit free count as
// candidates but can take nothing).
const maxEvenlyRounds = 100

// DiscreteMap is Backend.AI's DiscretePropertyAllocMap: whole units (CPU
// cores, memory bytes, whole GPUs, MIG slices).
type DiscreteMap struct {
	core
	strategy Strategy
}

var _ Map = (*DiscreteMap)(nil)

// NewDiscreteMap builds a DiscretePropertyAllocMap over devs (their order is
// the dict insertion order Backend.AI sees). exclusive lists exclusive slot
// names or fnmatch patterns.
func NewDiscreteMap(devs []DeviceSlot, strategy Strategy, exclusive []string) *DiscreteMap {
	return &DiscreteMap{core: newCore(devs, exclusive), strategy: strategy}
}

// Strategy returns the map's allocation strategy.
func (m *DiscreteMap) Strategy() Strategy { return m.strategy }

// Clone returns an independent copy of the map.
func (m *DiscreteMap) Clone() Map {
	n := *m
	n.core = m.core.clone()
	return &n
}

// Allocate is DiscretePropertyAllocMap.allocate. On any error the map is
// restored to its state before the call. opts.ForbidFragmentation and
// opts.MinMemory do not apply to discrete maps.
func (m *DiscreteMap) Allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error) {
	return m.atomically(func() (Allocation, error) { return m.allocate(req, hint, opts) })
}

func (m *DiscreteMap) allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error) {
	slots, err := m.precheck(req)
	if err != nil {
		return nil, err
	}
	out := make(Allocation, 0, len(slots))
	for _, s := range slots {
		var shares []Share
		var err error
		if m.strategy == Fill {
			shares, err = m.fillSlot(s, hint, opts)
		} else {
			shares, err = m.evenlySlot(s, hint, opts)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, SlotShares{s.Slot, shares})
	}
	return out, nil
}

// fillSlot is _allocate_by_filling: check the total of the whole units free,
// then take min(remaining, free) from each device in priority order.
func (m *DiscreteMap) fillSlot(s SlotAmount, hint *AffinityHint, opts Options) ([]Share, error) {
	der := m.derived()
	devs := m.ordered(hint, s.Slot)
	var total int64
	for _, d := range devs {
		total += der.units[d.idx]
	}
	if model.NewDec(total, 0).Less(s.Amount) {
		return nil, errInsufficient("DiscretePropertyAllocMap", s.Slot, opts.ContextTag, "amount",
			s.Amount.String(), model.NewDec(total, 0).String())
	}
	remaining := s.Amount.Normalize()
	shares := []Share{}
	for _, d := range devs {
		if d.free.Sign() > 0 {
			got := pyMin(remaining, d.free)
			shares = append(shares, Share{d.id, got})
			m.set(d.idx, m.alloc[d.idx].Add(got))
			remaining = remaining.Sub(got)
		}
		if remaining.IsZero() {
			break
		}
	}
	return shares, nil
}

// evenlySlot is _allocate_evenly: split the (truncated) request over the
// devices that still have room, whole units at a time, capping each device
// at its free units, and repeat until nothing remains.
//
// Backend.AI recomputes (capacity - allocated - new) as decimals for every
// device in every round. Here each device's free capacity is computed once
// and the whole units added this call are kept as integers; the integer
// shortcuts below are exact for any decimal free capacity f and integer k
// (negative ones included): int(f - k) is floor(f) - k when f >= k and
// ceil(f) - k otherwise, and f - k > 0 exactly when floor(f) > k, or
// floor(f) == k with f not whole.
func (m *DiscreteMap) evenlySlot(s SlotAmount, hint *AffinityHint, opts Options) ([]Share, error) {
	remaining := pyInt(s.Amount)
	shares := []Share{}
	if remaining <= 0 {
		return shares, nil
	}
	idxs := m.slotDevs(s.Slot)
	// The priority order depends only on the map, which does not change
	// until the end, so one ordering serves every round.
	devs := m.ordered(hint, s.Slot)
	// The whole units free and their sum (over the map's own device
	// order, as Python sums) come with the map's derived state.
	der := m.derived()
	type unit struct {
		floor, ceil int64
		whole       bool
		added, diff int64
		candidate   bool
	}
	units := make([]unit, len(m.devs))
	for _, d := range devs {
		u := &units[d.idx]
		u.floor = der.floor[d.idx]
		u.whole = der.whole[d.idx]
		u.ceil = u.floor
		if !u.whole {
			u.ceil++
		}
	}
	freeSum := model.Zero
	if si, ok := m.slotIdx[s.Slot]; ok {
		freeSum = der.slots[si].freeSum
	}
	var addedSum int64
	left := func(u *unit) int64 { // int(f - added)
		if u.floor >= u.added {
			return u.floor - u.added
		}
		return u.ceil - u.added
	}
	for rounds := 0; remaining > 0; rounds++ {
		if rounds >= maxEvenlyRounds {
			return nil, &Error{kind: KindResourceError, Slot: s.Slot,
				Msg: "Resource error. (too many repeats until allocation)"}
		}
		total := pyInt(freeSum.Sub(model.NewDec(addedSum, 0)))
		if total < remaining {
			return nil, errInsufficient("DiscretePropertyAllocMap", s.Slot, opts.ContextTag, "amount",
				s.Amount.String(), model.NewDec(total, 0).String())
		}
		nonzero := int64(0)
		for _, d := range devs {
			u := &units[d.idx]
			u.candidate = u.floor > u.added || (u.floor == u.added && !u.whole)
			if u.candidate {
				nonzero++
			}
		}
		if nonzero == 0 {
			return nil, errInsufficient("DiscretePropertyAllocMap", s.Slot, opts.ContextTag, "candidate devices",
				s.Amount.String(), model.NewDec(total, 0).String())
		}
		// distribute(): divmod over the candidates in priority order, the
		// first ones getting one more; every device is then capped at its
		// whole free units (a non-candidate "wants" 0, so an over-committed
		// one gets a negative diff, exactly as in Backend.AI).
		base, extra := remaining/nonzero, remaining%nonzero
		k := int64(0)
		for _, d := range devs {
			u := &units[d.idx]
			want := int64(0)
			if u.candidate {
				want = base
				if k < extra {
					want++
				}
				k++
			}
			u.diff = min(left(u), want)
		}
		for _, d := range devs {
			u := &units[d.idx]
			u.added += u.diff
			addedSum += u.diff
			remaining -= u.diff
			if remaining == 0 {
				break
			}
		}
	}
	// new_alloc's keys were created in device order by the first round's
	// total, every entry (zero included) is added to the map, and only the
	// positive ones are returned.
	for _, i := range idxs {
		if units[i].added == 0 && der.zeroNoop[i] {
			continue
		}
		amt := model.NewDec(units[i].added, 0)
		m.set(i, m.alloc[i].Add(amt))
		if units[i].added > 0 {
			shares = append(shares, Share{m.devs[i].ID, amt})
		}
	}
	return shares, nil
}

// zeroAddIsNoop reports whether x + Decimal(0) prints as x: true unless x
// has a positive exponent ("1E+2" + 0 is "100") or is -0 (-0 + 0 is 0).
func zeroAddIsNoop(x model.Dec) bool {
	if x.Exponent() > 0 {
		return false
	}
	return !x.IsZero() || x.String()[0] != '-'
}

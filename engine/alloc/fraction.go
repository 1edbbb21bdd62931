package alloc

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// FractionMap is Backend.AI's FractionAllocMap: fractional shares of a
// device (cuda.shares), computed in hundredths and rounded down to the
// quantum after placement.
type FractionMap struct {
	core
	strategy Strategy
	quantum  model.Dec
	// quantumApd is quantum as an apd value, for the post-rounding.
	quantumApd *apd.Decimal
}

var _ Map = (*FractionMap)(nil)

// NewFractionMap builds a FractionAllocMap over devs (their order is the
// dict insertion order Backend.AI sees). A zero quantum means the default
// 0.01. exclusive lists exclusive slot names or fnmatch patterns.
func NewFractionMap(devs []DeviceSlot, strategy Strategy, quantum model.Dec, exclusive []string) *FractionMap {
	if quantum.IsZero() {
		quantum = defaultQuantum
	}
	m := &FractionMap{core: newCore(devs, exclusive), strategy: strategy, quantum: quantum, quantumApd: quantum.Apd()}
	m.fractional = true
	return m
}

// Strategy returns the map's allocation strategy.
func (m *FractionMap) Strategy() Strategy { return m.strategy }

// Quantum returns the map's quantum size.
func (m *FractionMap) Quantum() model.Dec { return m.quantum }

// Clone returns an independent copy of the map.
func (m *FractionMap) Clone() Map {
	n := *m
	n.core = m.core.clone()
	return &n
}

// Allocate is FractionAllocMap.allocate. On any error the map is restored
// to its state before the call (Backend.AI leaves the restore to its
// caller, resources.allocate, which does it for every ResourceError).
func (m *FractionMap) Allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error) {
	return m.atomically(func() (Allocation, error) { return m.allocate(req, hint, opts) })
}

func (m *FractionMap) allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error) {
	slots, err := m.precheck(req)
	if err != nil {
		return nil, err
	}
	minMemory := defaultMinMemory
	if opts.MinMemory != nil {
		minMemory = *opts.MinMemory
	}
	calculated := make(Allocation, 0, len(slots))
	for _, s := range slots {
		var shares []Share
		var err error
		if m.strategy == Fill {
			shares, err = m.fillSlot(s, hint, opts)
		} else {
			shares, err = m.evenlySlot(s, hint, opts, minMemory)
		}
		if err != nil {
			return nil, err
		}
		calculated = append(calculated, SlotShares{s.Slot, shares})
	}
	// Quantum post-rounding: the device's cumulative value and the kernel's
	// share are each rounded down to a multiple of the quantum, separately.
	for k, s := range calculated {
		sum := model.Zero
		for j, sh := range s.Shares {
			i := m.byID[sh.Device]
			cum, err := roundDownApd(m.alloc[i], m.quantum, m.quantumApd)
			if err != nil {
				return nil, errInvalidAmount(s.Slot, m.alloc[i])
			}
			m.set(i, cum)
			got, err := roundDownApd(sh.Amount, m.quantum, m.quantumApd)
			if err != nil {
				return nil, errInvalidAmount(s.Slot, sh.Amount)
			}
			s.Shares[j].Amount = got
			sum = sum.Add(got)
		}
		if sum.IsZero() && slots[k].Amount.Sign() > 0 {
			return nil, errNotMultiple(s.Slot, slots[k].Amount)
		}
	}
	return calculated, nil
}

// guard is ensure_slot_not_fragmented: with fragmentation disallowed, the
// request must split into n equal quantum-multiples D (plus one extra
// quantum on a few devices) that n devices can hold. It assumes every
// device has the capacity of the first one.
func (m *FractionMap) guard(s SlotAmount, devs []devAlloc, tag string) error {
	if len(devs) == 0 {
		return errFragmented(s.Slot, tag, s.Amount, devs)
	}
	req, q := s.Amount, m.quantum
	capacity := m.devs[devs[0].idx].Capacity
	lo, hi := 1, 1
	if req.Cmp(capacity) > 0 {
		if capacity.IsZero() {
			// ceil(req / 0): Python's decimal traps DivisionByZero.
			return &Error{kind: KindDivisionByZero, Slot: s.Slot,
				Msg: fmt.Sprintf("the first device of %s has no capacity: the fragmentation check divides by it", s.Slot)}
		}
		minN := pyInt(quo(req, capacity))
		if quo(req, capacity).Cmp(model.NewDec(minN, 0)) > 0 {
			minN++ // ceil
		}
		lo, hi = int(minN), len(devs)
		if minN > int64(len(devs)) {
			lo = hi + 1
		}
	}
	counts := newFreeCounts(devs)
	for n := lo; n <= hi; n++ {
		d, err := roundDown(quoInt(req, n), q)
		if err != nil {
			return errInvalidAmount(s.Slot, req)
		}
		shortfall := req.Sub(d.Mul(model.NewDec(int64(n), 0)))
		ratio := quo(shortfall, q)
		extra := pyInt(ratio)
		if ratio.Cmp(model.NewDec(extra, 0)) > 0 {
			extra++ // ceil
		}
		dq := d.Add(q)
		high, low := counts.split(d, dq)
		if high >= extra && high+low >= int64(n) {
			return nil
		}
	}
	return errFragmented(s.Slot, tag, s.Amount, devs)
}

// freeCounts answers guard's question for each n, how many devices have
// at least d+q free (high) and how many at least d but less (low), by
// binary search over the free amounts sorted once: counting them in a loop
// for every n was quadratic in the devices (issue 23's node with 10,000).
type freeCounts struct {
	devs   []devAlloc
	sorted []model.Dec // ascending; nil: count in a loop
}

func newFreeCounts(devs []devAlloc) freeCounts {
	c := freeCounts{devs: devs}
	if len(devs) < 16 {
		return c
	}
	sorted := make([]model.Dec, len(devs))
	for i, d := range devs {
		if !d.free.IsFinite() {
			return c // NaN does not order: the loop's comparisons decide
		}
		sorted[i] = d.free
	}
	slices.SortFunc(sorted, model.Dec.Cmp)
	c.sorted = sorted
	return c
}

// split counts the devices with free >= dq (high) and with d <= free < dq
// (low), as the loop in ensure_slot_not_fragmented does.
func (c freeCounts) split(d, dq model.Dec) (high, low int64) {
	if c.sorted == nil {
		for _, dv := range c.devs {
			switch {
			case dv.free.Cmp(dq) >= 0:
				high++
			case dv.free.Cmp(d) >= 0:
				low++
			}
		}
		return high, low
	}
	atLeast := func(x model.Dec) int64 {
		i, _ := slices.BinarySearchFunc(c.sorted, x, func(e, t model.Dec) int {
			if e.Cmp(t) >= 0 {
				return 1
			}
			return -1
		})
		return int64(len(c.sorted) - i)
	}
	high = atLeast(dq)
	// free >= d and not >= dq; none when dq <= d.
	return high, max(atLeast(d)-high, 0)
}

// fillSlot is FractionAllocMap._allocate_by_filling for one slot.
func (m *FractionMap) fillSlot(s SlotAmount, hint *AffinityHint, opts Options) ([]Share, error) {
	devs := m.ordered(hint, s.Slot)
	if opts.ForbidFragmentation {
		if err := m.guard(s, devs, opts.ContextTag); err != nil {
			return nil, err
		}
	}
	total := model.Zero
	for _, d := range devs {
		total = total.Add(d.free)
	}
	if total.Less(s.Amount) {
		return nil, errInsufficient("FractionAllocMap", s.Slot, opts.ContextTag, "amount",
			s.Amount.String(), total.String())
	}
	remaining := s.Amount.Normalize()
	var shares []Share
	for _, d := range devs {
		if d.free.Sign() > 0 {
			got := pyMin(remaining, d.free)
			shares = append(shares, Share{d.id, got})
			m.set(d.idx, m.alloc[d.idx].Add(got))
			remaining = remaining.Sub(got)
		}
		if remaining.Sign() <= 0 {
			break
		}
	}
	return shares, nil
}

// sumFree is Σ free over devs, in order, as model.Dec.Add computes it
// (a failed addition gives NaN, which stays NaN), summed in one apd
// accumulator instead of allocating every partial sum.
func (m *FractionMap) sumFree(devs []devAlloc) model.Dec {
	der := m.derived() // the state devs was ordered from
	var total apd.Decimal
	for _, d := range devs {
		if total.Form == apd.NaN {
			break
		}
		if _, err := model.PyContext.Add(&total, &total, &der.freeApd[d.idx]); err != nil {
			total = apd.Decimal{Form: apd.NaN}
		}
	}
	return model.DecFromApd(&total)
}

// evenlySlot is FractionAllocMap._allocate_evenly for one slot.
func (m *FractionMap) evenlySlot(s SlotAmount, hint *AffinityHint, opts Options, minMemory model.Dec) ([]Share, error) {
	minMemory = quantize2(minMemory)
	remaining := s.Amount.Normalize()
	ordered := m.ordered(hint, s.Slot)
	if opts.ForbidFragmentation {
		if err := m.guard(s, ordered, opts.ContextTag); err != nil {
			return nil, err
		}
	}
	// Devices with less than min_memory free are not considered.
	devs := make([]devAlloc, 0, len(ordered))
	for _, d := range ordered {
		if d.free.Cmp(minMemory) >= 0 {
			devs = append(devs, d)
		}
	}
	total := m.sumFree(devs)
	remQ := quantize2(remaining)
	if quantize2(total).Less(remQ) {
		return nil, errInsufficient("FractionAllocMap", s.Slot, opts.ContextTag, "amount",
			s.Amount.String(), total.String())
	}
	if len(devs) == 0 {
		// Backend.AI reads sorted_dev_allocs[0] here and crashes: the
		// request rounds to 0.00, so the capacity check above passed.
		return nil, errIndex(s.Slot, "EVENLY reads the first device with 0.01 free, and there is none "+
			"(the request rounds to 0.00, so the capacity check passed)")
	}

	var chosen []Share
	if remaining.Cmp(devs[0].free) <= 0 {
		// It fits on one device: best fit from the tail of the order.
		for k := len(devs) - 1; k >= 0; k-- {
			if remaining.Cmp(devs[k].free) <= 0 {
				chosen = []Share{{devs[k].id, remQ}}
				break
			}
		}
	} else {
		var err error
		chosen, err = m.evenlyAcross(s.Slot, devs, remaining, minMemory)
		if err != nil {
			return nil, err
		}
	}
	for _, sh := range chosen {
		i := m.byID[sh.Device]
		m.set(i, m.alloc[i].Add(sh.Amount))
	}
	return chosen, nil
}

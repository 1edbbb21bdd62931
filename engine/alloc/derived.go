package alloc

import (
	"math"
	"slices"
	"sync"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// derived is what every allocate() computes from the cumulative
// allocations before it places anything: the free capacity of each device,
// its whole units, and each slot's devices by free capacity and by NUMA
// node. A preview places one request on a clone of the live maps, so
// computing this once per map state (and sharing it with the clones)
// instead of once per request takes the decimal arithmetic and the sorting
// of a 64-core cpu map out of every preview. Every value is computed
// exactly as the allocators computed it before, so results do not change.
//
// A derived is immutable once built (but for each slot's freePositive,
// filled in once under its sync.Once): clones share it, and a map drops
// its pointer (core.set, core.restore) rather than changing it.
type derived struct {
	free []model.Dec // per device: capacity − alloc
	// freeApd holds the same values for the apd loops of evenly.go
	// (fractional maps only).
	freeApd []apd.Decimal
	// The rest is for discrete maps only.
	floor []int64 // pyInt(floor(free)): whole units free, rounded down
	whole []bool  // floor(free) == free
	units []int64 // pyInt(free): whole units free, truncated
	// zeroNoop is zeroAddIsNoop(alloc): adding Decimal(0) leaves the value
	// printing the same.
	zeroNoop []bool
	slots    []slotDerived // per core.slots index
}

// slotDerived is one slot's devices, by position (the index into
// slotInfo.devs).
type slotDerived struct {
	// byFree is every position, most free first, ties in position order:
	// the stable sort by free capacity that get_current_allocations applies
	// to any subset of the devices is this order restricted to the subset.
	byFree []int
	numa   []int       // per position: numaKey of the device's NUMA node
	groups []numaGroup // per NUMA node, in order of first appearance
	// freeSum is Σ free over the positions in order.
	freeSum model.Dec
	// freePositive is the same over the positive ones only, which only
	// previews ask for (SlotFreeTotal): built on first use, once for the
	// map and its clones, which may be used from different goroutines.
	freePositiveOnce sync.Once
	freePositive     model.Dec
}

// numaGroup is the devices of one slot on one NUMA node.
type numaGroup struct {
	key    int
	byFree []int     // its positions, most free first (byFree restricted)
	total  model.Dec // Σ alloc over its positions in position order
}

// derived returns the map's derived state, building it if needed.
func (c *core) derived() *derived {
	if c.der == nil {
		c.der = c.derive()
	}
	return c.der
}

// Warm builds what the map derives from its current allocations, so that
// clones made afterwards share it instead of each building its own (a
// placement preview clones the live maps for every request). It changes no
// result. Like every other use of a Map, it must not run concurrently with
// another use of m.
func Warm(m Map) { m.warm() }

func (c *core) warm() { c.derived() }

func (c *core) derive() *derived {
	n := len(c.devs)
	d := &derived{free: make([]model.Dec, n), slots: make([]slotDerived, len(c.slots))}
	if c.fractional {
		d.freeApd = make([]apd.Decimal, n)
	} else {
		d.floor, d.whole, d.units, d.zeroNoop = make([]int64, n), make([]bool, n), make([]int64, n), make([]bool, n)
	}
	for i := range c.devs {
		f := c.devs[i].Capacity.Sub(c.alloc[i])
		d.free[i] = f
		if c.fractional {
			// Only FractionAllocMap's EVENLY search works on apd values;
			// only the discrete allocators count whole units.
			d.freeApd[i].Set(f.Apd())
			continue
		}
		fl := quantizeTo(f, 0, apd.RoundFloor)
		// pyInt(fl) without its rounding step: fl has exponent 0 already.
		fv, err := fl.Int64()
		if err != nil {
			fv = pyInt(fl) // saturates, as pyInt does
		}
		d.floor[i] = fv
		d.whole[i] = fl.Equal(f)
		// int(f) truncates toward zero: floor(f) for f >= 0 or whole,
		// floor(f)+1 otherwise (pyInt itself at the saturated ends).
		switch {
		case fv == math.MinInt64 || fv == math.MaxInt64:
			d.units[i] = pyInt(f)
		case f.Sign() < 0 && !d.whole[i]:
			d.units[i] = fv + 1
		default:
			d.units[i] = fv
		}
		d.zeroNoop[i] = zeroAddIsNoop(c.alloc[i])
	}
	for si := range c.slots {
		idxs := c.slots[si].devs
		sd := &d.slots[si]
		sd.byFree = make([]int, len(idxs))
		sd.numa = make([]int, len(idxs))
		sd.freeSum = model.Zero
		for p, i := range idxs {
			sd.byFree[p] = p
			sd.numa[p] = numaKey(c.devs[i].NUMANode)
			sd.freeSum = sd.freeSum.Add(d.free[i])
		}
		slices.SortStableFunc(sd.byFree, func(a, b int) int {
			return d.free[idxs[b]].Cmp(d.free[idxs[a]])
		})
		for p, i := range idxs {
			g := sd.group(sd.numa[p])
			if g == nil {
				sd.groups = append(sd.groups, numaGroup{key: sd.numa[p], total: model.Zero})
				g = &sd.groups[len(sd.groups)-1]
			}
			g.total = g.total.Add(c.alloc[i])
		}
		sizes := make([]int, len(sd.groups))
		for _, k := range sd.numa {
			for j := range sd.groups {
				if sd.groups[j].key == k {
					sizes[j]++
					break
				}
			}
		}
		for j := range sd.groups {
			sd.groups[j].byFree = make([]int, 0, sizes[j])
		}
		for _, p := range sd.byFree {
			g := sd.group(sd.numa[p])
			g.byFree = append(g.byFree, p)
		}
	}
	return d
}

// group returns the slot's devices on NUMA node key, or nil.
func (sd *slotDerived) group(key int) *numaGroup {
	for k := range sd.groups {
		if sd.groups[k].key == key {
			return &sd.groups[k]
		}
	}
	return nil
}

// SlotFree returns each device of a slot with its free capacity, in
// insertion order.
func (c *core) SlotFree(slot model.SlotName) []Share {
	si, ok := c.slotIdx[slot]
	if !ok {
		return nil
	}
	d := c.derived()
	out := make([]Share, len(c.slots[si].devs))
	for k, i := range c.slots[si].devs {
		out[k] = Share{c.devs[i].ID, d.free[i]}
	}
	return out
}

// SlotFreeTotal is the sum of the positive free capacities of a slot's
// devices.
func (c *core) SlotFreeTotal(slot model.SlotName) model.Dec {
	si, ok := c.slotIdx[slot]
	if !ok {
		return model.Zero
	}
	d := c.derived()
	sd := &d.slots[si]
	sd.freePositiveOnce.Do(func() {
		sd.freePositive = model.Zero
		for _, i := range c.slots[si].devs {
			if d.free[i].Sign() > 0 {
				sd.freePositive = sd.freePositive.Add(d.free[i])
			}
		}
	})
	return sd.freePositive
}

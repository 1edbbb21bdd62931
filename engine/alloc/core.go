package alloc

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// Map is an alloc map: one device plugin's devices and their cumulative
// allocations. *FractionMap and *DiscreteMap implement it; the interface is
// sealed so that the orchestration can snapshot and restore any Map. A Map
// is not safe for concurrent use; Clone it to work on a copy.
type Map interface {
	// Allocate places a request and returns what the kernel gets. On error
	// the map is left as it was.
	Allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error)
	// Free releases a kernel's allocation (subtracts it; no rounding).
	Free(a Allocation) error
	// Apply adds an existing allocation, e.g. one read back from a kernel's
	// resource.txt (Backend.AI's apply_allocation).
	Apply(a Allocation) error
	// Allocations returns the cumulative allocation of every device, slots
	// and devices in insertion order.
	Allocations() Allocation
	// Clone returns an independent copy (the allocations are copied; the
	// immutable device list is shared).
	Clone() Map
	// Devices returns the map's devices in insertion order.
	Devices() []DeviceSlot
	// SlotFree returns each device of a slot with its free capacity
	// (capacity − allocation, negative when over-committed), in insertion
	// order.
	SlotFree(slot model.SlotName) []Share
	// SlotFreeTotal is the sum of the positive free capacities of a slot's
	// devices, added in insertion order.
	SlotFreeTotal(slot model.SlotName) model.Dec

	allocate(req Request, hint *AffinityHint, opts Options) (Allocation, error)
	snapshot() state
	restore(s state)
	devIndex(id model.DeviceID) (int, bool)
	device(i int) *DeviceSlot
	warm()
}

// slotInfo is one slot name of a map and its devices.
type slotInfo struct {
	name model.SlotName
	typ  model.SlotType
	devs []int // indices into core.devs, insertion order
}

// core holds what both map classes share: AbstractAllocMap.
type core struct {
	devs      []DeviceSlot
	byID      map[model.DeviceID]int
	slots     []slotInfo
	slotIdx   map[model.SlotName]int
	exclusive []string
	alloc     []model.Dec // cumulative allocation per device index
	// fractional is set for a FractionAllocMap (it decides what der holds).
	fractional bool
	// der is what the allocators derive from alloc before placing anything
	// (free capacities, priority orders): built on first use, immutable,
	// shared with clones, dropped whenever alloc changes. Building it once
	// per snapshot is what keeps a preview on 64 cores cheap.
	der *derived
}

func newCore(devs []DeviceSlot, exclusive []string) core {
	c := core{byID: make(map[model.DeviceID]int, len(devs)), slotIdx: map[model.SlotName]int{}}
	// device_slots is a dict keyed by device id: a repeated id keeps its
	// first position and takes the last definition.
	for _, d := range devs {
		if d.NUMANode != nil {
			n := *d.NUMANode // the map must not change under the caller
			d.NUMANode = &n
		}
		if i, ok := c.byID[d.ID]; ok {
			c.devs[i] = d
			continue
		}
		c.byID[d.ID] = len(c.devs)
		c.devs = append(c.devs, d)
	}
	for i, d := range c.devs {
		si, ok := c.slotIdx[d.Slot]
		if !ok {
			si = len(c.slots)
			c.slotIdx[d.Slot] = si
			c.slots = append(c.slots, slotInfo{name: d.Slot})
		}
		// slot_types is a dict comprehension: the last device of a slot
		// decides its type.
		c.slots[si].typ = d.SlotType
		c.slots[si].devs = append(c.slots[si].devs, i)
	}
	c.alloc = make([]model.Dec, len(c.devs))
	c.exclusive = slices.Clone(exclusive)
	return c
}

func (c *core) clone() core {
	n := *c
	n.alloc = slices.Clone(c.alloc)
	return n
}

// state is a saved copy of a map's allocations (and what was derived from
// them, which stays valid for them).
type state struct {
	alloc []model.Dec
	der   *derived
}

func (c *core) snapshot() state { return state{slices.Clone(c.alloc), c.der} }
func (c *core) restore(s state) {
	copy(c.alloc, s.alloc)
	c.der = s.der
}

// set changes one device's cumulative allocation.
func (c *core) set(i int, v model.Dec) {
	c.alloc[i] = v
	c.der = nil
}

func (c *core) devIndex(id model.DeviceID) (int, bool) {
	i, ok := c.byID[id]
	return i, ok
}

func (c *core) device(i int) *DeviceSlot { return &c.devs[i] }

// atomically runs an allocation and puts the map back as it was if it
// fails, so a failed request never leaves a partial allocation behind.
func (c *core) atomically(f func() (Allocation, error)) (Allocation, error) {
	before := c.snapshot()
	out, err := f()
	if err != nil {
		c.restore(before)
		return nil, err
	}
	return out, nil
}

// Devices returns the devices in insertion order.
func (c *core) Devices() []DeviceSlot { return slices.Clone(c.devs) }

// Allocations returns every device's cumulative allocation.
func (c *core) Allocations() Allocation {
	out := make(Allocation, len(c.slots))
	for i, s := range c.slots {
		out[i].Slot = s.name
		out[i].Shares = make([]Share, len(s.devs))
		for j, d := range s.devs {
			out[i].Shares[j] = Share{c.devs[d].ID, c.alloc[d]}
		}
	}
	return out
}

// Free subtracts a kernel's allocation, without rounding (Backend.AI's
// free). An allocation naming a device the map does not have under that
// slot, or a non-finite amount, is refused and changes nothing (Backend.AI's
// defaultdict would invent the device).
func (c *core) Free(a Allocation) error { return c.addAll(a, true) }

// Apply adds an existing allocation (Backend.AI's apply_allocation, used to
// rebuild the maps from the kernels' resource.txt files); refused like Free.
func (c *core) Apply(a Allocation) error { return c.addAll(a, false) }

func (c *core) addAll(a Allocation, sub bool) error {
	// Validate everything first so that a bad entry changes nothing.
	for _, s := range a {
		for _, sh := range s.Shares {
			i, ok := c.byID[sh.Device]
			if !ok {
				return fmt.Errorf("alloc: unknown device %q for slot %s", sh.Device, s.Slot)
			}
			if c.devs[i].Slot != s.Slot {
				return fmt.Errorf("alloc: device %q holds slot %s, not %s", sh.Device, c.devs[i].Slot, s.Slot)
			}
			if !sh.Amount.IsFinite() {
				return fmt.Errorf("alloc: amount %s for %s on %q is not finite", sh.Amount, s.Slot, sh.Device)
			}
		}
	}
	for _, s := range a {
		for _, sh := range s.Shares {
			i := c.byID[sh.Device]
			if sub {
				c.set(i, c.alloc[i].Sub(sh.Amount))
			} else {
				c.set(i, c.alloc[i].Add(sh.Amount))
			}
		}
	}
	return nil
}

// slotType is slot_types.get(slot, COUNT).
func (c *core) slotType(slot model.SlotName) model.SlotType {
	if si, ok := c.slotIdx[slot]; ok && c.slots[si].typ != "" {
		return c.slots[si].typ
	}
	return model.SlotTypeCount
}

// slotDevs returns the device indices of a slot (nil for a slot the map
// does not have, like Python's defaultdict yielding an empty dict).
func (c *core) slotDevs(slot model.SlotName) []int {
	if si, ok := c.slotIdx[slot]; ok {
		return c.slots[si].devs
	}
	return nil
}

func (c *core) free(i int) model.Dec { return c.devs[i].Capacity.Sub(c.alloc[i]) }

// checkExclusive is AbstractAllocMap.check_exclusive: two different slots
// that are both exclusive (by exact name, or by an fnmatch pattern when the
// entry contains '*') cannot be requested together.
func (c *core) checkExclusive(a, b model.SlotName) bool {
	if len(c.exclusive) == 0 || a == b {
		return false
	}
	aIn, bIn := slices.Contains(c.exclusive, string(a)), slices.Contains(c.exclusive, string(b))
	if aIn && bIn {
		return true
	}
	for _, t := range c.exclusive {
		if strings.Contains(t, "*") {
			aIn = aIn || fnmatchCase(string(a), t)
			bIn = bIn || fnmatchCase(string(b), t)
		}
	}
	return aIn && bIn
}

// precheck prunes the request and runs the checks every allocate() starts
// with: amounts must be numbers, slots ≤ 0 are dropped, exclusive slots may
// not be combined, unique slots must be asked for exactly 1.
func (c *core) precheck(req Request) (Request, error) {
	req = req.dedup()
	out := make(Request, 0, len(req))
	for _, e := range req {
		// Python's `v > 0` raises InvalidOperation for NaN; an infinite
		// amount fails later in quantize. Refuse both up front.
		if !e.Amount.IsFinite() {
			return nil, errInvalidAmount(e.Slot, e.Amount)
		}
		if e.Amount.Sign() > 0 {
			out = append(out, e)
		}
	}
	for _, a := range out {
		for _, b := range out {
			if c.checkExclusive(a.Slot, b.Slot) {
				return nil, errCombination(a.Slot, b.Slot)
			}
		}
	}
	for _, e := range out {
		if c.slotType(e.Slot) == model.SlotTypeUnique && !e.Amount.Equal(model.One) {
			return nil, errUnique(e.Slot)
		}
	}
	return out, nil
}

// devAlloc is one (device_id, current_alloc) pair of the ordered list that
// get_current_allocations returns, with the free capacity precomputed.
type devAlloc struct {
	idx   int
	id    model.DeviceID
	alloc model.Dec
	free  model.Dec
}

// ordered is get_current_allocations(affinity_hint, slot_name): the slot's
// devices in the priority order the allocators walk. The orders by free
// capacity and the NUMA groups come from the map's derived state, so this
// sorts nothing and does no decimal arithmetic (see refOrdered in the
// tests for the direct transcription it must agree with).
func (c *core) ordered(hint *AffinityHint, slot model.SlotName) []devAlloc {
	si, ok := c.slotIdx[slot]
	if !ok {
		return []devAlloc{}
	}
	idxs := c.slots[si].devs
	d := c.derived()
	sd := &d.slots[si]
	out := make([]devAlloc, 0, len(idxs))
	add := func(p int) {
		i := idxs[p]
		out = append(out, devAlloc{idx: i, id: c.devs[i].ID, alloc: c.alloc[i], free: d.free[i]})
	}
	switch {
	case hint == nil:
		// Legacy path: every device by free capacity.
		for _, p := range sd.byFree {
			add(p)
		}
	case len(hint.Devices) == 0:
		// First device type of a run: one cluster per NUMA node (the
		// connected components over weight-0 edges), least loaded
		// cluster first, most free device first within a cluster.
		clusters := make([]*numaGroup, len(sd.groups))
		for k := range sd.groups {
			clusters[k] = &sd.groups[k]
		}
		sortGroups(clusters)
		if hint.Policy == PreferSingleNode {
			for _, g := range clusters {
				for _, p := range g.byFree {
					add(p)
				}
			}
		} else {
			interleaveGroups(clusters, add)
		}
	default:
		// A later device type: the devices on the NUMA nodes the previous
		// type used (primary sets, interleaved whatever the policy), then
		// every other device (the secondary set).
		nodes := hintNodes(hint.Devices)
		primary := make([]*numaGroup, len(nodes))
		for k, n := range nodes {
			if primary[k] = sd.group(n); primary[k] == nil {
				primary[k] = &numaGroup{key: n, total: model.Zero}
			}
		}
		sortGroups(primary)
		interleaveGroups(primary, add)
		for _, p := range sd.byFree {
			if !slices.Contains(nodes, sd.numa[p]) {
				add(p)
			}
		}
	}
	return out
}

// noNUMA stands for a device whose NUMA node is unknown (Python None,
// which compares equal only to None).
const noNUMA = math.MinInt

func numaKey(n *int) int {
	if n == nil {
		return noNUMA
	}
	return *n
}

// hintNodes returns the distinct NUMA nodes of the hint devices. Python
// iterates a set of them; for the small non-negative node numbers real
// hosts have, CPython's set order is ascending, and None (whose hash is
// arbitrary before Python 3.12) is put last here.
func hintNodes(devs []HintDevice) []int {
	var nodes []int
	for _, d := range devs {
		k := numaKey(d.NUMANode)
		if !slices.Contains(nodes, k) {
			nodes = append(nodes, k)
		}
	}
	slices.SortFunc(nodes, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case a == noNUMA:
			return 1
		case b == noNUMA:
			return -1
		case a < b:
			return -1
		}
		return 1
	})
	return nodes
}

// sortGroups orders NUMA clusters by the total already allocated on them,
// lowest first, then by size, largest first; the sort is stable.
func sortGroups(gs []*numaGroup) {
	if len(gs) < 2 {
		return
	}
	// networkx hands the components over sorted by (distance, -size), so
	// among equally loaded clusters the larger comes first.
	slices.SortStableFunc(gs, func(a, b *numaGroup) int {
		if c := a.total.Cmp(b.total); c != 0 {
			return c
		}
		return len(b.byFree) - len(a.byFree)
	})
}

// interleaveGroups is more_itertools.interleave_longest over the clusters'
// devices: one from each cluster in turn, skipping exhausted ones.
func interleaveGroups(gs []*numaGroup, add func(p int)) {
	for i := 0; ; i++ {
		took := false
		for _, g := range gs {
			if i < len(g.byFree) {
				add(g.byFree[i])
				took = true
			}
		}
		if !took {
			return
		}
	}
}

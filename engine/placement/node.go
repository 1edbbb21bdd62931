package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// DefaultOrder is Backend.AI's default [resource] allocation-order.
var DefaultOrder = []model.DeviceName{"cuda", "rocm", "tpu", "cpu", "mem"}

// DefaultQuantum is FractionAllocMap's own default quantum_size.
var DefaultQuantum = model.NewDec(1, -2)

// Settings are how an agent allocates: the parts of its configuration and
// of its plugins' settings that decide a placement.
type Settings struct {
	// Strategy is the accelerator maps' allocation strategy (the zero value
	// is EVENLY, Backend.AI's default).
	Strategy alloc.Strategy
	// PluginStrategy overrides the strategy of single device plugins;
	// without an entry cpu is EVENLY, mem FILL and any other plugin
	// Strategy.
	PluginStrategy map[model.DeviceName]alloc.Strategy
	// PluginFractional forces a plugin's map class (true: FractionAllocMap,
	// false: DiscretePropertyAllocMap); without an entry a plugin is
	// fractional when one of its devices has a "<name>.shares" slot.
	PluginFractional map[model.DeviceName]bool
	// Policy is [resource] affinity-policy (zero value INTERLEAVED).
	Policy alloc.AffinityPolicy
	// Quantum is the fractional maps' quantum_size; zero means
	// DefaultQuantum. The mock plugin's etcd default is 0.1, which the
	// caller passes from the inventory.
	Quantum model.Dec
	// ForbidFragmentation is the negation of the resource group's
	// allow_fractional_resource_fragmentation (default: allowed).
	ForbidFragmentation bool
	// Order is [resource] allocation-order; nil means DefaultOrder. A
	// request naming a plugin missing from it fails with ValueError, as on
	// the agent.
	Order []model.DeviceName
	// AllocMapSlots are the slots AllocMap sums besides cuda.shares and
	// cuda.device.
	AllocMapSlots []model.SlotName
}

func (s *Settings) order() []model.DeviceName {
	if s.Order == nil {
		return DefaultOrder
	}
	return s.Order
}

func (s *Settings) quantum() model.Dec {
	if s.Quantum.IsZero() {
		return DefaultQuantum
	}
	return s.Quantum
}

// strategyOf returns the strategy of a plugin's map.
func (s *Settings) strategyOf(name model.DeviceName) alloc.Strategy {
	if st, ok := s.PluginStrategy[name]; ok {
		return st
	}
	switch name {
	case "cpu":
		return alloc.Evenly
	case "mem":
		return alloc.Fill
	}
	return s.Strategy
}

// countsInAllocMap reports whether AllocMap sums the slot.
func (s *Settings) countsInAllocMap(slot model.SlotName) bool {
	return slot.CountsInAllocMap() || slices.Contains(s.AllocMapSlots, slot)
}

// Plugin is one device plugin of a Node: its devices and its alloc map.
type Plugin struct {
	Name model.DeviceName
	// Devices in the map's insertion order.
	Devices []model.Device
	// Fractional is set for a FractionAllocMap.
	Fractional bool
	// Strategy of the map.
	Strategy alloc.Strategy
	m        alloc.Map
	// capOf is each device's capacity (a repeated id: the last one, as
	// the alloc map keeps it).
	capOf map[model.DeviceID]model.Dec
}

// Map returns the plugin's alloc map. It belongs to the Node: do not
// change it behind the Node's back.
func (p *Plugin) Map() alloc.Map { return p.m }

// Node is one agent's allocation state: an alloc map per device plugin with
// the live allocations loaded. A Node is not safe for concurrent use; Clone
// it to work on a copy.
type Node struct {
	settings Settings
	plugins  []*Plugin // allocation order first, then the rest in device order
	maps     map[model.DeviceName]alloc.Map
	// slotOf is the slot each (plugin, device) holds in its map.
	slotOf map[model.DeviceKey]model.SlotName
	// free caches what Stranded reads of each fractional slot; every
	// method that changes the maps drops it.
	free map[model.SlotName]*slotFree
}

// NewNode builds the alloc maps of a node (or of one agent's partition)
// over devs, grouped by plugin in the order given. Nothing is allocated.
func NewNode(devs []model.Device, s Settings) *Node {
	return newNode(devs, nil, s)
}

// newNode is NewNode with extra plugins that get a map even without
// devices: an agent whose partition gives it none of a plugin's devices
// still has that plugin's (empty) alloc map, so a request for it fails
// with InsufficientResource as on the agent.
func newNode(devs []model.Device, empty []model.DeviceName, s Settings) *Node {
	n := &Node{settings: s, maps: map[model.DeviceName]alloc.Map{}, slotOf: make(map[model.DeviceKey]model.SlotName, len(devs))}
	byName := map[model.DeviceName]*Plugin{}
	var names []model.DeviceName
	for _, name := range empty {
		if byName[name] == nil {
			byName[name] = &Plugin{Name: name, capOf: map[model.DeviceID]model.Dec{}}
			names = append(names, name)
		}
	}
	for _, d := range devs {
		p := byName[d.Name]
		if p == nil {
			p = &Plugin{Name: d.Name, capOf: map[model.DeviceID]model.Dec{}}
			byName[d.Name] = p
			names = append(names, d.Name)
		}
		p.Devices = append(p.Devices, d)
		p.capOf[d.ID] = d.Capacity
		n.slotOf[d.Key()] = d.Slot
	}
	order := s.order()
	slices.SortStableFunc(names, func(a, b model.DeviceName) int {
		return rank(order, a) - rank(order, b)
	})
	for _, name := range names {
		p := byName[name]
		p.Strategy = s.strategyOf(name)
		slots := make([]alloc.DeviceSlot, len(p.Devices))
		for i := range p.Devices {
			slots[i] = alloc.DeviceSlotFrom(&p.Devices[i])
			if slots[i].SlotType == "" {
				slots[i].SlotType = model.DefaultSlotTypes().TypeOf(slots[i].Slot)
			}
			if slots[i].Slot.MajorType() == "shares" {
				p.Fractional = true
			}
		}
		if f, ok := s.PluginFractional[name]; ok {
			p.Fractional = f
		}
		var excl []string
		if name != "cpu" && name != "mem" {
			excl = []string{string(name) + ".device:*-mig", string(name) + ".device", string(name) + ".shares"}
		}
		if p.Fractional {
			p.m = alloc.NewFractionMap(slots, p.Strategy, s.quantum(), excl)
		} else {
			p.m = alloc.NewDiscreteMap(slots, p.Strategy, excl)
		}
		n.maps[name] = p.m
		n.plugins = append(n.plugins, p)
	}
	return n
}

// rank places listed plugins in their order and the rest after them.
func rank(order []model.DeviceName, n model.DeviceName) int {
	if i := slices.Index(order, n); i >= 0 {
		return i
	}
	return len(order)
}

// Settings returns the node's settings.
func (n *Node) Settings() Settings { return n.settings }

// Plugins returns the node's plugins: those in the allocation order first,
// in that order, then the others in device order.
func (n *Node) Plugins() []*Plugin { return n.plugins }

// Plugin returns the named plugin, or nil.
func (n *Node) Plugin(name model.DeviceName) *Plugin {
	for _, p := range n.plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Clone returns an independent copy (the device lists are shared, the
// allocations copied).
func (n *Node) Clone() *Node {
	c := &Node{settings: n.settings, maps: make(map[model.DeviceName]alloc.Map, len(n.maps)), slotOf: n.slotOf}
	c.plugins = make([]*Plugin, len(n.plugins))
	for i, p := range n.plugins {
		q := *p
		alloc.Warm(p.m)
		q.m = p.m.Clone()
		c.plugins[i] = &q
		c.maps[p.Name] = q.m
	}
	return c
}

// Allocate places a kernel's request with the agent's allocator
// (resources.allocate): every plugin the request names, in allocation
// order, each following the NUMA nodes of the previous one. On error
// nothing changes and the error is (or wraps) an *alloc.Error.
func (n *Node) Allocate(req alloc.Request) (alloc.KernelAllocation, error) {
	n.free = nil
	return alloc.Allocate(n.maps, req, n.settings.order(), n.settings.Policy,
		alloc.Options{ForbidFragmentation: n.settings.ForbidFragmentation})
}

// Try returns what Allocate would, and leaves the node as it was
// (alloc.Try: the maps are put back, with the free capacities and orders
// they derived, which every later Try reuses).
func (n *Node) Try(req alloc.Request) (alloc.KernelAllocation, error) {
	return alloc.Try(n.maps, req, n.settings.order(), n.settings.Policy,
		alloc.Options{ForbidFragmentation: n.settings.ForbidFragmentation})
}

// Free releases an allocation Allocate returned (AbstractKernel
// .release_slots: subtracted, no rounding).
func (n *Node) Free(k alloc.KernelAllocation) error {
	n.free = nil
	return alloc.Free(n.maps, k)
}

// Skip is part of a live allocation that could not be loaded into the maps:
// a device the node (the agent's partition) does not have, or one held
// under another slot than the map's.
type Skip struct {
	Slot   model.SlotName
	Device model.DeviceID
	Amount model.Dec
	Why    string
}

func (s Skip) String() string {
	return fmt.Sprintf("%s on %s:%s (%s): %s", s.Amount, s.Slot.DeviceName(), s.Device, s.Slot, s.Why)
}

// Load adds a live allocation (a kernel's *_SHARES lines) to the maps, the
// way the agent's apply_allocation rebuilds them after a restart. Entries
// the maps cannot hold are left out and returned; the rest is loaded, and
// the part that was loaded is returned as a KernelAllocation (so that it
// can be freed or counted in AllocMap).
func (n *Node) Load(a model.Allocations) (alloc.KernelAllocation, []Skip) {
	if loaded, ok := n.loadOne(a, nil); ok {
		return loaded, nil
	}
	loaded, skipped := n.LoadAll([]model.Allocations{a})
	return loaded, skipped[0]
}

// LoadOf is Load of the part of a whose plugins keep takes (the rest is
// neither loaded nor said to be skipped), without making that part's
// maps where the maps hold it whole: a replay of a record made without
// the host's devices loads the accelerators' part of 200,000 sessions
// (TestLoadOfIsLoadOfThePart).
func (n *Node) LoadOf(a model.Allocations, keep func(model.DeviceName) bool) (alloc.KernelAllocation, []Skip) {
	if loaded, ok := n.loadOne(a, keep); ok {
		return loaded, nil
	}
	part := make(model.Allocations, len(a))
	for slot, devs := range a {
		if keep(slot.DeviceName()) {
			part[slot] = devs
		}
	}
	loaded, skipped := n.LoadAll([]model.Allocations{part})
	return loaded, skipped[0]
}

// Entries is an allocation as a list of entries: each slot's devices
// together, each slot and each of its devices once (history.Held).
type Entries interface {
	Len() int
	At(i int) (model.SlotName, model.DeviceID, model.Dec)
}

// LoadEntries is LoadOf of the allocation e lists, without making its
// maps where the maps hold it whole; asMap gives it as maps otherwise
// (its entries the maps cannot hold are then left out and returned). A
// replay loads a week's 200,000 recorded arrivals this way
// (TestLoadEntriesIsLoadOf).
func (n *Node) LoadEntries(e Entries, keep func(model.DeviceName) bool, asMap func() model.Allocations) (alloc.KernelAllocation, []Skip) {
	if loaded, ok := n.loadEntries(e, keep); ok {
		return loaded, nil
	}
	return n.LoadOf(asMap(), keep)
}

// entRun is one slot's entries [lo, hi) of an allocation loadEntries
// loads.
type entRun struct {
	slot   model.SlotName
	name   model.DeviceName
	lo, hi int
}

// loadEntries is loadOne of e's entries.
func (n *Node) loadEntries(e Entries, keep func(model.DeviceName) bool) (alloc.KernelAllocation, bool) {
	var room [8]entRun
	runs := room[:0]
	for i, end := 0, e.Len(); i < end; {
		slot, _, _ := e.At(i)
		j := i + 1
		for j < end {
			if s, _, _ := e.At(j); s != slot {
				break
			}
			j++
		}
		name := slot.DeviceName()
		if keep != nil && !keep(name) {
			i = j
			continue
		}
		if n.maps[name] == nil {
			return nil, false
		}
		for k := i; k < j; k++ {
			_, id, amt := e.At(k)
			if have, ok := n.slotOf[model.DeviceKey{Name: name, ID: id}]; !ok || have != slot || !amt.IsFinite() {
				return nil, false
			}
		}
		runs = append(runs, entRun{slot: slot, name: name, lo: i, hi: j})
		i = j
	}
	slices.SortFunc(runs, func(x, y entRun) int { return strings.Compare(string(x.slot), string(y.slot)) })
	return n.applySlots(keep, len(runs), func(i int) model.DeviceName { return runs[i].name }, func(i int) alloc.SlotShares {
		r := &runs[i]
		ss := alloc.SlotShares{Slot: r.slot, Shares: make([]alloc.Share, 0, r.hi-r.lo)}
		for k := r.lo; k < r.hi; k++ {
			_, id, amt := e.At(k)
			ss.Shares = append(ss.Shares, alloc.Share{Device: id, Amount: amt})
		}
		return ss
	}), true
}

// loadOne is Load of an allocation the maps hold whole (no entry
// skipped), false (nothing done) otherwise: LoadAll's answer without its
// maps by plugin, which one allocation needs no more than its own (each
// device once per slot, so nothing to sum). A replay loads a week's
// 200,000 sessions one by one (TestLoadOneIsLoadAll).
func (n *Node) loadOne(a model.Allocations, keep func(model.DeviceName) bool) (alloc.KernelAllocation, bool) {
	// One walk of a's maps, not one per plugin: a replay loads 200,000
	// sessions, and starting a map's walk cost more than the walk.
	var room [8]heldSlot
	held := room[:0]
	for slot, devs := range a {
		name := slot.DeviceName()
		if keep != nil && !keep(name) {
			continue
		}
		if n.maps[name] == nil {
			return nil, false
		}
		for id, amt := range devs {
			if have, ok := n.slotOf[model.DeviceKey{Name: name, ID: id}]; !ok || have != slot || !amt.IsFinite() {
				return nil, false
			}
		}
		if len(devs) > 0 {
			held = append(held, heldSlot{slot: slot, name: name, devs: devs})
		}
	}
	slices.SortFunc(held, func(x, y heldSlot) int { return strings.Compare(string(x.slot), string(y.slot)) })
	return n.applySlots(keep, len(held), func(i int) model.DeviceName { return held[i].name }, func(i int) alloc.SlotShares {
		h := &held[i]
		ss := alloc.SlotShares{Slot: h.slot, Shares: make([]alloc.Share, 0, len(h.devs))}
		for id, amt := range h.devs {
			ss.Shares = append(ss.Shares, alloc.Share{Device: id, Amount: amt})
		}
		return ss
	}), true
}

// applySlots applies one checked allocation of count slots (in slot
// order; slot i of plugin name(i), its shares(i)) to the maps, plugin by
// plugin as LoadAll does, each slot's shares in device order, and
// returns what it loaded.
func (n *Node) applySlots(keep func(model.DeviceName) bool, count int, name func(int) model.DeviceName, shares func(int) alloc.SlotShares) alloc.KernelAllocation {
	n.free = nil
	var loaded alloc.KernelAllocation
	for _, p := range n.plugins {
		if keep != nil && !keep(p.Name) {
			continue
		}
		var al alloc.Allocation
		for i := range count {
			if name(i) != p.Name {
				continue
			}
			ss := shares(i)
			slices.SortFunc(ss.Shares, func(x, y alloc.Share) int { return strings.Compare(string(x.Device), string(y.Device)) })
			al = append(al, ss)
		}
		if al == nil {
			continue
		}
		if err := p.m.Apply(al); err != nil {
			// Every entry was checked above; this is a bug, not input.
			panic(fmt.Sprintf("placement: applying a checked allocation: %v", err))
		}
		loaded = append(loaded, alloc.DeviceAllocation{Device: p.Name, Alloc: al})
	}
	return loaded
}

// heldSlot is one slot of an allocation loadOne loads: its plugin and
// what it holds on each device.
type heldSlot struct {
	slot model.SlotName
	name model.DeviceName
	devs map[model.DeviceID]model.Dec
}

// LoadAll loads many live allocations at once: their sum per device is
// applied in one go, which gives the same cumulative values as loading
// them one by one (decimal addition is exact) at a fraction of the cost.
// It returns the sum that was loaded and, per allocation, what was left
// out.
func (n *Node) LoadAll(as []model.Allocations) (alloc.KernelAllocation, [][]Skip) {
	n.free = nil
	skipped := make([][]Skip, len(as))
	byPlugin := map[model.DeviceName]model.Allocations{}
	for k, a := range as {
		for slot, devs := range a {
			name := slot.DeviceName()
			for id, amt := range devs {
				have, ok := n.slotOf[model.DeviceKey{Name: name, ID: id}]
				switch {
				case n.maps[name] == nil:
					skipped[k] = append(skipped[k], Skip{slot, id, amt, fmt.Sprintf("no %s devices here", name)})
				case !ok:
					skipped[k] = append(skipped[k], Skip{slot, id, amt, "not a device of this node or partition"})
				case have != slot:
					skipped[k] = append(skipped[k], Skip{slot, id, amt, fmt.Sprintf("the device holds %s here", have)})
				case !amt.IsFinite():
					skipped[k] = append(skipped[k], Skip{slot, id, amt, "not a finite amount"})
				default:
					m := byPlugin[name]
					if m == nil {
						m = model.Allocations{}
						byPlugin[name] = m
					}
					if m[slot] == nil {
						m[slot] = map[model.DeviceID]model.Dec{}
					}
					if prev, seen := m[slot][id]; seen {
						m[slot][id] = prev.Add(amt)
					} else {
						m[slot][id] = amt
					}
				}
			}
		}
		slices.SortFunc(skipped[k], func(x, y Skip) int {
			if c := strings.Compare(string(x.Slot), string(y.Slot)); c != 0 {
				return c
			}
			return strings.Compare(string(x.Device), string(y.Device))
		})
	}
	var loaded alloc.KernelAllocation
	for _, p := range n.plugins {
		m := byPlugin[p.Name]
		if m == nil {
			continue
		}
		al := alloc.AllocationFromModel(m)
		if err := p.m.Apply(al); err != nil {
			// Every entry was checked above; this is a bug, not input.
			panic(fmt.Sprintf("placement: applying a checked allocation: %v", err))
		}
		loaded = append(loaded, alloc.DeviceAllocation{Device: p.Name, Alloc: al})
	}
	return loaded, skipped
}

// State returns every map's cumulative allocation ({slot: {device:
// amount}}, every device, "0" for untouched ones), plugins in node order:
// Backend.AI's alloc_map.allocations, the corpus's state_after.
func (n *Node) State() alloc.Allocation {
	var out alloc.Allocation
	for _, p := range n.plugins {
		out = append(out, p.m.Allocations()...)
	}
	return out
}

// AllocMap is scan_gpu_alloc_map over this node: for every device that at
// least one of the live allocations names under a counted slot
// (cuda.shares, cuda.device, plus Settings.AllocMapSlots), its cumulative
// allocation in the map (Backend.AI's alloc_map.allocations value, after
// quantum rounding), summed over counted slots per device id. A device no
// live allocation names is absent, even when its cumulative value is not
// zero. Devices come in map order.
func (n *Node) AllocMap(live []alloc.KernelAllocation) []alloc.Share {
	named := map[model.DeviceKey]bool{}
	for _, k := range live {
		for _, d := range k {
			for _, s := range d.Alloc {
				if !n.settings.countsInAllocMap(s.Slot) {
					continue
				}
				for _, sh := range s.Shares {
					named[model.DeviceKey{Name: d.Device, ID: sh.Device}] = true
				}
			}
		}
	}
	var out []alloc.Share
	at := map[model.DeviceID]int{}
	for _, p := range n.plugins {
		for _, s := range p.m.Allocations() {
			if !n.settings.countsInAllocMap(s.Slot) {
				continue
			}
			for _, sh := range s.Shares {
				if !named[model.DeviceKey{Name: p.Name, ID: sh.Device}] {
					continue
				}
				if i, ok := at[sh.Device]; ok {
					out[i].Amount = out[i].Amount.Add(sh.Amount)
					continue
				}
				at[sh.Device] = len(out)
				out = append(out, sh)
			}
		}
	}
	return out
}

// Short reports whether Allocate(req) certainly fails for want of room
// (alloc.Short), without the attempt: a replay refusing most of a
// week's sessions need not run the allocator on each.
func (n *Node) Short(req alloc.Request) bool { return alloc.Short(n.maps, req) }

package placement

import (
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// DeviceAfter is what one device a placement touches would hold across
// every agent of the node. Backend.AI's agents each allocate over every
// physical device and never see each other's kernels (domain §5.1), so an
// agent's allocator may place work on a device other agents' kernels fill:
// TotalAfter above Capacity is such an overcommit.
type DeviceAfter struct {
	Slot   model.SlotName `json:"slot"`
	Device model.DeviceID `json:"device"`
	// Adds is what the placement puts on the device.
	Adds model.Dec `json:"adds"`
	// HeldNow is what every agent's kernels hold on it before.
	HeldNow model.Dec `json:"held_now"`
	// TotalAfter is HeldNow + Adds.
	TotalAfter model.Dec `json:"device_total_after"`
	// Capacity is the device's capacity (zero when unknown).
	Capacity   model.Dec `json:"capacity"`
	Overcommit bool      `json:"overcommit"`
}

// Physical is what every agent's kernels hold of each device of a node,
// whatever agent's allocator counts them: the ground an agent's placement
// lands on. The zero value is an empty node.
type Physical struct {
	held map[model.DeviceKey]model.Dec
	caps map[model.DeviceKey]model.Dec
	// bySlot lists each slot's devices in inventory order, for FreeOf.
	bySlot map[model.SlotName][]model.DeviceKey
}

// PhysicalOf reads the node's holdings from a snapshot: every kernel of
// every agent (the snapshot's per-device usage).
func PhysicalOf(s *model.Snapshot) *Physical {
	ph := &Physical{held: map[model.DeviceKey]model.Dec{}, caps: map[model.DeviceKey]model.Dec{}, bySlot: map[model.SlotName][]model.DeviceKey{}}
	if s == nil {
		return ph
	}
	for _, d := range s.Devices {
		ph.caps[d.Key()] = d.Capacity
		ph.bySlot[d.Slot] = append(ph.bySlot[d.Slot], d.Key())
	}
	for k, u := range s.Usage {
		ph.held[k] = u.Total()
	}
	return ph
}

// Clone returns a copy that Add does not share.
func (ph *Physical) Clone() *Physical {
	c := &Physical{held: make(map[model.DeviceKey]model.Dec, len(ph.held)), caps: ph.caps, bySlot: ph.bySlot}
	for k, v := range ph.held {
		c.held[k] = v
	}
	return c
}

// Add puts a (sign +1) or takes it back (sign -1) on the node: a simulated
// step that succeeded or a free.
func (ph *Physical) Add(a alloc.Allocation, sign int) {
	for _, s := range a {
		for _, sh := range s.Shares {
			k := model.DeviceKey{Name: s.Slot.DeviceName(), ID: sh.Device}
			if sign < 0 {
				ph.held[k] = ph.held[k].Sub(sh.Amount)
			} else {
				ph.held[k] = ph.held[k].Add(sh.Amount)
			}
		}
	}
}

// After says, per device a touches, what it would hold across every agent,
// and whether any of them would be over its capacity.
func (ph *Physical) After(a alloc.Allocation) ([]DeviceAfter, bool) {
	var out []DeviceAfter
	over := false
	for _, s := range a {
		for _, sh := range s.Shares {
			if sh.Amount.Sign() == 0 {
				continue
			}
			k := model.DeviceKey{Name: s.Slot.DeviceName(), ID: sh.Device}
			now := ph.held[k]
			d := DeviceAfter{Slot: s.Slot, Device: sh.Device, Adds: sh.Amount, HeldNow: now, TotalAfter: now.Add(sh.Amount), Capacity: ph.caps[k]}
			d.Overcommit = d.Capacity.Sign() > 0 && d.Capacity.Less(d.TotalAfter)
			over = over || d.Overcommit
			out = append(out, d)
		}
	}
	return out, over
}

// FreeOf is what is physically free of slot on the devices owns accepts
// (nil: every device): capacity less what every agent holds, over the
// devices with something free.
func (ph *Physical) FreeOf(slot model.SlotName, owns func(model.DeviceKey) bool) model.Dec {
	free := model.Zero
	for _, k := range ph.bySlot[slot] {
		if owns != nil && !owns(k) {
			continue
		}
		if f := ph.caps[k].Sub(ph.held[k]); f.Sign() > 0 {
			free = free.Add(f)
		}
	}
	return free
}

// Owner is a.OwnsDevice with the partition's devices looked up in a set
// built once: OwnsDevice searches the agent's list, and asked for every
// device of a node it made the planner and the fleet summary quadratic
// in the devices (issue 23: most of the summary's time at 10,000).
func Owner(a *model.Agent) func(model.DeviceKey) bool {
	if a.Owns == nil {
		return func(model.DeviceKey) bool { return true }
	}
	set := make(map[model.DeviceKey]struct{})
	for name, ids := range a.Owns {
		for _, id := range ids {
			set[model.DeviceKey{Name: name, ID: id}] = struct{}{}
		}
	}
	return func(k model.DeviceKey) bool {
		if _, listed := a.Owns[k.Name]; !listed {
			// A plugin the partition does not list is not partitioned (mem).
			return k.Name == "mem"
		}
		_, ok := set[k]
		return ok
	}
}

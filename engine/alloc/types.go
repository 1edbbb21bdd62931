package alloc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// Strategy is Backend.AI's AllocationStrategy. The zero value is Evenly,
// the default of both map classes (Python numbers them FILL=0, EVENLY=1; the
// Go numbering differs so that the zero value is the default).
type Strategy int

// Allocation strategies.
const (
	// Evenly spreads a request over as few, as evenly loaded devices as
	// possible (the default).
	Evenly Strategy = iota
	// Fill takes as much as possible from each device in priority order.
	Fill
)

// String returns the Python enum member name ("EVENLY", "FILL").
func (s Strategy) String() string {
	switch s {
	case Evenly:
		return "EVENLY"
	case Fill:
		return "FILL"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ParseStrategy accepts "EVENLY" or "FILL" in any case.
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "EVENLY":
		return Evenly, nil
	case "FILL":
		return Fill, nil
	}
	return 0, fmt.Errorf("alloc: unknown allocation strategy %q (want EVENLY or FILL)", s)
}

// AffinityPolicy is Backend.AI's AffinityPolicy. The zero value is
// Interleaved, the agent's configuration default (Python numbers them
// PREFER_SINGLE_NODE=0, INTERLEAVED=1).
type AffinityPolicy int

// Affinity policies.
const (
	// Interleaved takes one device from each NUMA node in turn.
	Interleaved AffinityPolicy = iota
	// PreferSingleNode exhausts one NUMA node before moving to the next.
	PreferSingleNode
)

// String returns the Python enum member name.
func (p AffinityPolicy) String() string {
	switch p {
	case Interleaved:
		return "INTERLEAVED"
	case PreferSingleNode:
		return "PREFER_SINGLE_NODE"
	}
	return fmt.Sprintf("AffinityPolicy(%d)", int(p))
}

// ParseAffinityPolicy accepts "INTERLEAVED" or "PREFER_SINGLE_NODE" in any
// case.
func ParseAffinityPolicy(s string) (AffinityPolicy, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "INTERLEAVED":
		return Interleaved, nil
	case "PREFER_SINGLE_NODE":
		return PreferSingleNode, nil
	}
	return 0, fmt.Errorf("alloc: unknown affinity policy %q (want INTERLEAVED or PREFER_SINGLE_NODE)", s)
}

// DeviceSlot is one allocatable device of a map: Backend.AI's DeviceSlotInfo
// plus the device's NUMA node (from its AbstractComputeDevice).
type DeviceSlot struct {
	ID       model.DeviceID
	Slot     model.SlotName
	SlotType model.SlotType // "" counts as count
	Capacity model.Dec
	// NUMANode is nil when the node is unknown; nil equals nil for affinity.
	NUMANode *int
}

// DeviceSlotFrom describes a model.Device as an alloc-map device (its NUMA
// node -1, "unknown", becomes nil).
func DeviceSlotFrom(d *model.Device) DeviceSlot {
	ds := DeviceSlot{ID: d.ID, Slot: d.Slot, SlotType: d.SlotType, Capacity: d.Capacity}
	if d.NUMANode >= 0 {
		n := d.NUMANode
		ds.NUMANode = &n
	}
	return ds
}

// SlotAmount is one entry of a request.
type SlotAmount struct {
	Slot   model.SlotName
	Amount model.Dec
}

// Request is an ordered slot → amount mapping, like the Python dict the
// agent passes: the order decides which slot is allocated (and fails) first.
type Request []SlotAmount

// RequestFromSlots turns a ResourceSlot into a Request in slot-name order
// (a Go map has no order of its own).
func RequestFromSlots(r model.ResourceSlot) Request {
	out := make(Request, 0, len(r))
	for _, n := range r.Names() {
		out = append(out, SlotAmount{n, r[n]})
	}
	return out
}

// dedup applies Python dict semantics to a request with repeated slots: the
// first occurrence keeps its position, the last one supplies the value.
func (r Request) dedup() Request {
	seen := make(map[model.SlotName]int, len(r))
	out := make(Request, 0, len(r))
	for _, e := range r {
		if i, ok := seen[e.Slot]; ok {
			out[i].Amount = e.Amount
			continue
		}
		seen[e.Slot] = len(out)
		out = append(out, e)
	}
	return out
}

// Share is one device's amount within a slot.
type Share struct {
	Device model.DeviceID
	Amount model.Dec
}

// SlotShares is one slot of an allocation, devices in the order Backend.AI
// inserted them.
type SlotShares struct {
	Slot   model.SlotName
	Shares []Share
}

// Allocation is an ordered {slot: {device: amount}} mapping, as
// Backend.AI's alloc maps return and store it. A slot may be present with no
// shares (a discrete request truncated to 0 gives {"cuda.device": {}}).
type Allocation []SlotShares

// Get returns the amount for slot and device.
func (a Allocation) Get(slot model.SlotName, dev model.DeviceID) (model.Dec, bool) {
	for _, s := range a {
		if s.Slot != slot {
			continue
		}
		for _, sh := range s.Shares {
			if sh.Device == dev {
				return sh.Amount, true
			}
		}
	}
	return model.Dec{}, false
}

// DeviceIDs returns the devices the allocation names, in order, once each.
func (a Allocation) DeviceIDs() []model.DeviceID {
	var out []model.DeviceID
	seen := map[model.DeviceID]bool{}
	for _, s := range a {
		for _, sh := range s.Shares {
			if !seen[sh.Device] {
				seen[sh.Device] = true
				out = append(out, sh.Device)
			}
		}
	}
	return out
}

// ToModel converts to the unordered model form (slot → device → amount).
func (a Allocation) ToModel() model.Allocations {
	out := make(model.Allocations, len(a))
	for _, s := range a {
		m := out[s.Slot]
		if m == nil {
			m = make(map[model.DeviceID]model.Dec, len(s.Shares))
			out[s.Slot] = m
		}
		for _, sh := range s.Shares {
			m[sh.Device] = sh.Amount
		}
	}
	return out
}

// AllocationFromModel converts an unordered allocation (e.g. parsed from a
// resource.txt) into an Allocation with slots and devices in name order.
func AllocationFromModel(m model.Allocations) Allocation {
	slots := make([]model.SlotName, 0, len(m))
	for s := range m {
		slots = append(slots, s)
	}
	slices.Sort(slots)
	out := make(Allocation, 0, len(m))
	for _, s := range slots {
		ids := make([]model.DeviceID, 0, len(m[s]))
		for id := range m[s] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		ss := SlotShares{Slot: s, Shares: make([]Share, 0, len(ids))}
		for _, id := range ids {
			ss.Shares = append(ss.Shares, Share{id, m[s][id]})
		}
		out = append(out, ss)
	}
	return out
}

// String formats the allocation like the Python dict it mirrors, with
// amounts in str(Decimal) form: {cuda.shares: {dev: 0.60, ...}}.
func (a Allocation) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(s.Slot))
		b.WriteString(": {")
		for j, sh := range s.Shares {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(string(sh.Device))
			b.WriteString(": ")
			b.WriteString(sh.Amount.String())
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

// Options are the per-call arguments of an alloc map's allocate().
type Options struct {
	// ForbidFragmentation runs the fractional fragmentation guard: it is
	// the negation of the resource group's
	// allow_fractional_resource_fragmentation (default true, so the zero
	// value of Options matches the default). Discrete maps ignore it.
	ForbidFragmentation bool
	// MinMemory is FractionAllocMap's min_memory; nil means the default
	// 0.01, the only value the agent ever passes.
	MinMemory *model.Dec
	// ContextTag names the device plugin in error messages ("cuda").
	ContextTag string
}

// HintDevice is a device chosen for an earlier device type of the same
// kernel; only its NUMA node matters for the next type's ordering.
type HintDevice struct {
	Name     model.DeviceName
	ID       model.DeviceID
	NUMANode *int
}

// AffinityHint carries the affinity policy and the devices chosen for the
// previous device type. A nil *AffinityHint selects Backend.AI's legacy
// ordering (all devices by free capacity); a hint with no devices is the
// first device type of a run.
type AffinityHint struct {
	Devices []HintDevice
	Policy  AffinityPolicy
}

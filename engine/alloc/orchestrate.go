package alloc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// DeviceAllocation is what one device plugin gave a kernel.
type DeviceAllocation struct {
	Device model.DeviceName
	Alloc  Allocation
}

// KernelAllocation is a kernel's allocation over all device types, in
// allocation order: Backend.AI's resource_spec.allocations.
type KernelAllocation []DeviceAllocation

// Get returns the allocation of one device plugin.
func (k KernelAllocation) Get(dev model.DeviceName) (Allocation, bool) {
	for _, d := range k {
		if d.Device == dev {
			return d.Alloc, true
		}
	}
	return nil, false
}

// ToModel flattens the allocation to slot → device → amount.
func (k KernelAllocation) ToModel() model.Allocations {
	out := model.Allocations{}
	for _, d := range k {
		for s, m := range d.Alloc.ToModel() {
			out[s] = m
		}
	}
	return out
}

// Allocate is resources.allocate(): it places one kernel's request over
// several device plugins. The device names in the request (the part of each
// slot before the first '.') are visited in the order given by order (the
// agent's allocation-order, e.g. cuda, cpu, mem); each plugin's map gets the
// slots of its device name, and the devices it picks become the affinity
// hint for the next plugin, so that (for example) CPU cores come from the
// NUMA nodes of the GPUs just chosen. opts.ContextTag is set to each device
// name in turn; ForbidFragmentation only reaches fractional maps.
//
// If any plugin fails, every map involved is restored to its state before
// the call and the error is returned, wrapped with the device name. (Backend
// .AI restores only on a ResourceError; after an IndexError or a ValueError
// it leaves earlier plugins' maps changed, which fgtop does not reproduce.)
func Allocate(computers map[model.DeviceName]Map, req Request, order []model.DeviceName,
	policy AffinityPolicy, opts Options) (KernelAllocation, error) {
	return allocate(computers, req, order, policy, opts, false)
}

// Try is Allocate on copies of the maps: it returns what Allocate would,
// and leaves every map as it was. It places the request on the maps
// themselves and puts them back (with what they derived from their state,
// which it builds first), which costs less than cloning them; like
// Allocate, it must not run concurrently with any other use of the maps.
func Try(computers map[model.DeviceName]Map, req Request, order []model.DeviceName,
	policy AffinityPolicy, opts Options) (KernelAllocation, error) {
	return allocate(computers, req, order, policy, opts, true)
}

func allocate(computers map[model.DeviceName]Map, req Request, order []model.DeviceName,
	policy AffinityPolicy, opts Options, tentative bool) (KernelAllocation, error) {
	req = req.dedup()
	var names []model.DeviceName
	for _, e := range req {
		n := e.Slot.DeviceName()
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if !slices.Contains(order, n) {
			return nil, &Error{kind: KindValueError, Msg: fmt.Sprintf("device plugin %s is not in the allocation order (%s)",
				n, joinNames(order))}
		}
	}
	slices.SortStableFunc(names, func(a, b model.DeviceName) int {
		return slices.Index(order, a) - slices.Index(order, b)
	})
	for _, n := range names {
		if computers[n] == nil {
			return nil, &Error{kind: KindKeyError, Msg: fmt.Sprintf("no %s devices here: no alloc map for device plugin %s", n, n)}
		}
	}
	saved := make([]state, len(names))
	for i, n := range names {
		if tentative {
			computers[n].warm()
		}
		saved[i] = computers[n].snapshot()
	}
	rollback := func() {
		for i, n := range names {
			computers[n].restore(saved[i])
		}
	}

	hint := &AffinityHint{Policy: policy}
	out := make(KernelAllocation, 0, len(names))
	for _, n := range names {
		m := computers[n]
		var slots Request
		for _, e := range req {
			if string(e.Slot) == string(n) || strings.HasPrefix(string(e.Slot), string(n)+".") {
				slots = append(slots, e)
			}
		}
		o := opts
		o.ContextTag = string(n)
		// The map's own Allocate would save and restore it again; the
		// rollback below covers every map involved.
		got, err := m.allocate(slots, hint, o)
		if err != nil {
			rollback()
			return nil, fmt.Errorf("alloc: allocating %s: %w", n, err)
		}
		out = append(out, DeviceAllocation{n, got})
		hint = &AffinityHint{Policy: policy, Devices: hintDevices(n, m, got)}
	}
	if tentative {
		rollback()
	}
	return out, nil
}

// hintDevices lists the devices of an allocation, slot by slot in order
// (zero shares included, as Backend.AI does), with their NUMA nodes.
func hintDevices(name model.DeviceName, m Map, a Allocation) []HintDevice {
	n := 0
	for _, s := range a {
		n += len(s.Shares)
	}
	out := make([]HintDevice, 0, n)
	for _, s := range a {
		for _, sh := range s.Shares {
			if i, ok := m.devIndex(sh.Device); ok {
				d := m.device(i)
				out = append(out, HintDevice{Name: name, ID: d.ID, NUMANode: d.NUMANode})
			}
		}
	}
	return out
}

// Free releases a kernel's allocation from every plugin's map
// (AbstractKernel.release_slots). Nothing is changed if any part names a
// device or plugin that is not there.
func Free(computers map[model.DeviceName]Map, k KernelAllocation) error {
	for _, d := range k {
		if len(d.Alloc) > 0 && computers[d.Device] == nil {
			return fmt.Errorf("alloc: free: no alloc map for device %s", d.Device)
		}
	}
	saved := map[model.DeviceName]state{}
	for _, d := range k {
		m := computers[d.Device]
		if m == nil {
			continue
		}
		if _, ok := saved[d.Device]; !ok {
			saved[d.Device] = m.snapshot()
		}
		if err := m.Free(d.Alloc); err != nil {
			for n, s := range saved {
				computers[n].restore(s)
			}
			return fmt.Errorf("alloc: free %s: %w", d.Device, err)
		}
	}
	return nil
}

// CloneAll deep-copies a set of maps, e.g. for a placement preview that must
// not touch the live maps.
func CloneAll(computers map[model.DeviceName]Map) map[model.DeviceName]Map {
	out := make(map[model.DeviceName]Map, len(computers))
	for n, m := range computers {
		out[n] = m.Clone()
	}
	return out
}

// joinNames writes device names as "cuda, rocm, cpu".
func joinNames(ns []model.DeviceName) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}

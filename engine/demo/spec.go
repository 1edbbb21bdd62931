package demo

import (
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/model"
)

// resourceText is the kernel's resource.txt as the docker agent writes it:
// KernelResourceSpec.write_to_string (SCRATCH_SIZE, MOUNTS, SLOTS,
// UNIFIED_DEVICES, the *_SHARES lines in allocation order), then each
// plugin's generate_resource_data lines in the same device order, and with
// withCID the CID line the agent appends once the container exists.
func (n *Node) resourceText(k *kernelRec, withCID bool) ([]byte, error) {
	spec := &resourcefile.Spec{
		ScratchSize:    model.Zero, // scratch-size is never applied (Backend.AI TODO #70)
		Slots:          model.ResourceSlot{},
		Alloc:          model.Allocations{},
		DeviceOrder:    map[model.SlotName][]model.DeviceID{},
		UnifiedDevices: []any{},
		Types:          n.types,
	}
	for _, m := range kernelMounts(n.root(k.agent), n.parts[k.agent].id, k) {
		typ := resourcefile.MountBind
		if m.src[0] != '/' {
			typ = resourcefile.MountVolume
		}
		spec.Mounts = append(spec.Mounts, resourcefile.Mount{Type: typ, Source: m.src, Target: m.dst, Permission: m.perm})
	}
	for _, e := range k.req {
		spec.Slots[e.Slot] = e.Amount
		spec.SlotOrder = append(spec.SlotOrder, e.Slot)
	}
	for _, d := range k.placement {
		for _, sl := range d.Alloc {
			amounts := make(map[model.DeviceID]model.Dec, len(sl.Shares))
			for _, sh := range sl.Shares {
				amounts[sh.Device] = sh.Amount
				spec.DeviceOrder[sl.Slot] = append(spec.DeviceOrder[sl.Slot], sh.Device)
			}
			spec.Alloc[sl.Slot] = amounts
			spec.AllocOrder = append(spec.AllocOrder, sl.Slot)
		}
	}
	// Only the CUDA plugin adds lines; the intrinsic cpu and mem plugins
	// add none.
	for _, d := range k.placement {
		if d.Device == "cuda" {
			for _, kv := range mockResourceData(n.settings, n.fractional, d.Alloc) {
				spec.Extra = append(spec.Extra, resourcefile.KV{Key: kv.key, Value: kv.value})
			}
		}
	}
	if withCID {
		spec.CID = k.cid
	}
	return spec.FormatStrict()
}

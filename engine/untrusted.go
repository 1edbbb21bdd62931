package engine

import (
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// The names a resource.txt gives (slot names, device ids, the container
// id) enter the snapshot through untrusted.Text: a kernel's file is
// written from inside its container's reach. A file with nothing to
// escape (every real one) costs a scan of its names and no copy.

func safeSlots(r model.ResourceSlot) model.ResourceSlot {
	clean := true
	for k := range r {
		if !untrusted.Safe(string(k)) {
			clean = false
			break
		}
	}
	if clean {
		return r
	}
	out := make(model.ResourceSlot, len(r))
	for k, v := range r {
		out[model.SlotName(untrusted.Text(string(k)))] = v
	}
	return out
}

func safeAlloc(a model.Allocations) model.Allocations {
	clean := true
	for slot, devs := range a {
		if !untrusted.Safe(string(slot)) {
			clean = false
			break
		}
		for id := range devs {
			if !untrusted.Safe(string(id)) {
				clean = false
				break
			}
		}
	}
	if clean {
		return a
	}
	out := make(model.Allocations, len(a))
	for slot, devs := range a {
		m := make(map[model.DeviceID]model.Dec, len(devs))
		for id, v := range devs {
			m[model.DeviceID(untrusted.Text(string(id)))] = v
		}
		out[model.SlotName(untrusted.Text(string(slot)))] = m
	}
	return out
}

package model

import (
	"slices"
	"strings"
)

// SlotName is a Backend.AI resource slot name such as "cpu", "mem",
// "cuda.shares" or "cuda.device:10g-mig".
type SlotName string

// Well-known slots.
const (
	SlotCPU        SlotName = "cpu"
	SlotMem        SlotName = "mem"
	SlotCUDAShares SlotName = "cuda.shares"
	SlotCUDADevice SlotName = "cuda.device"
)

// DeviceName is the part of a slot name before the first '.' ("cuda").
func (s SlotName) DeviceName() DeviceName {
	n, _, _ := strings.Cut(string(s), ".")
	return DeviceName(n)
}

// MajorType is the part after the first '.' and before any ':' ("device").
func (s SlotName) MajorType() string {
	_, rest, ok := strings.Cut(string(s), ".")
	if !ok {
		return ""
	}
	m, _, _ := strings.Cut(rest, ":")
	return m
}

// MinorType is the part after the first ':' ("10g-mig"), or "".
func (s SlotName) MinorType() string {
	_, rest, ok := strings.Cut(string(s), ".")
	if !ok {
		return ""
	}
	_, m, _ := strings.Cut(rest, ":")
	return m
}

// IsAccelerator reports whether the major type is device/devices/share/shares.
func (s SlotName) IsAccelerator() bool {
	switch s.MajorType() {
	case "device", "devices", "share", "shares":
		return true
	}
	return false
}

// CountsInAllocMap reports whether Backend.AI's scan_gpu_alloc_map adds this
// slot into the per-device map: exactly cuda.shares and cuda.device.
func (s SlotName) CountsInAllocMap() bool { return s == SlotCUDAShares || s == SlotCUDADevice }

// DeviceName names a device plugin: "cpu", "mem", "cuda", "rocm", ...
type DeviceName string

// DeviceID is a device identifier as the plugin reports it (§7): "0",
// "root", a UUID, "GPU-<uuid>", "MIG-<uuid>/3/0".
type DeviceID string

// SlotType is Backend.AI's SlotTypes.
type SlotType string

// Slot types.
const (
	SlotTypeCount   SlotType = "count"
	SlotTypeBytes   SlotType = "bytes"
	SlotTypeUnique  SlotType = "unique"
	SlotTypeUnified SlotType = "unified"
)

// SlotTypes maps known slot names to their types (the agent's
// known_slot_types).
type SlotTypes map[SlotName]SlotType

// DefaultSlotTypes is what a typical CUDA node registers: intrinsic cpu and
// mem plus the CUDA slots.
func DefaultSlotTypes() SlotTypes {
	return SlotTypes{
		SlotCPU: SlotTypeCount, SlotMem: SlotTypeBytes,
		SlotCUDAShares: SlotTypeCount, SlotCUDADevice: SlotTypeCount,
	}
}

// TypeOf returns the slot's type; a MIG slot ("*-mig") is unique, a name
// containing "mem" is guessed to be bytes (as ResourceSlot does), else count.
func (t SlotTypes) TypeOf(s SlotName) SlotType {
	if st, ok := t[s]; ok {
		return st
	}
	if strings.HasSuffix(string(s), "-mig") {
		return SlotTypeUnique
	}
	if strings.Contains(string(s), "mem") {
		return SlotTypeBytes
	}
	return SlotTypeCount
}

// ResourceSlot is a slot → amount map where a missing key counts as zero.
type ResourceSlot map[SlotName]Dec

// Get returns the amount of s, zero when missing.
func (r ResourceSlot) Get(s SlotName) Dec { return r[s] }

// Add returns r+o with missing keys as zero (r and o unchanged).
func (r ResourceSlot) Add(o ResourceSlot) ResourceSlot {
	out := make(ResourceSlot, len(r)+len(o))
	for k, v := range r {
		out[k] = v
	}
	for k, v := range o {
		out[k] = out[k].Add(v)
	}
	return out
}

// Sub returns r-o with missing keys as zero.
func (r ResourceSlot) Sub(o ResourceSlot) ResourceSlot {
	out := make(ResourceSlot, len(r)+len(o))
	for k, v := range r {
		out[k] = v
	}
	for k, v := range o {
		out[k] = out[k].Sub(v)
	}
	return out
}

// Names returns the slot names in sorted order.
func (r ResourceSlot) Names() []SlotName {
	ns := make([]SlotName, 0, len(r))
	for k := range r {
		ns = append(ns, k)
	}
	slices.Sort(ns)
	return ns
}

// IsZero reports whether every amount is zero.
func (r ResourceSlot) IsZero() bool {
	for _, v := range r {
		if !v.IsZero() {
			return false
		}
	}
	return true
}

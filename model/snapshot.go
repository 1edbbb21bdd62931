package model

import (
	"slices"
	"time"
)

// Snapshot is the engine's complete, immutable account of the node at one
// moment. Everything in it is shared between subscribers: never mutate it.
//
// Sharing contract: between two snapshots the engine reuses every
// *Kernel and *DeviceUsage that did not change (same pointer), and gives a
// changed one a new pointer. Consumers may cache derived data by pointer.
type Snapshot struct {
	Seq  uint64
	Time time.Time
	Node string
	// Source describes where devices come from and how healthy that is.
	Source SourceInfo
	// Mode is the partition's allocation mode ("shared", "auto-split",
	// "manual"), "" when no agent config is loaded.
	Mode string
	// ConfigPath is the agent.toml in use ("" without one).
	ConfigPath string
	Devices    []Device  // inventory order
	Kernels    []*Kernel // sorted by ID
	Agents     []Agent   // config order
	Usage      map[DeviceKey]*DeviceUsage
	Issues     []Issue // sorted by severity (highest first), then code, file
	// HostMemBytes is the host's total memory (0 when unknown).
	HostMemBytes int64
}

// SourceInfo says where the device inventory comes from.
type SourceInfo struct {
	Kind   string `json:"kind"`   // "nvml", "mock", "none"
	Health string `json:"health"` // "ok", "degraded", "unavailable"
	Detail string `json:"detail,omitempty"`
}

// Holding is one kernel's amount of one slot on one device.
type Holding struct {
	Kernel KernelID
	Agent  AgentID
	Slot   SlotName
	Amount Dec
}

// DeviceUsage is everything held on one device.
type DeviceUsage struct {
	Key DeviceKey
	// Held is the total per slot over all kernels.
	Held ResourceSlot
	// Holdings, sorted by kernel then slot. Only accelerators carry them:
	// CPU cores and memory keep totals only (every kernel holds memory, so a
	// list there would make every change cost O(kernels)).
	Holdings []Holding
}

// Total returns what counts against the device's capacity: the sum over
// every slot held on it. For a CUDA GPU that is cuda.shares + cuda.device,
// scan_gpu_alloc_map's rule.
func (u *DeviceUsage) Total() Dec {
	if u == nil {
		return Zero
	}
	return Sum(valuesOf(u.Held)...)
}

func valuesOf(r ResourceSlot) []Dec {
	out := make([]Dec, 0, len(r))
	for _, n := range r.Names() {
		out = append(out, r[n])
	}
	return out
}

// Device returns the device with key k, or nil.
func (s *Snapshot) Device(k DeviceKey) *Device {
	for i := range s.Devices {
		if s.Devices[i].Key() == k {
			return &s.Devices[i]
		}
	}
	return nil
}

// Kernel returns the kernel with the id, or nil.
func (s *Snapshot) Kernel(id KernelID) *Kernel {
	i, ok := slices.BinarySearchFunc(s.Kernels, id, func(k *Kernel, id KernelID) int {
		switch {
		case k.ID < id:
			return -1
		case k.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return s.Kernels[i]
}

// AllocMap is what Backend.AI's scan_gpu_alloc_map returns for these
// kernels: per device id, the sum of cuda.shares and cuda.device; devices no
// kernel lists are absent.
func (s *Snapshot) AllocMap() map[DeviceID]Dec {
	out := map[DeviceID]Dec{}
	for _, k := range s.Kernels {
		for _, slot := range []SlotName{SlotCUDAShares, SlotCUDADevice} {
			for id, v := range k.Alloc[slot] {
				out[id] = out[id].Add(v)
			}
		}
	}
	return out
}

func sortKeys(ks []DeviceKey) {
	slices.SortFunc(ks, func(a, b DeviceKey) int {
		if a.Name != b.Name {
			if a.Name < b.Name {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}

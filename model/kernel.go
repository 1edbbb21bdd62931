package model

import "time"

// KernelID is a kernel's canonical UUID string (its scratch directory name).
type KernelID string

// AgentID is a Backend.AI agent id ("i-gpu-node01").
type AgentID string

// Allocations is a kernel's per-device allocation: slot → device id →
// amount, as the *_SHARES lines of resource.txt say. The device name is the
// slot's DeviceName().
type Allocations map[SlotName]map[DeviceID]Dec

// KernelState says how far fgtop trusts a kernel's figures.
type KernelState string

// Kernel states.
const (
	// KernelOK: the resource.txt parsed; figures are current.
	KernelOK KernelState = "ok"
	// KernelStale: the current file does not parse (torn or malformed); the
	// last good contribution is kept and an Issue names the file.
	KernelStale KernelState = "stale"
	// KernelBroken: the file never parsed; the kernel contributes nothing.
	KernelBroken KernelState = "broken"
	// KernelPending: the kernel directory exists but resource.txt does not
	// (yet); it contributes nothing.
	KernelPending KernelState = "pending"
)

// Kernel is one kernel found under a scratch root.
type Kernel struct {
	ID    KernelID
	Agent AgentID
	// Path of the resource.txt (whether or not it exists).
	Path string
	// Slots is what the kernel requested (SLOTS=); exact bytes for mem.
	Slots ResourceSlot
	// Alloc is the per-device allocation from the *_SHARES lines.
	Alloc          Allocations
	UnifiedDevices [][2]string
	ModTime        time.Time
	// Seen is when fgtop first saw the kernel (its age in the console).
	Seen  time.Time
	State KernelState
	// Problem is set when State is not KernelOK.
	Problem *Issue
	// Legacy is true for the pre-24.12 layout (CID first, spaced JSON).
	Legacy bool
}

// Devices returns the devices the kernel holds anything on, by key.
func (k *Kernel) Devices() []DeviceKey {
	var out []DeviceKey
	seen := map[DeviceKey]bool{}
	for slot, m := range k.Alloc {
		for id := range m {
			key := DeviceKey{slot.DeviceName(), id}
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	sortKeys(out)
	return out
}

// Agent is one Backend.AI agent on the node.
type Agent struct {
	ID          AgentID
	ScratchRoot string
	// Owns lists the devices the agent's partition gives it, by plugin. Nil
	// means "every device" (shared mode or no partition known).
	Owns map[DeviceName][]DeviceID
	// Mem is the agent's memory share in bytes (zero when not partitioned).
	Mem Dec
	// Held is the sum of its kernels' allocations per slot.
	Held    ResourceSlot
	Kernels int
}

// OwnsDevice reports whether the agent's partition includes the device.
func (a *Agent) OwnsDevice(k DeviceKey) bool {
	if a.Owns == nil {
		return true
	}
	ids, ok := a.Owns[k.Name]
	if !ok {
		// A plugin the partition does not list is not partitioned (mem).
		return k.Name == "mem"
	}
	for _, id := range ids {
		if id == k.ID {
			return true
		}
	}
	return false
}

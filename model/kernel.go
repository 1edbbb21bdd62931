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

// EachHeld calls f with every amount a holds on a device that carries
// holdings (every plugin's devices but cpu and mem), by device key and slot,
// in map order.
func (a Allocations) EachHeld(f func(k DeviceKey, slot SlotName, amt Dec)) {
	for slot, devs := range a {
		name := slot.DeviceName()
		if !CarriesHoldings(name) {
			continue
		}
		for id, amt := range devs {
			f(DeviceKey{Name: name, ID: id}, slot, amt)
		}
	}
}

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
	// Record is what the kernel's recovery.json says; nil when it has none
	// (agents before Backend.AI 25.12, or not written yet) or it does not
	// parse.
	Record *KernelRecord
	// AgentBy says how Agent was found: AgentByRecord, AgentByRoot, or
	// AgentByNone when it could not be told (Agent is then "").
	AgentBy AgentBasis
	// Container is the container id of the resource.txt CID= line ("" until
	// the agent appends it, and on agents that write none).
	Container string
	// Use is what the kernel's GPU processes use of what it holds; nil
	// when it holds no accelerator and runs no GPU process, or when no
	// device source lists processes.
	Use *KernelUse
}

// KernelUse is a kernel's allocated against used: per device, its share
// beside what its processes use, and whether it holds devices it does not
// use ("holding but idle").
type KernelUse struct {
	// Procs is the number of its GPU processes, on any device.
	Procs int
	// MemUsed is the GPU memory of its processes, bytes; invalid when no
	// process's memory is known.
	MemUsed Opt[uint64]
	// Util is the utilisation of its busiest device by its processes,
	// percent; invalid when it cannot be told for every device it holds.
	Util Opt[uint32]
	// MemOnly: it runs processes on a device whose driver gives no
	// per-process utilisation, so only their memory is known.
	MemOnly bool
	// Devices are the accelerators it holds or runs processes on, in
	// device key order.
	Devices []DeviceUse
	// IdleSince is when its utilisation was last seen to turn 0 % (zero
	// while it is not known to be 0 %, or it holds no accelerator).
	IdleSince time.Time
	// Idle: holding but idle: it holds an accelerator and its utilisation
	// has been 0 % since IdleSince, for at least the configured time.
	Idle bool
}

// DeviceUse is one kernel on one device: what it holds beside what its
// processes use.
type DeviceUse struct {
	Device DeviceKey
	// Held is its amount on the device over every slot (fGPU shares,
	// whole devices), Capacity the device's in the device's slot (zero
	// when the inventory does not list the device, or when the device's
	// capacity is unknown: CapacityUnknown).
	Held     Dec
	Capacity Dec
	// CapacityUnknown copies the device's: its capacity could not be
	// known (fractional settings never read), so no held/capacity figure
	// may be stated against it.
	CapacityUnknown bool
	Procs           int
	MemUsed         Opt[uint64]
	// Util is its processes' utilisation of the device, percent.
	Util Opt[uint32]
}

// Equal reports whether two uses read the same.
func (u *KernelUse) Equal(o *KernelUse) bool {
	if u == nil || o == nil {
		return u == o
	}
	if u.Procs != o.Procs || u.MemUsed != o.MemUsed || u.Util != o.Util || u.MemOnly != o.MemOnly ||
		!u.IdleSince.Equal(o.IdleSince) || u.Idle != o.Idle || len(u.Devices) != len(o.Devices) {
		return false
	}
	for i := range u.Devices {
		a, b := &u.Devices[i], &o.Devices[i]
		if a.Device != b.Device || !a.Held.Equal(b.Held) || !a.Capacity.Equal(b.Capacity) || a.CapacityUnknown != b.CapacityUnknown || a.Procs != b.Procs ||
			a.MemUsed != b.MemUsed || a.Util != b.Util {
			return false
		}
	}
	return true
}

// AgentBasis says how a kernel was attributed to its agent.
type AgentBasis string

// Attribution bases, in the order they are tried.
const (
	// AgentByRecord: the agent_id of the kernel's recovery.json.
	AgentByRecord AgentBasis = "recovery.json"
	// AgentByRoot: the only agent whose scratch root holds the kernel.
	AgentByRoot AgentBasis = "scratch-root"
	// AgentByNone: neither tells (a shared root and no record, or a record
	// that contradicts the root); an Issue says why.
	AgentByNone AgentBasis = "none"
)

// KernelRecord is what Backend.AI's recovery.json (KernelRecoveryScratchData)
// carries that fgtop shows: who owns the kernel and what runs in it.
type KernelRecord struct {
	// Path of the recovery.json.
	Path string
	// KernelID is the record's id (the directory name, when all is well).
	KernelID KernelID
	// AgentID is the agent that owns the kernel: the truth when several
	// agents share one scratch root.
	AgentID        AgentID
	SessionID      string
	SessionType    string
	OwnerUserID    string // "" when null
	OwnerProjectID string // "" when null
	// Image is the canonical image reference (registry/project/name:tag).
	Image        string
	Architecture string
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
	// Given is, in a slot-based partition (Backend.AI main's form, manual
	// or auto-split), the amount of each slot the agent is given: what it
	// reports to the manager as its capacity. Owns is then nil (devices
	// are not exclusive). Nil otherwise.
	Given ResourceSlot
	// Held is the sum of its kernels' allocations per slot.
	Held    ResourceSlot
	Kernels int
	// Restart says whether the agent's process runs the agent.toml on disk.
	Restart Restart
	// ServiceAddr is where the agent serves its HTTP service (/health):
	// [agent] service-addr as HOST:PORT, "" when no config names an agent.
	ServiceAddr string
	// Health is what the agent's GET /health answered (State "" before the
	// first check, or when nothing is checked).
	Health AgentHealth
}

// AgentHealthState says whether an agent answers on its service address.
type AgentHealthState string

// Agent health states.
const (
	// AgentUp: GET /health answered with the agent's health JSON.
	AgentUp AgentHealthState = "up"
	// AgentDown: nothing listens on the address (connection refused): the
	// agent is not running there.
	AgentDown AgentHealthState = "down"
	// AgentUnreachable: no usable answer (a timeout, a network error, an
	// HTTP error or a body that is not the agent's health JSON).
	AgentUnreachable AgentHealthState = "unreachable"
)

// AgentHealth is one check of an agent's GET /health.
type AgentHealth struct {
	State AgentHealthState
	// URL is what was asked.
	URL string
	// Status and Version are the agent's own words (up only): Backend.AI
	// answers status "ok", "degraded" or "error".
	Status  string
	Version string
	// Detail says why an agent is down or unreachable.
	Detail string
}

// RestartState says whether an agent's process has loaded the agent.toml
// that is on disk (the agent reads it only at start).
type RestartState string

// Restart states.
const (
	// RestartUnknown: fgtop cannot tell (no config, /proc not readable, ...);
	// Restart.Detail says why.
	RestartUnknown RestartState = "cannot-tell"
	// RestartCurrent: the process started after the file last changed.
	RestartCurrent RestartState = "current"
	// RestartPending: the process started before the file last changed, so
	// it runs an older partition than the file says.
	RestartPending RestartState = "restart-pending"
	// RestartNotRunning: no agent process for the file was found in a
	// readable /proc.
	RestartNotRunning RestartState = "not-running"
)

// Restart is what fgtop found about an agent's process.
type Restart struct {
	State  RestartState
	Detail string
	// PIDs of the agent processes found for the config file.
	PIDs []int
	// ConfigHash is the sha256 of the config file as it was judged ("" when
	// it was not read): a state is about that version, not a later one.
	ConfigHash string `json:",omitempty"`
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

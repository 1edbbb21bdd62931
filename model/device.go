package model

import "fmt"

// Opt is an optional measurement. A call that is unsupported or failed leaves
// it invalid and it shows as N/A, never as 0.
type Opt[T any] struct {
	V     T
	Valid bool
}

// Some returns a valid Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, Valid: true} }

// DeviceKey identifies a device across plugins: the same id ("0") can be a
// CPU core and a cuda_open GPU at once.
type DeviceKey struct {
	Name DeviceName
	ID   DeviceID
}

func (k DeviceKey) String() string { return fmt.Sprintf("%s:%s", k.Name, k.ID) }

// Device is one allocatable device of the node: a GPU, a MIG slice, a CPU
// core or the memory "root" device.
type Device struct {
	ID   DeviceID
	Name DeviceName // plugin: "cuda", "cpu", "mem", ...
	// Slot is the slot in which the device's capacity is expressed
	// ("cuda.shares", "cuda.device", "cuda.device:10g-mig", "cpu", "mem").
	Slot     SlotName
	SlotType SlotType
	// Capacity in Slot units: fGPU shares (§4.4), 1 for a whole device, core,
	// or MIG slice, bytes for mem. Zero when CapacityUnknown.
	Capacity Dec
	// CapacityUnknown is set when the device is listed but its capacity
	// cannot be known (a fractional plugin whose settings were never
	// read): it shows as "?" and is left out of the JSON, never as a
	// made-up 1.
	CapacityUnknown bool
	Index           int
	Model           string
	UUID            string // without the "GPU-" prefix
	NUMANode        int    // -1 when unknown
	// Parent is the GPU a MIG slice lives on ("" otherwise).
	Parent      DeviceID
	MemoryBytes int64 // device memory, 0 when not applicable
	Processors  int   // SMs / subprocessors, 0 when not applicable
	Telemetry   *Telemetry
}

// Key returns the device's plugin-qualified key.
func (d *Device) Key() DeviceKey { return DeviceKey{d.Name, d.ID} }

// IsAccelerator reports whether the device is neither a CPU core nor memory.
func (d *Device) IsAccelerator() bool { return d.Name != "cpu" && d.Name != "mem" }

// IsMIG reports whether the device is a MIG slice.
func (d *Device) IsMIG() bool { return d.Parent != "" }

// Telemetry is what NVML reports for a device at one moment.
type Telemetry struct {
	MemUsed    Opt[uint64] // bytes
	MemTotal   Opt[uint64] // bytes
	UtilGPU    Opt[uint32] // percent
	UtilMem    Opt[uint32] // percent
	TempC      Opt[uint32]
	PowerMW    Opt[uint32]
	PowerCapMW Opt[uint32]
	MIGMode    Opt[bool]
	Processes  []Process
	// ProcUtil says whether the processes carry the driver's per-process
	// utilisation samples (Process.SMUtil): true where NVML has them,
	// false where it does not (memory only: MIG, older GPUs or drivers),
	// invalid when processes are not listed.
	ProcUtil Opt[bool]
	// Lost is set when the driver reports the GPU as lost or unreachable.
	Lost bool
	// Errors names the calls that failed with something other than
	// "not supported", e.g. "temperature: Unknown Error".
	Errors []string
}

// Process is a process using a device, mapped to a kernel where possible.
type Process struct {
	// PID is the host PID NVML reports.
	PID     uint32
	UsedMem Opt[uint64]
	// SMUtil and MemUtil are the driver's per-process utilisation samples
	// (percent of the device), averaged over the last poll; invalid where
	// the driver gives none (Telemetry.ProcUtil).
	SMUtil  Opt[uint32]
	MemUtil Opt[uint32]
	Name    string
	// Start is the process's start time in clock ticks after boot
	// (/proc/<pid>/stat): with PID it names the process for good.
	Start uint64
	// Container is the container id /proc/<pid>/cgroup names ("" for a
	// host process, or when it could not be read).
	Container string
	// Kernel is the kernel whose resource.txt CID= line names Container;
	// "" when none does.
	Kernel KernelID
	// Owner says whose the process is (set by the engine's join).
	Owner ProcOwner
	// Detail says why Owner is ProcUnknown.
	Detail string
}

// ProcOwner says whose a GPU process is.
type ProcOwner string

// Process owners.
const (
	// ProcUnjoined: the process was read but not yet joined with the
	// kernels (an inventory reading on its own).
	ProcUnjoined ProcOwner = ""
	// ProcKernel: a Backend.AI kernel's (Process.Kernel).
	ProcKernel ProcOwner = "kernel"
	// ProcForeign: not Backend.AI's: a host process, or a container no
	// kernel's resource.txt names.
	ProcForeign ProcOwner = "not-backendai"
	// ProcGone: it exited before /proc could be read.
	ProcGone ProcOwner = "gone"
	// ProcReused: its PID was taken by a newer process while it was read;
	// it is credited to nobody.
	ProcReused ProcOwner = "pid-reused"
	// ProcUnknown: /proc could not be read for it (Detail says why).
	ProcUnknown ProcOwner = "unknown"
)

// AnyCapacityUnknown reports whether some device's capacity is unknown:
// checks that add capacities up cannot be made then.
func AnyCapacityUnknown(devs []Device) bool {
	for i := range devs {
		if devs[i].CapacityUnknown {
			return true
		}
	}
	return false
}

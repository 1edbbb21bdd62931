package inventory

import (
	"errors"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/model"
)

// ErrNoNVML is returned where NVML is asked for in a build without it:
// go-nvml needs cgo and Linux.
var ErrNoNVML = errors.New("built without NVML support (cgo disabled, or not Linux): rebuild with CGO_ENABLED=1 on Linux, or use --devices PATH-to-mock-accelerator.toml")

// IDStyle chooses how NVML GPUs are identified, which must match the CUDA
// plugin the node's agents run, since resource.txt and gpu_alloc_map use
// these ids.
type IDStyle string

const (
	// IDStyleUUID identifies a GPU by its NVIDIA UUID, "GPU-xxxxxxxx-…", as
	// the enterprise CUDA plugin (fGPU, cuda.shares) does. The default.
	IDStyleUUID IDStyle = "uuid"
	// IDStyleIndex identifies a GPU by its index, "0", "1", …, as the open
	// source cuda_open plugin (cuda.device) does. fgtop uses NVML's index,
	// which is PCI bus order; it equals the CUDA runtime's order that
	// cuda_open uses when CUDA_DEVICE_ORDER=PCI_BUS_ID or the GPUs are all
	// the same model.
	IDStyleIndex IDStyle = "index"
)

// ParseIDStyle parses "uuid" or "index" ("" is the default, uuid).
func ParseIDStyle(s string) (IDStyle, error) {
	switch IDStyle(s) {
	case "", IDStyleUUID:
		return IDStyleUUID, nil
	case IDStyleIndex:
		return IDStyleIndex, nil
	}
	return "", fmt.Errorf("device id style %q: want %q or %q", s, IDStyleUUID, IDStyleIndex)
}

// NVMLOptions configures the NVML source. The zero value registers every GPU
// as one cuda.device with UUID ids.
type NVMLOptions struct {
	IDStyle IDStyle
	// Fractional registers GPUs under cuda.shares (fGPU) instead of
	// cuda.device, with the capacities below. NVML does not know a GPU's
	// share count: the enterprise plugin derives it from its own settings.
	Fractional bool
	// Shares is the capacity in shares per device id (in IDStyle's form);
	// a GPU not listed gets DefaultShares, and 1 when that is zero.
	Shares        map[model.DeviceID]model.Dec
	DefaultShares model.Dec
	// Quantum is the fractional quantum_size; zero means 0.01, the
	// FractionAllocMap default.
	Quantum model.Dec
	// SysRoot replaces "/sys", where a GPU's NUMA node is read
	// (bus/pci/devices/<bus id>/numa_node) when NVML cannot say.
	SysRoot string
	// ProcRoot replaces "/proc", where process names are read.
	ProcRoot string
	// SlowEvery is how often the values that change only by an
	// operator's action (enforced power limit, MIG mode) are read again
	// (zero: DefaultSlowEvery; negative: every poll). Names, UUIDs, memory
	// sizes and bus ids are read once, at start.
	SlowEvery time.Duration
	// Now is the clock for SlowEvery (default time.Now).
	Now func() time.Time
}

// DefaultSlowEvery is NVMLOptions.SlowEvery's default: a changed power
// cap or MIG mode shows within half a minute.
const DefaultSlowEvery = 30 * time.Second

// InitFailure classifies why NVML could not start.
type InitFailure string

// Init failure classes.
const (
	InitLibraryNotFound InitFailure = "library-not-found" // ERROR_LIBRARY_NOT_FOUND
	InitDriverNotLoaded InitFailure = "driver-not-loaded" // ERROR_DRIVER_NOT_LOADED
	InitNoPermission    InitFailure = "no-permission"     // ERROR_NO_PERMISSION
	InitVersionMismatch InitFailure = "version-mismatch"  // ERROR_LIB_RM_VERSION_MISMATCH
	InitOther           InitFailure = "other"
)

// InitError is a failed NVML Init, classified for an operator. After it the
// source calls nothing else in NVML: with a failed Init even Shutdown kills
// the process (undefined symbol).
type InitError struct {
	Reason InitFailure
	// Code is NVML's return code.
	Code int
	// NVML is the library's own text for Code.
	NVML string
}

// Error is the operator's message: what is wrong and what to check.
func (e *InitError) Error() string {
	switch e.Reason {
	case InitLibraryNotFound:
		return "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed on this host, or its libraries are not on the loader path"
	case InitDriverNotLoaded:
		return fmt.Sprintf("NVIDIA kernel driver is not loaded (NVML: %s): check `lsmod | grep nvidia` and `dmesg`; the GPUs stay invisible until the driver loads", e.NVML)
	case InitNoPermission:
		return fmt.Sprintf("no permission to use the NVIDIA driver (NVML: %s): this user cannot open /dev/nvidiactl and /dev/nvidia*; run fgtop as root or as a user allowed to open them", e.NVML)
	case InitVersionMismatch:
		return fmt.Sprintf("NVIDIA driver/library version mismatch (NVML: %s): the loaded kernel module and libnvidia-ml differ, usually after a driver upgrade without a reboot; reboot or reload the nvidia kernel modules", e.NVML)
	}
	if e.NVML == "" || e.NVML == fmt.Sprintf("NVML error %d", e.Code) {
		// retText's fallback is the code itself: said once.
		return fmt.Sprintf("NVML initialisation failed (NVML error %d)", e.Code)
	}
	return fmt.Sprintf("NVML initialisation failed (NVML error %d: %s)", e.Code, e.NVML)
}

// Issue turns the failure into an Issue of the given severity.
func (e *InitError) Issue(sev model.Severity) model.Issue {
	return model.Issue{Severity: sev, Code: model.IssueDeviceSource, Message: e.Error() + "; showing host CPU and memory only"}
}

// short is a one-line reason for SourceInfo.Detail.
func (e *InitError) short() string {
	switch e.Reason {
	case InitLibraryNotFound:
		return "NVML library not found"
	case InitDriverNotLoaded:
		return "NVIDIA driver not loaded"
	case InitNoPermission:
		return "no permission to use the NVIDIA driver"
	case InitVersionMismatch:
		return "NVIDIA driver/library version mismatch"
	}
	return fmt.Sprintf("NVML Init failed (%s)", e.NVML)
}

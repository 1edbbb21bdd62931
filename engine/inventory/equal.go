package inventory

import (
	"maps"
	"slices"

	"github.com/fgtop/fgtop/model"
)

// Equal reports whether two readings say the same in everything a
// snapshot shows: devices with their telemetry and processes, slot
// types, source, issues, host memory, allocator settings, plugin and the
// GPUs an agent does not register. The
// engine publishes a poll that reads the same as the one before as the
// same content at a new time, which its subscribers adopt without
// deriving anything again; a field left out here would be one a
// subscriber never sees change (TestEqualSeesEveryField).
func Equal(a, b *Inventory) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.Source == b.Source && a.HostMemBytes == b.HostMemBytes && a.Fractional == b.Fractional &&
		a.Quantum.Identical(b.Quantum) && samePlugin(a.Plugin, b.Plugin) &&
		maps.Equal(a.SlotTypes, b.SlotTypes) && slices.Equal(a.Issues, b.Issues) &&
		sameDevices(a.Devices, b.Devices) && maps.EqualFunc(a.AgentUnregistered, b.AgentUnregistered, maps.Equal) &&
		sameUnidentified(a.Unidentified, b.Unidentified)
}

func sameUnidentified(a, b []UnidentifiedGPU) bool {
	return slices.EqualFunc(a, b, func(x, y UnidentifiedGPU) bool {
		return x.NotListed == y.NotListed && slices.Equal(x.Issues, y.Issues) && sameDevices(x.Devices, y.Devices)
	})
}

// sameDevices compares the devices in place, without copying each (a
// model.Device is large).
func sameDevices(a, b []model.Device) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !SameDevice(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// SameDevice reports whether two readings of a device are equal, its
// telemetry included.
func SameDevice(a, b *model.Device) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Slot == b.Slot && a.SlotType == b.SlotType &&
		a.Capacity.Identical(b.Capacity) && a.CapacityUnknown == b.CapacityUnknown && a.Index == b.Index &&
		a.Model == b.Model && a.UUID == b.UUID && a.NUMANode == b.NUMANode && a.Parent == b.Parent &&
		a.MemoryBytes == b.MemoryBytes && a.Processors == b.Processors && SameTelemetry(a.Telemetry, b.Telemetry)
}

// SameTelemetry reports whether two telemetry readings are equal (nil is
// only equal to nil: no reading is not a reading of nothing).
func SameTelemetry(a, b *model.Telemetry) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.MemUsed == b.MemUsed && a.MemTotal == b.MemTotal && a.UtilGPU == b.UtilGPU && a.UtilMem == b.UtilMem &&
		a.TempC == b.TempC && a.PowerMW == b.PowerMW && a.PowerCapMW == b.PowerCapMW && a.MIGMode == b.MIGMode &&
		a.ProcUtil == b.ProcUtil && a.Lost == b.Lost && slices.Equal(a.Errors, b.Errors) &&
		// nil (not listed) and empty (nothing runs) say different things.
		(a.Processes == nil) == (b.Processes == nil) && slices.Equal(a.Processes, b.Processes)
}

func samePlugin(a, b *model.PluginInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameAccel reports whether two accelerator readings say the same in
// everything assemble carries into an Inventory.
func sameAccel(a, b *accel) bool {
	return a.source == b.source && a.fractional == b.fractional && a.quantum.Identical(b.quantum) &&
		maps.Equal(a.slotTypes, b.slotTypes) && slices.Equal(a.issues, b.issues) && sameDevices(a.devices, b.devices) &&
		sameUnidentified(a.unidentified, b.unidentified)
}

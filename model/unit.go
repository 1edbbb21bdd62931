package model

// The units a slot's amounts count in, as the exporter names its metrics
// (fgtop_device_held_shares, _devices, _bytes): one unit per metric.
const (
	UnitShares  = "shares"
	UnitDevices = "devices"
	UnitBytes   = "bytes"
)

// Unit is the unit slot s counts in: fGPU shares for a *.shares slot,
// bytes for mem (and any slot Backend.AI types as bytes), whole devices
// for the rest (cpu cores, cuda.device, MIG slots).
func (s SlotName) Unit() string {
	switch {
	case s.MajorType() == "shares" || s.MajorType() == "share":
		return UnitShares
	case DefaultSlotTypes().TypeOf(s) == SlotTypeBytes:
		return UnitBytes
	}
	return UnitDevices
}

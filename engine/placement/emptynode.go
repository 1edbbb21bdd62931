package placement

import (
	"github.com/fgtop/fgtop/model"
	"slices"
)

// Host describes the host of a simulation on an empty node: a virtual one
// (CPUs cores over CPUNUMA NUMA nodes, Mem bytes; zero: not described)
// and the requests that will run, whose slots say whether the host's cores
// and memory take part at all.
type Host struct {
	CPUs, CPUNUMA int
	Mem           model.Dec
	Requests      []string
	// Read reads this machine's cores and memory: called only when a
	// request names cpu or mem that CPUs or Mem do not describe.
	Read func() []model.Device
}

// HostListedError is EmptyNode's answer when the device list has cpu or
// mem devices already and Host describes them too: the host is said once.
type HostListedError struct{ Name model.DeviceName }

func (e *HostListedError) Error() string {
	return "the device list has " + string(e.Name) + " devices already"
}

// EmptyNode is the node a simulation without a live state runs on: the
// accelerators of the device source, and the host's cores and memory only
// where the host is described or a request names them, so that a
// simulation of accelerator slots never depends on the machine running it.
// A device list that has cpu or mem keeps its own (a HostListedError
// when h describes them as well).
func EmptyNode(accel []model.Device, h Host) ([]model.Device, error) {
	wants := map[model.DeviceName]bool{"cpu": h.CPUs > 0, "mem": !h.Mem.IsZero()}
	for _, r := range h.Requests {
		st, err := ParseStep(r, nil)
		if err != nil {
			continue // reported once the slot types are known
		}
		for _, e := range st.Request {
			switch n := e.Slot.DeviceName(); n {
			case "cpu", "mem":
				wants[n] = true
			}
		}
	}
	devs := slices.Clone(accel) // the host's devices are appended: never into the caller's array
	for _, d := range accel {
		if d.Name == "cpu" && h.CPUs > 0 || d.Name == "mem" && !h.Mem.IsZero() {
			return nil, &HostListedError{Name: d.Name}
		}
		wants[d.Name] = false
	}
	if !wants["cpu"] && !wants["mem"] {
		return devs, nil
	}
	var host []model.Device
	if (wants["cpu"] && h.CPUs == 0) || (wants["mem"] && h.Mem.IsZero()) {
		host = h.Read()
	}
	for _, d := range ReplaceHost(host, h.CPUs, h.CPUNUMA, h.Mem) {
		if wants[d.Name] {
			devs = append(devs, d)
		}
	}
	return devs, nil
}

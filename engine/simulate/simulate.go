// Package simulate sets up and runs what `fgtop simulate` asks for: the
// node its requests run on (an empty node of a device source or a device
// list, or the live state of an agent tree), the requests themselves with
// the judgement of a live node's host, and corpus cases read from a file.
// engine/placement decides what the reads mean; this package does the
// reads in the command's order and turns what it finds into errors worded
// for simulate's flags, so the command parses flags and prints.
//
// A *UsageError is bad usage or bad input (the command exits 2 on it); any
// other error is the command's failure. Errors from the callbacks the
// command passes in (opening its device source) come back unchanged.
package simulate

import (
	"fmt"

	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// UsageError is a simulation refused for its flags or its input: an
// unknown slot, a negative amount, a file that does not parse. Msg is the
// whole message, naming the flag at fault.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// usage is a UsageError of format and a, as fmt.Sprintf words them.
func usage(format string, a ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, a...)}
}

// quantumErr refuses to place shares on fractional maps of an unknown
// quantum: FractionAllocMap's 0.01 or the mock's 0.1 would round them as
// the node's allocator may not.
func quantumErr(err error) error {
	return usage("simulate: %v: give it with --quantum, or the plugin settings with --plugin-config", err)
}

// Host is the virtual host of --cpus, --cpu-numa and --mem: CPUs cores
// (ids 0..CPUs-1) over CPUNUMA NUMA nodes, Mem bytes; zero values describe
// nothing, and the node's own (or this machine's) stand.
type Host struct {
	CPUs, CPUNUMA int
	Mem           model.Dec
	// MemGiven: --mem was given (Mem is then positive).
	MemGiven bool
}

// MaxCPUs bounds --cpus: far above any real host, and small enough that
// the simulated node (one device per core) stays a fraction of a second
// and a few MiB.
const MaxCPUs = 4096

// ParseHost checks --cpus, --cpu-numa and --mem (mem: "" when not given)
// and reads the memory's size.
func ParseHost(cpus, numa int, mem string) (Host, error) {
	h := Host{CPUs: cpus, CPUNUMA: numa}
	if numa != 0 && cpus == 0 {
		return h, usage("--cpu-numa needs --cpus")
	}
	if cpus < 0 || numa < 0 {
		return h, usage("--cpus and --cpu-numa must not be negative")
	}
	if cpus > MaxCPUs {
		return h, usage("--cpus %d: at most %d cores (the largest hosts today have a few hundred; each core is a device of the simulation)", cpus, MaxCPUs)
	}
	if numa > max(cpus, 1) {
		return h, usage("--cpu-numa %d: more NUMA nodes than the %d cores of --cpus", numa, cpus)
	}
	if mem != "" {
		v, err := model.ParseFiniteBinarySize(mem)
		if err != nil || v.Sign() <= 0 {
			return h, usage("--mem %q: want a positive binary size such as 256g", mem)
		}
		h.Mem, h.MemGiven = v, true
	}
	return h, nil
}

// asksHost: some request names cpu or mem (a step that does not parse is
// reported later, with the slot types known).
func asksHost(requests []string) bool {
	for _, r := range requests {
		st, err := placement.ParseStep(r, nil)
		if err != nil {
			continue
		}
		for _, e := range st.Request {
			if n := e.Slot.DeviceName(); n == "cpu" || n == "mem" {
				return true
			}
		}
	}
	return false
}

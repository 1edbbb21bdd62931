package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// A simulation on a live tree (an agent config, scratch roots) takes the
// host's cores and memory from the machine fgtop runs on, as check and
// plan do without --host-cpus/--host-mem: the tree itself does not list
// them. For a tree copied from another node that capacity is this
// machine's, not the node's, and a request for cpu or mem would be
// answered against the wrong host.

// HostDoubt is one host slot (cpu or mem) a simulation's requests ask for
// while its capacity is this machine's.
type HostDoubt struct {
	Slot model.SlotName
	// Here says what this machine has of it: "2 cores", "7.6 GiB".
	Here string
	// Contradiction is what in the tree cannot be on this machine (its
	// kernels hold cores it lacks, or more memory than it has); "" when
	// nothing says the tree is another node's. With one, the answer for
	// Slot is wrong, not only possibly wrong.
	Contradiction string
}

// HostDoubts lists the host slots steps ask for whose capacity in snap is
// this machine's (cpuGiven and memGiven say that a virtual host replaced
// the cores or the memory), cpu first, each with what contradicts this
// machine: snap's kernels, or cfg's manual partition (nil: no config),
// giving the agents cores this machine lacks or more than it has. A free
// step, or an amount of 0 or less (which Backend.AI drops), asks for
// nothing.
func HostDoubts(snap *model.Snapshot, cfg *agentconfig.Config, steps []Step, cpuGiven, memGiven bool) []HostDoubt {
	asked := map[model.SlotName]bool{}
	for _, s := range steps {
		for _, a := range s.Request {
			if a.Amount.Sign() > 0 {
				asked[a.Slot] = true
			}
		}
	}
	var out []HostDoubt
	allocs := manualAllocs(cfg)
	if asked[model.SlotCPU] && !cpuGiven {
		out = append(out, cpuDoubt(snap, allocs))
	}
	if asked[model.SlotMem] && !memGiven {
		out = append(out, memDoubt(snap, allocs))
	}
	return out
}

// manualAllocs are the allocation tables of cfg's agents in manual mode,
// the last of the entries that share an id (one agent to Backend.AI);
// none in the other modes, which divide what the node has.
func manualAllocs(cfg *agentconfig.Config) []*agentconfig.Allocation {
	if cfg == nil || cfg.Mode != agentconfig.ModeManual {
		return nil
	}
	byID := map[model.AgentID]int{}
	var out []*agentconfig.Allocation
	for _, a := range cfg.Agents {
		if a.Alloc == nil {
			continue
		}
		if i, ok := byID[a.ID]; ok && a.IDSet {
			out[i] = a.Alloc
			continue
		}
		byID[a.ID] = len(out)
		out = append(out, a.Alloc)
	}
	return out
}

// cpuDoubt names the cores snap's kernels hold, or allocs give, that
// snap's devices (this machine's cores) lack, or a count of cores allocs
// give beyond them.
func cpuDoubt(snap *model.Snapshot, allocs []*agentconfig.Allocation) HostDoubt {
	have := map[model.DeviceID]bool{}
	for _, d := range snap.Devices {
		if d.Slot == model.SlotCPU {
			have[d.ID] = true
		}
	}
	missing := map[model.DeviceID]bool{}
	for _, k := range snap.Kernels() {
		for id := range k.Alloc[model.SlotCPU] {
			if !have[id] {
				missing[id] = true
			}
		}
	}
	d := HostDoubt{Slot: model.SlotCPU, Here: count(len(have), "core")}
	if len(missing) > 0 {
		d.Contradiction = fmt.Sprintf("the kernels hold %s, which this machine (%s) lacks", missingCores(missing), d.Here)
		return d
	}
	var counted model.Dec
	for _, a := range allocs {
		for _, id := range a.CPU {
			if !have[id] {
				missing[id] = true
			}
		}
		if a.HasCPU {
			counted = counted.Add(a.CPUCount)
		}
	}
	switch {
	case len(missing) > 0:
		d.Contradiction = fmt.Sprintf("the config gives its agents %s, which this machine (%s) lacks", missingCores(missing), d.Here)
	case model.NewDec(int64(len(have)), 0).Less(counted):
		d.Contradiction = fmt.Sprintf("the config gives its agents %s cores, more than this machine's %d", counted, len(have))
	}
	return d
}

// missingCores lists core ids in order: "cores 20, 21, 22, 23 and 4 more".
func missingCores(missing map[model.DeviceID]bool) string {
	ids := make([]model.DeviceID, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	return listed(coreWord(len(ids)), coreNames(ids))
}

// memDoubt compares the memory snap's kernels hold, and the memory allocs
// give, with this machine's.
func memDoubt(snap *model.Snapshot, allocs []*agentconfig.Allocation) HostDoubt {
	var here model.Dec
	for _, d := range snap.Devices {
		if d.Slot == model.SlotMem {
			here = here.Add(d.Capacity)
		}
	}
	var held model.Dec
	for _, k := range snap.Kernels() {
		for _, v := range k.Alloc[model.SlotMem] {
			held = held.Add(v)
		}
	}
	d := HostDoubt{Slot: model.SlotMem, Here: partition.HumanBytes(here)}
	var given model.Dec
	for _, a := range allocs {
		if a.HasMem {
			given = given.Add(a.Mem)
		}
	}
	switch {
	case here.Less(held):
		d.Contradiction = fmt.Sprintf("the kernels hold %s of memory, more than this machine's %s", partition.HumanBytes(held), d.Here)
	case here.Less(given):
		d.Contradiction = fmt.Sprintf("the config gives its agents %s of memory, more than this machine's %s", partition.HumanBytes(given), d.Here)
	}
	return d
}

func coreWord(n int) string {
	if n == 1 {
		return "core"
	}
	return "cores"
}

// coreNames sorts core ids by number (non-numeric ids after, by name).
func coreNames(ids []model.DeviceID) []string {
	num := func(id model.DeviceID) (int, bool) {
		n, err := strconv.Atoi(string(id))
		return n, err == nil
	}
	slices.SortFunc(ids, func(a, b model.DeviceID) int {
		na, oka := num(a)
		nb, okb := num(b)
		switch {
		case oka && okb:
			return cmp.Compare(na, nb)
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

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
//
// Only a core id the machine does not have at all proves the tree is
// another node's. What looks like more than this machine has often is
// not: agents of one node may together hold more memory (and, in a
// manual partition Backend.AI loads, more cores) than the host, each
// agent's allocator dividing all of it; and a core this process does not
// see may be only offline or outside its cgroup's or taskset's mask.
// Those are said as evidence beside the capacity used, never refused.

// HostDoubt is one host slot (cpu or mem) a simulation's requests ask for
// while its capacity is this machine's.
type HostDoubt struct {
	Slot model.SlotName
	// Here says what this machine has of it: "2 cores", "7.6 GiB".
	Here string
	// Contradiction names core ids the tree's kernels hold, or its
	// config's manual partition gives, that this machine does not have
	// at all; with one, the answer for Slot is wrong, not only possibly
	// wrong. "" otherwise.
	Contradiction string
	// Evidence is what makes it likely, not certain, that the tree is
	// another node's ("the kernels hold core 7, which this process does
	// not see"); "" when nothing does.
	Evidence string
}

// HostDoubts lists the host slots steps ask for whose capacity in snap is
// this machine's (cpuGiven and memGiven say that a virtual host replaced
// the cores or the memory), cpu first. present is every CPU the machine
// has (inventory.PresentCPUs; nil when unknown: nothing is then a
// contradiction); snap's cpu devices are the cores this process sees. cfg
// (nil: no config) adds its manual partition's core ids. A free step, or
// an amount of 0 or less (which Backend.AI drops), asks for nothing.
func HostDoubts(snap *model.Snapshot, cfg *agentconfig.Config, steps []Step, present []int, cpuGiven, memGiven bool) []HostDoubt {
	asked := map[model.SlotName]bool{}
	for _, s := range steps {
		for _, a := range s.Request {
			if a.Amount.Sign() > 0 {
				asked[a.Slot] = true
			}
		}
	}
	var out []HostDoubt
	if asked[model.SlotCPU] && !cpuGiven {
		out = append(out, cpuDoubt(snap, manualAllocs(cfg), present))
	}
	if asked[model.SlotMem] && !memGiven {
		out = append(out, memDoubt(snap))
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

// cpuDoubt sorts the core ids snap's kernels hold and allocs give that
// this process does not see into those the machine lacks (present; a
// contradiction) and those it may have (evidence). An id that is not a
// number is left to check, which refuses it in a config.
func cpuDoubt(snap *model.Snapshot, allocs []*agentconfig.Allocation, present []int) HostDoubt {
	seen := map[model.DeviceID]bool{}
	for _, d := range snap.Devices {
		if d.Slot == model.SlotCPU {
			seen[d.ID] = true
		}
	}
	d := HostDoubt{Slot: model.SlotCPU, Here: count(len(seen), "core")}
	unseen := func(ids func(yield func(model.DeviceID) bool)) (lacks, hidden map[model.DeviceID]bool) {
		lacks, hidden = map[model.DeviceID]bool{}, map[model.DeviceID]bool{}
		for id := range ids {
			n, err := strconv.Atoi(string(id))
			if seen[id] || err != nil {
				continue
			}
			if present != nil && !slices.Contains(present, n) {
				lacks[id] = true
			} else {
				hidden[id] = true
			}
		}
		return lacks, hidden
	}
	kLacks, kHidden := unseen(func(yield func(model.DeviceID) bool) {
		for _, k := range snap.Kernels() {
			for id := range k.Alloc[model.SlotCPU] {
				if !yield(id) {
					return
				}
			}
		}
	})
	cLacks, cHidden := unseen(func(yield func(model.DeviceID) bool) {
		for _, a := range allocs {
			for _, id := range a.CPU {
				if !yield(id) {
					return
				}
			}
		}
	})
	var says, hints []string
	if len(kLacks) > 0 {
		says = append(says, "the kernels hold "+missingCores(kLacks))
	}
	if len(cLacks) > 0 {
		says = append(says, "the config gives its agents "+missingCores(cLacks))
	}
	if len(says) > 0 {
		d.Contradiction = fmt.Sprintf("%s, which this machine (%d CPUs in all) does not have", joinAnd(says), len(present))
	}
	if len(kHidden) > 0 {
		hints = append(hints, "the kernels hold "+missingCores(kHidden))
	}
	if len(cHidden) > 0 {
		hints = append(hints, "the config gives its agents "+missingCores(cHidden))
	}
	if len(hints) > 0 {
		d.Evidence = joinAnd(hints) + ", offline here or outside this process's CPU mask"
	}
	return d
}

func joinAnd(parts []string) string {
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return parts[0]
}

// missingCores lists core ids in order: "cores 20, 21, 22, 23 and 4 more".
func missingCores(missing map[model.DeviceID]bool) string {
	ids := make([]model.DeviceID, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	return listed(coreWord(len(ids)), coreNames(ids))
}

// memDoubt says what this machine has of memory and, as evidence only, an
// agent whose kernels hold more than that (agents of one node may hold
// more together: each divides all of it).
func memDoubt(snap *model.Snapshot) HostDoubt {
	var here model.Dec
	for _, d := range snap.Devices {
		if d.Slot == model.SlotMem {
			here = here.Add(d.Capacity)
		}
	}
	d := HostDoubt{Slot: model.SlotMem, Here: partition.HumanBytes(here)}
	held := map[model.AgentID]model.Dec{}
	for _, k := range snap.Kernels() {
		for _, v := range k.Alloc[model.SlotMem] {
			held[k.Agent] = held[k.Agent].Add(v)
		}
	}
	var most model.Dec
	var who model.AgentID
	for _, a := range slices.SortedFunc(func(yield func(model.AgentID) bool) {
		for a := range held {
			if !yield(a) {
				return
			}
		}
	}, func(a, b model.AgentID) int { return cmp.Compare(a, b) }) {
		if most.Less(held[a]) {
			most, who = held[a], a
		}
	}
	if here.Less(most) {
		if who == "" {
			d.Evidence = fmt.Sprintf("the kernels hold %s", partition.HumanBytes(most))
		} else {
			d.Evidence = fmt.Sprintf("the kernels of %s hold %s", who, partition.HumanBytes(most))
		}
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

package partition

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// Drift compares live allocations with the partition and returns what does
// not match, each issue naming the device and the agent:
//
//   - IssueDriftNotOwner: a kernel holds something on a device its agent's
//     (exclusive) partition does not include;
//   - IssueDriftUnowned: in manual mode, a device no agent owns (warning for
//     accelerators, info for CPU cores);
//   - IssueDriftMemBeyond: the mem assigned to the agents adds up to more
//     than the host has (MemBeyondHost: a judgement of the file, which
//     check lists as a note and plan as a warning);
//   - IssueOverCapacity: in the slot-based format, an agent's kernels hold
//     more of a slot than the capacity its partition reports.
//
// Per-device over-capacity (all agents together) is the engine's own check.
// Drift is pure: it reads p and s and changes neither.
func Drift(p *Partition, s *model.Snapshot) []model.Issue {
	var out []model.Issue
	if p == nil || s == nil {
		return nil
	}
	if p.Exclusive {
		out = append(out, notOwner(p, s)...)
	}
	if p.Exclusive && p.Effective == agentconfig.ModeManual {
		// Cores no agent lists are one note, not one per core: a config
		// written for a smaller share of a 128-core node would otherwise
		// bury every other line.
		var cores []model.DeviceID
		var firstCore model.DeviceKey
		for _, k := range p.Unowned {
			if k.Name == "cpu" {
				if len(cores) == 0 {
					firstCore = k
				}
				cores = append(cores, k.ID)
				continue
			}
			out = append(out, model.Issue{Severity: model.SevWarning, Code: model.IssueDriftUnowned, Device: k,
				Message: fmt.Sprintf("%s is owned by no agent (manual mode): no agent can allocate it", Key(k))})
		}
		switch len(cores) {
		case 0:
		case 1:
			out = append(out, model.Issue{Severity: model.SevInfo, Code: model.IssueDriftUnowned, Device: firstCore,
				Message: fmt.Sprintf("%s is owned by no agent (manual mode): no agent's kernels run on it", Key(firstCore))})
		default:
			out = append(out, model.Issue{Severity: model.SevInfo, Code: model.IssueDriftUnowned, Device: firstCore,
				Message: fmt.Sprintf("cpu %s (%d cores) are owned by no agent (manual mode): no agent's kernels run on them", IDRanges(cores), len(cores))})
		}
	}
	if iss := MemBeyondHost(p); iss != nil {
		out = append(out, *iss)
	}
	if iss := CPUBeyondHost(p); iss != nil {
		out = append(out, *iss)
	}
	if !p.Exclusive && p.Format == agentconfig.FormatSlotBased && p.Mode != agentconfig.ModeShared {
		out = append(out, agentOverCapacity(p, s)...)
	}
	slices.SortStableFunc(out, func(a, b model.Issue) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		if c := cmp.Compare(Key(a.Device), Key(b.Device)); c != 0 {
			return c
		}
		return cmp.Compare(a.Kernel, b.Kernel)
	})
	return out
}

// heldOn is what one kernel holds on one device, slot by slot.
type heldOn struct {
	slots   []model.SlotName
	amounts []model.Dec
}

// kernelHoldings returns, per device, what the kernel holds there (amounts
// > 0 only), devices sorted.
func kernelHoldings(k *model.Kernel) ([]model.DeviceKey, map[model.DeviceKey]*heldOn) {
	m := map[model.DeviceKey]*heldOn{}
	var keys []model.DeviceKey
	slots := make([]model.SlotName, 0, len(k.Alloc))
	for s := range k.Alloc {
		slots = append(slots, s)
	}
	slices.Sort(slots)
	for _, s := range slots {
		for id, v := range k.Alloc[s] {
			if v.Sign() <= 0 {
				continue
			}
			key := model.DeviceKey{Name: s.DeviceName(), ID: id}
			h := m[key]
			if h == nil {
				h = &heldOn{}
				m[key] = h
				keys = append(keys, key)
			}
			h.slots = append(h.slots, s)
			h.amounts = append(h.amounts, v)
		}
	}
	slices.SortFunc(keys, func(a, b model.DeviceKey) int { return cmp.Compare(Key(a), Key(b)) })
	return keys, m
}

func (h *heldOn) String() string {
	parts := make([]string, len(h.slots))
	for i := range h.slots {
		parts[i] = amount(h.slots[i], h.amounts[i]) + " " + string(h.slots[i])
	}
	return strings.Join(parts, " + ")
}

func amount(s model.SlotName, d model.Dec) string {
	if s == model.SlotMem || model.DefaultSlotTypes().TypeOf(s) == model.SlotTypeBytes {
		return model.FormatBinarySize(d)
	}
	return d.String()
}

func notOwner(p *Partition, s *model.Snapshot) []model.Issue {
	var out []model.Issue
	for _, k := range s.Kernels() {
		if ap := p.Agent(k.Agent); ap != nil {
			out = append(out, NotOwner(k, ap.OwnsDevice, p.Owners)...)
		}
	}
	return out
}

// NotOwner is the one place of the rule "a kernel holds a device its agent
// does not own": an error issue for each device kernel k holds an amount
// > 0 on that owns says its agent does not own (memory is split by amount,
// so it never counts); owners names who does own it. The engine checks it
// live, kernel by kernel; Drift checks a whole snapshot against a
// partition.
func NotOwner(k *model.Kernel, owns func(model.DeviceKey) bool, owners func(model.DeviceKey) []model.AgentID) []model.Issue {
	if k.Alloc == nil {
		return nil
	}
	var out []model.Issue
	keys, held := kernelHoldings(k)
	for _, key := range keys {
		if key.Name == "mem" || owns(key) {
			continue
		}
		owner := "no agent owns it"
		if o := owners(key); len(o) > 0 {
			owner = "it belongs to " + joinAgents(o)
		}
		out = append(out, model.Issue{Severity: model.SevError, Code: model.IssueDriftNotOwner,
			Device: key, Kernel: k.ID, Agent: k.Agent, File: k.Path,
			Message: fmt.Sprintf("kernel %s of agent %s holds %s on %s, which agent %s does not own (%s)",
				k.ID, k.Agent, held[key], Key(key), k.Agent, owner)})
	}
	return out
}

// heldByAgent sums, per agent and slot, what the snapshot's kernels hold:
// what each agent's allocator counts against its capacity.
func heldByAgent(s *model.Snapshot) map[model.AgentID]model.ResourceSlot {
	held := map[model.AgentID]model.ResourceSlot{}
	if s == nil {
		return held
	}
	for _, k := range s.Kernels() {
		if k.Alloc == nil {
			continue
		}
		h := held[k.Agent]
		if h == nil {
			h = model.ResourceSlot{}
			held[k.Agent] = h
		}
		for slot, m := range k.Alloc {
			for _, v := range m {
				h[slot] = h[slot].Add(v)
			}
		}
	}
	return held
}

// unattributed are the live kernels whose agent cannot be told, with
// the agents each may belong to.
type unattributed []unattributedKernel

type unattributedKernel struct {
	id   model.KernelID
	held model.ResourceSlot
	// of are the agents whose scratch root holds the kernel; nil: any
	// agent (none of the agents' roots is known to hold it).
	of []model.AgentID
}

// unattributedHeld finds the kernels of s that hold something and whose
// agent the engine could not tell (model.AgentByNone): a scratch root
// several agents share and no usable recovery.json, or a recovery.json
// naming an agent the file does not list.
func unattributedHeld(s *model.Snapshot) unattributed {
	if s == nil {
		return nil
	}
	var out unattributed
	for _, k := range s.Kernels() {
		if k.Agent != "" || k.Alloc == nil {
			continue
		}
		u := unattributedKernel{id: k.ID, held: model.ResourceSlot{}}
		for slot, m := range k.Alloc {
			for _, v := range m {
				u.held[slot] = u.held[slot].Add(v)
			}
		}
		for _, a := range s.Agents {
			if a.ScratchRoot != "" && k.Path != "" && scratch.Within(filepath.Clean(a.ScratchRoot), filepath.Clean(k.Path)) {
				u.of = append(u.of, a.ID)
			}
		}
		if r := k.Record; u.of != nil && r != nil && r.AgentID != "" && !slices.Contains(u.of, r.AgentID) {
			// Its recovery.json names an agent whose root is elsewhere:
			// the agent_id is what Backend.AI goes by.
			u.of = append(u.of, r.AgentID)
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b unattributedKernel) int { return strings.Compare(string(a.id), string(b.id)) })
	return out
}

// slots are the slots the kernels that may be agent a's hold.
func (u unattributed) slots(a model.AgentID) []model.SlotName {
	var out []model.SlotName
	for _, k := range u {
		if k.of != nil && !slices.Contains(k.of, a) {
			continue
		}
		for slot := range k.held {
			if !slices.Contains(out, slot) {
				out = append(out, slot)
			}
		}
	}
	slices.Sort(out)
	return out
}

// of is how much of slot the kernels that may be agent a's hold, and the
// ids of those that hold some.
func (u unattributed) of(a model.AgentID, slot model.SlotName) (model.Dec, []model.KernelID) {
	sum := model.Zero
	var ids []model.KernelID
	for _, k := range u {
		v, ok := k.held[slot]
		if !ok || v.Sign() <= 0 || (k.of != nil && !slices.Contains(k.of, a)) {
			continue
		}
		ids = append(ids, k.id)
		sum = sum.Add(v)
	}
	return sum, ids
}

// agentOverCapacity: per agent and slot, what its kernels hold against the
// capacity its slot-based partition reports.
func agentOverCapacity(p *Partition, s *model.Snapshot) []model.Issue {
	held := heldByAgent(s)
	var out []model.Issue
	for _, a := range p.Agents {
		h := held[a.ID]
		for _, slot := range h.Names() {
			capa, ok := a.Capacity[slot]
			if !ok || !capa.Less(h[slot]) {
				continue
			}
			out = append(out, model.Issue{Severity: model.SevWarning, Code: model.IssueOverCapacity, Agent: a.ID,
				Device: model.DeviceKey{Name: slot.DeviceName()},
				Message: fmt.Sprintf("agent %s's kernels hold %s %s, more than the %s its partition reports (slot-based %s)",
					a.ID, amount(slot, h[slot]), slot, amount(slot, capa), p.Mode)})
		}
	}
	return out
}

// didYouMean is " (did you mean X?)" for the agent id that id most
// likely misspells (model.Closest, as a slot's typo is told), "" when
// none is close: a list of long ids alike (i-gpu-node01-numa0, -numa1)
// hides the one letter that differs.
func didYouMean(id model.AgentID, ids []model.AgentID) string {
	s := make([]string, len(ids))
	for i, a := range ids {
		s[i] = string(a)
	}
	return model.DidYouMean(string(id), s)
}

func joinAgents(ids []model.AgentID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// CPUBeyondHost is MemBeyondHost's warning for CPU cores, in the
// slot-based form, where each agent's cpu is an amount it reports to the
// manager, not cores it owns: amounts that add up to more cores than the
// host has let the manager send the agents more work than it can run
// (main loads such a file: each amount is checked alone). nil when they
// fit, in the device-based form, or with the cores not known.
func CPUBeyondHost(p *Partition) *model.Issue {
	if p == nil || p.Mode != agentconfig.ModeManual || p.Format != agentconfig.FormatSlotBased {
		return nil
	}
	cores, ok := p.Totals[model.SlotCPU]
	if !ok || cores.IsZero() {
		return nil
	}
	sum := model.Zero
	var parts []string
	for _, a := range p.Agents {
		c := a.Capacity[model.SlotCPU]
		sum = sum.Add(c)
		parts = append(parts, fmt.Sprintf("%s %s", a.ID, c))
	}
	if !cores.Less(sum) {
		return nil
	}
	return &model.Issue{Severity: model.SevWarning, Code: model.IssueDriftCPUBeyond,
		Device: model.DeviceKey{Name: "cpu"},
		Message: fmt.Sprintf("cpu given to the agents (%s; %s in all) is more than the host's %s cores: the manager may send them more work than the cores can run",
			strings.Join(parts, ", "), sum, cores)}
}

// MemBeyondHost is the warning that a manual partition gives its agents
// more memory, together, than the host has; nil when it does not (or the
// host's memory is not known). Backend.AI loads such a file when each
// agent's share of what is available fits (backendai.md §5.1), but each
// agent reports up to its amount to the manager, which may then send the
// agents together more memory than the host has. It says so; it is not a
// difference between the file and the node.
func MemBeyondHost(p *Partition) *model.Issue {
	if p == nil || p.Mode != agentconfig.ModeManual || p.MemTotal.IsZero() {
		return nil
	}
	sum := model.Zero
	var parts []string
	for _, a := range p.Agents {
		sum = sum.Add(a.Mem)
		parts = append(parts, fmt.Sprintf("%s %s", a.ID, model.FormatBinarySize(a.Mem)))
	}
	if !p.MemTotal.Less(sum) {
		return nil
	}
	return &model.Issue{Severity: model.SevWarning, Code: model.IssueDriftMemBeyond,
		Device: model.DeviceKey{Name: "mem", ID: "root"},
		Message: fmt.Sprintf("mem assigned to the agents (%s; %s in all) is more than the host's %s on mem:root: the manager may send them more memory than the host has",
			strings.Join(parts, ", "), model.FormatBinarySize(sum), model.FormatBinarySize(p.MemTotal))}
}

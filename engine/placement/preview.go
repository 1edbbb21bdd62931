package placement

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// Planner answers placement previews on one snapshot of a live node. Build
// it once per snapshot (the cost grows with the number of kernels), then
// call Preview for each request (the cost grows with the number of devices
// only). A Planner is not safe for concurrent use.
type Planner struct {
	settings Settings
	agents   []*AgentState
	// phys is what every agent's kernels hold, device by device.
	phys *Physical
}

// AgentState is one agent's side of the node as its allocator sees it.
type AgentState struct {
	Agent model.Agent
	// Node holds the alloc maps of the agent's partition with its kernels'
	// live allocations loaded.
	Node *Node
	// Kernels is the number of kernels whose allocations were loaded.
	Kernels int
	// Skipped are live allocations that could not be loaded: a kernel
	// holding a device outside the agent's partition (drift), a device the
	// inventory does not list, or an amount under another slot.
	Skipped []KernelSkip
	// Live is what was loaded (the kernels' sum, as one allocation), for
	// Node.AllocMap and RunOptions.Live.
	Live []alloc.KernelAllocation
}

// KernelSkip is a Skip with the kernel it belongs to.
type KernelSkip struct {
	Kernel model.KernelID
	Skip
}

// NewPlanner builds one Node per agent of the snapshot: the devices its
// partition owns (Agent.OwnsDevice; a nil Owns means every device; the mem
// device's capacity becomes the agent's Mem share when it has one), loaded
// with the allocations of its own kernels (those in state ok or stale,
// which keep their last good allocation). Like Backend.AI, an agent's maps
// know nothing of other agents' kernels, even on a device they share. A
// snapshot without agents is treated as one agent ("") with every device
// and every kernel.
func NewPlanner(s *model.Snapshot, settings Settings) *Planner {
	p := &Planner{settings: settings, phys: PhysicalOf(s)}
	agents := s.Agents
	if len(agents) == 0 {
		agents = []model.Agent{{}}
	}
	all := len(s.Agents) == 0
	for _, a := range agents {
		p.agents = append(p.agents, buildAgent(s, a, settings, all))
	}
	return p
}

// ForAgent builds the state of one agent of a snapshot, as NewPlanner does;
// a nil agent means the whole node (every device, every kernel).
func ForAgent(s *model.Snapshot, agent *model.Agent, settings Settings) *AgentState {
	if agent == nil {
		return buildAgent(s, model.Agent{}, settings, true)
	}
	return buildAgent(s, *agent, settings, false)
}

func buildAgent(s *model.Snapshot, a model.Agent, settings Settings, everything bool) *AgentState {
	devs := make([]model.Device, 0, len(s.Devices))
	var plugins []model.DeviceName
	owns := Owner(&a)
	for _, d := range s.Devices {
		if !slices.Contains(plugins, d.Name) {
			plugins = append(plugins, d.Name)
		}
		if !everything && !owns(d.Key()) {
			continue
		}
		if d.Name == "mem" && !everything && a.Mem.Sign() > 0 && a.Given == nil {
			// A SlotPartition (the BEP-1044 draft) replaces the capacity;
			// in main's slot-based form the agent's map keeps the host's
			// memory and only the amount it reports is split.
			d.Capacity = a.Mem
		}
		d.Telemetry = nil
		devs = append(devs, d)
	}
	// The map class is the plugin's, whatever the partition gives the
	// agent: an agent without any of a fractional plugin's devices still
	// has an (empty) FractionAllocMap.
	frac := make(map[model.DeviceName]bool, len(plugins))
	for n, f := range settings.PluginFractional {
		frac[n] = f
	}
	for _, d := range s.Devices {
		if _, set := settings.PluginFractional[d.Name]; !set && d.Slot.MajorType() == "shares" {
			frac[d.Name] = true
		}
	}
	settings.PluginFractional = frac
	st := &AgentState{Agent: a, Node: newNode(devs, plugins, settings)}
	var ids []model.KernelID
	var as []model.Allocations
	for _, k := range s.Kernels() {
		if (!everything && k.Agent != a.ID) || k.Alloc == nil {
			continue
		}
		ids = append(ids, k.ID)
		as = append(as, k.Alloc)
	}
	loaded, skipped := st.Node.LoadAll(as)
	st.Kernels = len(as)
	if len(loaded) > 0 {
		st.Live = []alloc.KernelAllocation{loaded}
	}
	for i, sks := range skipped {
		for _, sk := range sks {
			st.Skipped = append(st.Skipped, KernelSkip{ids[i], sk})
		}
	}
	return st
}

// Agents returns the per-agent states, in the snapshot's agent order.
func (p *Planner) Agents() []*AgentState { return p.agents }

// Preview is where one request would land on each agent.
type Preview struct {
	Request alloc.Request
	Agents  []AgentPreview
}

// Placeable returns the agents that could take the request.
func (p *Preview) Placeable() []model.AgentID {
	var out []model.AgentID
	for _, a := range p.Agents {
		if a.OK() {
			out = append(out, a.Agent)
		}
	}
	return out
}

// AgentPreview is the outcome of a request on one agent.
type AgentPreview struct {
	Agent model.AgentID
	// Alloc is where the request would land (nil when it cannot).
	Alloc alloc.KernelAllocation
	// ErrKind is the Python exception class name Backend.AI would raise
	// (InsufficientResource, FractionalResourceFragmented,
	// NotMultipleOfQuantum, ...), "" on success.
	ErrKind string
	// Err is the allocator's error; Reason says it in an operator's words.
	Err    error
	Reason string
	// Free is, per slot the request names, the agent's free capacity
	// (capacity − allocation, over the devices of that slot that have any).
	Free []SlotAmount
	// Stranded is, per fractional slot the request names, the free shares
	// no request of this size can use (see Stranded).
	Stranded []StrandedSlot
	// Devices is, for a request the agent takes, what each device it
	// touches would hold across every agent (the agent's allocator does not
	// see the others' kernels); Overcommit says one would be over its
	// capacity.
	Devices    []DeviceAfter
	Overcommit bool
}

// OK reports whether the agent could take the request.
func (a *AgentPreview) OK() bool { return a.Err == nil }

// SlotAmount is an amount of one slot.
type SlotAmount struct {
	Slot   model.SlotName
	Amount model.Dec
}

// Preview places req on every agent, each on a copy of its own maps.
func (p *Planner) Preview(req alloc.Request) *Preview {
	out := &Preview{Request: req, Agents: make([]AgentPreview, len(p.agents))}
	for i, st := range p.agents {
		// One agent sees every kernel of the node: what it sees free is
		// what is free, and capping it only costs time.
		phys := p.phys
		if len(p.agents) < 2 {
			phys = nil
		}
		ap := st.preview(req, phys)
		// The manager decides before the agent's allocator ever runs.
		st.managerRefuses(req, &ap, phys)
		if ap.OK() {
			ap.Devices, ap.Overcommit = p.phys.After(FlattenAllocation(ap.Alloc))
		}
		out.Agents[i] = ap
	}
	return out
}

// managerRefuses turns a placement the agent's allocator would make into
// a refusal where Backend.AI's manager would never send the request to
// that agent: in main's slot-based form an agent reports the amounts its
// partition gives it, less what its kernels hold, and the manager
// schedules only within them (its allocator, over every device, would
// otherwise take more than the agent is given). phys (nil for a single
// agent) is the node: where what the agent reports is more than is
// physically free, because another agent's kernels still hold what moved
// to it, the reason says so, or the agents' free amounts would add up past
// the node's.
func (st *AgentState) managerRefuses(req alloc.Request, ap *AgentPreview, phys *Physical) {
	given := st.Agent.Given
	if given == nil {
		return
	}
	for _, e := range req {
		g, ok := given[e.Slot]
		if !ok || e.Amount.Sign() <= 0 {
			continue
		}
		left := model.Max(g.Sub(st.Agent.Held[e.Slot]), model.Zero)
		if !left.Less(e.Amount) {
			continue
		}
		ap.Alloc, ap.Stranded = nil, nil
		ap.ErrKind = alloc.KindInsufficientResource
		ap.Err = fmt.Errorf("agent %s reports %s of %s free to the manager", st.Agent.ID, left, e.Slot)
		ap.Reason = managerWords(e.Slot, left, g, st.Agent.Held[e.Slot], e.Amount)
		if phys != nil {
			if pf := phys.FreeOf(e.Slot, Owner(&st.Agent)); pf.Less(left) {
				ap.Reason = managerWordsPhysical(e.Slot, left, g, st.Agent.Held[e.Slot], pf, e.Amount)
			}
		}
		for j := range ap.Free {
			if ap.Free[j].Slot == e.Slot && left.Less(ap.Free[j].Amount) {
				ap.Free[j].Amount = left
			}
		}
		return
	}
}

// Physical is what every agent's kernels hold on the node the planner
// was built from.
func (p *Planner) Physical() *Physical { return p.phys }

// Preview places req on a copy of the agent's maps.
func (st *AgentState) Preview(req alloc.Request) AgentPreview { return st.preview(req, nil) }

// preview is Preview with what the agent sees free capped at what is
// physically free on its devices (phys, nil for no cap): its allocator
// does not count the other agents' kernels, and the agents' free amounts
// must never add up to more than the node has.
func (st *AgentState) preview(req alloc.Request, phys *Physical) AgentPreview {
	ap := AgentPreview{Agent: st.Agent.ID}
	var owns func(model.DeviceKey) bool
	if st.Agent.Owns != nil {
		owns = Owner(&st.Agent)
	}
	capFree := func(slot model.SlotName, v model.Dec) model.Dec {
		if phys == nil {
			return v
		}
		if pf := phys.FreeOf(slot, owns); pf.Less(v) {
			return pf
		}
		return v
	}
	var seen []model.SlotName
	for _, e := range req {
		if slices.Contains(seen, e.Slot) {
			continue
		}
		seen = append(seen, e.Slot)
		if e.Amount.Sign() <= 0 {
			continue
		}
		if sl, ok := st.Node.Stranded(e.Slot, e.Amount); ok {
			ap.Free = append(ap.Free, SlotAmount{e.Slot, capFree(e.Slot, sl.Free)})
			ap.Stranded = append(ap.Stranded, sl)
		} else {
			ap.Free = append(ap.Free, SlotAmount{e.Slot, capFree(e.Slot, st.Node.FreeOf(e.Slot))})
		}
	}
	got, err := st.Node.Try(req)
	if err != nil {
		ap.Err = err
		ap.ErrKind = errKind(err)
		ap.Reason = st.reason(req, err, ap.ErrKind, ap.Free)
	} else {
		ap.Alloc = got
	}
	return ap
}

// reason words a failure for an operator.
func (st *AgentState) reason(req alloc.Request, err error, kind string, free []SlotAmount) string {
	for _, e := range req {
		if p := st.Node.Plugin(e.Slot.DeviceName()); p != nil && len(p.Devices) == 0 && e.Amount.Sign() > 0 {
			return fmt.Sprintf("owns no %s devices", e.Slot.DeviceName())
		}
	}
	switch kind {
	case alloc.KindInsufficientResource:
		for _, e := range req {
			if e.Amount.Sign() <= 0 {
				continue
			}
			for _, f := range free {
				if f.Slot == e.Slot && f.Amount.Less(e.Amount) {
					return fmt.Sprintf("insufficient %s: %s free, %s requested", e.Slot, amountWords(e.Slot, f.Amount), amountWords(e.Slot, e.Amount))
				}
			}
		}
		return "insufficient resources"
	case alloc.KindFractionalResourceFragmented:
		return fragmentedReason(req, err, free)
	case alloc.KindNotMultipleOfQuantum:
		return fmt.Sprintf("below the quantum (%s): the request rounds down to nothing", st.Node.settings.quantum())
	case alloc.KindInvalidResourceCombination:
		return "asks for two exclusive slots at once"
	case alloc.KindInvalidResourceArgument:
		return "a unique slot (MIG slice) must be asked for exactly 1"
	case alloc.KindKeyError:
		return "the node has no such device plugin"
	case alloc.KindValueError:
		return "a requested device plugin is missing from allocation-order"
	case alloc.KindIndexError:
		return "the request rounds to 0.00 and no device has 0.01 free: Backend.AI's allocator crashes (IndexError)"
	}
	return kind
}

// fragmentedReason words a FractionalResourceFragmented refusal: the
// no-fragmentation check runs before the allocator counts what is free, so
// it also refuses a request more than the free capacity.
func fragmentedReason(req alloc.Request, err error, free []SlotAmount) string {
	var ae *alloc.Error
	if errors.As(err, &ae) {
		for _, e := range req {
			if e.Slot != ae.Slot {
				continue
			}
			for _, f := range free {
				if f.Slot != e.Slot {
					continue
				}
				if f.Amount.Less(e.Amount) {
					return fmt.Sprintf("fragmented: %s free, less than the %s %s requested; with fragmentation disallowed, Backend.AI refuses it as fragmented before it counts what is free",
						amountWords(e.Slot, f.Amount), amountWords(e.Slot, e.Amount), e.Slot)
				}
				return fmt.Sprintf("fragmented: %s free, enough for the %s %s requested in total, but not on few enough devices to place it without fragmentation",
					amountWords(e.Slot, f.Amount), amountWords(e.Slot, e.Amount), e.Slot)
			}
		}
	}
	return "fragmented: not on few enough devices to place it without fragmentation"
}

// FreeOf returns the free capacity of a slot: the sum over its devices of
// capacity − allocation, counting only devices with something free.
func (n *Node) FreeOf(slot model.SlotName) model.Dec {
	p := n.Plugin(slot.DeviceName())
	if p == nil {
		return model.Zero
	}
	return p.m.SlotFreeTotal(slot)
}

// capacity returns a device's capacity in its plugin's map.
func (n *Node) capacity(p *Plugin, id model.DeviceID) model.Dec {
	return p.capOf[id]
}

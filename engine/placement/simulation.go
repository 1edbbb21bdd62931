package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// Simulation is a node prepared for a simulation (cmd/fgtop simulate
// builds it from its flags) and what a result is judged against.
type Simulation struct {
	// Node is where the requests run; Live are the kernels' allocations
	// loaded into it (a live node's).
	Node *Node
	Live []alloc.KernelAllocation
	// Types says which slots count bytes (printed as binary sizes).
	Types model.SlotTypes
	// Source names where the devices came from; Kernels counts the live
	// kernels loaded.
	Source  string
	Kernels int
	// Slots are the slots the node registers (every device, whatever
	// --agent's partition): a request naming another is a typo.
	Slots []model.SlotName
	// Phys is, on a live node, what every agent's kernels hold device by
	// device: a placement is judged against it (device_total_after,
	// overcommit), since an agent's allocator does not see the others'.
	Phys *Physical
	// Planner, on a live node of several agents simulated without
	// --agent, places each request on every agent's own allocator.
	Planner *Planner
	// Manager, with --agent on a slot-based partition, is what the
	// manager would send that agent (Run refuses more).
	Manager *ManagerLimit
	// Labels name the accelerators as the console does (GPU3, MIG 4/0):
	// the table leads with them, the full id in its last column.
	Labels map[model.DeviceID]string
}

// name is how the table names a device: its label, else its id.
func (sim *Simulation) name(id model.DeviceID) string {
	if l, ok := sim.Labels[id]; ok {
		return l
	}
	return string(id)
}

// SetDevices sets the simulation up on an empty node of devs.
func (sim *Simulation) SetDevices(devs []model.Device, settings Settings) {
	sim.Node = NewNode(devs, settings)
	sim.Slots = DeviceSlots(devs)
	sim.Labels = names.LabelsByID(devs)
}

// SetLive sets the simulation up on a live node's snapshot s: agent's
// allocator (nil: the whole node's) with its kernels' allocations loaded,
// what every agent's kernels hold to judge placements against, and, with
// several agents and none chosen, a planner that previews each request on
// every agent's own allocator. It returns the kernels it could not load.
func (sim *Simulation) SetLive(s *model.Snapshot, agent *model.Agent, settings Settings) []KernelSkip {
	st := ForAgent(s, agent, settings)
	sim.Node, sim.Live, sim.Kernels = st.Node, st.Live, st.Kernels
	sim.Slots = DeviceSlots(s.Devices)
	sim.Labels = names.LabelsByID(s.Devices)
	sim.Phys = PhysicalOf(s)
	sim.Manager = ManagerLimitOf(agent)
	if agent == nil && len(s.Agents) > 1 {
		sim.Planner = NewPlanner(s, settings)
	}
	return st.Skipped
}

// stepAfter is what a simulated allocation would leave on the devices it
// touches across every agent, and where each agent would put it.
type stepAfter struct {
	devices    []DeviceAfter
	overcommit bool
	agents     []AgentPreview
}

// onlyByOvercommit reports whether some agent would take a request and
// every one that would puts a device over its capacity: Backend.AI can
// place it only by overcommitting, whatever the whole node's allocator
// (which no agent runs) says.
func onlyByOvercommit(as []AgentPreview) bool {
	taken := false
	for i := range as {
		if as[i].OK() {
			if !as[i].Overcommit {
				return false
			}
			taken = true
		}
	}
	return taken
}

// anyTakes reports whether some agent would take a request.
func anyTakes(as []AgentPreview) bool {
	for i := range as {
		if as[i].OK() {
			return true
		}
	}
	return false
}

// Placed says, per step, whether Backend.AI would place it: on a live
// node of several agents simulated without --agent, whether one of the
// agents' own allocators takes it (the whole node's one allocator, which
// no agent runs, may place what none takes, or find no room where one
// takes it by overcommitting); elsewhere whether the run placed it. A free
// is placed when it released something.
func (sim *Simulation) Placed(res *Result) []bool {
	afters := sim.afters(res)
	out := make([]bool, len(res.Steps))
	placedBefore := false
	for i, r := range res.Steps {
		out[i] = r.OK()
		if afters != nil && afters[i].agents != nil {
			// The agents' previews see the live kernels only, not the
			// steps above; once a step is placed, a later one counts only
			// where the node as a whole also has room for it.
			out[i] = anyTakes(afters[i].agents) && (r.OK() || !placedBefore)
		}
		if out[i] && !r.Step.IsFree() {
			placedBefore = true
		}
	}
	return out
}

// afters judges every successful allocation step against what every
// agent's kernels hold (plus the steps before it); nil off a live node.
func (sim *Simulation) afters(res *Result) []stepAfter {
	if sim.Phys == nil {
		return nil
	}
	ph := sim.Phys.Clone()
	out := make([]stepAfter, len(res.Steps))
	for i, r := range res.Steps {
		if sim.Planner != nil && !r.Step.IsFree() && len(r.Step.Request) > 0 {
			out[i].agents = sim.Planner.Preview(r.Step.Request).Agents
		}
		if !r.OK() {
			continue
		}
		if r.Step.IsFree() {
			ph.Add(FlattenAllocation(r.Released), -1)
			continue
		}
		flat := FlattenAllocation(r.Alloc)
		out[i].devices, out[i].overcommit = ph.After(flat)
		ph.Add(flat, 1)
	}
	return out
}

// CountRequests counts the allocation steps (not free=N) of a run.
func CountRequests(steps []StepResult) int {
	n := 0
	for _, r := range steps {
		if !r.Step.IsFree() {
			n++
		}
	}
	return n
}

// The names of simulate --json's documents, as fgtop.snapshot/v1 and
// fgtop.plan/v1 name theirs: a script that reads several of fgtop's
// documents tells them apart by their "schema", always the first member.
const (
	// SimulateSchema: one simulation (Document).
	SimulateSchema = "fgtop.simulate/v1"
	// SimulateCasesSchema: several corpus cases' simulations (RunsDocument).
	SimulateCasesSchema = "fgtop.simulate-cases/v1"
	// SimulateCheckSchema: the corpus check (--case --check, CasesCheck).
	SimulateCheckSchema = "fgtop.simulate-check/v1"
)

// Document is the JSON form of a simulation's result (simulate --json),
// its members in a fixed order, SimulateSchema first.
func (sim *Simulation) Document(res *Result, caseID string) json.Marshaler {
	s := sim.Node.Settings()
	var maps jsonObj
	for _, p := range sim.Node.Plugins() {
		class := "DiscretePropertyAllocMap"
		if p.Fractional {
			class = "FractionAllocMap"
		}
		maps = append(maps, jsonKV{string(p.Name), jsonObj{{"map", class}, {"strategy", p.Strategy.String()}, {"devices", len(p.Devices)}}})
	}
	order := s.Order
	if order == nil {
		order = DefaultOrder
	}
	quantum := s.Quantum
	if quantum.IsZero() {
		quantum = DefaultQuantum
	}
	settings := jsonObj{
		{"source", sim.Source},
		{"affinity_policy", s.Policy.String()},
		{"quantum", quantum.String()},
		{"allow_fragmentation", !s.ForbidFragmentation},
		{"allocation_order", order},
		{"maps", maps},
	}
	if sim.Kernels > 0 {
		settings = append(settings, jsonKV{"live_kernels", sim.Kernels})
	}
	placements := make([]jsonObj, 0, len(res.Steps))
	afters := sim.afters(res)
	for i, r := range res.Steps {
		p := jsonObj{{"step", r.Index}, {"request", r.Step.Text}, {"kernel", r.Kernel}}
		if r.Step.IsFree() {
			p = append(p, jsonKV{"free", r.Step.Free})
		}
		switch {
		case !r.OK():
			p = append(p, jsonKV{"error", r.ErrKind}, jsonKV{"message", ErrMessage(r.Err)})
			if afters != nil && onlyByOvercommit(afters[i].agents) {
				p = append(p, jsonKV{"overcommit", true})
			}
		case r.Step.IsFree():
			p = append(p, jsonKV{"released", amountsJSON(FlattenAllocation(r.Released))})
		default:
			p = append(p, jsonKV{"allocations", amountsJSON(FlattenAllocation(r.Alloc))})
			if afters != nil {
				over := afters[i].overcommit || onlyByOvercommit(afters[i].agents)
				p = append(p, jsonKV{"overcommit", over}, jsonKV{"devices_after", devicesAfterJSON(afters[i].devices)})
			}
		}
		if afters != nil && afters[i].agents != nil {
			p = append(p, jsonKV{"an_agent_takes", anyTakes(afters[i].agents)}, jsonKV{"agents", agentsJSON(afters[i].agents)})
		}
		if r.StateAfter != nil {
			p = append(p, jsonKV{"state_after", amountsJSON(r.StateAfter)})
		}
		placements = append(placements, p)
	}
	am := jsonObj{}
	for _, sh := range res.AllocMap {
		am = append(am, jsonKV{string(sh.Device), sh.Amount.String()})
	}
	doc := jsonObj{{"schema", SimulateSchema}}
	if caseID != "" {
		doc = append(doc, jsonKV{"case", caseID})
	}
	return append(doc,
		jsonKV{"settings", settings},
		jsonKV{"placements", placements},
		jsonKV{"alloc_map", am},
		jsonKV{"state", amountsJSON(res.State)},
	)
}

// devicesAfterJSON lists what each touched device would hold across
// every agent.
func devicesAfterJSON(ds []DeviceAfter) []jsonObj {
	out := make([]jsonObj, 0, len(ds))
	for _, d := range ds {
		out = append(out, jsonObj{{"slot", string(d.Slot)}, {"device", string(d.Device)}, {"adds", d.Adds.String()},
			{"held_now", d.HeldNow.String()}, {"device_total_after", d.TotalAfter.String()}, {"capacity", d.Capacity.String()},
			{"overcommit", d.Overcommit}})
	}
	return out
}

// agentsJSON is where each agent's own allocator would put a request on
// the live state (its own kernels only, as on the node).
func agentsJSON(as []AgentPreview) []jsonObj {
	out := make([]jsonObj, 0, len(as))
	for _, a := range as {
		o := jsonObj{{"agent", string(a.Agent)}, {"fits", a.OK()}}
		if a.OK() {
			o = append(o, jsonKV{"allocations", amountsJSON(FlattenAllocation(a.Alloc))},
				jsonKV{"overcommit", a.Overcommit}, jsonKV{"devices_after", devicesAfterJSON(a.Devices)})
		} else {
			o = append(o, jsonKV{"error", a.ErrKind}, jsonKV{"reason", a.Reason})
		}
		out = append(out, o)
	}
	return out
}

// amountsJSON is {slot: {device: "amount"}} in the allocation's order.
func amountsJSON(a alloc.Allocation) jsonObj {
	out := jsonObj{}
	for _, s := range a {
		devs := jsonObj{}
		for _, sh := range s.Shares {
			devs = append(devs, jsonKV{string(sh.Device), sh.Amount.String()})
		}
		out = append(out, jsonKV{string(s.Slot), devs})
	}
	return out
}

// WriteTable writes a simulation's result for people to w; red paints the
// word OVERCOMMIT (the identity where w is not a terminal).
func (sim *Simulation) WriteTable(w io.Writer, res *Result, caseID string, red func(string) string) error {
	s := sim.Node.Settings()
	if caseID != "" {
		fmt.Fprintf(w, "case %s\n", caseID)
	}
	quantum := s.Quantum
	if quantum.IsZero() {
		quantum = DefaultQuantum
	}
	var maps []string
	for _, p := range sim.Node.Plugins() {
		class := "discrete"
		if p.Fractional {
			class = "fractional, quantum " + quantum.String()
		}
		maps = append(maps, fmt.Sprintf("%s: %d device(s), %s, %s", p.Name, len(p.Devices), class, p.Strategy))
	}
	frag := "allowed"
	if s.ForbidFragmentation {
		frag = "not allowed"
	}
	fmt.Fprintf(w, "source:  %s\n", sim.Source)
	fmt.Fprintf(w, "maps:    %s\n", strings.Join(maps, "; "))
	fmt.Fprintf(w, "policy:  %s, fragmentation %s", s.Policy, frag)
	if sim.Kernels > 0 {
		fmt.Fprintf(w, ", %d live kernel(s) loaded", sim.Kernels)
	}
	fmt.Fprintln(w)
	if sim.Planner != nil {
		// Its agents allocate each over its own maps; the table's one
		// allocator over the whole node is what is physically free.
		fmt.Fprintf(w, "agents:  %d, each placing with its own allocator (the lines under the table; --agent ID runs one); the table places on the whole node as one allocator\n", len(sim.Planner.Agents()))
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tREQUEST\tKERNEL\tRESULT")
	afters := sim.afters(res)
	var notes []string
	for i, r := range res.Steps {
		var result string
		switch {
		case !r.OK():
			msg := oneLine(ErrMessage(r.Err))
			if !strings.HasPrefix(msg, r.ErrKind+":") && !pythonKind(r.ErrKind) {
				msg = r.ErrKind + ": " + msg
			}
			result = "✗ " + msg
			switch {
			case afters == nil:
			case onlyByOvercommit(afters[i].agents):
				result += "  " + red("! OVERCOMMIT") + " (an agent would take it, only by overcommitting)"
			case anyTakes(afters[i].agents):
				result += "  (an agent's own allocator would take it: see below)"
			}
		case r.Step.IsFree():
			result = "released " + amountsText(FlattenAllocation(r.Released), sim.Types, sim.name)
		default:
			result = amountsText(FlattenAllocation(r.Alloc), sim.Types, sim.name)
			switch {
			case afters == nil:
			case afters[i].overcommit:
				result += "  " + red("! OVERCOMMIT")
			case afters[i].agents != nil && !anyTakes(afters[i].agents):
				result += "  " + red("✗ no agent would take it")
			case onlyByOvercommit(afters[i].agents):
				result += "  " + red("! OVERCOMMIT") + " (on every agent that would take it)"
			}
		}
		if afters != nil {
			notes = append(notes, stepNotes(r, afters[i], sim.Types, i > 0, sim.name)...)
		}
		req := r.Step.Text
		if strings.TrimSpace(req) == "" {
			req = "(empty)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Index, req, r.Kernel, result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, strings.Replace(n, "OVERCOMMIT", red("OVERCOMMIT"), 1))
		}
	}
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	idCol := len(sim.Labels) > 0
	if idCol {
		fmt.Fprintln(tw, "DEVICE\tSLOT\tNUMA\tCAPACITY\tALLOCATED\tFREE\tID")
	} else {
		fmt.Fprintln(tw, "DEVICE\tSLOT\tNUMA\tCAPACITY\tALLOCATED\tFREE")
	}
	for _, p := range sim.Node.Plugins() {
		cum := map[model.DeviceID]model.Dec{}
		for _, sl := range p.Map().Allocations() {
			for _, sh := range sl.Shares {
				cum[sh.Device] = sh.Amount
			}
		}
		if len(p.Devices) > 16 {
			capTotal, used := model.Zero, model.Zero
			for _, d := range p.Devices {
				capTotal, used = capTotal.Add(d.Capacity), used.Add(cum[d.ID])
			}
			slot := p.Devices[0].Slot
			fmt.Fprintf(tw, "%s (%d devices)\t%s\t\t%s\t%s\t%s\n", p.Name, len(p.Devices), slot,
				amountText(capTotal, slot, sim.Types), amountText(used, slot, sim.Types), amountText(capTotal.Sub(used), slot, sim.Types))
			continue
		}
		for _, d := range p.Devices {
			numa := "-"
			if d.NUMANode >= 0 {
				numa = strconv.Itoa(d.NUMANode)
			}
			row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", sim.name(d.ID), d.Slot, numa, amountText(d.Capacity, d.Slot, sim.Types),
				amountText(cum[d.ID], d.Slot, sim.Types), amountText(d.Capacity.Sub(cum[d.ID]), d.Slot, sim.Types))
			if _, labelled := sim.Labels[d.ID]; labelled {
				row += "\t" + string(d.ID)
			}
			fmt.Fprintln(tw, row)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var am []string
	for _, sh := range res.AllocMap {
		am = append(am, fmt.Sprintf("%s: %s", sh.Device, sh.Amount))
	}
	fmt.Fprintf(w, "\nalloc_map: {%s}\n", strings.Join(am, ", "))
	return nil
}

// stepNotes say, for a step on a live node, what each touched device would
// hold across every agent (overcommits first in words), and where each
// agent's own allocator would put the request: on the live kernels, which
// a step after the first says (the steps before it went to no agent in
// particular, so no agent's maps hold them).
func stepNotes(r StepResult, a stepAfter, types model.SlotTypes, later bool, name func(model.DeviceID) string) []string {
	var out []string
	for _, d := range a.devices {
		if d.Overcommit {
			out = append(out, fmt.Sprintf("step %d: OVERCOMMIT: %s", r.Index, OvercommitNote(d, types, name)))
		}
	}
	its := "its kernels only"
	if later {
		its = "its live kernels only, not the steps above"
	}
	for i := range a.agents {
		ag := &a.agents[i]
		out = append(out, fmt.Sprintf("step %d: agent %s's own allocator (%s) %s", r.Index, ag.Agent, its, AgentVerdict(ag, types, name)))
	}
	return out
}

// OvercommitNote says what a device would hold across every agent after a
// placement that puts it over its capacity, in simulate's words (the
// console's :fit says it the same way).
func OvercommitNote(d DeviceAfter, types model.SlotTypes, name func(model.DeviceID) string) string {
	return fmt.Sprintf("%s would hold %s of %s %s across all agents (%s held now + %s): the agent's allocator does not see the other agents' kernels",
		name(d.Device), amountText(d.TotalAfter, d.Slot, types), amountText(d.Capacity, d.Slot, types), d.Slot,
		amountText(d.HeldNow, d.Slot, types), amountText(d.Adds, d.Slot, types))
}

// AgentVerdict says what one agent's own allocator would do with a
// request, in simulate's words: "would take it (cuda.shares GPU3=0.5)",
// with ", OVERCOMMIT across all agents" where that puts a device over its
// capacity, or "would not take it: " and the allocator's or the manager's
// reason. simulate's notes and the console's :fit both say it this way.
func AgentVerdict(ag *AgentPreview, types model.SlotTypes, name func(model.DeviceID) string) string {
	switch {
	case !ag.OK():
		return "would not take it: " + ag.Reason
	case ag.Overcommit:
		return "would take it (" + amountsText(FlattenAllocation(ag.Alloc), types, name) + "), OVERCOMMIT across all agents"
	}
	return "would take it (" + amountsText(FlattenAllocation(ag.Alloc), types, name) + ")"
}

// AllocationText writes where a request would land on one line, devices
// named by name: "cuda.shares GPU3=0.50; cpu 4=1".
func AllocationText(a alloc.KernelAllocation, types model.SlotTypes, name func(model.DeviceID) string) string {
	return amountsText(FlattenAllocation(a), types, name)
}

// OnlyByOvercommit reports whether some agent would take the request and
// every one that would puts a device over its capacity.
func (p *Preview) OnlyByOvercommit() bool { return onlyByOvercommit(p.Agents) }

// DeviceNames names devices as the console and simulate's table do (GPU3,
// MIG 4/0), by id where a device has no label.
func DeviceNames(devs []model.Device) func(model.DeviceID) string {
	labels := names.LabelsByID(devs)
	return func(id model.DeviceID) string {
		if l, ok := labels[id]; ok {
			return l
		}
		return string(id)
	}
}

// pythonKind reports whether an error kind names an exception of Python
// itself rather than one of Backend.AI's resource errors: the table shows
// only its plain message (the JSON keeps the kind, as parity data).
func pythonKind(kind string) bool {
	switch kind {
	case alloc.KindValueError, alloc.KindKeyError, alloc.KindIndexError, alloc.KindInvalidOperation, alloc.KindDivisionByZero:
		return true
	}
	return false
}

// amountsText writes an allocation on one line: "cuda.shares 2d02=0.20".
func amountsText(a alloc.Allocation, types model.SlotTypes, name func(model.DeviceID) string) string {
	if len(a) == 0 {
		return "nothing (empty request)"
	}
	var parts []string
	for _, s := range a {
		var devs []string
		for _, sh := range s.Shares {
			devs = append(devs, fmt.Sprintf("%s=%s", name(sh.Device), amountText(sh.Amount, s.Slot, types)))
		}
		if len(devs) == 0 {
			devs = []string{"nothing"}
		}
		parts = append(parts, fmt.Sprintf("%s %s", s.Slot, strings.Join(devs, " ")))
	}
	return strings.Join(parts, "; ")
}

// amountText writes an amount, bytes slots as binary sizes.
func amountText(v model.Dec, slot model.SlotName, types model.SlotTypes) string {
	if types.TypeOf(slot) == model.SlotTypeBytes {
		switch v.Sign() {
		case 1:
			return model.FormatBinarySize(v)
		case -1:
			// Overcommitted memory's FREE: it printed the raw byte count
			// (-114310483968) beside "23.54g" and "130g".
			return "-" + model.FormatBinarySize(v.Neg())
		}
	}
	return v.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// OrderedObject is a JSON object that keeps its members' order (the
// simulation's documents, and the command line's reports around them).
type OrderedObject []Member

// Member is one key and value of an OrderedObject.
type Member struct {
	K string
	V any
}

// jsonObj and jsonKV are this package's short names for them.
type (
	jsonObj = OrderedObject
	jsonKV  = Member
)

// MarshalJSON writes the members in order, without HTML escaping.
func (o OrderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(kv.K); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(':')
		if err := enc.Encode(kv.V); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ReplaceHost swaps the CPU cores for a virtual host's (cpus > 0; numa
// nodes in equal blocks) and the memory for memBytes (non-zero), keeping
// every other device.
func ReplaceHost(devs []model.Device, cpus, numa int, memBytes model.Dec) []model.Device {
	out := make([]model.Device, 0, len(devs)+cpus+1)
	for _, d := range devs {
		if (d.Name == "cpu" && cpus > 0) || (d.Name == "mem" && !memBytes.IsZero()) {
			continue
		}
		out = append(out, d)
	}
	for i := 0; i < cpus; i++ {
		node := 0
		if numa > 0 {
			node = i * numa / cpus
		}
		out = append(out, model.Device{ID: model.DeviceID(strconv.Itoa(i)), Name: "cpu", Slot: model.SlotCPU,
			SlotType: model.SlotTypeCount, Capacity: model.One, Index: i, NUMANode: node})
	}
	if !memBytes.IsZero() {
		out = append(out, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes,
			Capacity: memBytes, NUMANode: -1})
	}
	return out
}

// AllocMapSlots are the slots alloc_map sums for a device list besides
// cuda.shares and cuda.device: none when the list has CUDA devices (the
// scan_gpu_alloc_map rule), else every non-unique slot it lists (a list of
// cpu cores or rocm devices then gets a meaningful map).
func AllocMapSlots(devs []model.Device) []model.SlotName {
	var out []model.SlotName
	for _, d := range devs {
		if d.Slot.CountsInAllocMap() {
			return nil
		}
		if d.SlotType != model.SlotTypeUnique && !slices.Contains(out, d.Slot) {
			out = append(out, d.Slot)
		}
	}
	return out
}

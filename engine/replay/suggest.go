package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// SuggestInput is what a suggestion must respect.
type SuggestInput struct {
	// Today is the partition of today's file: each agent's Given.
	Today []model.Agent
	// Total and Reserved are the node's total and the config's
	// reservation per slot (agent.toml's reserved-cpu, reserved-mem).
	Total, Reserved model.ResourceSlot
	// Step is each slot's granularity (cpu 1, a shares slot the quantum,
	// mem the memory align); a slot without one steps by 1.
	Step model.ResourceSlot
	// Budget bounds the search when no amounts serve every session
	// (default 10 s).
	Budget time.Duration
}

// Suggestion is the amounts the search found and the replay under them.
type Suggestion struct {
	Amounts map[model.AgentID]model.ResourceSlot
	// Result is the replay under them, its refusals past the first
	// Printed of each agent Unworded.
	Result *Result
	// AllServed: every session starts under them.
	AllServed bool
	// Short are the slots whose available amount is less than what the
	// agents' peaks need together.
	Short []model.SlotName
	// Kept are the slots whose demand the record cannot tell (it lists
	// no devices of their plugin: made without the host's cores and
	// memory): each agent keeps today's amount of them.
	Kept []model.SlotName
	// Unsized are the slots the node's devices, as given, do not size
	// (no total of them: plan without --devices lists no accelerators):
	// no amount can be checked against the node, so each agent keeps
	// today's (never 0, which the node's missing devices would make).
	Unsized []model.SlotName
	// Empty are the slots of which the node, as given, leaves nothing
	// after the config's reserved amounts (plan run off the node without
	// --host-cpus: this machine's 2 cores, 2 reserved): each agent keeps
	// today's, which a suggestion of 0 would make invalid.
	Empty []model.SlotName
	// Overheld are the agents' slots the suggestion raises above today's
	// amounts whose recorded kernels held more than the agent was given
	// though the record saw them run (see Overheld): the raise may serve
	// sessions the manager sent only because it counted a stopping
	// container as gone, which the operator must be told.
	Overheld []Overheld
	// Absent are the record's agents that today's file does not have,
	// with how many sessions the record routes to each: no amounts serve
	// those (another node's record, or agents renamed since).
	Absent []AbsentAgent
	// unsetIDs: an agent of today's file sets no id (agentconfig.UnsetID).
	unsetIDs bool
	// keptBelow are the slots of Kept, Unsized and Empty whose amount
	// today is below some agent's peak: the sessions still refused may be
	// refused there, which no search made.
	keptBelow []model.SlotName
}

// AbsentAgent is an agent of the record the partition lacks.
type AbsentAgent struct {
	Agent    model.AgentID
	Sessions int
}

// OverheldWords says why the suggestion raises the Overheld amounts; ""
// when it raises none of them.
func (sg *Suggestion) OverheldWords() string {
	if len(sg.Overheld) == 0 {
		return ""
	}
	return joinOverheld(sg.Overheld) + ": " + OverheldWhy
}

// Wanting is what the suggestion's amounts leave refusing, in words: the
// slots short of the agents' peaks together, or, when none is, that the
// refusals are the allocator's (the devices: fragmentation, one GPU too
// small), which no amount changes.
func (sg *Suggestion) Wanting() string {
	if len(sg.Absent) > 0 {
		var names []string
		n := 0
		for _, a := range sg.Absent {
			names = append(names, string(a.Agent))
			n += a.Sessions
		}
		why := "a record of another node, or agents renamed since"
		if sg.unsetIDs {
			why = "the file sets no agent ids, and Backend.AI names such agents agent-<uuid4> at every start: set [agents.agent] id"
		}
		return fmt.Sprintf("the record's agent(s) %s are not agents of the file: their %d session(s) go to agents it lacks, whatever the amounts (%s)", strings.Join(names, ", "), n, why)
	}
	// A slot kept at today's amounts was not searched: under its peak,
	// it may be what refuses, and "every agent's amounts cover its peaks"
	// would be false (the bench week: cpu 15 against a peak of 34108).
	kept := ""
	if len(sg.keptBelow) > 0 {
		kept = "some agent's peak of " + joinSlotNames(sg.keptBelow) + " passes today's amount, kept (above) as no amount of it could be sized"
	}
	switch {
	case len(sg.Short) > 0 && kept != "":
		return "the node is short of " + joinSlotNames(sg.Short) + " for the agents' peaks together; " + kept
	case len(sg.Short) > 0:
		return "the node is short of " + joinSlotNames(sg.Short) + " for the agents' peaks together"
	case kept != "":
		return kept
	}
	return "every agent's amounts cover its peaks; the sessions still refused are refused by the devices (the allocator), whatever the amounts"
}

func joinSlotNames(slots []model.SlotName) string {
	out := ""
	for i, s := range slots {
		if i > 0 {
			out += ", "
		}
		out += string(s)
	}
	return out
}

// Suggest finds per agent and slot the amounts, within the node's total
// less the reservation (as Backend.AI's ResourceOverAllocatedError counts
// it) and at each slot's step, under which every session of the record
// starts: each agent's peak demand rounded up to the step. What is left
// goes back toward today's amounts, so the change from today's file is
// the smallest one. When the peaks do not fit, the slot's amount is
// shared out by max-min fairness capped at each agent's peak (no agent is
// given more than it ever used while another is refused), then amounts
// move a step at a time between agents while that refuses fewer sessions.
func Suggest(rec *Record, in SuggestInput) *Suggestion {
	if in.Budget <= 0 {
		in.Budget = 10 * time.Second
	}
	deadline := time.Now().Add(in.Budget)
	// Demand does not depend on the amounts: one run with no manager
	// limit gives every agent's peaks.
	free := make([]model.Agent, len(in.Today))
	for i, a := range in.Today {
		free[i] = model.Agent{ID: a.ID, Owns: a.Owns, Mem: a.Mem}
	}
	base := Run(rec, Fixed(free), Options{NoElsewhere: true, count: true})
	peak := map[model.AgentID]model.ResourceSlot{}
	for _, a := range base.Agents {
		p := model.ResourceSlot{}
		for _, s := range a.Slots {
			p[s.Slot] = s.Peak
		}
		peak[a.Agent] = p
	}
	out := &Suggestion{Amounts: map[model.AgentID]model.ResourceSlot{}}
	for _, a := range base.Agents {
		if a.Absent {
			out.Absent = append(out.Absent, AbsentAgent{Agent: a.Agent, Sessions: a.Sessions})
		}
	}
	for _, a := range in.Today {
		out.unsetIDs = out.unsetIDs || agentconfig.UnsetID(a.ID)
	}
	for _, a := range in.Today {
		out.Amounts[a.ID] = model.ResourceSlot{}
	}
	var slots []model.SlotName
	for _, a := range in.Today {
		for s := range a.Given {
			if !slices.Contains(slots, s) {
				slots = append(slots, s)
			}
		}
	}
	slices.Sort(slots)
	listed := map[model.DeviceName]bool{}
	for _, d := range rec.Devices {
		listed[d.Name] = true
	}
	for _, s := range slots {
		if !listed[s.DeviceName()] {
			// No peak of it is known: a suggestion from nothing (mem=0)
			// is one the config's rules refuse.
			out.Kept = append(out.Kept, s)
			out.keep(s, in.Today, peak)
			continue
		}
		tot, ok := in.Total[s]
		if !ok || tot.Sign() <= 0 || tot.Sub(in.Reserved[s]).Sign() <= 0 {
			if !ok || tot.Sign() <= 0 {
				out.Unsized = append(out.Unsized, s)
			} else {
				out.Empty = append(out.Empty, s)
			}
			out.keep(s, in.Today, peak)
			continue
		}
		step := in.Step[s]
		if step.Sign() <= 0 {
			step = model.NewDec(1, 0)
		}
		need := make([]model.Dec, len(in.Today))
		x := make([]model.Dec, len(in.Today))
		for i, a := range in.Today {
			need[i] = roundUp(peak[a.ID][s], step)
			if s == model.SlotMem && need[i].Sign() <= 0 {
				// main's loader refuses mem of 0: at least one step.
				need[i] = step
			}
			x[i] = model.Max(need[i], a.Given[s])
		}
		fits := func(x []model.Dec) bool { return fitsNode(x, in.Total[s], in.Reserved[s]) }
		// Back toward the peaks, the largest surplus over today first.
		for !fits(x) {
			j := -1
			for i := range x {
				if need[i].Less(x[i]) && (j < 0 || x[j].Sub(need[j]).Less(x[i].Sub(need[i]))) {
					j = i
				}
			}
			if j < 0 {
				break
			}
			x[j] = model.Max(need[j], x[j].Sub(step))
		}
		if !fits(x) {
			out.Short = append(out.Short, s)
			x = fairShare(need, step, fits)
		}
		for i, a := range in.Today {
			out.Amounts[a.ID][s] = x[i]
		}
	}
	if len(out.Short) > 0 {
		// The counted run the improvement starts from (where the peaks
		// fit there is none: the worded run below is the result).
		out.Result = Run(rec, Fixed(out.partition(in.Today)), Options{NoElsewhere: true, count: true})
		out.improve(rec, in, deadline)
	}
	// Its callers say how many it refuses; the plan's own run under the
	// amounts lists them: only the first of each agent are worded here.
	out.Result = Run(rec, Fixed(out.partition(in.Today)), Options{Word: Printed})
	out.AllServed = len(out.Result.Refused) == 0
	out.Overheld = raisedOverheld(rec, in.Today, out.Amounts)
	return out
}

// keep leaves slot s at today's amounts, noting it in keptBelow when an
// agent's peak of it passes its amount.
func (sg *Suggestion) keep(s model.SlotName, today []model.Agent, peak map[model.AgentID]model.ResourceSlot) {
	below := false
	for _, a := range today {
		v, ok := a.Given[s]
		if !ok {
			continue
		}
		sg.Amounts[a.ID][s] = v
		if p, ok := peak[a.ID][s]; ok && v.Less(p) {
			below = true
		}
	}
	if below {
		sg.keptBelow = append(sg.keptBelow, s)
	}
}

// raisedOverheld is the overheld slots of the record (a run under the
// partitions in force) whose amounts are raised above today's. The run
// is made only when some amount is raised.
func raisedOverheld(rec *Record, today []model.Agent, amounts map[model.AgentID]model.ResourceSlot) []Overheld {
	raised := map[model.AgentID]map[model.SlotName]bool{}
	for _, a := range today {
		for s, v := range amounts[a.ID] {
			if cur, ok := a.Given[s]; ok && cur.Less(v) {
				if raised[a.ID] == nil {
					raised[a.ID] = map[model.SlotName]bool{}
				}
				raised[a.ID][s] = true
			}
		}
	}
	if len(raised) == 0 {
		return nil
	}
	var out []Overheld
	for _, o := range OverheldOf(Run(rec, rec.AsItWas(), Options{Fidelity: true, NoElsewhere: true, Word: 1})) {
		if raised[o.Agent][o.Slot] {
			out = append(out, o)
		}
	}
	return out
}

// partition is today's agents with the suggested amounts.
func (sg *Suggestion) partition(today []model.Agent) []model.Agent {
	out := make([]model.Agent, len(today))
	for i, a := range today {
		a.Given = model.ResourceSlot{}
		for s, v := range today[i].Given {
			a.Given[s] = v
		}
		for s, v := range sg.Amounts[a.ID] {
			a.Given[s] = v
		}
		out[i] = a
	}
	return out
}

// improve moves a step of a short slot from one agent to another while
// that refuses fewer sessions, until nothing helps or the deadline.
func (sg *Suggestion) improve(rec *Record, in SuggestInput, deadline time.Time) {
	best := sg.Result.refused
	for improved := true; improved && best > 0 && time.Now().Before(deadline); {
		improved = false
		for _, s := range sg.Short {
			step := in.Step[s]
			if step.Sign() <= 0 {
				step = model.NewDec(1, 0)
			}
			for _, from := range in.Today {
				for _, to := range in.Today {
					if from.ID == to.ID || time.Now().After(deadline) {
						continue
					}
					f, t := sg.Amounts[from.ID][s], sg.Amounts[to.ID][s]
					if f.Less(step) {
						continue
					}
					sg.Amounts[from.ID][s], sg.Amounts[to.ID][s] = f.Sub(step), t.Add(step)
					res := Run(rec, Fixed(sg.partition(in.Today)), Options{NoElsewhere: true, count: true})
					if n := res.refused; n < best {
						best, sg.Result, improved = n, res, true
						continue
					}
					sg.Amounts[from.ID][s], sg.Amounts[to.ID][s] = f, t
				}
			}
		}
	}
}

// fitsNode is Backend.AI's ResourceOverAllocatedError check on one slot:
// each agent counts its amount less what the node has beyond it, and the
// counts must not add up past the node's total less the reservation.
//
// The amounts themselves must also add up to no more than the node's
// total: main loads up to total + (n-1) x reserved (it counts each amount
// less the reservation), but amounts past the host's cores or memory let
// the manager send the agents more than the node has, and plan warns of
// them (partition.CPUBeyondHost, MemBeyondHost): a suggestion never
// makes its own plan warn.
func fitsNode(x []model.Dec, total, reserved model.Dec) bool {
	avail := total.Sub(reserved)
	sum, given := model.Zero, model.Zero
	for _, v := range x {
		if avail.Less(v) {
			// The agent counts at most the available total: more is
			// never usable, and no suggestion is worth it.
			return false
		}
		sum = sum.Add(avail.Sub(model.Max(total.Sub(v), model.Zero)))
		given = given.Add(v)
	}
	return !avail.Less(sum) && !total.Less(given)
}

// fairShare shares a short slot out by max-min fairness: every agent a
// step at a time in turn, none beyond its need, while the node takes it.
func fairShare(need []model.Dec, step model.Dec, fits func([]model.Dec) bool) []model.Dec {
	x := make([]model.Dec, len(need))
	for i := range x {
		x[i] = model.Zero
	}
	for grew := true; grew; {
		grew = false
		for i := range x {
			if !x[i].Less(need[i]) {
				continue
			}
			x[i] = x[i].Add(step)
			if fits(x) {
				grew = true
				continue
			}
			x[i] = x[i].Sub(step)
		}
	}
	return x
}

// roundUp is v rounded up to a multiple of step.
func roundUp(v, step model.Dec) model.Dec {
	if v.Sign() <= 0 {
		return model.Zero
	}
	q, err := v.Quo(step)
	if err != nil {
		return v
	}
	n, err := q.Quantize(0, apd.RoundCeiling)
	if err != nil {
		return v
	}
	r := n.Mul(step)
	// Keep the step's exponent: 1.5 shares, not 1.50 or 15E-1.
	if e := step.Exponent(); e < 0 {
		if q, err := r.Quantize(e, apd.RoundHalfEven); err == nil {
			return q
		}
	}
	return r.Normalize()
}

// Flags are the suggestion as plan's --slot flags, agents and slots in
// order, mem as a size: only the amounts that differ from today's.
func (sg *Suggestion) Flags(today []model.Agent) []string {
	var out []string
	for _, a := range today {
		amts := sg.Amounts[a.ID]
		for _, s := range amts.Names() {
			v := amts[s]
			if g, ok := a.Given[s]; ok && g.Equal(v) {
				continue
			}
			text := v.String()
			if s == model.SlotMem {
				text = memFlag(v)
			}
			out = append(out, fmt.Sprintf("%s=%s=%s", a.ID, s, text))
		}
	}
	return out
}

// memFlag is a byte count as --slot takes it: the largest binary unit
// that divides it.
func memFlag(v model.Dec) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		unit := model.NewDec(1<<u.shift, 0)
		if q, err := v.Quo(unit); err == nil {
			if n, err := q.Quantize(0, apd.RoundDown); err == nil && n.Equal(q) && n.Sign() > 0 {
				return n.String() + u.suffix
			}
		}
	}
	return v.String()
}

package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// Device is one accelerator of a node as the fleet shows it: amounts are
// exact decimals in the device's own slot.
type Device struct {
	Device model.DeviceID
	Plugin model.DeviceName
	// Parent is the GPU of a MIG slice ("" otherwise).
	Parent   model.DeviceID
	Slot     model.SlotName
	Held     model.Dec
	Capacity model.Dec
	Free     model.Dec
	// CapacityUnknown: the node could not know the device's capacity
	// (fractional settings never read); Capacity and Free are zero and
	// must not be shown.
	CapacityUnknown bool
}

// Summary is what the fleet table shows of one node's snapshot.
type Summary struct {
	// Devices are the node's accelerators (CPU cores and memory aside), in
	// inventory order.
	Devices []Device
	// GPUs counts the devices that are not MIG slices.
	GPUs int
	// Slot is the slot the node's GPUs are counted in (cuda.shares on an
	// fGPU node, cuda.device on a discrete one); "" without GPUs.
	Slot model.SlotName
	// Held, Capacity and Free sum Slot over the devices.
	Held, Capacity, Free model.Dec
	// Unknown counts the devices of Slot whose capacity is unknown; their
	// held amounts are in Held, nothing of theirs in Capacity or Free, so
	// a capacity total must not be shown while it is not zero.
	Unknown int
	// Largest is the largest request of Slot alone that one of the node's
	// agents would take now, by Backend.AI's allocator (a multiple of the
	// quantum) and within what the manager would send it; zero when none
	// fits. It is what `--fit` calls a fit, overcommit or not: each agent's
	// allocator sees only its own kernels and places the request all the
	// same, so an operator must count on it being placed.
	Largest model.Dec
	// LargestOvercommits says that placing Largest puts a device over its
	// capacity across every agent (a warning, as --fit marks it);
	// LargestClear is then the largest request that overcommits nothing
	// (what is physically free bounds it), else equal to Largest.
	LargestOvercommits bool
	LargestClear       model.Dec
	// Pieces is the number of devices with some of Slot free: the free
	// capacity's fragmentation ("2.4 free, in 6 pieces").
	Pieces  int
	Kernels int
	// Issues counts the snapshot's issues of warning severity and above.
	Issues int
	// TooLarge says the node has more than MaxNodeDevices devices: its
	// totals are counted, but Largest is not searched (zero).
	TooLarge bool
	// QuantumUnknown: Slot is fractional and its quantum is not known
	// (the node could not read its plugin settings, and the fleet was not
	// given --quantum): Largest is not searched (zero) and not shown.
	QuantumUnknown bool
}

// MaxNodeDevices is the most devices a node may have for the fleet to
// follow it. Real nodes have tens (a MIG node a few hundred); a node that
// claims more is refused as "too large" (issue 23: a hostile node with
// 20,000 devices kept the client busy for good), so that what one node
// costs the fleet is bounded.
const MaxNodeDevices = 1024

// TooLargeError is a node with more devices than MaxNodeDevices.
type TooLargeError struct{ Devices int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("too large: %d devices, more than the %d fgtop fleet follows per node", e.Devices, MaxNodeDevices)
}

// Settings are the fleet-wide allocator settings (the fleet's flags); a
// node's snapshot fills in what they leave unset (see SettingsFor).
type Settings struct {
	placement.Settings
	// PolicySet says Policy was given (INTERLEAVED is the zero value, so it
	// cannot say so itself); unset, each node's own policy applies.
	PolicySet bool
}

// SettingsFor returns the allocator settings of a node: base (the fleet's
// flags) with what the node's snapshot says about its own allocator where
// base leaves it unset.
func SettingsFor(s *model.Snapshot, base Settings) placement.Settings {
	return nodeSettings(s, base)
}

// Summarize computes a node's summary from its snapshot.
func Summarize(s *model.Snapshot, base Settings) Summary {
	sum := Summary{Held: model.Zero, Capacity: model.Zero, Free: model.Zero, Largest: model.Zero, LargestClear: model.Zero, Kernels: s.NumKernels()}
	for _, i := range s.Issues {
		if i.Severity >= model.SevWarning {
			sum.Issues++
		}
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		if !d.IsAccelerator() {
			continue
		}
		held := s.Usage[d.Key()].Total()
		dev := Device{Device: d.ID, Plugin: d.Name, Parent: d.Parent, Slot: d.Slot, CapacityUnknown: d.CapacityUnknown}
		dev.Held, dev.Capacity, dev.Free = OneForm(held, d.Capacity)
		if d.CapacityUnknown {
			dev.Held, dev.Capacity, dev.Free = held, model.Zero, model.Zero
		}
		held = dev.Held
		sum.Devices = append(sum.Devices, dev)
		if !d.IsMIG() {
			sum.GPUs++
		}
		if d.SlotType == model.SlotTypeUnique || d.IsMIG() {
			continue
		}
		if sum.Slot == "" {
			sum.Slot = d.Slot
		}
		if d.Slot != sum.Slot {
			continue
		}
		sum.Held = sum.Held.Add(held)
		if d.CapacityUnknown {
			sum.Unknown++
			continue
		}
		sum.Capacity = sum.Capacity.Add(dev.Capacity)
		if f := dev.Free; f.Sign() > 0 {
			sum.Free = sum.Free.Add(f)
			sum.Pieces++
		}
	}
	sum.TooLarge = len(s.Devices) > MaxNodeDevices
	sum.QuantumUnknown = sum.Slot.MajorType() == "shares" && s.Allocator.QuantumUnknown() && base.Quantum.IsZero()
	if sum.Slot != "" && !sum.TooLarge && !sum.QuantumUnknown {
		l := searchLargest(s, sum.Slot, SettingsFor(s, base), true)
		sum.Largest, sum.LargestOvercommits, sum.LargestClear = l.largest, l.overcommits, l.clear
	}
	return sum
}

// OneForm gives a device's held amount, capacity and free amount one
// form, so that they read alike whatever path they came by (a kernel's
// "1.00" on a MIG slice of capacity "1", a held "0" on a GPU of "1.00",
// a float through Prometheus): the capacity's exponent (the node's unit:
// 1.00 for a GPU of shares, 1 for a slice), or where held or free needs
// more digits, the finest exponent of the three. Only trailing zeros are
// added or dropped, never a digit, so the amounts stay exact.
func OneForm(held, capacity model.Dec) (h, c, free model.Dec) {
	free = capacity.Sub(held)
	e := capacity.Exponent()
	h, okH := atExponent(held, e)
	f, okF := atExponent(free, e)
	if okH && okF {
		return h, capacity, f
	}
	e = min(held.Exponent(), capacity.Exponent(), free.Exponent())
	h, _ = atExponent(held, e)
	c, _ = atExponent(capacity, e)
	f, _ = atExponent(free, e)
	return h, c, f
}

// atExponent is v with exponent e, when that changes no digit (false,
// and v as it is, otherwise).
func atExponent(v model.Dec, e int32) (model.Dec, bool) {
	if !v.IsFinite() {
		return v, false
	}
	q, err := v.Quantize(e, apd.RoundHalfEven)
	if err != nil || !q.Equal(v) {
		return v, false
	}
	return q, true
}

// largest finds the largest request of slot alone that some agent of the
// node takes, over multiples of the allocator's step (the quantum for a
// fractional slot, 1 for a discrete one) up to what the agent has free.
// Whether a request fits is monotone in its size for both of Backend.AI's
// strategies (a smaller request fits wherever a larger one does), which
// makes any search exact here. It tries what the agent has free first,
// then gallops down (1, 2, 4, ... steps less) and bisects the last gap:
// the answer is nearly always at or near the top, where the allocator's
// EVENLY search is cheap (one window of nearly every device), while a
// plain bisection started at half the free capacity, where that search
// tries every window of every size (issue 23: minutes at 2,000 devices).
func largest(s *model.Snapshot, slot model.SlotName, settings placement.Settings) model.Dec {
	return largestSearch(s, slot, settings, true)
}

// largestSearch is largest; bounded says whether the fragmentation
// guard's bound (guardBound) caps the search, which the tests turn off to
// check that the bound changes no answer.
func largestSearch(s *model.Snapshot, slot model.SlotName, settings placement.Settings, bounded bool) model.Dec {
	return searchLargest(s, slot, settings, bounded).largest
}

// largestFit is what searchLargest finds: the allocator's largest fit,
// whether placing it overcommits a device, and the largest fit that
// overcommits none.
type largestFit struct {
	largest, clear model.Dec
	overcommits    bool
}

// searchLargest is largest with the overcommit judged: per agent, the
// largest size its allocator takes (what --fit calls a fit), then the
// largest that overcommits no device across every agent.
func searchLargest(s *model.Snapshot, slot model.SlotName, settings placement.Settings, bounded bool) largestFit {
	best := largestFit{largest: model.Zero, clear: model.Zero}
	step := searchStep(slot, settings)
	planner := placement.NewPlanner(s, settings)
	phys := planner.Physical()
	for _, st := range planner.Agents() {
		n, ok := agentCeiling(st, slot, step)
		if !ok {
			continue
		}
		// The last size tried is remembered: the clear check below asks
		// again for the size the search ended on, and on a large node one
		// EVENLY search is most of the cost.
		lastK, lastGot, lastOK := int64(-1), alloc.KernelAllocation(nil), false
		try := func(k int64) (alloc.KernelAllocation, bool) {
			if k == lastK {
				return lastGot, lastOK
			}
			got, err := st.Node.Try(alloc.Request{{Slot: slot, Amount: step.Mul(model.DecFromInt64(k))}})
			lastK, lastGot, lastOK = k, got, err == nil
			return got, err == nil
		}
		fits := func(k int64) bool {
			_, ok := try(k)
			return ok
		}
		// With fragmentation forbidden, no size above what the guard can
		// admit fits: start there, not at the free capacity, which may lie
		// far above (issue 23: the sizes between were each an EVENLY
		// search over windows of every size, quadratic in the devices).
		if bounded && settings.ForbidFragmentation {
			if pl := st.Node.Plugin(slot.DeviceName()); pl != nil && pl.Fractional {
				n = min(n, guardBound(pl.Map().SlotFree(slot), step))
			}
		}
		lo := topFit(n, fits)
		over := false
		if lo > 0 {
			got, _ := try(lo)
			_, over = phys.After(placement.FlattenAllocation(got))
		}
		// Every size up to lo fits the agent's allocator; the largest of
		// them that overcommits no device (across every agent) is the
		// clear one.
		clear := lo
		if over {
			clear = clearFit(lo-1, func(k int64) bool {
				got, ok := try(k)
				if !ok {
					return false
				}
				_, over := phys.After(placement.FlattenAllocation(got))
				return !over
			})
		}
		v, c := step.Mul(model.DecFromInt64(lo)), step.Mul(model.DecFromInt64(clear))
		// Of two agents that take the same largest size, the one that
		// overcommits nothing says it.
		if best.largest.Less(v) || (best.overcommits && !over && best.largest.Equal(v)) {
			best.largest, best.overcommits = v, over
		}
		if best.clear.Less(c) {
			best.clear = c
		}
	}
	if best.largest.IsZero() {
		best.largest, best.overcommits = model.Zero, false
	}
	if best.clear.IsZero() {
		best.clear = model.Zero
	}
	return best
}

// searchStep is the allocator's step for slot: the quantum for a
// fractional slot, 1 for a discrete one.
func searchStep(slot model.SlotName, settings placement.Settings) model.Dec {
	if slot.MajorType() != "shares" {
		return model.One
	}
	if settings.Quantum.IsZero() {
		return placement.DefaultQuantum
	}
	return settings.Quantum
}

// agentCeiling is, in steps, the most of slot the agent could take: what
// its allocator has free (it does not see the other agents' kernels, so
// what they hold does not bound it: a placement past what is physically
// free is still made, and overcommits), but never more than the manager
// would send it (in the slot-based form, the amount it is given less what
// its kernels hold). ok is false when that is not a whole step.
func agentCeiling(st *placement.AgentState, slot model.SlotName, step model.Dec) (n int64, ok bool) {
	free := st.Node.FreeOf(slot)
	if g, ok := st.Agent.Given[slot]; ok {
		if left := model.Max(g.Sub(st.Agent.Held[slot]), model.Zero); left.Less(free) {
			free = left
		}
	}
	hi, err := free.QuoInteger(step)
	if err != nil || hi.Sign() <= 0 {
		return 0, false
	}
	n, err = hi.Int64()
	return n, err == nil
}

// guardBound is an upper bound, in steps of q, on the requests the
// allocator's fragmentation guard (alloc's ensure_slot_not_fragmented)
// admits over devices with these free amounts; 0 when there is none.
// The guard admits a request R when, for some device count n, the
// devices with at least d = R/n rounded down to q free number at least
// n, and those with at least d+q at least the quanta left over, R - n·d,
// which is under n·q. In steps, with u the free amounts in whole steps
// sorted from the most: d is at most u[n-1] (n devices hold it), the
// quanta left over at most min(n, how many have more than d steps), and
// n·d + min(n, ...) grows with d, so R is at most the maximum over n of
// n·u[n-1] + min(n, #{u > u[n-1]}). One sort and a pass: O(n log n).
func guardBound(free []alloc.Share, q model.Dec) int64 {
	u := make([]int64, 0, len(free))
	for _, f := range free {
		k := int64(0)
		if f.Amount.Sign() > 0 {
			v, err := f.Amount.QuoInteger(q)
			if err != nil {
				return math.MaxInt64 // no bound: the search decides
			}
			if k, err = v.Int64(); err != nil {
				return math.MaxInt64
			}
		}
		u = append(u, k)
	}
	slices.SortFunc(u, func(a, b int64) int { return cmp.Compare(b, a) })
	best, more := int64(0), 0 // more: how many have more steps than u[n-1]
	for n := 1; n <= len(u); n++ {
		d := u[n-1]
		for more < n-1 && u[more] > d {
			more++
		}
		if d > (math.MaxInt64-int64(n))/int64(n) {
			return math.MaxInt64
		}
		if r := int64(n)*d + int64(min(n, more)); r > best {
			best = r
		}
	}
	return best
}

// clearFitLinear is how many sizes below the allocator's largest fit
// clearFit tries one by one before it halves.
const clearFitLinear = 32

// clearFit returns a size in [0, lo] for which clear holds (0 when none
// is found), trying lo, lo-1, ... for clearFitLinear sizes, then halving.
// Whether a size overcommits is not monotone in it, so no bisection is
// exact; the bound keeps a node with many devices from making the
// summary quadratic, at the price of an answer that may be below the
// true largest (never above it: every answer was tried).
func clearFit(lo int64, clear func(int64) bool) int64 {
	for i := 0; lo > 0 && i < clearFitLinear; i, lo = i+1, lo-1 {
		if clear(lo) {
			return lo
		}
	}
	for ; lo > 0; lo /= 2 {
		if clear(lo) {
			return lo
		}
	}
	return 0
}

// topFit returns the largest k in [0, n] with fits(k), fits being
// monotone (true up to some k, false after) and fits(0) taken as true:
// n first, then n-1, n-2, n-4, ... until one fits, then a bisection
// between that one and the last that did not.
func topFit(n int64, fits func(int64) bool) int64 {
	if n <= 0 || fits(n) {
		return max(n, 0)
	}
	lo, hi := int64(0), n-1 // fits(lo); hi is the most that may fit
	for d := int64(1); ; d *= 2 {
		k := n - d
		if k <= 0 {
			break
		}
		if fits(k) {
			lo = k
			break
		}
		hi = k - 1
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Fit is where one request would land on one node.
type Fit struct {
	OK bool
	// Unknown: the node cannot say (Reason says why); neither a fit nor
	// a refusal.
	Unknown bool
	// Agent takes the request (the first agent, in config order, that
	// does); "" on a node without agents.
	Agent model.AgentID
	// Placement is, per slot and device, what the request would take.
	Placement alloc.Allocation
	// Reason says why it does not fit, in an operator's words, per agent
	// ("agent a: insufficient cuda.shares: 1.2 free, 2.5 requested").
	Reason  string
	ErrKind string
	// Short is, per slot the request names, how much is missing on the
	// agent that came closest, Closest: the one missing the least fraction
	// of the request (short ÷ requested, summed over the slots; the first
	// in config order on a tie), all of Short from that one agent. Empty
	// when some agent has enough free in total (the request fails there
	// for another reason: fragmentation, the quantum, ...).
	Short   []placement.SlotAmount
	Closest model.AgentID
	// Devices is, for a fit, what each device the placement touches would
	// hold across every agent of the node; Overcommit says one would be
	// over its capacity (the agent's allocator does not see the other
	// agents' kernels, so it places there all the same).
	Devices    []placement.DeviceAfter
	Overcommit bool
}

// FitRequest runs a request through Backend.AI's allocators on every
// agent of the node (placement.Planner, as `fgtop simulate` does on a live
// node), each agent on its own partition and kernels.
func FitRequest(s *model.Snapshot, req alloc.Request, base Settings) Fit {
	if err := ModeKnown(s, req); err != nil {
		return Fit{Unknown: true, Reason: err.Error()}
	}
	if f, ok := lacksSlot(s, req); ok {
		return f
	}
	if err := QuantumKnown(s, req, base); err != nil {
		return Fit{Unknown: true, Reason: err.Error()}
	}
	p := placement.NewPlanner(s, SettingsFor(s, base))
	pv := p.Preview(req)
	var out Fit
	var reasons []string
	// The closest agent: the least fraction of the request missing (see
	// shortfall), the first in config order on a tie.
	first, closest := true, model.Zero
	for _, a := range pv.Agents {
		if a.OK() {
			return Fit{OK: true, Agent: a.Agent, Placement: placement.FlattenAllocation(a.Alloc), Devices: a.Devices, Overcommit: a.Overcommit}
		}
		why := a.Reason
		if a.ErrKind == alloc.KindFractionalResourceFragmented || (a.ErrKind == alloc.KindInsufficientResource && len(a.Stranded) > 0) {
			for _, st := range a.Stranded {
				if st.Total.Sign() > 0 {
					// The reason says how much is free; this, where it lies.
					why = fmt.Sprintf("%s (%s free in %s; %s of it stranded for this size)", why, st.Slot, Pieces(pieces(p, a.Agent, st.Slot)), st.Total)
				}
			}
		}
		if a.Agent != "" {
			why = fmt.Sprintf("agent %s: %s", a.Agent, why)
		}
		reasons = append(reasons, why)
		if out.ErrKind == "" {
			out.ErrKind = a.ErrKind
		}
		short, missing := shortfall(req, a.Free)
		if first || missing.Less(closest) {
			first, closest = false, missing
			out.Short, out.Closest = short, a.Agent
		}
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "no agent")
	}
	if len(out.Short) == 0 {
		out.Short, out.Closest = nil, ""
	}
	out.Reason = joinReasons(reasons)
	return out
}

// KindNoSuchSlot is the refusal of a request for a slot no device of the
// node has (cuda.shares on a node of whole GPUs).
const KindNoSuchSlot = "NoSuchSlot"

// lacksSlot is the refusal of req on a node none of whose devices has a
// slot it asks for: the allocators of such a node never see that slot,
// and would answer for the rest of the request alone.
func lacksSlot(s *model.Snapshot, req alloc.Request) (Fit, bool) {
	have := map[model.SlotName]bool{}
	for _, d := range s.Devices {
		have[d.Slot] = true
	}
	for _, e := range req {
		if e.Amount.Sign() <= 0 || have[e.Slot] {
			continue
		}
		names := make([]string, 0, len(have))
		for sl := range have {
			names = append(names, string(sl))
		}
		slices.Sort(names)
		return Fit{ErrKind: KindNoSuchSlot, Reason: fmt.Sprintf("no device of this node has %s (its slots: %s)", e.Slot, strings.Join(names, ", "))}, true
	}
	return Fit{}, false
}

// shortfall is, per slot of req, how much more than free the request asks
// (slots with enough free left out), and the fraction of the request
// missing: the sum over those slots of short ÷ requested, which compares
// agents whatever the slots' units (shares, cores, bytes).
func shortfall(req alloc.Request, free []placement.SlotAmount) ([]placement.SlotAmount, model.Dec) {
	var short []placement.SlotAmount
	missing := model.Zero
	for _, e := range req {
		if e.Amount.Sign() <= 0 || slices.ContainsFunc(short, func(x placement.SlotAmount) bool { return x.Slot == e.Slot }) {
			continue
		}
		for _, f := range free {
			if f.Slot != e.Slot || !f.Amount.Less(e.Amount) {
				continue
			}
			d := e.Amount.Sub(f.Amount)
			short = append(short, placement.SlotAmount{Slot: e.Slot, Amount: d})
			if q, err := d.Quo(e.Amount); err == nil {
				missing = missing.Add(q)
			}
			break
		}
	}
	return short, missing
}

// Pieces says "1 piece", "3 pieces": on how many devices free capacity
// lies.
func Pieces(n int) string {
	if n == 1 {
		return "1 piece"
	}
	return fmt.Sprintf("%d pieces", n)
}

// pieces counts an agent's devices with some of slot free.
func pieces(p *placement.Planner, agent model.AgentID, slot model.SlotName) int {
	for _, st := range p.Agents() {
		if st.Agent.ID != agent {
			continue
		}
		pl := st.Node.Plugin(slot.DeviceName())
		if pl == nil {
			return 0
		}
		n := 0
		for _, s := range pl.Map().Allocations() {
			if s.Slot != slot {
				continue
			}
			for _, sh := range s.Shares {
				if capOf(pl, sh.Device).Sub(sh.Amount).Sign() > 0 {
					n++
				}
			}
		}
		return n
	}
	return 0
}

func capOf(p *placement.Plugin, id model.DeviceID) model.Dec {
	for _, d := range p.Devices {
		if d.ID == id {
			return d.Capacity
		}
	}
	return model.Zero
}

func joinReasons(rs []string) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += "; "
		}
		out += r
	}
	return out
}

// CapacityText is the capacity as shown: "?" when unknown.
func (d Device) CapacityText() string {
	if d.CapacityUnknown {
		return "?"
	}
	return d.Capacity.String()
}

// CapacityText is the node's capacity total as shown: "?" while some
// device's capacity is unknown.
func (s Summary) CapacityText() string {
	if s.Unknown > 0 {
		return "?"
	}
	return s.Capacity.String()
}

// FreeText and LargestText are what is free of the node and its largest
// fit as shown: "?" while some device's capacity is unknown (counted
// as holding nothing more, they would read as full).
func (s Summary) FreeText() string {
	if s.Unknown > 0 {
		return "?"
	}
	return s.Free.String()
}

// LargestText: see FreeText.
func (s Summary) LargestText() string {
	if s.Unknown > 0 || s.QuantumUnknown {
		return "?"
	}
	return s.Largest.String()
}

// String prints a summary in one line, devices included: equal strings
// mean the fleet shows the same figures.
func (s Summary) String() string {
	out := fmt.Sprintf("%s held %s/%s free %s in %d largest %s kernels %d issues %d:", s.Slot, s.Held, s.CapacityText(), s.Free, s.Pieces, s.Largest, s.Kernels, s.Issues)
	for _, d := range s.Devices {
		out += fmt.Sprintf(" %s=%s/%s", d.Device, d.Held, d.CapacityText())
	}
	return out
}

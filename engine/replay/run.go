package replay

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// KindNoAgent is the kind of a refusal of a session whose agent the
// partition does not have.
const KindNoAgent = "NoSuchAgent"

// Refusal is a session that would not have started.
type Refusal struct {
	At        time.Time
	Kernel    model.KernelID
	Session   string
	Owner     string
	Agent     model.AgentID
	Requested model.ResourceSlot
	// Kind is placement.KindManagerRefused when the manager would not
	// have sent it, else the allocator's error class
	// (InsufficientResource, ...).
	Kind string
	// Reason is why, in the words simulate prints.
	Reason string
	// CouldRunOn are the other agents that would have taken it then.
	CouldRunOn []model.AgentID
	// Before: it was already running when the span began (placed first).
	Before bool
}

// SlotStat is one slot of one agent over the span.
type SlotStat struct {
	Slot model.SlotName
	// Amount is what the agent is given at the end of the span (under
	// the run's partition); Varies says it was not the same throughout.
	Amount model.Dec
	Varies bool
	// Given: the amount is the partition's (slot-based); otherwise it is
	// what the agent's devices hold (device-based, shared).
	Given bool
	// Peak is the highest concurrent demand: what the agent's recorded
	// sessions running at once asked, refused ones included.
	Peak   model.Dec
	PeakAt time.Time
	// Over is how long the demand exceeded the amount.
	Over time.Duration
	// OverPeak is the highest demand at a moment it exceeded the amount
	// given then, OverAmount that amount and OverAt the moment (when
	// Over is not zero): Amount is the span end's, which a partition
	// changed inside it makes another.
	OverPeak, OverAmount model.Dec
	OverAt               time.Time
	// MeanUse is the mean share of the amount held by the sessions that
	// started in the replay (0..1, two decimals; invalid when the amount
	// is zero).
	MeanUse model.Opt[model.Dec]
}

// AgentResult is one agent's side of a run.
type AgentResult struct {
	Agent    model.AgentID
	Sessions int
	Refused  []Refusal
	Slots    []SlotStat
	// Absent: the partition has no such agent (sessions the record
	// routes to it are refused, KindNoAgent).
	Absent bool
}

// Verdict is the agent's one line.
func (a *AgentResult) Verdict() string {
	if a.Absent {
		return fmt.Sprintf("%s: not an agent of the partition: none of its %d session(s) would have been sent to it", a.Agent, a.Sessions)
	}
	if a.Sessions == 0 {
		// "all 0 session(s) start" read as a verdict on sessions.
		return fmt.Sprintf("%s: no session in the span", a.Agent)
	}
	if len(a.Refused) == 0 {
		return fmt.Sprintf("%s: all %d session(s) start", a.Agent, a.Sessions)
	}
	var worst []string
	for _, s := range a.Slots {
		if s.Over > 0 {
			worst = append(worst, fmt.Sprintf("%s peak %s > %s", s.Slot, amount(s.Slot, s.Peak), amount(s.Slot, s.Amount)))
		}
	}
	why := ""
	if len(worst) > 0 {
		why = " (" + strings.Join(worst, ", ") + ")"
	}
	return fmt.Sprintf("%s: %d of %d session(s) would not have started%s", a.Agent, len(a.Refused), a.Sessions, why)
}

// Disagreement is a session the record and the rules disagree on, under
// the partition that was in force: the rules refuse it although it ran,
// or the allocator places it elsewhere than it really was.
type Disagreement struct {
	At     time.Time
	Kernel model.KernelID
	Agent  model.AgentID
	// Refused is the rules' reason ("" when they place it elsewhere).
	Refused string
	// Got is where it ran (where it is nil, held: GotAlloc gives both),
	// Placed where the allocator would put it.
	Got, Placed model.Allocations
	held        history.Held
}

// GotAlloc is where it ran: Got, else its record's as maps, made anew.
// A busy week's 200,000 disagreements keep what the record keeps of
// each, not maps only the report's first lines and --json read.
func (g *Disagreement) GotAlloc() model.Allocations {
	if g.Got != nil || g.held.IsZero() {
		return g.Got
	}
	return g.held.Map()
}

// Result is one run of the sessions under one partition.
type Result struct {
	From, To time.Time
	Sessions int
	// Refused are every agent's refusals by time. Where one agent refuses
	// they are its AgentResult's own list (a busy week's is 200,000
	// long): a Result is read, never changed.
	Refused []Refusal
	// refused counts the refusals, listed or not (Options.count).
	refused int
	Agents  []AgentResult
	// Disagreements (Fidelity runs only).
	Disagreements []Disagreement
	// Unrouted are sessions whose agent the record does not name, on a
	// node of several agents: they are not replayed.
	Unrouted int
	// SameMoment counts the sessions (Fidelity runs) recorded within
	// OrderSlack of another change of their agent's: the order of the two
	// is not certain, so where each landed is not compared.
	SameMoment int
	// Compared counts the sessions (Fidelity runs) whose placement was
	// compared with where they really ran.
	Compared int
	// Skipped counts the parts of sessions' real placements the replay
	// could not load (a device of a listed plugin the node no longer
	// lists, or one held under another slot).
	Skipped int
	// short counts the refusals found by the check before the attempt.
	short int
	// memoHits counts the manager's answers given again (managerRefusal).
	memoHits int
}

// Partition is the partitions in force over a run, oldest first; the
// first is in force from the start.
type Partition []Epoch

// AsItWas is the record's own partitions over time.
func (rec *Record) AsItWas() Partition { return Partition(rec.Epochs) }

// Fixed is one partition for the whole span.
func Fixed(agents []model.Agent) Partition { return Partition{{Agents: agents}} }

// Options tune Run.
type Options struct {
	// Fidelity: the partition is the one that was in force, and the run
	// follows the record: every session runs where it really ran, and
	// where the rules would have refused it or placed it elsewhere a
	// Disagreement says so.
	Fidelity bool
	// NoElsewhere skips asking the other agents about a refused session
	// (the suggestion's many runs do not print it).
	NoElsewhere bool
	// count: the refusals are counted (Result.refused), neither listed
	// nor given a reason: the suggestion's search compares counts only,
	// and the allocator's reason (a preview of the whole placement) cost
	// as much as the placement.
	count bool
	// noShort: every refusal is the allocator's attempt, never the
	// cheap check before it (the tests' reference).
	noShort bool
	// noMemo: the manager's limit is made anew and asked at every
	// arrival, never kept (managerRefusal's reference, in tests).
	noMemo bool
	// serial: the agents are run together even where each could run on
	// its own (the tests' reference).
	serial bool
	// chunkAt is how many sessions a fidelity run has at least to be run
	// in chunks of time on several cores (0: chunkMin; negative: never,
	// the tests' reference); chunks, when positive, how many (the
	// tests': otherwise one a core, at most maxChunks).
	chunkAt, chunks int
	// prepAt is how many sessions a run has at least for their parts that
	// depend on nothing it does to be made ahead on another goroutine (0:
	// prepMin; negative: never, the tests' reference).
	prepAt int
	// Word is how many of the run's disagreements (Fidelity) and of each
	// agent's refusals have their reason worded and the other agents
	// asked (CouldRunOn); the rest say Unworded. 0 words them all. The
	// allocator's reason is a preview of the whole placement, as costly
	// as the placement: a week that refuses 200,000 sessions spends
	// seconds on reasons the text (Printed of each) never shows.
	Word int
	// Fed: LoadStarted feeds the run as the record is read rather than
	// after it (an experiment for machines with more than two cores,
	// where it is not measured yet).
	Fed bool
	// AfterRead, where set, is called between the read and the run
	// LoadStarted starts (not fed): a one-shot query collects there
	// (gcpolicy.ReadDone), the read's scaffolding being garbage.
	AfterRead func()
}

// Printed is how many disagreements, and refusals of each agent, the
// text report lists; a run for the text words as many (Options.Word).
const Printed = 20

// Unworded is the reason of a refusal past Options.Word: never shown.
const Unworded = "(not worded: the report lists the first ones; --json words them all)"

// agentRun is one agent's replayed state.
type agentRun struct {
	id    model.AgentID
	agent model.Agent
	st    *placement.AgentState
	held  map[model.SlotName]fixed
	res   *AgentResult
	// demand is what its recorded sessions running now ask, refused ones
	// included (held is what those that started hold).
	demand map[model.SlotName]fixed
	// heldExps and demandExps count held's and demand's terms by
	// exponent: each total is kept by adding and taking back, and said in
	// the form the manager's fresh sum of the sessions left has
	// (termExps).
	heldExps, demandExps map[model.SlotName]*termExps
	stats                map[model.SlotName]*slotAcc
	// absent: the partition has no such agent.
	absent bool
	// lastLeave is when one of its sessions last left.
	lastLeave time.Time
	// lim is the manager's limit on it while limOK: what its sessions
	// hold changes only when one starts or leaves (take) and what it is
	// given only with the partition, while a busy week asks it at each
	// of 200,000 arrivals. refusals are the limit's answers to requests
	// since it was made (refusalMemo).
	lim      *placement.ManagerLimit
	limOK    bool
	refusals map[refusalKey]string
}

// refusalKey is a request as the manager's limit is asked it: its slots
// the limit gives amounts of, in order, each amount as its fixed. The
// same slots in the same order with the same amounts in the same form
// (1.0 is not 1.00: the words print them) ask the same question of the
// same limit (ManagerLimit's refusal reads nothing else of a request).
type refusalKey struct {
	n   int
	req [4]slotReq
}

type slotAcc struct {
	amount model.Dec
	varies bool
	seen   bool
	given  bool
	peak   fixed
	peakAt time.Time
	over   time.Duration
	// overPeak is the highest demand at a moment it exceeded the amount
	// then, overAmt that amount and overAt the moment.
	overPeak fixed
	overAmt  model.Dec
	overAt   time.Time
	// amountF is amount, to compare with the demand.
	amountF fixed
	useSum  useSum    // used × ns
	amtSum  model.Dec // amount × ns
	// mark: useSum counts the time up to it; the rest is added when
	// what is used or the amount changes (settle), not at every event
	// of the node. amtMark: the same for amtSum, which only the amount
	// changes (settleAmount).
	mark, amtMark time.Time
	zeroAmt       bool
	// noUse: the amount is zero and stays so (one partition all the
	// run), so no mean use is given and what is used is not summed.
	noUse bool
	// start is when the run first met the slot on the agent (cut leaves
	// it): before it nothing was used, and the amount's time from the
	// span's start to it is added at the end (spanBefore).
	start time.Time
}

// settle adds the time from acc.mark to now, at what was used since
// then.
func (acc *slotAcc) settle(used fixed, now time.Time) {
	if !now.After(acc.mark) {
		return
	}
	if !acc.noUse {
		acc.useSum.add(used, int64(now.Sub(acc.mark)))
	}
	acc.mark = now
}

// settleAmount adds the time from acc.amtMark to now at the amount: the
// amount is the same all that time (refresh settles it before changing
// it), so one product stands for every event's.
func (acc *slotAcc) settleAmount(now time.Time) {
	if !now.After(acc.amtMark) {
		return
	}
	dt := model.DecFromInt64(int64(now.Sub(acc.amtMark)))
	acc.amtSum = acc.amtSum.Add(acc.amount.Mul(dt))
	acc.amtMark = now
}

// running is a session that started in the replay.
type running struct {
	s     *Session
	agent *agentRun
	got   alloc.KernelAllocation
}

// Run replays rec's sessions under part.
func Run(rec *Record, part Partition, opts Options) *Result {
	if k := chunksOf(rec, part, opts); k > 1 {
		if res := runChunked(rec, part, opts, k); res != nil {
			return res
		}
	}
	if groups := apart(rec, part, opts); groups != nil {
		return runApart(rec, part, opts, groups)
	}
	r := &runner{rec: rec, part: part, opts: opts, res: &Result{From: rec.From, To: rec.To}}
	return r.run()
}

// apart is rec's sessions by the agent that ran them (in order of first
// arrival) where each agent's run is its own: one partition throughout
// (a change rebuilds every agent's maps at once), every session names
// its agent (none is routed by what the others hold), no refusal asks
// the others (NoElsewhere) and no fidelity run (its disagreements are
// worded in the order of the whole node). Nil otherwise, or for one
// agent.
func apart(rec *Record, part Partition, opts Options) [][]int {
	if opts.serial || len(part) != 1 || opts.Fidelity || !opts.NoElsewhere || len(rec.Sessions) < 2 {
		return nil
	}
	idx := map[model.AgentID]int{}
	var groups [][]int
	for i := range rec.Sessions {
		a := rec.Sessions[i].Agent
		if a == "" {
			return nil
		}
		g, ok := idx[a]
		if !ok {
			g = len(groups)
			idx[a] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	if len(groups) < 2 {
		return nil
	}
	return groups
}

// runApart runs each agent's sessions on its own, a few at once, and
// puts the runs together as one run of them all gives them: the agents
// in the partition's order, then those it lacks by their first arrival;
// the refusals by time, agent by agent where at the same moment.
func runApart(rec *Record, part Partition, opts Options, groups [][]int) *Result {
	runs := make([]*runner, len(groups))
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	for g, only := range groups {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &runner{rec: rec, part: part, opts: opts, res: &Result{From: rec.From, To: rec.To}, only: only}
			r.run()
			runs[g] = r
		})
	}
	wg.Wait()
	res := &Result{From: rec.From, To: rec.To}
	byID := map[model.AgentID]*AgentResult{}
	for g, r := range runs {
		res.Sessions += r.res.Sessions
		res.refused += r.res.refused
		res.short += r.res.short
		res.memoHits += r.res.memoHits
		res.Unrouted += r.res.Unrouted
		own := rec.Sessions[groups[g][0]].Agent
		for i := range r.res.Agents {
			a := &r.res.Agents[i]
			if a.Agent == own || byID[a.Agent] == nil {
				byID[a.Agent] = a
			}
		}
	}
	seen := map[model.AgentID]bool{}
	add := func(id model.AgentID) {
		if a := byID[id]; a != nil && !seen[id] {
			seen[id] = true
			res.Agents = append(res.Agents, *a)
			res.Refused = append(res.Refused, a.Refused...)
		}
	}
	for _, a := range part[0].Agents {
		add(a.ID)
	}
	// The agents the partition lacks, as a run of them all meets them.
	type first struct {
		at time.Time
		i  int
		id model.AgentID
	}
	var late []first
	for _, only := range groups {
		f := first{i: -1}
		for _, i := range only {
			s := &rec.Sessions[i]
			at := s.Start
			if s.Before && at.Before(rec.From) {
				at = rec.From
			}
			if f.i < 0 || at.Before(f.at) {
				f = first{at: at, i: i, id: s.Agent}
			}
		}
		if !seen[f.id] {
			late = append(late, f)
		}
	}
	slices.SortFunc(late, func(a, b first) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.i - b.i
	})
	for _, f := range late {
		add(f.id)
	}
	slices.SortStableFunc(res.Refused, func(a, b Refusal) int { return a.At.Compare(b.At) })
	return res
}

type runner struct {
	rec    *Record
	part   Partition
	opts   Options
	res    *Result
	agents []*agentRun
	byID   map[model.AgentID]*agentRun
	cur    []model.Agent
	now    time.Time
	// live are the sessions running in the replay, by index in
	// rec.Sessions.
	live []*running
	// picked are the agents sessions that name none went to; noTaker
	// those of them no agent took (refused under the first, their
	// demand counted on none: they were never its sessions).
	picked  map[int]*agentRun
	noTaker map[int]bool
	// plugins are the device plugins the record lists; bytes the slots
	// of theirs counted in bytes.
	plugins map[model.DeviceName]bool
	bytes   map[model.SlotName]bool
	// only: the sessions replayed, by index in rec.Sessions (nil: all).
	only []int
	// reqs are the sessions' requests as the run sums them (reqOf); fx
	// their amounts' fixed (fixedOfMemo).
	reqs [][]slotReq
	fx   map[model.Dec]fixed
	// asked is what the run made of each recorded request (askedOf).
	asked map[uintptr]*asked
	// preps are the sessions' parts made ahead (startPrep), the first
	// prepped of them made; prepC says how far they are.
	preps   []prep
	prepped int
	prepC   chan int
	// chunk: the run is one chunk of a fidelity run in chunks of time
	// (runChunked); allocWhy says, for each of its disagreements, whether
	// its reason is the allocator's (one a run that does not word it
	// gives as Unworded).
	chunk    bool
	allocWhy []bool
	// disBlocks are a chunk's disagreements (disagree), disagreed how
	// many the run has noted.
	disBlocks [][]Disagreement
	disagreed int
}

// disBlock is how many disagreements one of a chunk's blocks holds.
const disBlock = 4096

// disagree notes g. A chunk's run keeps them in blocks, which
// joinChunks copies once into the whole run's: a slice grown by
// doubling copied a busy week's 200,000 onto fresh pages twice over
// before that copy.
func (r *runner) disagree(g Disagreement) {
	r.disagreed++
	if !r.chunk {
		r.res.Disagreements = append(doubled(r.res.Disagreements), g)
		return
	}
	if n := len(r.disBlocks); n == 0 || len(r.disBlocks[n-1]) == disBlock {
		r.disBlocks = append(r.disBlocks, make([]Disagreement, 0, disBlock))
	}
	last := &r.disBlocks[len(r.disBlocks)-1]
	*last = append(*last, g)
}

// prep is what a run takes of a session that depends on nothing the run
// does: its request as the allocator takes it (reg: of the listed plugins,
// registered) and, for a fidelity run,
// whether another of its agent's sessions arrived within OrderSlack of it
// (nearOf). Its sums go to runner.reqs.
type prep struct {
	req, reg alloc.Request
	near     bool
}

// prepMin is how many sessions a run has at least for their preps to be
// made ahead; prepChunk how many are handed over at once.
const (
	prepMin   = 4096
	prepChunk = 2048
)

// startPrep makes the sessions' preps in order on another goroutine while
// the run goes: on a week of 200,000 sessions the run is one core's work
// and the other's is free. Not for a run of some agents' sessions (apart)
// or a counting one (the suggestion's, many at once on every core).
func (r *runner) startPrep() {
	n := len(r.rec.Sessions)
	at := r.opts.prepAt
	if at == 0 {
		at = prepMin
	}
	if at < 0 || n < at || r.only != nil || r.opts.count || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	r.preps = make([]prep, n)
	r.reqs = make([][]slotReq, n)
	// Room for every chunk's word: the goroutine never waits on the run.
	c := make(chan int, n/prepChunk+1)
	r.prepC = c
	fidelity := r.opts.Fidelity
	go func() {
		defer close(c)
		fx := map[model.Dec]fixed{}
		for lo := 0; lo < n; lo += prepChunk {
			hi := min(lo+prepChunk, n)
			for i := lo; i < hi; i++ {
				s := &r.rec.Sessions[i]
				r.preps[i].req = s.Request()
				r.preps[i].reg = r.registered(r.preps[i].req)
				r.reqs[i] = sumsOf(s.Requested, fx)
				if fidelity {
					r.preps[i].near = nearOf(r.rec.Sessions, s)
				}
			}
			c <- hi
		}
	}()
}

// ready waits for session i's prep; false when none is made.
func (r *runner) ready(i int) bool {
	if r.preps == nil {
		return false
	}
	for i >= r.prepped {
		hi, ok := <-r.prepC
		if !ok {
			panic(fmt.Sprintf("replay: session %d of %d never prepared", i, len(r.preps)))
		}
		r.prepped = hi
	}
	return true
}

func (r *runner) run() *Result {
	r.begin()
	r.live = make([]*running, len(r.rec.Sessions))
	r.startPrep()
	for _, ev := range r.events() {
		r.step(ev)
	}
	return r.end()
}

// begin sets the run up at the span's start.
func (r *runner) begin() {
	rec := r.rec
	r.byID = map[model.AgentID]*agentRun{}
	r.plugins = map[model.DeviceName]bool{}
	r.bytes = map[model.SlotName]bool{model.SlotMem: true}
	for _, d := range rec.Devices {
		r.plugins[d.Name] = true
		if d.SlotType == model.SlotTypeBytes {
			r.bytes[d.Slot] = true
		}
	}
	r.setPartition(r.part[0].Agents)
	r.now = rec.From
}

// step takes the run's next event.
func (r *runner) step(ev event) {
	r.advance(ev.t)
	switch {
	case ev.i < 0:
		r.changePartition(r.part[-ev.i].Agents)
	case ev.leave:
		r.leave(ev.i, r.live[ev.i])
		r.live[ev.i] = nil
	default:
		r.live[ev.i] = r.arrive(ev.i)
	}
}

// end accounts for the rest of the span and gives the result.
func (r *runner) end() *Result {
	r.advance(r.rec.To)
	var refusing []*AgentResult
	for _, a := range r.agents {
		r.finish(a)
		r.res.Agents = append(r.res.Agents, *a.res)
		if len(a.res.Refused) > 0 {
			refusing = append(refusing, a.res)
		}
	}
	if len(refusing) == 1 {
		// One agent's refusals are in the order of the run, by time:
		// they are the run's, not a copy (a draft refusing most of a
		// week has 200,000), capped so that nothing appends onto them.
		own := refusing[0].Refused
		r.res.Refused = own[:len(own):len(own)]
		return r.res
	}
	for _, a := range refusing {
		r.res.Refused = append(r.res.Refused, a.Refused...)
	}
	slices.SortStableFunc(r.res.Refused, func(a, b Refusal) int { return a.At.Compare(b.At) })
	return r.res
}

// event is an arrival, a departure (leave) or, with i < 0, the partition
// -i put in force.
type event struct {
	t     time.Time
	leave bool
	i     int
}

// events are the run's events in the order it takes them: by time; at
// one moment a new partition first, then the departures (they free what
// an arrival then may take), each kind in the order of the sessions. It
// is the stable sort by (time, departure first) of the partitions, then
// each session's arrival and departure, made as a merge of three lists
// in order: the arrivals are in order already (the sessions are sorted
// by arrival, those running at the start first, at From), so only the
// departures are sorted (TestEventsAreTheStableSort).
func (r *runner) events() []event {
	rec := r.rec
	n := len(rec.Sessions)
	if r.only != nil {
		n = len(r.only)
	}
	parts := make([]event, 0, len(r.part))
	for i := 1; i < len(r.part); i++ {
		// A new partition: before the sessions of its moment arrive.
		parts = append(parts, event{t: r.part[i].At, leave: true, i: -i})
	}
	arrs := make([]event, 0, n)
	deps := make([]event, 0, n)
	// A session that left at or before it arrived (seen once, or its
	// times out of order in the record) leaves right after its arrival,
	// not before it: a departure before the arrival would free nothing,
	// and the session would hold its amount to the span's end.
	var instant map[int]bool
	for k := range n {
		i := k
		if r.only != nil {
			i = r.only[k]
		}
		s := &rec.Sessions[i]
		at := s.Start
		if s.Before && at.Before(rec.From) {
			at = rec.From
		}
		arrs = append(arrs, event{t: at, i: i})
		if !s.Open && s.End.Before(rec.To) {
			if !s.End.After(at) {
				if instant == nil {
					instant = map[int]bool{}
				}
				instant[i] = true
				continue
			}
			deps = append(deps, event{t: s.End, leave: true, i: i})
		}
	}
	byTime := func(a, b event) int { return a.t.Compare(b.t) }
	// Stable: at one moment the order they were listed in.
	slices.SortStableFunc(parts, byTime)
	if !slices.IsSortedFunc(arrs, byTime) {
		slices.SortStableFunc(arrs, byTime)
	}
	// The departures were listed by index (only lists its indexes in
	// increasing order too: apart), so by time then index is the stable
	// order.
	slices.SortFunc(deps, func(a, b event) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.i - b.i
	})
	evs := make([]event, 0, len(parts)+len(arrs)+len(deps)+len(instant))
	p, d, a := 0, 0, 0
	for p < len(parts) || d < len(deps) || a < len(arrs) {
		// The earliest; at a tie a partition, then a departure, then an
		// arrival.
		pick := -1
		var t time.Time
		if p < len(parts) {
			pick, t = 0, parts[p].t
		}
		if d < len(deps) && (pick < 0 || deps[d].t.Before(t)) {
			pick, t = 1, deps[d].t
		}
		if a < len(arrs) && (pick < 0 || arrs[a].t.Before(t)) {
			pick = 2
		}
		switch pick {
		case 0:
			evs = append(evs, parts[p])
			p++
		case 1:
			evs = append(evs, deps[d])
			d++
		default:
			evs = append(evs, arrs[a])
			if instant[arrs[a].i] {
				evs = append(evs, event{t: arrs[a].t, leave: true, i: arrs[a].i})
			}
			a++
		}
	}
	return evs
}

// setPartition puts agents in force: each agent's maps are rebuilt over
// the devices its partition gives it (every device in the slot-based
// form), with what its running sessions hold loaded back.
func (r *runner) setPartition(agents []model.Agent) {
	r.cur = agents
	snap := &model.Snapshot{Devices: r.rec.Devices}
	for _, a := range agents {
		ar := r.byID[a.ID]
		if ar == nil {
			ar = &agentRun{id: a.ID, held: map[model.SlotName]fixed{}, demand: map[model.SlotName]fixed{},
				heldExps: map[model.SlotName]*termExps{}, demandExps: map[model.SlotName]*termExps{},
				stats: map[model.SlotName]*slotAcc{}, res: &AgentResult{Agent: a.ID}}
			r.byID[a.ID] = ar
			r.agents = append(r.agents, ar)
		}
		ar.agent = a
		ar.limitChanged()
		ar.st = placement.ForAgent(snap, &a, r.rec.Settings)
	}
}

// changePartition moves to a new partition in the middle of the run,
// loading every running session's allocation into its agent's new maps.
func (r *runner) changePartition(agents []model.Agent) {
	if sameAgents(agents, r.cur) {
		return
	}
	r.setPartition(agents)
	for _, l := range r.live {
		// An agent the new partition drops keeps its maps (its sessions
		// run on; it is sent nothing new): only rebuilt maps are loaded.
		if l == nil || !slices.ContainsFunc(agents, func(a model.Agent) bool { return a.ID == l.agent.id }) {
			continue
		}
		got, _ := l.agent.st.Node.Load(l.got.ToModel())
		l.got = got
	}
	for _, a := range r.agents {
		a.refresh(r.now)
	}
}

// advance accounts for the time from r.now to t.
func (r *runner) advance(t time.Time) {
	if !t.After(r.now) {
		return
	}
	for _, a := range r.agents {
		for slot, acc := range a.stats {
			if acc.amountF.cmp(a.demand[slot]) < 0 {
				acc.over += t.Sub(r.now)
			}
		}
	}
	r.now = t
}

// amountOf is what agent a may use of slot: its given amount in the
// slot-based form, else what its devices hold.
func (a *agentRun) amountOf(slot model.SlotName) (model.Dec, bool) {
	return amountWith(&a.agent, a.st, slot)
}

// amountWith is what agent ag, whose maps are st, may use of slot.
func amountWith(ag *model.Agent, st *placement.AgentState, slot model.SlotName) (model.Dec, bool) {
	if ag.Given != nil {
		if g, ok := ag.Given[slot]; ok {
			return g, true
		}
	}
	if slot == model.SlotMem && ag.Mem.Sign() > 0 {
		return ag.Mem, false
	}
	p := st.Node.Plugin(slot.DeviceName())
	if p == nil {
		return model.Zero, false
	}
	total := model.Zero
	for _, d := range p.Devices {
		if d.Slot == slot {
			total = total.Add(d.Capacity)
		}
	}
	return total, false
}

// track makes sure slot is accounted for on a; fixedPart: the partition
// does not change during the run.
func (a *agentRun) track(slot model.SlotName, now time.Time, fixedPart bool) *slotAcc {
	acc := a.stats[slot]
	if acc == nil {
		amt, given := a.amountOf(slot)
		acc = &slotAcc{amount: amt, amountF: fixedOf(amt), given: given, seen: true, amtSum: model.Zero, mark: now, amtMark: now,
			noUse: fixedPart && amt.Sign() == 0, start: now}
		a.stats[slot] = acc
	}
	return acc
}

// refresh sets every tracked slot's amount after a partition change.
func (a *agentRun) refresh(now time.Time) {
	for slot, acc := range a.stats {
		acc.settle(a.held[slot], now)
		acc.settleAmount(now)
		amt, given := a.amountOf(slot)
		if !amt.Equal(acc.amount) {
			acc.varies = true
		}
		acc.amount, acc.amountF, acc.given = amt, fixedOf(amt), given
		// A smaller amount puts what runs over it from now.
		acc.noteOver(a.asked(slot), now)
	}
}

func (r *runner) arrive(i int) *running {
	s := &r.rec.Sessions[i]
	prepped := r.ready(i)
	r.res.Sessions++
	a := r.route(s)
	if a == nil && s.Agent == "" && len(r.cur) > 1 {
		a = r.pick(i, s)
	}
	if a == nil {
		r.res.Unrouted++
		return nil
	}
	a.res.Sessions++
	if !r.noTaker[i] {
		r.demandOf(a, i)
	}
	var req, reg alloc.Request
	if prepped {
		req, reg = r.preps[i].req, r.preps[i].reg
	} else {
		q := r.askedOf(s)
		req, reg = q.req, q.reg
	}
	word := r.opts.Word <= 0 || len(a.res.Refused) < r.opts.Word
	if r.opts.Fidelity {
		word = r.opts.Word <= 0 || r.disagreed < r.opts.Word
	}
	kind, why, got := r.place(a, req, reg, word)
	if r.opts.Fidelity {
		return r.follow(a, i, kind, why, got)
	}
	if why != "" {
		r.res.refused++
		if r.opts.count {
			return nil
		}
		ref := Refusal{At: r.now, Kernel: s.Kernel, Session: s.Session, Owner: s.Owner, Agent: a.id, Requested: s.Requested, Kind: kind, Reason: why, Before: s.Before}
		if !r.opts.NoElsewhere && word {
			ref.CouldRunOn = r.elsewhere(a, req)
		}
		a.res.Refused = append(doubled(a.res.Refused), ref)
		return nil
	}
	l := &running{s: s, agent: a, got: got}
	r.take(a, i, false)
	return l
}

// demandOf adds session i's request to what a's recorded sessions ask,
// and to each slot's peak.
func (r *runner) demandOf(a *agentRun, i int) {
	for _, q := range r.reqOf(i) {
		acc := a.track(q.slot, r.now, len(r.part) == 1)
		a.ask(q, false)
		d := a.asked(q.slot)
		if acc.peak.cmp(d) < 0 {
			acc.peak, acc.peakAt = d, r.now
		}
		acc.noteOver(d, r.now)
	}
}

// noteOver notes demand d at now where it exceeds the amount then and
// every such demand before.
func (acc *slotAcc) noteOver(d fixed, now time.Time) {
	if acc.amountF.cmp(d) < 0 && acc.overPeak.cmp(d) < 0 {
		acc.overPeak, acc.overAmt, acc.overAt = d, acc.amount, now
	}
}

// slotReq is one slot of a session's request.
type slotReq struct {
	slot model.SlotName
	amt  fixed
}

// reqOf is session i's request as the run sums it, made on first use.
func (r *runner) reqOf(i int) []slotReq {
	if len(r.reqs) < len(r.rec.Sessions) {
		// A run fed as the record is read (follow) sees more sessions
		// as it goes.
		n := len(r.rec.Sessions)
		if n > cap(r.reqs) {
			r.reqs = slices.Grow(r.reqs, max(n, 2*cap(r.reqs))-len(r.reqs))
		}
		r.reqs = r.reqs[:n]
	}
	q := r.reqs[i]
	if q == nil {
		q = r.askedOf(&r.rec.Sessions[i]).sums
		r.reqs[i] = q
	}
	return q
}

// asked is what a run makes of a recorded request: its sums, the request
// as the allocator takes it and its part of the listed plugins.
type asked struct {
	sums     []slotReq
	req, reg alloc.Request
}

// askedOf is what the run makes of s's request, made once per request:
// the record's sessions that asked the same share one map
// (requestOfMemo), never changed once made, which a week's 200,000
// sessions ask a few thousand of; nor are the sums and requests made of
// it changed by the run.
func (r *runner) askedOf(s *Session) *asked {
	key := reflect.ValueOf(s.Requested).Pointer()
	if q := r.asked[key]; q != nil {
		return q
	}
	if r.fx == nil {
		r.fx = map[model.Dec]fixed{}
	}
	if r.asked == nil {
		r.asked = map[uintptr]*asked{}
	}
	q := &asked{sums: sumsOf(s.Requested, r.fx), req: s.Request()}
	q.reg = r.registered(q.req)
	r.asked[key] = q
	return q
}

// sumsOf is a request's slots as the run sums them, the amounts' fixed
// kept in fx.
func sumsOf(req model.ResourceSlot, fx map[model.Dec]fixed) []slotReq {
	q := make([]slotReq, 0, len(req))
	for slot, v := range req {
		q = append(q, slotReq{slot, fixedOfMemo(v, fx)})
	}
	return q
}

// managerLimit is the manager's per-agent limit on a now (nil: the
// agent is not slot-based).
func (a *agentRun) managerLimit() *placement.ManagerLimit {
	if a.limOK {
		return a.lim
	}
	a.lim, a.limOK = nil, true
	clear(a.refusals)
	if a.agent.Given == nil {
		return nil
	}
	held := make(model.ResourceSlot, len(a.held))
	for slot := range a.held {
		held[slot] = totalOf(a.held, a.heldExps, slot).Dec()
	}
	a.lim = placement.ManagerLimitOf(&model.Agent{ID: a.id, Given: a.agent.Given, Held: held})
	return a.lim
}

// hold adds q to what a's sessions that started hold (takes it back
// with back).
func (a *agentRun) hold(q slotReq, back bool) { sum(a.held, a.heldExps, q.slot, q.amt, back) }

// ask adds q to what a's recorded sessions ask (takes it back with back).
func (a *agentRun) ask(q slotReq, back bool) { sum(a.demand, a.demandExps, q.slot, q.amt, back) }

// asked is what a's recorded sessions running now ask of slot, in the
// form a fresh sum of their requests has.
func (a *agentRun) asked(slot model.SlotName) fixed { return totalOf(a.demand, a.demandExps, slot) }

// limitChanged drops the manager's limit kept on a: what its sessions
// hold or what it is given changed.
func (a *agentRun) limitChanged() { a.limOK = false }

// managerRefusal is lim.Refusal(req), lim being a's current limit,
// answered once per request while the limit stands: the words of a
// refusal are the same for every equal request, and a draft that
// refuses most of a week asks them 200,000 times.
// again says the answer was given before.
func (a *agentRun) managerRefusal(lim *placement.ManagerLimit, req alloc.Request, fx map[model.Dec]fixed) (why string, again bool) {
	if len(req) > len(refusalKey{}.req) {
		return lim.Refusal(req), false
	}
	// Only the slots the limit gives amounts of are asked of it: the
	// others cannot refuse.
	var k refusalKey
	for _, e := range req {
		if _, ok := lim.Given[e.Slot]; ok {
			k.req[k.n] = slotReq{e.Slot, fixedOfMemo(e.Amount, fx)}
			k.n++
		}
	}
	if why, ok := a.refusals[k]; ok {
		return why, true
	}
	why = lim.Refusal(req)
	if a.refusals == nil {
		a.refusals = map[refusalKey]string{}
	}
	a.refusals[k] = why
	return why, false
}

// place runs the manager's rule, then the agent's allocator; on a refusal
// it returns the error kind and the reason. reg, when not nil, is
// registered(req), made ahead (startPrep).
func (r *runner) place(a *agentRun, req, reg alloc.Request, word bool) (string, string, alloc.KernelAllocation) {
	if a.absent || !slices.ContainsFunc(r.cur, func(x model.Agent) bool { return x.ID == a.id }) {
		return KindNoAgent, fmt.Sprintf("the partition has no agent %s: the manager would not send it there", a.id), nil
	}
	if r.opts.noMemo {
		a.limitChanged()
	}
	if lim := a.managerLimit(); lim != nil {
		if r.fx == nil {
			r.fx = map[model.Dec]fixed{}
		}
		why, again := "", false
		if r.opts.noMemo {
			why = lim.Refusal(req)
		} else if why, again = a.managerRefusal(lim, req, r.fx); again {
			r.res.memoHits++
		}
		if why != "" {
			return placement.KindManagerRefused, why, nil
		}
	}
	if reg == nil {
		reg = r.registered(req)
	}
	req = reg
	if (r.opts.count || !word) && r.short(a, req) {
		// Refused for want of room, seen without the attempt: what the
		// attempt would say of it is not printed.
		r.res.short++
		if r.opts.count {
			return "", "refused", nil
		}
		return "", Unworded, nil
	}
	var got alloc.KernelAllocation
	var err error
	if r.opts.Fidelity {
		// Where the allocator would put it, the maps left as they were:
		// the session runs where it really ran (follow), and nothing of
		// the attempt stays in them (not even the form of an amount a
		// place it did not run on saw added and taken back).
		got, err = a.st.Node.Try(req)
	} else {
		got, err = a.st.Node.Allocate(req)
	}
	if err != nil && r.opts.count {
		return "", "refused", nil
	}
	if err != nil && !word {
		return "", Unworded, nil
	}
	if err != nil {
		ap := a.st.Preview(req)
		why := ap.Reason
		if why == "" {
			why = placement.ErrMessage(err)
		}
		kind := ap.ErrKind
		if kind == "" {
			kind = "Error"
		}
		return kind, why, nil
	}
	return "", "", got
}

// registered is req without the slots of plugins the record lists no
// devices of (a record made without the host's cores and memory): those
// are judged by the agents' amounts only (Record.Notes says so).
func (r *runner) registered(req alloc.Request) alloc.Request {
	for _, e := range req {
		if !r.plugins[e.Slot.DeviceName()] {
			return slices.DeleteFunc(slices.Clone(req), func(e alloc.SlotAmount) bool { return !r.plugins[e.Slot.DeviceName()] })
		}
	}
	return req
}

// listed is a without the slots of plugins the record lists no devices
// of (registered's counterpart for a real placement).
func (r *runner) listed(a model.Allocations) model.Allocations {
	out := make(model.Allocations, len(a))
	for slot, devs := range a {
		if r.plugins[slot.DeviceName()] {
			out[slot] = devs
		}
	}
	return out
}

// listedPlugin: the record lists devices of plugin n.
func (r *runner) listedPlugin(n model.DeviceName) bool { return r.plugins[n] }

// follow is a fidelity step: the session runs where it really ran,
// whatever the rules said, and any difference is a Disagreement.
func (r *runner) follow(a *agentRun, i int, kind, why string, placed alloc.KernelAllocation) *running {
	s := &r.rec.Sessions[i]
	// Only the listed plugins' part: the maps hold no device of the
	// others, so the rest would be skipped, and not counted, at the cost
	// of wording why for every session of a record made without the
	// host's devices.
	got, skipped := r.load(a, s)
	r.res.Skipped += len(skipped)
	// The order of the sessions running when the record began is not
	// known, nor that of sessions its agent started within one recorded
	// moment: only where one arriving alone lands is compared.
	// A refusal is compared whatever the order: of two arrivals the
	// record cannot order, the second is refused whichever it was (a
	// near session let through made a fidelity run say "all start" of
	// sessions that a proposal changing nothing refuses).
	if !s.Before && (why != "" || !r.sameMoment(i, s)) {
		r.res.Compared++
		switch {
		case why != "":
			r.disagree(Disagreement{At: r.now, Kernel: s.Kernel, Agent: a.id, Refused: why, Got: s.Got, held: s.Held})
			if r.chunk {
				r.allocWhy = append(r.allocWhy, allocKind(kind))
			}
		case !sameAlloc(placed.ToModel(), r.listed(s.Alloc()), r.bytes):
			r.disagree(Disagreement{At: r.now, Kernel: s.Kernel, Agent: a.id, Got: s.Got, held: s.Held, Placed: placed.ToModel()})
			if r.chunk {
				r.allocWhy = append(r.allocWhy, false)
			}
		}
	}
	r.take(a, i, false)
	return &running{s: s, agent: a, got: got}
}

// load loads the listed plugins' part of where s ran into a's maps.
func (r *runner) load(a *agentRun, s *Session) (alloc.KernelAllocation, []placement.Skip) {
	if s.Got != nil || s.Held.IsZero() {
		return a.st.Node.LoadOf(s.Got, r.listedPlugin)
	}
	return a.st.Node.LoadEntries(s.Held, r.listedPlugin, s.Alloc)
}

// OrderSlack is how close two of an agent's recorded changes may be and
// still have been seen in another order than they happened: the record
// has the moments fgtop saw the kernels' files, a few to tens of
// milliseconds after the agent wrote or removed them.
const OrderSlack = 250 * time.Millisecond

// sameMoment reports whether another of s's agent's sessions arrived or
// left within OrderSlack before s arrived (or arrived as late after):
// which came first is not certain, so where s landed is not compared.
func (r *runner) sameMoment(i int, s *Session) bool {
	a := r.route(s)
	if a != nil && !a.lastLeave.IsZero() && s.Start.Sub(a.lastLeave) <= OrderSlack {
		r.res.SameMoment++
		return true
	}
	near := false
	if r.ready(i) {
		near = r.preps[i].near
	} else {
		near = nearOf(r.rec.Sessions, s)
	}
	if near {
		r.res.SameMoment++
	}
	return near
}

// nearOf reports whether another of s's agent's sessions of ss (those
// running at the start aside) arrived within OrderSlack of s: what
// sameMoment asks after the agent's last departure, of the record alone.
func nearOf(ss []Session, s *Session) bool {
	lo := s.Start.Add(-OrderSlack)
	i, _ := slices.BinarySearchFunc(ss, lo, func(x Session, t time.Time) int {
		if x.Before {
			return -1
		}
		return x.Start.Compare(t)
	})
	for ; i < len(ss) && !ss[i].Start.After(s.Start.Add(OrderSlack)); i++ {
		if &ss[i] != s && ss[i].Agent == s.Agent && !ss[i].Before {
			return true
		}
	}
	return false
}

// take adds session i's request to what a's sessions hold (gives it
// back with back).
func (r *runner) take(a *agentRun, i int, back bool) {
	for _, q := range r.reqOf(i) {
		if acc := a.stats[q.slot]; acc != nil {
			acc.settle(a.held[q.slot], r.now)
		}
		// What the sessions that started hold is what the manager
		// counts as held, and what the mean use counts as used: one sum.
		a.hold(q, back)
	}
	a.limitChanged()
}

func (r *runner) leave(i int, l *running) {
	s := &r.rec.Sessions[i]
	a := r.route(s)
	if a == nil {
		a = r.picked[i]
	}
	if a == nil {
		return
	}
	if !r.noTaker[i] {
		for _, q := range r.reqOf(i) {
			a.ask(q, true)
		}
	}
	a.lastLeave = r.now
	if l == nil {
		return // refused: it never ran, it frees nothing
	}
	if err := l.agent.st.Node.Free(l.got); err != nil {
		panic(fmt.Sprintf("replay: freeing %s: %v", s.Kernel, err))
	}
	r.take(l.agent, i, true)
}

// route is the agent a session goes to: the one that ran it (what the
// manager did), or the only agent of the node.
func (r *runner) route(s *Session) *agentRun {
	if a := r.byID[s.Agent]; a != nil {
		return a
	}
	if s.Agent == "" && len(r.agents) == 1 {
		return r.agents[0]
	}
	if s.Agent != "" {
		// An agent the partition does not have: it gets an empty part,
		// so every request it would have made is refused in its words.
		ar := &agentRun{id: s.Agent, absent: true, agent: model.Agent{ID: s.Agent, Given: model.ResourceSlot{}}, held: map[model.SlotName]fixed{},
			demand: map[model.SlotName]fixed{}, heldExps: map[model.SlotName]*termExps{}, demandExps: map[model.SlotName]*termExps{},
			stats: map[model.SlotName]*slotAcc{}, res: &AgentResult{Agent: s.Agent, Absent: true}}
		ar.st = placement.ForAgent(&model.Snapshot{Devices: r.rec.Devices}, &ar.agent, r.rec.Settings)
		r.byID[s.Agent] = ar
		r.agents = append(r.agents, ar)
		return ar
	}
	return nil
}

// pick is the agent a session that names none goes to: the first, in
// the partition's order, whose manager limit and allocator take it now;
// the first agent when none does (its refusal is the one said).
func (r *runner) pick(i int, s *Session) *agentRun {
	if r.picked == nil {
		r.picked = map[int]*agentRun{}
	}
	req := s.Request()
	var first *agentRun
	for _, ag := range r.cur {
		a := r.byID[ag.ID]
		if a == nil {
			continue
		}
		if first == nil {
			first = a
		}
		if lim := a.managerLimit(); lim != nil && lim.Refusal(req) != "" {
			continue
		}
		if reg := r.registered(req); !r.short(a, reg) {
			if _, err := a.st.Node.Try(reg); err == nil {
				r.picked[i] = a
				return a
			}
		}
	}
	r.picked[i] = first
	if first != nil {
		if r.noTaker == nil {
			r.noTaker = map[int]bool{}
		}
		r.noTaker[i] = true
	}
	return first
}

// short: the cheap check before the attempt says a has no room for req
// (never where the attempt would place it).
func (r *runner) short(a *agentRun, req alloc.Request) bool {
	return !r.opts.noShort && a.st.Node.Short(req)
}

// elsewhere lists the other agents that would have taken req now.
func (r *runner) elsewhere(from *agentRun, req alloc.Request) []model.AgentID {
	var out []model.AgentID
	for _, b := range r.agents {
		if b == from || !slices.ContainsFunc(r.cur, func(a model.Agent) bool { return a.ID == b.id }) {
			continue
		}
		if lim := b.managerLimit(); lim != nil && lim.Refusal(req) != "" {
			continue
		}
		if reg := r.registered(req); !r.short(b, reg) {
			if _, err := b.st.Node.Try(reg); err == nil {
				out = append(out, b.id)
			}
		}
	}
	return out
}

// finish turns an agent's accumulators into its slot lines.
func (r *runner) finish(a *agentRun) {
	for _, slot := range slices.Sorted(mapKeys(a.stats)) {
		acc := a.stats[slot]
		acc.settle(a.held[slot], r.now)
		acc.settleAmount(r.now)
		if !acc.noUse {
			before, varies := r.spanBefore(a, slot, acc.start, acc.amount)
			acc.amtSum = acc.amtSum.Add(before)
			acc.varies = acc.varies || varies
		}
		st := SlotStat{Slot: slot, Amount: acc.amount, Varies: acc.varies, Given: acc.given, Peak: acc.peak.Dec(), PeakAt: acc.peakAt, Over: acc.over}
		if acc.over > 0 {
			st.OverPeak, st.OverAmount, st.OverAt = acc.overPeak.Dec(), acc.overAmt, acc.overAt
		}
		if acc.amtSum.Sign() > 0 {
			if q, err := acc.useSum.Dec().Quo(acc.amtSum); err == nil {
				if v, err := q.Quantize(-2, apd.RoundHalfEven); err == nil {
					st.MeanUse = model.Some(v)
				}
			}
		}
		a.res.Slots = append(a.res.Slots, st)
	}
}

// spanBefore is the amount of slot agent a was given times the time,
// from the span's start to until (when the run first met the slot on
// it), under the partitions in force then: the mean use is over the
// span, not from an agent's first session on. varies: an amount then
// was not first, the one the slot was met with.
func (r *runner) spanBefore(a *agentRun, slot model.SlotName, until time.Time, first model.Dec) (model.Dec, bool) {
	sum, varies := model.Zero, false
	snap := &model.Snapshot{Devices: r.rec.Devices}
	for k, ep := range r.part {
		from := r.rec.From
		if k > 0 && ep.At.After(from) {
			from = ep.At
		}
		to := until
		if k+1 < len(r.part) && r.part[k+1].At.Before(to) {
			to = r.part[k+1].At
		}
		if !to.After(from) {
			continue
		}
		amt := model.Zero
		if i := slices.IndexFunc(ep.Agents, func(ag model.Agent) bool { return ag.ID == a.id }); i >= 0 {
			ag := ep.Agents[i]
			amt, _ = amountWith(&ag, placement.ForAgent(snap, &ag, r.rec.Settings), slot)
		}
		if !amt.Equal(first) {
			varies = true
		}
		sum = sum.Add(amt.Mul(model.DecFromInt64(int64(to.Sub(from)))))
	}
	return sum, varies
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sameAgents(a, b []model.Agent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.ID != y.ID || !x.Mem.Equal(y.Mem) || !sameSlot(x.Given, y.Given) || (x.Given == nil) != (y.Given == nil) || !sameOwns(x.Owns, y.Owns) {
			return false
		}
	}
	return true
}

func sameSlot(a, b model.ResourceSlot) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func sameOwns(a, b map[model.DeviceName][]model.DeviceID) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// sameAlloc: a placement a is the recorded allocation b, amount for
// amount (zeros aside), an amount of a slot in bytes as the record's
// text of it reads (recordedAs).
func sameAlloc(a, b model.Allocations, bytes map[model.SlotName]bool) bool {
	n := 0
	for slot, devs := range a {
		for id, v := range devs {
			if v.IsZero() {
				continue
			}
			w, ok := b[slot][id]
			if !ok || !v.Equal(w) && !(bytes[slot] && recordedAs(v, w)) {
				return false
			}
			n++
		}
	}
	for _, devs := range b {
		for _, v := range devs {
			if !v.IsZero() {
				n--
			}
		}
	}
	return n == 0
}

// recordedAs: an amount of bytes placed as v is recorded as w. A kernel
// asks exact bytes (SLOTS), but its resource.txt writes what it got in
// BinarySize's lossy text (backendai.md §1.3: 4294967295 bytes as "4g"),
// which is what the record has.
func recordedAs(v, w model.Dec) bool {
	r, err := model.ParseBinarySize(model.FormatBinarySize(v))
	return err == nil && r.Equal(w)
}

// amount is an amount of slot as the replay prints it.
func amount(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem {
		// Where the size rounds the bytes, both: a request one byte
		// over read "8g free, 8g requested".
		return model.FormatBinarySizeExact(v)
	}
	return v.String()
}

// Amount is an amount of slot as the replay prints it (mem as a size).
func Amount(slot model.SlotName, v model.Dec) string { return amount(slot, v) }

// Requested is a request as the replay prints it: slot=amount, sorted.
func Requested(r model.ResourceSlot) string {
	var parts []string
	for _, n := range r.Names() {
		parts = append(parts, fmt.Sprintf("%s=%s", n, amount(n, r[n])))
	}
	return strings.Join(parts, " ")
}

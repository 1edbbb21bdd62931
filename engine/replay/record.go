// Package replay answers "had the agents been given these amounts over
// that week, whose sessions would not have started?": it takes the
// sessions a history record saw (each kernel's arrival, what it held of
// every slot, its agent, its departure) and runs them in time order
// through the rules fgtop implements exactly, the manager's per-agent
// limit of the slot-based form (placement.ManagerLimit) and then the
// agent's own allocator over the devices as the plugin registered them
// (placement's nodes over engine/alloc, the allocators simulate runs),
// once under the partition that was in force and once under a proposal.
//
// The record is read only through engine/history's public readers:
// Reader.Sessions (each kernel's stay folded in one pass over the
// segments, the host's cpu and mem included) for the sessions, Reader.At for the devices, the allocator settings and the
// agents' partitions at the span's start and after each apply the
// agent.toml journal recorded.
package replay

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// Session is one kernel as the replay runs it.
type Session struct {
	Kernel  model.KernelID
	Session string
	Owner   string
	Agent   model.AgentID
	// Start is when it arrived: when the record first saw it.
	Start time.Time
	// End is when it left; with Open, the end of the span.
	End  time.Time
	Open bool
	// Before: it was running when the span began (or when the record
	// began again after a gap), so its true arrival is not in the span:
	// it is placed first, before any session that arrives in the span.
	Before bool
	// EndsInGap: it left sometime in a gap of the record, after End;
	// InGap: it arrived in one, before Start (the first moment the record
	// saw it again).
	EndsInGap, InGap bool
	// Requested is what it asked (askedOf): its SLOTS as the record has
	// them at its arrival, else what it held of each slot then.
	Requested model.ResourceSlot
	// Got is where it really ran when it arrived; where it is nil, Held
	// (a record's, as its reader keeps it: Alloc gives both as maps).
	Got  model.Allocations
	Held history.Held
	// Changed: what it held changed while it ran (the replay keeps what
	// it asked on arrival).
	Changed bool
}

// Alloc is where it really ran when it arrived (Got, else Held's maps,
// made anew).
func (s *Session) Alloc() model.Allocations {
	if s.Got != nil || s.Held.IsZero() {
		return s.Got
	}
	return s.Held.Map()
}

// eachHeld calls f with each device's amount of each slot where s ran,
// without making Held's maps: the run's chunks go over every session
// before theirs.
func (s *Session) eachHeld(f func(model.SlotName, model.DeviceID, model.Dec)) {
	if s.Got != nil || s.Held.IsZero() {
		for slot, devs := range s.Got {
			for id, v := range devs {
				f(slot, id, v)
			}
		}
		return
	}
	for i := range s.Held.Len() {
		f(s.Held.At(i))
	}
}

// Request is the session's request as the allocator takes it.
func (s *Session) Request() alloc.Request { return alloc.RequestFromSlots(s.Requested) }

// Epoch is the agents' partition from At on, as the record has it.
type Epoch struct {
	At     time.Time
	Agents []model.Agent
	// Hash is the agent.toml's hash the engine read ("" unknown).
	Hash string
}

// Record is what a replay needs of a history record over one span.
type Record struct {
	From, To time.Time
	// Node is the recorded node's name.
	Node string
	// Devices are the node's devices as the plugin registered them at the
	// span's start.
	Devices  []model.Device
	Settings placement.Settings
	// Sessions in arrival order (those running at the span's start
	// first), then by kernel id.
	Sessions []Session
	// Epochs are the partitions in force, oldest first; the first is in
	// force from From.
	Epochs []Epoch
	// Missing are the record's gaps in the span.
	Missing []history.Missing
	// Notes say what the record could not tell.
	Notes []string
	// end, when read beside the sessions (Load), is the probe of the
	// span's end.
	end *probe
}

// Load reads the sessions of [from, to) from a history record. A span
// reaching outside the record is cut to it.
func Load(rd *history.Reader, from, to time.Time) (*Record, error) {
	from, to, cutNotes, err := spanCut(rd, from, to)
	if err != nil {
		return nil, err
	}
	// The node at the span's start is read beside the sessions, by a
	// reader of its own: the sessions' read leaves part of a core free,
	// and the node's was a tenth of the command, before it.
	type head struct {
		rec *Record
		err error
	}
	hc := make(chan head, 1)
	fork := rd.Fork()
	go func() {
		rec, err := loadHeadAt(fork, from, to)
		hc <- head{rec, err}
	}()
	// So is the node at the span's end, the partitions' last probe
	// (epochs), which came after the read, alone on one core.
	ec := make(chan probe, 1)
	endFork := rd.Fork()
	go func() { ec <- probeAt(endFork, to) }()
	res, list, err := rd.SessionsListHeld(from, to)
	h := <-hc
	end := <-ec
	if h.err != nil {
		return nil, h.err
	}
	if err != nil {
		return nil, fmt.Errorf("replay: reading the sessions: %w", err)
	}
	h.rec.end = &end
	h.rec.Notes = append(cutNotes, h.rec.Notes...)
	h.rec.Missing = inSpan(res.Missing, h.rec.From, h.rec.To)
	h.rec.Sessions = sessionsOfList(list, h.rec.From, h.rec.To, h.rec.Devices)
	h.rec.loadEnd(rd, res)
	return h.rec, nil
}

// probe is the partition's hash at a moment of the record, and the node
// then (nil where the record has none: the hash is then "").
type probe struct {
	at   time.Time
	hash string
	snap *model.Snapshot
}

// probeAt is the node of the record rd at t, as epochs probes it.
func probeAt(rd *history.Reader, t time.Time) probe {
	res, err := rd.At(t)
	if err != nil || res.Snap == nil {
		return probe{at: t}
	}
	return probe{at: t, hash: res.Snap.ConfigHash, snap: res.Snap}
}

// loadHead is what Load knows before it reads the sessions: the span cut
// to the record, the node, its devices and settings, and the partition
// in force at the span's start.
func loadHead(rd *history.Reader, from, to time.Time) (*Record, error) {
	from, to, cutNotes, err := spanCut(rd, from, to)
	if err != nil {
		return nil, err
	}
	rec, err := loadHeadAt(rd, from, to)
	if err != nil {
		return nil, err
	}
	rec.Notes = append(cutNotes, rec.Notes...)
	return rec, nil
}

// spanCut is [from, to) cut to the record's span, with notes that say
// what of the asked span the record does not hold; an error where
// nothing of it is left.
func spanCut(rd *history.Reader, from, to time.Time) (time.Time, time.Time, []string, error) {
	rFrom, rTo, err := rd.Span()
	if err != nil {
		return from, to, nil, fmt.Errorf("replay: %w", err)
	}
	// A start written to the second that the record begins in is its
	// beginning, as snapshot --at and history --since read it.
	from = history.AtStart(from, rFrom)
	if !rd.Active {
		// An end written to the second that the record ends in is its
		// end, as history --until reads it (a recorder's end moves on).
		to = history.AtEnd(to, rTo)
	}
	asked := OutsideError{From: from, To: to, RecordFrom: rFrom, RecordTo: rTo}
	// A span that ends before the record begins lies on the side of its
	// first segment: damage there, not at the record's end, is what to
	// say (the tour: a skipped first segment read as "the last chunk
	// cut short" of the last one).
	before := !to.IsZero() && !to.After(rFrom)
	var notes []string
	// A file named like a segment that the reader left out is said, as
	// history says it: its stretch reads as a segment "deleted or lost"
	// while it lies there, damaged.
	for _, sk := range rd.Skipped() {
		notes = append(notes, "skipped "+sk.String())
	}
	if from.Before(rFrom) {
		if !from.IsZero() {
			st := history.Stamps(from, rFrom)
			notes = append(notes, fmt.Sprintf("the span asked begins at %s, before the record does: the replay begins with it, at %s", st[0], st[1]))
		}
		from = rFrom
	}
	if to.IsZero() || to.After(rTo) {
		if !to.IsZero() && !rd.Active {
			// A recorder that holds the record writes up to now: its end
			// is a second or so ago, not a stretch the record lacks.
			notes = append(notes, fmt.Sprintf("the span asked runs to %s, past the record's end at %s, and no recorder has written since: the replay ends there", stamp(to), stamp(rTo)))
		}
		to = rTo
	}
	if !from.Before(to) {
		if before {
			var why []string
			if u := rd.SkippedBefore(); u != "" {
				why = append(why, "before it, "+u)
			}
			if u := rd.UnreadableFirst(); u != "" {
				why = append(why, "the record is damaged ("+u+")")
			}
			asked.Damage = strings.Join(why, "; ")
			return from, to, nil, &asked
		}
		// A record cut short by damage ends where the damage begins:
		// that, not the span asked, is what to say (the reader names it
		// for a moment after the end).
		var oe *history.OutsideError
		if _, err := rd.At(rTo.Add(time.Hour)); errors.As(err, &oe) {
			asked.Damage = oe.Damage
		}
		if asked.Damage == "" {
			// A last segment that holds nothing to read (one garbage
			// file) leaves a span of file names: say why, as history
			// and snapshot --at do, not "covers 08:25:39 to 08:25:39"
			// as if intact.
			if u := rd.UnreadableLast(); u != "" {
				asked.Damage = "the record is damaged (" + u + ")"
			}
		}
		return from, to, nil, &asked
	}
	return from, to, notes, nil
}

// OutsideError is a span that holds nothing of the record: as asked (To
// zero: up to the record's end), and the record's own.
type OutsideError struct {
	From, To             time.Time
	RecordFrom, RecordTo time.Time
	// Damage: the record ends early because its last segment is damaged
	// there, or, for a span before the record, what the reader could
	// not read of its beginning (the reader's words); "" otherwise.
	Damage string
}

func (e *OutsideError) Error() string {
	to := e.To
	if to.IsZero() {
		to = e.RecordTo
	}
	// With the fraction of a second where two of the four fall in one:
	// a span that ends as the record begins is not "to 08:25:39" beside
	// "covers 08:25:39 to".
	st := history.Stamps(e.From, to, e.RecordFrom, e.RecordTo)
	msg := fmt.Sprintf("replay: the span %s to %s holds nothing of the record, which covers %s to %s",
		st[0], st[1], st[2], st[3])
	if e.Damage != "" {
		msg += ": " + e.Damage
	}
	return msg
}

// QuantumNote is the replay's word on a record of fractional maps whose
// quantum_size the recorder could not read: shares are rounded by
// FractionAllocMap's own default, which may not be the node's.
var QuantumNote = "the quantum_size of the fractional maps is not known (the node's CUDA plugin settings were not read, or theirs is not a positive decimal): shares are rounded to " + placement.DefaultQuantum.String() + ", FractionAllocMap's default, which may not be the node's"

// loadHeadAt is loadHead of a span already cut to the record.
func loadHeadAt(rd *history.Reader, from, to time.Time) (*Record, error) {
	first, err := rd.At(from)
	if err != nil {
		return nil, fmt.Errorf("replay: the node at %s: %w", stamp(from), err)
	}
	snap := first.Snap
	rec := &Record{From: from, To: to, Node: snap.Node, Devices: slices.Clone(snap.Devices),
		Settings: fleet.SettingsFor(snap, fleet.Settings{})}
	for i := range rec.Devices {
		rec.Devices[i].Telemetry = nil
	}
	rec.Epochs = []Epoch{{At: from, Agents: partitionOf(snap.Agents), Hash: snap.ConfigHash}}
	if snap.Allocator.QuantumUnknown() {
		rec.Notes = append(rec.Notes, QuantumNote)
	}
	return rec, nil
}

// loadEnd is Load after the sessions are made.
func (rec *Record) loadEnd(rd *history.Reader, res *history.SessionsResult) {
	rec.epochs(rd, res.Partitions)
	// The node at the end is the probe's only: a record is kept (the
	// editor's cache) without it.
	rec.end = nil
	rec.Notes = append(rec.Notes, unlisted(rec, false)...)
	changed := 0
	for i := range rec.Sessions {
		if rec.Sessions[i].Changed {
			changed++
		}
	}
	if changed > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d session(s) changed what they held while running; each is replayed with what it asked when it arrived (its SLOTS, else what it held then)", changed))
	}
	if n := agentlessNote(rec); n != "" {
		rec.Notes = append(rec.Notes, n)
	}
}

// agentlessNote says that sessions of the record name no agent on a node
// of several, and so are routed by a guess (pick); "" when none do. A
// kernel has none where its recovery.json was never read and its scratch
// root is shared, and where it names an agent that cannot be its there
// (history's identity): both are said, the record keeps no more.
func agentlessNote(rec *Record) string {
	if !slices.ContainsFunc(rec.Epochs, func(e Epoch) bool { return len(e.Agents) > 1 }) {
		return ""
	}
	n := 0
	var first model.KernelID
	for i := range rec.Sessions {
		if rec.Sessions[i].Agent == "" {
			if n == 0 {
				first = rec.Sessions[i].Kernel
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d session(s) of the record name no agent (no recovery.json said whose they were, or theirs named an agent agent.toml does not give their scratch root; the first: %s): each goes to the first agent that takes it then, a guess that may move under a proposal and change that agent's answer", n, first)
}

// stamp is a moment as the replay prints it.
func stamp(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

// partitionOf keeps what the replay needs of the agents: their ids and
// partitions.
func partitionOf(as []model.Agent) []model.Agent {
	out := make([]model.Agent, len(as))
	for i, a := range as {
		out[i] = model.Agent{ID: a.ID, Owns: a.Owns, Mem: a.Mem, Given: a.Given}
	}
	return out
}

func inSpan(ms []history.Missing, from, to time.Time) []history.Missing {
	var out []history.Missing
	for _, m := range ms {
		if m.To.Before(from) || m.From.After(to) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// epochs finds the partitions put in force inside the span: the
// moments the agent.toml hash the engine read changes. The record keeps
// the hash and the agents' partitions in every snapshot, so At at two
// moments tells whether it changed between them, and halving the stretch
// finds when. The journal's applies and rollbacks in the span are probed
// too, so that a change undone later inside the span is not missed; one
// made and undone by another tool between two probes is (said in
// docs/replay.md).
func (rec *Record) epochs(rd *history.Reader, parts []agentconfig.JournalRecord) {
	probes := []time.Time{rec.From}
	for _, p := range parts {
		if p.Time.After(rec.From) && p.Time.Before(rec.To) {
			probes = append(probes, p.Time)
		}
	}
	probes = append(probes, rec.To)
	slices.SortFunc(probes, time.Time.Compare)
	hashAt := func(t time.Time) (string, *model.Snapshot) {
		if rec.end != nil && rec.end.at.Equal(t) {
			return rec.end.hash, rec.end.snap
		}
		p := probeAt(rd, t)
		return p.hash, p.snap
	}
	prevHash := rec.Epochs[0].Hash
	for _, t := range probes[1:] {
		hash, _ := hashAt(t)
		for n := 0; n < 16 && hash != "" && hash != model.ConfigUnusable && hash != prevHash; n++ {
			if !rec.bisect(t, prevHash, hashAt, rd) {
				break
			}
			prevHash = rec.Epochs[len(rec.Epochs)-1].Hash
		}
	}
}

// bisect finds the first change of the hash from prev between the last
// epoch and t, and adds the epoch it starts.
func (rec *Record) bisect(t time.Time, prevHash string, hashAt func(time.Time) (string, *model.Snapshot), rd *history.Reader) bool {
	{
		lo, hi := rec.Epochs[len(rec.Epochs)-1].At, t
		for hi.Sub(lo) > time.Millisecond {
			mid := lo.Add(hi.Sub(lo) / 2)
			if h, _ := hashAt(mid); h == prevHash || h == "" {
				lo = mid
			} else {
				hi = mid
			}
		}
		at := hi
		if next, ok := rd.Step(lo, 1); ok && !next.After(hi) {
			at = next
		}
		h, snap := hashAt(at)
		if snap == nil || h == prevHash {
			return false
		}
		rec.Epochs = append(rec.Epochs, Epoch{At: at, Agents: partitionOf(snap.Agents), Hash: h})
		return true
	}
}

// sessionsOf makes the replay's sessions of the record's kernels in
// [from, to), on a node of devs: each with what it asked on arrival
// (askedOf) and where it ran, its agent then, and who it is as learnt,
// even late. Where what it held changed while it ran, the replay keeps
// what it asked on arrival (Changed says so).
func sessionsOf(ks []history.KernelSession, from, to time.Time, devs []model.Device) []Session {
	return sessionsOfFunc(len(ks), func(i int, _ *history.KernelSession) *history.KernelSession { return &ks[i] }, from, to, devs)
}

// sessionsOfList is sessionsOf of the sessions of list, each made as it
// is taken (history.SessionList): not all of them at once beside the
// walk's own.
func sessionsOfList(list *history.SessionList, from, to time.Time, devs []model.Device) []Session {
	return sessionsOfFunc(list.Len(), func(i int, k *history.KernelSession) *history.KernelSession { list.At(i, k); return k }, from, to, devs)
}

// sessionsOfFunc is sessionsOf of the n kernels' sessions at gives: the
// i-th, made into buf where it needs room (at is called on two
// goroutines at once, each with its own buf).
func sessionsOfFunc(n int, at func(i int, buf *history.KernelSession) *history.KernelSession, from, to time.Time, devs []model.Device) []Session {
	// Each kernel's session is its own: on a busy week (200,000 kernels)
	// the two halves are made on two cores, each into its part of one
	// slice, and joined in order by moving the second down (a slice for
	// each, joined by append, was 0.05 s of copying onto fresh pages).
	out := make([]Session, n)
	made := 0
	if half := n / 2; half >= 4096 && runtime.GOMAXPROCS(0) > 1 {
		var m int
		done := make(chan struct{})
		go func() {
			defer close(done)
			m = sessionsOfPart(out[half:], half, n, at, from, to, devs)
		}()
		made = sessionsOfPart(out[:half], 0, half, at, from, to, devs)
		<-done
		made += copy(out[made:], out[half:half+m])
	} else {
		made = sessionsOfPart(out, 0, n, at, from, to, devs)
	}
	clear(out[made:])
	out = out[:made:made]
	sortSessions(out)
	return out
}

// sessionsOfPart makes the sessions of kernels [lo, hi) of at into out,
// in their order, and says how many it made.
func sessionsOfPart(out []Session, lo, hi int, at func(int, *history.KernelSession) *history.KernelSession, from, to time.Time, devs []model.Device) int {
	m := newAskMemo(devs)
	n := 0
	var buf history.KernelSession
	for i := lo; i < hi; i++ {
		k := at(i, &buf)
		if !keeps(k, from, to) {
			continue
		}
		s := &out[n]
		if k.Held.IsZero() {
			*s = Session{Kernel: k.Kernel, Agent: k.Agent, Start: k.From, Got: k.Alloc, Requested: m.askedOf(k.Slots, k.Alloc)}
		} else {
			*s = Session{Kernel: k.Kernel, Agent: k.Agent, Start: k.From, Held: k.Held, Requested: m.askedOfHeld(k.Slots, k.Held)}
		}
		s.finish(k, from, to)
		n++
	}
	return n
}

// keeps: k is a session of the replay of [from, to): it held something
// in it.
func keeps(k *history.KernelSession, from, to time.Time) bool {
	return (k.Open || k.To.After(from)) && !k.From.After(to) && (holdsAny(k.Alloc) || k.Held.Len() > 0)
}

// holdsAny: a has some device of some slot (its request is not empty).
func holdsAny(a model.Allocations) bool {
	for _, devs := range a {
		if len(devs) > 0 {
			return true
		}
	}
	return false
}

// askMemo keeps what askedOf made: a week's 200,000 sessions ask a few
// thousand requests, and the record gives each equal SLOTS one map. The
// memo is keyed on those maps' addresses: the sessions they are of keep
// them alive while the memo is used, so no address is another map's.
type askMemo struct {
	decs  map[fixed]model.Dec
	fx    map[model.Dec]fixed
	same  map[reqKey]model.ResourceSlot
	slots map[unsafe.Pointer]model.ResourceSlot
	// registered are the slots the record's devices register, plugins
	// their plugins (nil: the devices are not known).
	registered map[model.SlotName]bool
	plugins    map[model.DeviceName]bool
	// placed are the entries of the sessions' Helds by place, as summed.
	placed []placedFixed
}

// newAskMemo is a memo for the sessions of a record of devs (nil: the
// devices are not known).
func newAskMemo(devs []model.Device) *askMemo {
	m := &askMemo{decs: map[fixed]model.Dec{}, fx: map[model.Dec]fixed{}, same: map[reqKey]model.ResourceSlot{},
		slots: map[unsafe.Pointer]model.ResourceSlot{}}
	if len(devs) > 0 {
		m.registered, m.plugins = map[model.SlotName]bool{}, map[model.DeviceName]bool{}
		for _, d := range devs {
			m.plugins[d.Name] = true
			m.registered[d.Slot] = true
		}
	}
	return m
}

// unregistered: slot is of a plugin the record lists, and none of its
// devices registers it. The agent writes only the slots it knows in
// SLOTS (normalize_slots(ignore_unknown=True), backendai.md §1.2): one it
// does not know was not asked of it (cuda.device on a fractional node).
func (m *askMemo) unregistered(slot model.SlotName) bool {
	if m.plugins == nil || !m.plugins[slot.DeviceName()] {
		return false
	}
	return !m.registered[slot]
}

// askedOf is what a session asked, from its SLOTS (slots) and what it
// held on arrival (a); an amount no agent writes (plausibleAsk) is not
// taken. Backend.AI's manager counts the request against
// an agent's amount, and its allocator places the request, rounding each
// device's share down to the quantum and writing memory in a lossy text
// (backendai.md §1.3): what a kernel held can be less than it asked
// (1.5 held as 0.7 + 0.7). So each slot is SLOTS' amount where it is
// not zero (the agent writes "0" for every slot it knows and was not
// asked); a slot SLOTS does not ask but the kernel held (a record made
// before SLOTS were kept, or SLOTS torn) is what it held. The result is
// shared: never changed.
func (m *askMemo) askedOf(slots model.ResourceSlot, a model.Allocations) model.ResourceSlot {
	return m.askedWith(slots, requestOfMemo(a, m.decs, m.fx, m.same))
}

// askedOfHeld is askedOf of an allocation kept as h.
func (m *askMemo) askedOfHeld(slots model.ResourceSlot, h history.Held) model.ResourceSlot {
	return m.askedWith(slots, m.requestOfHeld(h))
}

// askedWith is askedOf of what the session held of each slot (held).
func (m *askMemo) askedWith(slots model.ResourceSlot, held model.ResourceSlot) model.ResourceSlot {
	if len(slots) == 0 {
		return held
	}
	key := reflect.ValueOf(slots).UnsafePointer()
	asked, ok := m.slots[key]
	if !ok {
		asked = make(model.ResourceSlot, len(slots))
		for n, v := range slots {
			if v.Sign() > 0 && plausibleAsk(n, v) && !m.unregistered(n) {
				asked[n] = v
			}
		}
		if len(m.slots) >= 1<<16 {
			clear(m.slots)
		}
		m.slots[key] = asked
	}
	if len(asked) == 0 {
		return held
	}
	if coveredBy(held, asked) {
		return asked
	}
	r := make(model.ResourceSlot, len(asked)+len(held))
	for n, v := range asked {
		r[n] = v
	}
	for n, v := range held {
		if _, ok := r[n]; !ok {
			r[n] = v
		}
	}
	return r
}

// maxAskBytes is the most memory a request is taken to ask: what a byte
// count in an int64 holds (8 EiB), more than any node has.
var maxAskBytes = model.NewDec(1<<63-1, 0)

// plausibleAsk: v of slot is an amount an agent could have written in
// SLOTS (the rule an operator's amounts keep, model.CheckAmount: finite,
// within Backend.AI's decimals; memory within an int64). An agent never
// writes 1e30 cores or Infinity; a file that says so was not written by
// one, and the slot is taken at what the kernel held.
func plausibleAsk(slot model.SlotName, v model.Dec) bool {
	if slot == model.SlotMem {
		return model.CheckAmount(slot, v, true) == nil && !maxAskBytes.Less(v)
	}
	return model.CheckAmount(slot, v, false) == nil
}

// coveredBy: every slot of a is one r names (whatever the amounts).
func coveredBy(a, r model.ResourceSlot) bool {
	for n := range a {
		if _, ok := r[n]; !ok {
			return false
		}
	}
	return true
}

// requestOf is what a holds of each slot: the request of a session that
// arrived with it. The sums are fixed's, the very Decs Dec's Add gives
// (TestFixedIsDecArithmetic), made once per value and kept in decs: a
// week's 200,000 sessions ask a few amounts, and each Dec sum allocated
// (TestRequestOfIsTheDecSum).
func requestOf(a model.Allocations, decs map[fixed]model.Dec) model.ResourceSlot {
	return requestOfMemo(a, decs, nil, nil)
}

// reqKey is a request of a few slots as requestOfMemo shares it: its
// slots in order, each with its Dec (the one decs gives every equal sum).
type reqKey struct {
	n    int
	slot [4]model.SlotName
	amt  [4]model.Dec
}

// requestOfMemo is requestOf keeping each amount's fixed in fx (when not
// nil) by the Dec itself: a Dec is never changed once made, and the
// record's reader gives one Dec to every equal amount of a segment, so a
// week's amounts are converted a few thousand times, not a million. With
// same (not nil), a request of the same slots in the same Decs as one
// made before is that one's map: requests are never changed once made,
// and a week's 200,000 sessions ask a few thousand.
func requestOfMemo(a model.Allocations, decs map[fixed]model.Dec, fx map[model.Dec]fixed, same map[reqKey]model.ResourceSlot) model.ResourceSlot {
	var room [8]slotFixed
	sums := room[:0]
	for slot, devs := range a {
		if len(devs) == 0 {
			continue
		}
		var f fixed
		for _, amt := range devs {
			f = f.add(fixedOfMemo(amt, fx), false)
		}
		sums = append(sums, slotFixed{slot: slot, f: f})
	}
	return requestOfSums(sums, decs, same)
}

// requestOfHeld is requestOfMemo of an allocation kept as h (each
// slot's entries together), each amount's fixed kept by its place: a
// week's 1.2 million entries are 2,000 places.
func (m *askMemo) requestOfHeld(h history.Held) model.ResourceSlot {
	var room [8]slotFixed
	sums := room[:0]
	for i := range h.Len() {
		at := h.Place(i)
		if at >= len(m.placed) {
			m.placed = slices.Grow(m.placed, at+1-len(m.placed))[:at+1]
		}
		p := &m.placed[at]
		slot := p.slot
		if !p.made {
			var amt model.Dec
			slot, _, amt = h.At(i)
			*p = placedFixed{slot: slot, f: fixedOfMemo(amt, m.fx), made: true}
		}
		if len(sums) == 0 || sums[len(sums)-1].slot != slot {
			sums = append(sums, slotFixed{slot: slot})
		}
		last := &sums[len(sums)-1]
		last.f = last.f.add(p.f, false)
	}
	return requestOfSums(sums, m.decs, m.same)
}

// placedFixed is an entry's slot and amount as requestOfHeld sums it.
type placedFixed struct {
	slot model.SlotName
	f    fixed
	made bool
}

// slotFixed is what a session held of one slot, summed.
type slotFixed struct {
	slot model.SlotName
	f    fixed
}

// requestOfSums is the request of a session that held sums (each slot
// once), each amount the Dec decs gives every equal sum, shared through
// same as requestOfMemo says.
func requestOfSums(sums []slotFixed, decs map[fixed]model.Dec, same map[reqKey]model.ResourceSlot) model.ResourceSlot {
	var k reqKey
	shared := same != nil && len(sums) <= len(k.slot)
	var req model.ResourceSlot
	if !shared {
		req = make(model.ResourceSlot, len(sums))
	}
	for _, sf := range sums {
		f := sf.f
		d := f.d
		if !f.dec {
			var ok bool
			if d, ok = decs[f]; !ok {
				d = f.Dec()
				decs[f] = d
			}
		}
		if shared {
			k.slot[k.n], k.amt[k.n] = sf.slot, d
			k.n++
		} else {
			req[sf.slot] = d
		}
	}
	if !shared {
		return req
	}
	for i := 1; i < k.n; i++ {
		for j := i; j > 0 && k.slot[j] < k.slot[j-1]; j-- {
			k.slot[j], k.slot[j-1] = k.slot[j-1], k.slot[j]
			k.amt[j], k.amt[j-1] = k.amt[j-1], k.amt[j]
		}
	}
	if req, ok := same[k]; ok {
		return req
	}
	req = make(model.ResourceSlot, k.n)
	for i := range k.n {
		req[k.slot[i]] = k.amt[i]
	}
	if len(same) >= 1<<16 {
		clear(same)
	}
	same[k] = req
	return req
}

// finish sets what s (made of k's kernel, agent, arrival and what it
// held then) takes of the rest of k: who it is, how it ended, how it
// relates to the span and the record's gaps.
func (s *Session) finish(k *history.KernelSession, from, to time.Time) {
	s.Session, s.Owner, s.End, s.Open, s.Changed = k.Session, k.User, k.To, k.Open, k.Changed
	s.InGap = k.Since && k.From.After(from)
	s.EndsInGap = k.Gone && !k.Open
	s.Before = !s.Start.After(from)
	if s.Open || s.End.After(to) {
		s.End = to
	}
}

// sortSessions puts sessions in the order the replay runs them: those
// running at the span's start first, then by arrival, then kernel id.
func sortSessions(out []Session) {
	// Read from a record they are in this order already (by arrival,
	// so those running at the start first): checking is cheaper.
	if slices.IsSortedFunc(out, cmpSessions) {
		return
	}
	slices.SortFunc(out, cmpSessions)
}

func cmpSessions(a, b Session) int {
	{
		if a.Before != b.Before {
			if a.Before {
				return -1
			}
			return 1
		}
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(string(a.Kernel), string(b.Kernel))
	}
}

// unlisted says which requested plugins the record lists no devices of:
// the record's own words, or, of an arrivals file (node: the node as
// given), the node's.
func unlisted(rec *Record, node bool) []string {
	have := map[model.DeviceName]bool{}
	for _, d := range rec.Devices {
		have[d.Name] = true
	}
	missing := map[model.DeviceName]bool{}
	for i := range rec.Sessions {
		for s := range rec.Sessions[i].Requested {
			if n := s.DeviceName(); !have[n] {
				missing[n] = true
			}
		}
	}
	var out []string
	for _, n := range slices.Sorted(mapKeys(missing)) {
		if node {
			out = append(out, fmt.Sprintf("the node as given lists no %s devices (give them with --devices, or run where its plugin sees them): the sessions' %s is judged by the agents' amounts only, not by an allocator", n, n))
			continue
		}
		out = append(out, fmt.Sprintf("the record lists no %s devices (it was made without the host's): the sessions' %s is judged by the agents' amounts only, not by an allocator", n, n))
	}
	return out
}

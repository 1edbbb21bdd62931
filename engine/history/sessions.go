package history

import (
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// KernelSession is one kernel's stay as a replay of the record needs it:
// when it first held anything, when it last did, who it is and what it
// held when it arrived. It is what History's intervals of the kernel
// (with Filter.Host) fold into, without an interval per device and
// change.
type KernelSession struct {
	Kernel model.KernelID
	// Agent is the agent it held its arrival's allocation under, or, when
	// its recovery record was not read yet then, the one that record
	// names, learnt later, over the scratch root's the engine gave it
	// until then: none where it names an agent that cannot be its there
	// (as History's intervals have it: identity.fill).
	Agent model.AgentID
	// Session, User and Project are the last it was known by while it
	// held anything (learnt later where the record lacked them then).
	Session, User, Project string
	// From is when it first held anything in the asked span; To when it
	// last did (the record's end when Open).
	From, To time.Time
	// Since: it held it already when the record (or the record after a
	// gap) began, so From is when it was first seen.
	Since bool
	Open  bool
	// Gone: it stopped sometime in a gap of the record, after To.
	Gone bool
	// Alloc is what it held at From, on every device the record lists
	// and the host's cpu and mem (only amounts it holds).
	Alloc model.Allocations
	// Slots is what it requested (its SLOTS) as the record had it at
	// From: nil where the record has none. Shared between sessions:
	// never changed.
	Slots model.ResourceSlot
	// Held, with a list made by SessionsListHeld, is Alloc kept
	// compactly; Alloc is then nil wherever Held is not zero.
	Held Held
	// Changed: at some later moment it held an amount of a slot on a
	// device that Alloc does not say (a grown or moved allocation; one
	// that only gives part back is not a change).
	Changed bool
}

// SessionsResult is what Sessions found.
type SessionsResult struct {
	// Sessions are by From, then kernel id.
	Sessions []KernelSession
	Missing  []Missing
	From, To time.Time
	// Partitions are the agent.toml journal's records in the span.
	Partitions []agentconfig.JournalRecord
	// Folded is how many segments were taken from their folds instead
	// of walked.
	Folded int
}

// ksum is a kernel's session as the walk folds it. The sealed segments'
// folds (fold.go) keep this walk's decisions: changing its rules changes
// foldMagic (foldfile.go), or old folds answer by the old rules.
//
// A busy week has 200,000 of them, all kept to the walk's end beside the
// folds being read: each byte of it is 0.2 MB of the read's heap, so what
// few sums use (the span's edges) is kept aside, and who it is only once.
type ksum struct {
	s ksess
	// who: the last identity seen while it held something (its agent is
	// s.Agent's concern, never this).
	who known
	// aside is what only the sums at the span's edges need (nil: none).
	aside *ksumAside
	// ents: with lazy, s.Alloc is these entries' maps (a regular
	// allocation of nslots slots: each slot and device once; the
	// entries as keepEnts keeps them), made off the walk (built) and put
	// in at its end.
	ents   []uint32
	nslots int32
	// seq is its kernel's place in the walk's order (SessionNote.Seq).
	seq int32
	// built is written by the maps' goroutine only, read after it ends.
	built   model.Allocations
	started bool
	// holding: its current head holds something.
	holding bool
	// bare: its arrival's head lacked its recovery record (no session),
	// so s.Agent is the scratch root's, and the record's agent, once
	// learnt, is its session's.
	bare bool
	lazy bool
}

// ksess is what a KernelSession says, less who it is (ksum.who).
type ksess struct {
	Kernel                     model.KernelID
	Agent                      model.AgentID
	From, To                   time.Time
	Alloc                      model.Allocations
	Slots                      model.ResourceSlot
	Since, Open, Gone, Changed bool
}

// known is the part of an identity a session takes as it runs.
type known struct{ Session, User, Project string }

// take is identity.take of o's session, user and project.
func (w *known) take(o identity) {
	if o.Session != "" {
		w.Session = o.Session
	}
	if o.User != "" {
		w.User = o.User
	}
	if o.Project != "" {
		w.Project = o.Project
	}
}

// ksumAside is what a sum needs before and after the asked span.
type ksumAside struct {
	// before: since when it has held what it holds on each device, kept
	// while the walk is before the asked span (rebase); asked: what it
	// requested from when, there, each change of it once.
	before map[model.DeviceKey]time.Time
	asked  []askedAt
	// after: after the asked span, the devices it still holds as it did
	// in it (afterSpan).
	after map[model.DeviceKey]bool
}

// side is k's aside, made when first needed.
func (k *ksum) side() *ksumAside {
	if k.aside == nil {
		k.aside = &ksumAside{}
	}
	return k.aside
}

// askedAt is a kernel's request (SLOTS) from a moment on.
type askedAt struct {
	at    time.Time
	slots model.ResourceSlot
}

// noteAsked notes, before the asked span, that the kernel asks slots at
// t (a change only).
func (k *ksum) noteAsked(slots model.ResourceSlot, t time.Time) {
	a := k.side()
	if n := len(a.asked); n > 0 && slotsIdentical(a.asked[n-1].slots, slots) {
		return
	}
	a.asked = append(a.asked, askedAt{at: t, slots: slots})
}

// askedWhen is what the kernel asked at t, of what noteAsked noted.
func (k *ksum) askedWhen(t time.Time) model.ResourceSlot {
	var r model.ResourceSlot
	if k.aside == nil {
		return r
	}
	for _, a := range k.aside.asked {
		if a.at.After(t) {
			break
		}
		r = a.slots
	}
	return r
}

// allocJob is a session's arrival allocation to make maps of: its
// entries as keepEnts kept them (ents, their places in the batch's tab,
// of n slots), not the fold's or record's own, whose room is used again
// once the walk is past them (foldBuf). note, when not negative, is the
// arrival's SessionNote in the batch, given the maps too.
type allocJob struct {
	k    *ksum
	ents []uint32
	n    int32
	note int
}

// mapBatch is what the walk sends the maps' goroutine: arrivals to make
// maps of and, when a follower is fed (SessionsFollow), the notes to
// pass on once their maps are made.
type mapBatch struct {
	jobs []allocJob
	// tab is the walk's table of entries as it was when the batch was
	// sent: it is only appended to, so the jobs' places in it read the
	// same on the maps' goroutine whatever the walk adds.
	tab   []allocEnt
	notes []SessionNote
	upto  time.Time
}

// NoteKind is what a SessionNote says.
type NoteKind uint8

const (
	// NoteArrive: a session arrived (At is its From, as Sessions gives
	// it; Agent as known then; Alloc what it held).
	NoteArrive NoteKind = iota + 1
	// NoteLeave: a session stopped holding anything at At.
	NoteLeave
	// NoteResume: a session said to have left holds something again, so
	// its departure was not its end.
	NoteResume
)

// SessionNote is one thing the walk learnt of a session as it went, in
// the order it learnt them (SessionsFollow). What a note says may be
// made final only by the walk's end (the agent learnt late, a kernel
// coming back): the follower checks its notes against the result.
type SessionNote struct {
	Kind   NoteKind
	Kernel model.KernelID
	At     time.Time
	// Since, Agent, Alloc and Slots are an arrival's.
	Since bool
	Agent model.AgentID
	Alloc model.Allocations
	Slots model.ResourceSlot
	// Gone: a departure in a gap of the record.
	Gone bool
	// Seq numbers the kernel among those the walk met (from 0, each
	// once), so that a follower can file its notes without a map.
	Seq int
}

// SessionBatch is notes sent together. Upto is the walk's promise that
// no later note is of a moment before it: a follower may act on what
// the notes say of moments before Upto, and checks the promise.
type SessionBatch struct {
	Notes []SessionNote
	Upto  time.Time
}

// sessWalk tracks every kernel's head and folds it into its session.
type sessWalk struct {
	h *histWalk // the interner, the checkpoint reader and learnt identities
	// since, until: the asked span; what a kernel did after until is not
	// its session's (History drops the intervals that begin after it).
	since, until time.Time
	heads        map[model.KernelID]*sessTrack
	sums         map[model.KernelID]*ksum
	order        []model.KernelID
	// inSpan: the walk reached since, and the sessions begun before it
	// were rebased.
	inSpan bool
	// jobs are arrivals whose maps are to be made, sent in batches to
	// the goroutine that makes them (startMaps): on a busy week the maps
	// of 200,000 arrivals were a third of the walk's own time, and the
	// walk needs them only at its end.
	jobs   []allocJob
	jobsC  chan mapBatch
	mapped chan struct{}
	// follow, when not nil, is fed the notes (SessionsFollow), through
	// the maps' goroutine, which gives the arrivals their maps first.
	follow chan<- SessionBatch
	notes  []SessionNote
	upto   time.Time
	every  int
	// held: the arrivals' maps are not made (SessionsListHeld).
	held bool
	// slab is where the next kernels' sums are taken from; idx where
	// the arrivals' entries are kept, as their places in tab (keepEnts),
	// tabAt each distinct entry's place there.
	slab  []ksum
	idx   []uint32
	tab   []allocEnt
	tabAt map[allocEnt]uint32
}

type sessTrack struct {
	head    sessHead
	pending bool
	sum     *ksum
	// folded: the track comes from a segment's fold, whose head is not
	// kept: the next checkpoint's head is put, whatever it is.
	folded bool
}

// Sessions walks the record of [since, until) once (zero: unbounded)
// and gives each kernel that held anything there its session. It is
// History(Filter{Since, Until, Host: true}) folded per kernel, read in
// one pass with no per-device intervals: a week of a busy node has
// millions of those and a few hundred thousand sessions.
func (r *Reader) Sessions(since, until time.Time) (*SessionsResult, error) {
	return r.SessionsFollow(since, until, nil, 0)
}

// SessionsFollow is Sessions feeding follow, when not nil, with what the
// walk learns of the sessions in the span as it goes (SessionNote), so
// that a follower can work on them on another core while the walk reads
// on; follow is closed when the walk ends, whatever the outcome, and a
// follower must read it to its close. The notes say nothing Sessions'
// result does not: the follower checks what it took of them against it.
// every is how many notes a batch gathers at least before it is sent (0:
// 256; a small one hands them over sooner, in more batches: the tests').
func (r *Reader) SessionsFollow(since, until time.Time, follow chan<- SessionBatch, every int) (*SessionsResult, error) {
	res, list, err := r.sessionsWalk(since, until, follow, every, false)
	if err != nil {
		return nil, err
	}
	res.Sessions = make([]KernelSession, list.Len())
	for i := range res.Sessions {
		list.At(i, &res.Sessions[i])
	}
	return res, nil
}

// SessionsList is Sessions with the sessions left to make one at a time
// (SessionList.At): Sessions' result has them all made at once.
func (r *Reader) SessionsList(since, until time.Time) (*SessionsResult, *SessionList, error) {
	return r.sessionsWalk(since, until, nil, 0, false)
}

// SessionsListHeld is SessionsList with the arrivals' allocations left
// as the walk keeps them (KernelSession.Held) rather than made into maps:
// for a reader that walks each once.
func (r *Reader) SessionsListHeld(since, until time.Time) (*SessionsResult, *SessionList, error) {
	return r.sessionsWalk(since, until, nil, 0, true)
}

// sessionsWalk is SessionsFollow with the sessions not made yet.
// held (never with follow): the arrivals' maps are not made (Held).
func (r *Reader) sessionsWalk(since, until time.Time, follow chan<- SessionBatch, every int, held bool) (*SessionsResult, *SessionList, error) {
	if len(r.segs) == 0 {
		if follow != nil {
			close(follow)
		}
		return nil, nil, r.empty()
	}
	f := Filter{Since: since, Until: until, Host: true}
	q := r.newHistRun(f)
	sw := &sessWalk{h: q.h, since: since, until: until, heads: map[model.KernelID]*sessTrack{}, sums: map[model.KernelID]*ksum{},
		follow: follow, every: every, held: held && follow == nil}
	if sw.every <= 0 {
		sw.every = 256
	}
	var bufs chan foldBuf
	if follow == nil && !r.noFolds {
		q.foldOf = r.foldOf
		if q.foldOf == nil {
			// The folds' entries in a few buffers in turn: one being
			// joined, one waiting, one being decoded.
			bufs = make(chan foldBuf, 3)
			reqs := newReqCache()
			q.foldOf = func(sf segFile, prev *segFile) *segFold { return r.loadFoldBuf(sf, prev, bufs, reqs) }
		}
	}
	if !sw.held {
		sw.startMaps()
		defer sw.endMaps()
	}
	if err := r.walkSeq(q, sw); err != nil {
		return nil, nil, err
	}
	// The folds' buffers are dead once the walk ends (its read-ahead
	// with it), and were a tenth of the heap the sessions are then
	// copied out beside.
	q.foldOf = nil
	for bufs != nil && len(bufs) > 0 {
		<-bufs
	}
	sw.reach(q.res.To)
	sw.endMaps()
	res := &SessionsResult{Missing: q.res.Missing, From: q.res.From, To: q.res.To, Partitions: q.res.Partitions, Folded: q.folded}
	if res.To.IsZero() {
		// No segment walked (the span ends before the record): the
		// record's end from its last segment, as History gives it.
		_, to, err := r.Span()
		if err != nil {
			return nil, nil, err
		}
		res.To = to
	}
	for _, tr := range sw.heads {
		if tr.sum != nil && tr.sum.holding {
			tr.sum.s.To, tr.sum.s.Open, tr.sum.s.Gone = res.To, true, false
		}
	}
	list := &SessionList{ident: sw.h.ident, sums: make([]*ksum, 0, len(sw.order))}
	if sw.held {
		list.tab = &heldTab{ents: sw.tab}
	}
	for _, id := range sw.order {
		k := sw.sums[id]
		if !k.started || !until.IsZero() && k.s.From.After(until) {
			continue
		}
		list.sums = append(list.sums, k)
	}
	slices.SortFunc(list.sums, func(a, b *ksum) int {
		if c := a.s.From.Compare(b.s.From); c != 0 {
			return c
		}
		return strings.Compare(string(a.s.Kernel), string(b.s.Kernel))
	})
	return res, list, nil
}

// SessionList is the sessions Sessions gives, in its order, each made
// when asked (At) from what the walk kept of it: Sessions' copy of them
// all at once, beside what the walk kept, was a sixth of the heap a busy
// week's read grew to, each page of it fresh.
type SessionList struct {
	sums []*ksum
	// tab: made by SessionsListHeld, the walk's table of entries.
	tab   *heldTab
	ident map[model.KernelID]identity
}

// Len is how many sessions there are.
func (l *SessionList) Len() int { return len(l.sums) }

// At puts the i-th session in s. It is safe for concurrent use.
func (l *SessionList) At(i int, s *KernelSession) {
	k := l.sums[i]
	*s = KernelSession{Kernel: k.s.Kernel, Agent: k.s.Agent, Session: k.who.Session, User: k.who.User, Project: k.who.Project,
		From: k.s.From, To: k.s.To, Since: k.s.Since, Open: k.s.Open, Gone: k.s.Gone, Alloc: k.s.Alloc, Slots: k.s.Slots, Changed: k.s.Changed}
	if k.lazy {
		s.Alloc = k.built
		if l.tab != nil {
			s.Held = Held{ents: k.ents, tab: l.tab, n: k.nslots}
		}
	}
	learnt := l.ident[k.s.Kernel]
	if s.Agent == "" || k.bare && learnt.Session != "" {
		s.Agent = learnt.Agent
	}
	if s.Session == "" {
		s.Session = learnt.Session
	}
	if s.User == "" {
		s.User = learnt.User
	}
	if s.Project == "" {
		s.Project = learnt.Project
	}
}

// startMaps starts the goroutine that makes the arrivals' maps.
func (sw *sessWalk) startMaps() {
	sw.jobsC = make(chan mapBatch, 8)
	sw.mapped = make(chan struct{})
	follow := sw.follow
	go func() {
		defer close(sw.mapped)
		if follow != nil {
			defer close(follow)
		}
		sh := newSharedMaps()
		var fa flatAlloc
		for batch := range sw.jobsC {
			for _, j := range batch.jobs {
				// cloneHeld of a regular allocation's maps is them.
				fa = keptAlloc(fa.ents[:0], batch.tab, j.ents, j.n)
				j.k.built = fa.toMapShared(sh)
				if j.note >= 0 {
					batch.notes[j.note].Alloc = j.k.built
				}
			}
			if follow != nil && (len(batch.notes) > 0 || !batch.upto.IsZero()) {
				follow <- SessionBatch{Notes: batch.notes, Upto: batch.upto}
			}
		}
	}()
}

// mapLater has k's arrival allocation fa made into maps off the walk.
func (sw *sessWalk) mapLater(k *ksum, fa flatAlloc) {
	k.lazy, k.ents, k.nslots = true, sw.keepEnts(fa.ents), int32(fa.n)
	if sw.jobs == nil {
		sw.jobs = make([]allocJob, 0, 512)
	}
	note := -1
	if sw.follow != nil && sw.inSpan {
		note = len(sw.notes) - 1 // the arrival's, noted just before
	}
	if sw.held {
		return
	}
	sw.jobs = append(sw.jobs, allocJob{k: k, ents: k.ents, n: k.nslots, note: note})
	if sw.follow == nil && len(sw.jobs) == cap(sw.jobs) {
		sw.jobsC <- mapBatch{jobs: sw.jobs, tab: sw.tab}
		sw.jobs = nil
	}
}

// note adds n to the notes for the follower (none: nothing).
func (sw *sessWalk) note(n SessionNote) {
	if sw.follow != nil {
		if sw.notes == nil {
			sw.notes = make([]SessionNote, 0, 2*sw.every)
		}
		sw.notes = append(sw.notes, n)
	}
}

// flush sends the notes so far on, with the promise that none to come
// is of a moment before upto, when there are enough of them to be worth
// a send: the walk is about to fold what happened at upto.
func (sw *sessWalk) flush(upto time.Time) {
	if sw.follow == nil {
		return
	}
	if upto.After(sw.upto) {
		sw.upto = upto
	}
	if len(sw.notes) < sw.every && len(sw.jobs) < 512 {
		return
	}
	sw.jobsC <- mapBatch{jobs: sw.jobs, tab: sw.tab, notes: sw.notes, upto: sw.upto}
	sw.jobs, sw.notes = nil, nil
}

// endMaps waits for every arrival's maps (once; again does nothing).
func (sw *sessWalk) endMaps() {
	if sw.jobsC == nil {
		return
	}
	if len(sw.jobs) > 0 || len(sw.notes) > 0 {
		sw.jobsC <- mapBatch{jobs: sw.jobs, tab: sw.tab, notes: sw.notes, upto: sw.upto}
		sw.jobs, sw.notes = nil, nil
	}
	close(sw.jobsC)
	<-sw.mapped
	sw.jobsC = nil
}

// restart is histWalk.restart for sessions: the checkpoint is the truth.
func (sw *sessWalk) restart(inCk sessCkHeads, start, gapAt time.Time) {
	for id := range sw.heads {
		if _, ok := inCk[id]; !ok {
			sw.gone(id, gapAt, true)
		}
	}
	for _, kh := range inCk {
		tr, known := sw.heads[kh.ID]
		if known && !tr.folded && tr.head.same(kh) {
			continue
		}
		sw.put(*kh, start, !known)
	}
}

// advance is histWalk.advance for sessions.
func (sw *sessWalk) advance(inCk sessCkHeads, start time.Time) {
	stallAt := sw.h.stallAt
	for id, tr := range sw.heads {
		if _, ok := inCk[id]; !ok {
			if stallAt.IsZero() || tr.sum != nil && tr.sum.holding && tr.sum.s.From.After(stallAt) {
				// Begun after the stall did, if there was one: it left
				// where it was seen to (sessWalk.deltas).
				sw.gone(id, start, false)
				continue
			}
			sw.gone(id, stallAt, true)
		}
	}
	for _, kh := range inCk {
		if tr := sw.heads[kh.ID]; tr != nil && !tr.folded && tr.head.same(kh) {
			continue
		}
		sw.put(*kh, start, false)
	}
}

// holds: a holds some amount of some slot.
func holds(a model.Allocations) bool {
	for _, devs := range a {
		if len(devs) > 0 {
			return true
		}
	}
	return false
}

// reach rebases the sessions begun before the asked span when the walk
// gets to it (t).
func (sw *sessWalk) reach(t time.Time) {
	if sw.inSpan || t.Before(sw.since) {
		return
	}
	sw.inSpan = true
	for _, tr := range sw.heads {
		if k := tr.sum; k != nil && k.started && k.holding {
			k.rebase(&tr.head)
			if sw.follow != nil {
				n := SessionNote{Kind: NoteArrive, Kernel: k.s.Kernel, At: k.s.From, Since: k.s.Since, Agent: k.s.Agent, Alloc: k.s.Alloc, Slots: k.s.Slots, Seq: int(k.seq)}
				if k.lazy {
					// Not rebased (began before the walk knew since
					// when): its maps are being made.
					sw.note(n)
					sw.jobs = append(sw.jobs, allocJob{k: k, ents: k.ents, n: k.nslots, note: len(sw.notes) - 1})
					continue
				}
				sw.note(n)
			}
		}
	}
}

// rebase makes a session running when the asked span begins what
// History's intervals in the span say of it: those that ended before the
// span are not in it, so it arrived when the oldest of its holdings then
// began, with what it held on the devices it has held the same since
// then; what it holds elsewhere (began later) is a change.
func (k *ksum) rebase(head *sessHead) {
	if k.aside == nil || k.aside.before == nil {
		return
	}
	before := k.aside.before
	var start time.Time
	for _, at := range before {
		if start.IsZero() || at.Before(start) {
			start = at
		}
	}
	k.s.From, k.s.Changed = start, false
	k.lazy, k.ents = false, nil
	k.s.Agent, k.s.Slots = head.Agent, k.askedWhen(start)
	k.bare = head.Session == ""
	k.aside.asked = nil
	k.who = known{Session: head.Session, User: head.User, Project: head.Project}
	k.s.Alloc = model.Allocations{}
	for slot, devs := range head.alloc() {
		key := model.DeviceKey{Name: slot.DeviceName()}
		for dev, amt := range devs {
			key.ID = dev
			if !before[key].Equal(start) {
				k.s.Changed = true
				continue
			}
			if k.s.Alloc[slot] == nil {
				k.s.Alloc[slot] = map[model.DeviceID]model.Dec{}
			}
			k.s.Alloc[slot][dev] = amt
		}
	}
	k.aside.before = nil
}

// track notes, before the asked span, since when kh holds what it holds
// on each device: a device whose amounts (or the kernel's identity)
// change starts again at t, as History's interval there does.
func (k *ksum) track(prev, kh kernelHead, t time.Time) {
	a := k.side()
	if a.before == nil {
		a.before = map[model.DeviceKey]time.Time{}
	}
	before := a.before
	who := prev.Agent != kh.Agent && prev.Agent != "" && !learns(prev, kh) || prev.Session != kh.Session && prev.Session != "" ||
		prev.User != kh.User && prev.User != "" || prev.Project != kh.Project && prev.Project != ""
	held := map[model.DeviceKey]bool{}
	for slot, devs := range kh.Alloc {
		key := model.DeviceKey{Name: slot.DeviceName()}
		for dev, amt := range devs {
			key.ID = dev
			held[key] = true
			_, ok := before[key]
			if !ok || who || !k.holding {
				before[key] = t
				continue
			}
			if had, ok := prev.Alloc[slot][dev]; !ok || !same(had, amt) {
				before[key] = t
			}
		}
	}
	for key := range before {
		if !held[key] {
			delete(before, key)
		}
	}
	// A device that kept its amounts of one slot but changed another's
	// began again too.
	for slot, devs := range prev.Alloc {
		key := model.DeviceKey{Name: slot.DeviceName()}
		for dev, amt := range devs {
			key.ID = dev
			if !held[key] {
				continue
			}
			if now, ok := kh.Alloc[slot][dev]; !ok || !same(now, amt) {
				before[key] = t
			}
		}
	}
}

// put applies a kernel's new head at t.
func (sw *sessWalk) put(kh sessHead, t time.Time, since bool) {
	sw.reach(t)
	tr := sw.heads[kh.ID]
	if tr == nil {
		tr = &sessTrack{}
		sw.heads[kh.ID] = tr
	}
	if tr.pending && kh.known() {
		sw.h.learn(kh.kernelHead)
		tr.pending = false
	}
	if !kh.known() {
		tr.pending = true
	}
	prev := tr.head
	tr.head, tr.folded = kh, false
	held := kh.fa.holds()
	k := tr.sum
	if k == nil {
		if !held {
			return
		}
		k = sw.sums[kh.ID]
		if k == nil {
			k = sw.newSum(kh.ID)
		}
		tr.sum = k
	}
	if !held {
		sw.release(k, t, false)
		return
	}
	if k.started && !sw.until.IsZero() && t.After(sw.until) {
		// After the span: neither a change nor a new stay is its; but
		// what it held in the span ends where it changes.
		if k.holding {
			k.afterSpan(prev.alloc(), kh.alloc(), prev.kernelHead, kh.kernelHead, t)
		}
		return
	}
	if !sw.inSpan {
		pk, kk := prev.kernelHead, kh.kernelHead
		pk.Alloc, kk.Alloc = prev.alloc(), kh.alloc()
		k.track(pk, kk, t)
		k.noteAsked(kh.slots, t)
	}
	if k.started && !k.holding && sw.inSpan {
		sw.note(SessionNote{Kind: NoteResume, Kernel: k.s.Kernel, At: t, Seq: int(k.seq)})
	}
	k.holding = true
	k.who.take(identity{Session: kh.Session, User: kh.User, Project: kh.Project})
	if !k.started {
		k.started = true
		k.s = ksess{Kernel: kh.ID, Agent: kh.Agent, From: t, Since: since, Slots: kh.slots}
		k.bare = kh.Session == ""
		if sw.inSpan {
			sw.note(SessionNote{Kind: NoteArrive, Kernel: kh.ID, At: t, Since: since, Agent: kh.Agent, Slots: kh.slots, Seq: int(k.seq)})
		}
		if kh.fa.irregular {
			k.lazy = false
			k.s.Alloc = cloneHeld(kh.alloc())
			if sw.follow != nil && sw.inSpan {
				sw.notes[len(sw.notes)-1].Alloc = k.s.Alloc
			}
		} else {
			sw.mapLater(k, kh.fa)
		}
		return
	}
	if k.s.Changed {
		return
	}
	if k.lazy {
		if !sw.keptWithin(k, &kh.fa) {
			k.s.Changed = true
		}
	} else if !kh.fa.within(k.s.Alloc) {
		k.s.Changed = true
	}
}

// newSum is a new kernel's sum, from blocks: a busy week has 200,000 of
// them, all kept to the walk's end.
func (sw *sessWalk) newSum(id model.KernelID) *ksum {
	if len(sw.slab) == 0 {
		sw.slab = make([]ksum, 1024)
	}
	k := &sw.slab[0]
	sw.slab = sw.slab[1:]
	k.seq = int32(len(sw.order))
	sw.sums[id] = k
	sw.order = append(sw.order, id)
	return k
}

// afterSpan follows, after the asked span, the devices k's kernel still
// holds as it did in it: History's intervals there end at their first
// change (one of what it holds there or of who it is), and the session
// with the last of them.
func (k *ksum) afterSpan(prevAlloc, khAlloc model.Allocations, prev, kh kernelHead, t time.Time) {
	a := k.side()
	if a.after == nil {
		a.after = map[model.DeviceKey]bool{}
		for slot, devs := range prevAlloc {
			for dev := range devs {
				a.after[model.DeviceKey{Name: slot.DeviceName(), ID: dev}] = true
			}
		}
	}
	// Who it is learnt (from nothing) does not end them: History joins
	// the pieces learning splits.
	whoChanged := prev.Agent != kh.Agent && prev.Agent != "" && !learns(prev, kh) || prev.User != kh.User && prev.User != "" ||
		prev.Session != kh.Session && prev.Session != ""
	for key := range a.after {
		if whoChanged || !sameOn(prevAlloc, khAlloc, key) {
			delete(a.after, key)
		}
	}
	if len(a.after) == 0 {
		k.holding = false
		k.s.To, k.s.Gone = t, false
	}
}

// learns: kh is where its kernel's recovery record is first read after
// prev. The agent it names then replaces the scratch root's the engine
// gave it before, from its first moment (identity.fill), so History joins
// the pieces the change split: it is not a change of who it is.
func learns(prev, kh kernelHead) bool { return prev.Session == "" && kh.Session != "" }

// sameOn: a and b hold the same amounts of every slot on device key.
func sameOn(a, b model.Allocations, key model.DeviceKey) bool {
	for slot, devs := range a {
		if slot.DeviceName() != key.Name {
			continue
		}
		if v, ok := devs[key.ID]; ok {
			if w, ok := b[slot][key.ID]; !ok || !same(v, w) {
				return false
			}
		}
	}
	for slot, devs := range b {
		if slot.DeviceName() != key.Name {
			continue
		}
		if _, ok := devs[key.ID]; ok {
			if _, ok := a[slot][key.ID]; !ok {
				return false
			}
		}
	}
	return true
}

// release: k's kernel stopped holding anything at t. A stay that ended
// before the asked span is forgotten, as History drops its intervals.
func (sw *sessWalk) release(k *ksum, t time.Time, gone bool) {
	if !k.holding {
		return
	}
	k.holding = false
	k.s.To, k.s.Gone = t, gone
	if sw.inSpan {
		sw.note(SessionNote{Kind: NoteLeave, Kernel: k.s.Kernel, At: t, Gone: gone, Seq: int(k.seq)})
	}
	if !sw.inSpan && t.Before(sw.since) {
		k.started = false
		k.who = known{}
		k.aside = nil
	}
}

func (sw *sessWalk) gone(id model.KernelID, t time.Time, inGap bool) {
	sw.reach(t)
	tr := sw.heads[id]
	if tr == nil {
		return
	}
	if tr.sum != nil {
		sw.release(tr.sum, t, inGap)
	}
	delete(sw.heads, id)
}

// cloneHeld is a without the slots it holds nothing of. A decoded
// allocation is never changed afterwards (a patch decodes a new one), so
// one with none is kept as it is: a week's sessions are not copied.
func cloneHeld(a model.Allocations) model.Allocations {
	empty := false
	for _, devs := range a {
		if len(devs) == 0 {
			empty = true
		}
	}
	if !empty {
		return a
	}
	out := make(model.Allocations, len(a))
	for slot, devs := range a {
		if len(devs) == 0 {
			continue
		}
		m := make(map[model.DeviceID]model.Dec, len(devs))
		for id, amt := range devs {
			m[id] = amt
		}
		out[slot] = m
	}
	return out
}

// deltas is histWalk.deltas for sessions.
func (sw *sessWalk) deltas(tm time.Time, grp []rawRec) {
	h := sw.h
	// After a stall of the recorder, what left left somewhere in it, as
	// in a gap between recorders (histWalk.stallAt).
	goneAt, inGap := tm, false
	if !h.stallAt.IsZero() {
		goneAt, inGap = h.stallAt, true
	}
	sw.flush(goneAt)
	for _, rr := range grp {
		switch rr.typ {
		case recKernel:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			var id model.KernelID
			if tr := sw.heads[model.KernelID(h.idb)]; tr != nil {
				id = tr.head.ID
			} else {
				id = model.KernelID(h.idb)
			}
			kh := decodeSessHeadRest(&d, id)
			if d.err == nil {
				sw.put(kh, tm, false)
			}
		case recKernelPatch:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			tr := sw.heads[model.KernelID(h.idb)]
			if d.err != nil || tr == nil {
				continue
			}
			kh, mask := decodeSessPatch(&d, &tr.head)
			if d.err != nil || mask&sessFields == 0 {
				continue
			}
			sw.put(kh, tm, false)
		case recKernelGone:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			if tr := sw.heads[model.KernelID(h.idb)]; d.err == nil && tr != nil {
				if inGap && tr.sum != nil && tr.sum.holding && tr.sum.s.From.After(goneAt) {
					// Begun after the stall did: it left where it was
					// seen to (closeAfterStall).
					sw.gone(tr.head.ID, tm, false)
					continue
				}
				sw.gone(tr.head.ID, goneAt, inGap)
			}
		}
	}
}

// keptWithin is fa.withinFlat(k's arrival) of the entries keepEnts kept.
func (sw *sessWalk) keptWithin(k *ksum, fa *flatAlloc) bool {
	if fa.irregular {
		base := sw.keptFA(k)
		return fa.within(base.toMap())
	}
	for i := range fa.ents {
		if !sw.keptHolds(k, &fa.ents[i]) {
			return false
		}
	}
	return true
}

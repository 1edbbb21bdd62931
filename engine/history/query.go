package history

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Filter selects what History lists: one of Device, Kernel, User, and
// the time range (zero: unbounded).
type Filter struct {
	// Device is "cuda:0", or a bare id ("0") for any accelerator of that id.
	Device string
	// Kernel is a kernel id or a unique prefix of one.
	Kernel string
	// User is an owner user id (recovery.json's owner_user_id) or a
	// prefix of one; Session and Project likewise a session id or an
	// owner project id. HistoryResult.Matched says which a prefix named.
	User, Session, Project string
	Since, Until           time.Time
	// Host also lists the host's cpu cores and memory (a listing of who
	// held a GPU leaves them out): a replay of the sessions needs what
	// each kernel held of every slot, and a kernel holding no
	// accelerator at all is then listed too.
	Host bool
}

// follows: the filter names kernels (by id or who they are), so a walk
// tracks only those; a device query tracks every kernel.
func (f Filter) follows() bool {
	return f.Kernel != "" || f.User != "" || f.Session != "" || f.Project != ""
}

// whoField is the field of who a kernel is the filter asks about (user,
// session or project) and the asked prefix; "" when it asks none.
func (f Filter) whoField() (string, func(user, session, project string) string) {
	switch {
	case f.User != "":
		return f.User, func(u, _, _ string) string { return u }
	case f.Session != "":
		return f.Session, func(_, s, _ string) string { return s }
	case f.Project != "":
		return f.Project, func(_, _, p string) string { return p }
	}
	return "", nil
}

// who reports whether a kernel whose user, session and project are
// these passes the filter's who field: sure (known and matching), or
// maybe (not known yet: it may be learnt later).
func (f Filter) who(user, session, project string) (sure, maybe bool) {
	want, field := f.whoField()
	if field == nil {
		return true, true
	}
	v := field(user, session, project)
	if v == "" {
		return false, true
	}
	ok := strings.HasPrefix(v, want)
	return ok, ok
}

// Interval is one kernel holding one device, with the same amounts and
// owner, from From to To.
type Interval struct {
	Device  model.DeviceKey
	Kernel  model.KernelID
	Agent   model.AgentID
	Session string
	User    string
	Project string
	Amounts model.ResourceSlot
	From    time.Time
	To      time.Time
	// Since: it held the device already when the record (or the record
	// after a gap) began, so From is when it was first seen, not when it
	// began.
	Since bool
	// Open: it still held the device when the record ends (To is the end).
	Open bool
	// Gone: it stopped sometime in a gap of the record, after To.
	Gone bool
}

// HistoryResult is what History found.
type HistoryResult struct {
	// Intervals are what the walk saw, which may run past the asked span
	// (CutToSpan cuts them to it).
	Intervals []Interval
	Missing   []Missing
	From, To  time.Time
	// Partitions are the agent.toml journal's records in the asked span,
	// oldest first, gathered in the same pass (Reader.Partitions would
	// read the whole record again).
	Partitions []agentconfig.JournalRecord
	// Skipped are the files named like segments the reader left out.
	Skipped []Skipped
	// Matched are the kernels (users, sessions, projects) whose id the
	// filter's Kernel (User, Session, Project) is or begins, sorted: more
	// than one is an ambiguous prefix.
	Matched []string
	// RecordTo, when set, is the record's end, past To: the walk
	// stopped at Until (To is the end of the part read).
	RecordTo time.Time
	// More: the record goes on after To (the walk stopped at Until).
	More bool
}

type ktrack struct {
	head kernelHead
	open map[model.DeviceKey]*Interval
	// pending: its agent or recovery record is not known yet; what it
	// learns is kept in histWalk.ident, for the whole kernel.
	pending bool
}

type histWalk struct {
	f          Filter
	cur        map[model.KernelID]*ktrack
	out        []Interval
	prefixOnly bool
	// all: a segment walked on its own keeps every interval it closes:
	// the filter is applied once the intervals it opened at its
	// checkpoint (the only ones with Since) are joined to those before.
	all bool
	dw  *devWant
	// in shares the strings kernel records repeat (owners, agents) over
	// the walk: one goroutine's. idb is room for a kernel id's text.
	in  *interner
	idb []byte
	// ident is who kernels first seen without their agent or recovery
	// record turned out to be, by kernel: done gives it to their
	// intervals from before.
	ident map[model.KernelID]identity
	// stallAt, while deltas applies a group that follows a silence of the
	// recorder (walker.stallAt), is when the silence began: what the
	// group ends or changes ended somewhere in it ("?"), as in a gap
	// between recorders.
	stallAt time.Time
}

// match reports whether a walk keeps iv: its device or kernel is the
// asked one, and its owner (session, project) the asked one or not known
// yet (it may be learnt later). Who and when are judged for good once
// identities are settled (final).
func (h *histWalk) match(iv *Interval) bool {
	f := h.f
	switch {
	case f.Device != "":
		if iv.Device.String() != f.Device && !(strings.IndexByte(f.Device, ':') < 0 && string(iv.Device.ID) == f.Device) {
			return false
		}
	case f.Kernel != "":
		if !strings.HasPrefix(string(iv.Kernel), f.Kernel) {
			return false
		}
	default:
		if _, maybe := f.who(iv.User, iv.Session, iv.Project); !maybe {
			return false
		}
	}
	return true
}

// final is match once identities are settled: who it is, and the asked
// span.
func (f Filter) final(iv *Interval) bool {
	if sure, _ := f.who(iv.User, iv.Session, iv.Project); !sure {
		return false
	}
	if !f.Since.IsZero() && iv.To.Before(f.Since) && !iv.Open {
		return false
	}
	if !f.Until.IsZero() && iv.From.After(f.Until) {
		return false
	}
	return true
}

func (h *histWalk) close(iv *Interval, at time.Time, gone bool) {
	iv.To, iv.Gone = at, gone
	if h.all {
		h.out = append(h.out, *iv)
		return
	}
	if h.match(iv) {
		h.out = append(h.out, *iv)
	}
}

// put applies one kernel's new head at t.
func (h *histWalk) put(kh kernelHead, t time.Time, since bool) { h.putAfter(kh, t, since, t, false) }

// putAfter is put where what the kernel held before may have changed
// earlier than t: after a gap of the record (which began at endAt, and
// gone set), what it no longer holds as it did ended somewhere in the
// gap, as a kernel that went then ("?"), not at t, and what it holds anew
// it held already when the record began again ("<").
func (h *histWalk) putAfter(kh kernelHead, t time.Time, since bool, endAt time.Time, gone bool) {
	tr := h.cur[kh.ID]
	if tr == nil {
		// A kernel query follows only its own kernels; a device query all
		// (a kernel may move onto the device later), and a query by who
		// all too: a kernel known as another's may be patched into the
		// asked one's later, and a patch is read over the head it follows.
		if h.f.Kernel != "" && !strings.HasPrefix(string(kh.ID), h.f.Kernel) {
			return
		}
		tr = &ktrack{}
		h.cur[kh.ID] = tr
	}
	if tr.pending && kh.known() {
		// Learnt: it is who it is from its first moment; later changes
		// of who it is are its own, as in a snapshot.
		h.learn(kh)
		tr.pending = false
	}
	if !kh.known() {
		tr.pending = true
	}
	if h.otherUser(kh) {
		// Its owner is known, and not the asked one: what it held while
		// unknown (or as the asked one's) goes to done, which judges it by
		// the owner of its time; the head stays, to follow its patches.
		// Who it is changed, not what it held: the pieces meet at t.
		for k, iv := range tr.open {
			h.close(iv, t, false)
			delete(tr.open, k)
		}
		tr.head = kh
		return
	}
	if h.unchanged(tr, kh) {
		tr.head = kh
		return
	}
	// Most kernels of a device query hold nothing on the device: no maps
	// for them.
	var amounts map[model.DeviceKey]model.ResourceSlot
	h.eachHeld(kh.Alloc, func(k model.DeviceKey, slot model.SlotName, amt model.Dec) {
		if !h.deviceWanted(k) {
			return
		}
		if amounts == nil {
			amounts = map[model.DeviceKey]model.ResourceSlot{}
		}
		if amounts[k] == nil {
			amounts[k] = model.ResourceSlot{}
		}
		amounts[k][slot] = amt
	})
	// A device whose amounts stay and only who holds them changed (its
	// owner learnt) is closed and opened again at t, as without a gap:
	// the pieces meet there and settle joins them.
	var whoOnly map[model.DeviceKey]bool
	for k, iv := range tr.open {
		a, ok := amounts[k]
		same := ok && sameSlots(a, iv.Amounts)
		if same && iv.Agent == kh.Agent && iv.User == kh.User && iv.Session == kh.Session {
			delete(amounts, k)
			continue
		}
		if same && gone {
			if whoOnly == nil {
				whoOnly = map[model.DeviceKey]bool{}
			}
			whoOnly[k] = true
			h.close(iv, t, false)
		} else if gone && iv.From.After(endAt) {
			// Begun after the gap did (after a stall, by a poll that
			// followed it): it ended where it was seen to.
			h.close(iv, t, false)
		} else {
			h.close(iv, endAt, gone)
		}
		delete(tr.open, k)
	}
	for k, a := range amounts {
		if tr.open == nil {
			tr.open = map[model.DeviceKey]*Interval{}
		}
		tr.open[k] = &Interval{Device: k, Kernel: kh.ID, Agent: kh.Agent, Session: kh.Session, User: kh.User, Project: kh.Project,
			Amounts: a, From: t, Since: since && !whoOnly[k]}
	}
	tr.head = kh
}

// otherUser: a query by who (user, session, project), and kh's is
// known and another.
func (h *histWalk) otherUser(kh kernelHead) bool {
	_, maybe := h.f.who(kh.User, kh.Session, kh.Project)
	return !maybe
}

// unchanged reports whether kh holds what tr's open intervals do (the
// same devices, slots and amounts, owner, session and agent): then put
// only replaces the head. Most changes of a kernel that holds the device
// are of something else.
func (h *histWalk) unchanged(tr *ktrack, kh kernelHead) bool {
	n := 0
	for slot, devs := range kh.Alloc {
		name := slot.DeviceName()
		if !model.CarriesHoldings(name) && !h.f.Host {
			continue
		}
		for id, amt := range devs {
			k := model.DeviceKey{Name: name, ID: id}
			if !h.deviceWanted(k) {
				continue
			}
			iv := tr.open[k]
			if iv == nil {
				return false
			}
			if v, ok := iv.Amounts[slot]; !ok || !same(v, amt) {
				return false
			}
			n++
		}
	}
	for _, iv := range tr.open {
		if iv.Agent != kh.Agent || iv.User != kh.User || iv.Session != kh.Session {
			return false
		}
		n -= len(iv.Amounts)
	}
	return n == 0
}

// eachHeld is Allocations.EachHeld, with the host's cpu and mem too
// under Filter.Host.
func (h *histWalk) eachHeld(a model.Allocations, f func(k model.DeviceKey, slot model.SlotName, amt model.Dec)) {
	if !h.f.Host {
		a.EachHeld(f)
		return
	}
	for slot, devs := range a {
		name := slot.DeviceName()
		for id, amt := range devs {
			f(model.DeviceKey{Name: name, ID: id}, slot, amt)
		}
	}
}

// deviceWanted: with a device query, only that device's intervals are
// kept.
func (h *histWalk) deviceWanted(k model.DeviceKey) bool { return h.want().key(k) }

// want is the query's device filter, parsed once.
func (h *histWalk) want() *devWant {
	if h.dw == nil && h.f.Device != "" {
		h.dw = newDevWant(h.f.Device)
	}
	return h.dw
}

func (h *histWalk) gone(id model.KernelID, t time.Time, inGap bool) {
	tr := h.cur[id]
	if tr == nil {
		return
	}
	for _, iv := range tr.open {
		h.close(iv, t, inGap)
	}
	delete(h.cur, id)
}

func sameSlots(a, b model.ResourceSlot) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !same(v, w) {
			return false
		}
	}
	return true
}

// histRun is one History query's walk over the segments in order: the
// tracked kernels and what the record lacks so far.
type histRun struct {
	f    Filter
	h    *histWalk
	res  *HistoryResult
	segs []segFile
	// n: the segments walked, segs[:n].
	n       int
	prevEnd time.Time
	// carry: the previous segment continues into the next one.
	carry bool
	// prevSE is how the segment walked last ended.
	prevSE segEnd
	// lostTail: the record's last segment is damaged, and what it held
	// after its last intact change is lost.
	lostTail bool
	// i: the next segment to walk.
	i int
	// outs are the intervals of joined segment walks, besides h.out.
	outs [][]Interval
	// rs reads a segment again where a parallel walk cannot be used.
	rs *Reader
	// foldOf, when set, gives segments' folds (Sessions without a
	// follower).
	foldOf func(sf segFile, prev *segFile) *segFold
	folded int
	// active: a recorder holds the directory, so the last segment's torn
	// end may be a chunk it is still writing, not damage.
	active bool
}

func (r *Reader) newHistRun(f Filter) *histRun {
	q := &histRun{f: f, h: &histWalk{f: f, cur: map[model.KernelID]*ktrack{}, in: newInterner()}, res: &HistoryResult{From: r.segs[0].Start, Skipped: slices.Clip(r.skipped)},
		active: r.Active}
	// With --since, reading starts at the checkpoint before it: what was
	// held then shows as held since that checkpoint ("<").
	first := 0
	if !f.Since.IsZero() {
		for first+1 < len(r.segs) && !r.segs[first+1].Start.After(f.Since) {
			first++
		}
	}
	q.segs = r.segs[first:]
	// Segments that begin after Until are not read (but still say
	// whether the one before continues into them).
	q.n = len(q.segs)
	for i := range q.segs {
		if !f.Until.IsZero() && q.segs[i].Start.After(f.Until) {
			q.n = i
			break
		}
	}
	return q
}

// historySeq is History walking the segments one after another on one
// goroutine (and one reading ahead): the reference the parallel walk is
// tested against.
func (r *Reader) historySeq(f Filter) (*HistoryResult, error) {
	if len(r.segs) == 0 {
		return nil, r.empty()
	}
	q := r.newHistRun(f)
	if err := r.walkSeq(q, q.h); err != nil {
		return nil, err
	}
	return q.done(), nil
}

// step walks the next segment, as read.
func (q *histRun) step(sr *segRead) { q.stepWith(sr, q.h) }

// walkRest is step after the checkpoint: the deltas walked on the state.
func (q *histRun) walkRest(i int, sr *segRead) { q.walkRestWith(i, sr, q.h) }

// journal appends an agent.toml journal record's body to ps when it is
// in the asked span.
func (f Filter) journal(ps []agentconfig.JournalRecord, body []byte) []agentconfig.JournalRecord {
	var jr agentconfig.JournalRecord
	if json.Unmarshal(body, &jr) != nil {
		return ps
	}
	if (f.Since.IsZero() || !jr.Time.Before(f.Since)) && (f.Until.IsZero() || !jr.Time.After(f.Until)) {
		ps = append(ps, jr)
	}
	return ps
}

// unreadable reports a segment without a readable checkpoint as missing.
func (q *histRun) unreadable(i int, sr *segRead) bool {
	if sr.err == nil && sr.data.Checkpoint != nil {
		return false
	}
	why := "cannot be read"
	if sr.err != nil {
		why = sr.err.Error()
	} else if sr.data.Damage != "" {
		why = sr.data.Damage
	}
	to := time.Now()
	if i+1 < len(q.segs) {
		to = q.segs[i+1].Start
	}
	name := filepath.Base(q.segs[i].Path)
	from := q.segs[i].Start
	if q.prevEnd.After(from) {
		// The segment before recorded past this file's name: what it
		// lacks begins where that one ends.
		from = q.prevEnd
	}
	if from.After(q.segs[i].Start) {
		// A file named for a time the segment before recorded through is
		// none the recorder wrote: it hides nothing, and the record goes
		// from that segment to the next as if it were not there.
		q.res.Skipped = append(q.res.Skipped, Skipped{Path: q.segs[i].Path, Why: why + " (named for a time the segment before it recorded through)"})
		q.carry = q.prevSE.continues(to)
		if i+1 < len(q.segs) {
			if m, ok := gapBetween(q.prevEnd, to, q.prevSE.clean, q.prevSE.rotated, q.carry); ok {
				q.res.Missing = append(q.res.Missing, m)
			}
		}
		return true
	}
	q.res.Missing = append(q.res.Missing, Missing{From: from, To: to, Why: fmt.Sprintf("segment %s: %s", name, why)})
	q.carry = false
	// The last segment unreadable: what was held at the end of the one
	// before is not known to be held after it.
	q.lostTail = i == len(q.segs)-1
	return true
}

// segEnd is how a walked segment ends.
type segEnd struct {
	end            time.Time
	clean, rotated bool
	rotateAt       time.Time
	// stalls are the silences inside it (walker.stalls).
	stalls []Missing
}

func (e segEnd) continues(next time.Time) bool { return e.rotated && e.rotateAt.Equal(next) }

// stallBefore is the stall the segment before segment i ended in, where
// segment i continues it and begins within stallSlack of the stall's end:
// the recorder rotated at the first snapshot after the stall, so the
// checkpoint and the first polls of segment i carry the stall's changes,
// as polls after a stall inside one segment do (walker.stallAt).
func (q *histRun) stallBefore(i int) (Missing, bool) {
	if !q.carry || i >= len(q.segs) || len(q.prevSE.stalls) == 0 {
		return Missing{}, false
	}
	st := q.prevSE.stalls[len(q.prevSE.stalls)-1]
	if q.segs[i].Start.After(st.To.Add(stallSlack)) {
		return Missing{}, false
	}
	return st, true
}

// finish notes where walked segment i ends, and what the record lacks
// after it.
func (q *histRun) finish(i int, data *segData, se segEnd) {
	segs := q.segs
	end := se.end
	if end.IsZero() {
		end = segs[i].Start
	}
	q.prevEnd, q.prevSE = end, se
	q.res.To = end
	q.res.Missing = append(q.res.Missing, se.stalls...)
	// A torn end of the last segment is a chunk being written only while
	// a recorder holds the directory; with none, the rest is lost, as
	// snapshot --at says of a time after it.
	damaged := data.Damage != "" && (!data.Torn || i < len(segs)-1 || !q.active)
	q.lostTail = damaged && i == len(segs)-1
	q.carry = !damaged && i+1 < len(segs) && se.continues(segs[i+1].Start)
	next := time.Time{}
	if i+1 < len(segs) {
		next = segs[i+1].Start
	}
	switch {
	case damaged:
		to := next
		if to.IsZero() {
			to = end
		}
		q.res.Missing = append(q.res.Missing, Missing{From: end, To: to,
			Why: fmt.Sprintf("segment %s: %s at byte %d; the rest of it is lost", filepath.Base(segs[i].Path), data.Damage, data.Offset)})
	case !next.IsZero():
		if m, ok := gapBetween(end, next, se.clean, se.rotated, se.continues(next)); ok {
			q.res.Missing = append(q.res.Missing, m)
		}
	}
}

// done closes what is still open at the end of the record and sorts.
func (q *histRun) done() *HistoryResult {
	h, res := q.h, q.res
	if len(q.outs) > 0 {
		n := len(h.out)
		for _, o := range q.outs {
			n += len(o)
		}
		if n > len(h.out) {
			out := make([]Interval, 0, n+len(h.cur)/8)
			out = append(out, h.out...)
			for _, o := range q.outs {
				out = append(out, o...)
			}
			h.out = out
		}
		q.outs = nil
	}
	// Stopped at --until before the record's end: what is still held was
	// held to the end of the part read. Past --until, that is held at the
	// end of the asked span ("open"); before it, the record goes on only
	// after a gap, which it may have ended in ("?"), as a kernel that
	// leaves in a gap.
	// So is what was held at a damaged end: the rest of the record is
	// lost.
	res.More = q.n < len(q.segs)
	gapAfter := false
	for _, m := range res.Missing {
		gapAfter = gapAfter || m.From.Equal(res.To)
	}
	cut := res.More && res.To.Before(q.f.Until) && gapAfter || q.lostTail
	for _, tr := range h.cur {
		for _, iv := range tr.open {
			iv.To, iv.Open, iv.Gone = res.To, !cut, cut
			if h.match(iv) {
				h.out = append(h.out, *iv)
			}
		}
	}
	h.out, res.Matched = settle(h.out, h.ident, q.f)
	slices.SortFunc(h.out, cmpInterval)
	res.Intervals = h.out
	return res
}

// cmpInterval orders intervals as History lists them: by start, device,
// kernel.
func cmpInterval(a, b Interval) int {
	if c := a.From.Compare(b.From); c != 0 {
		return c
	}
	if a.Device != b.Device {
		return strings.Compare(a.Device.String(), b.Device.String())
	}
	return strings.Compare(string(a.Kernel), string(b.Kernel))
}

// CutToSpan is History's intervals (of f) cut to f's span, as `fgtop
// history` lists them: one held at Since begins there ("<"), one held at
// Until ends there (Open), ordered as History orders them. History gives
// what its walk saw outside the span: from the checkpoint before Since to
// the end of the segment Until falls in, which depends on where segments
// begin; cut, two records of the same changes give one answer, and Open
// and Since mean what the help says (held at --until, at --since). ivs is
// left as it is.
func CutToSpan(ivs []Interval, f Filter) []Interval {
	if f.Since.IsZero() && f.Until.IsZero() {
		return ivs
	}
	out := slices.Clone(ivs)
	for i := range out {
		iv := &out[i]
		if !f.Since.IsZero() && iv.From.Before(f.Since) {
			iv.From, iv.Since = f.Since, true
		}
		if !f.Until.IsZero() && (iv.Open || iv.To.After(f.Until)) && !iv.To.Before(f.Until) {
			iv.To, iv.Open, iv.Gone = f.Until, true, false
		}
	}
	slices.SortFunc(out, cmpInterval)
	return out
}

// ckHeads are a checkpoint's kernels by id; the heads lie in a few large
// slices, not in the map (a map of 10,000 heads was a tenth of a week's
// allocations).
type ckHeads map[model.KernelID]*kernelHead

// ckptHeads reads the kernels of a segment's checkpoint.
func (h *histWalk) ckptHeads(sr *segRead) ckHeads {
	inCk := ckHeads{}
	var chunk []kernelHead
	w := walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
		if !ckpt {
			return
		}
		for _, rr := range grp {
			if rr.typ == recKernel {
				d := dec{b: rr.body, in: h.in}
				kh := decodeKernelHeadOf(&d, h.want())
				if d.err == nil {
					if len(chunk) == cap(chunk) {
						chunk = make([]kernelHead, 0, max(2*cap(chunk), 1024))
					}
					chunk = append(chunk, kh)
					inCk[kh.ID] = &chunk[len(chunk)-1]
				}
			}
		}
	}}
	ckOnly := &segRead{file: sr.file, data: &segData{Checkpoint: sr.data.Checkpoint}}
	w.scan(ckOnly, nil, time.Time{})
	return inCk
}

// restart is a fresh start at a checkpoint (start): the checkpoint is the
// truth. Whatever it lacks ended in the gap (at gapAt); whatever it adds
// began there.
func (h *histWalk) restart(inCk ckHeads, start, gapAt time.Time) {
	for id := range h.cur {
		if _, ok := inCk[id]; !ok {
			h.gone(id, gapAt, true)
		}
	}
	for _, kh := range inCk {
		tr, known := h.cur[kh.ID]
		if known && sameHead(tr.head, *kh) {
			// put would change nothing: what is open follows the head.
			continue
		}
		// What changed, changed somewhere in the gap.
		h.putAfter(*kh, start, true, gapAt, true)
	}
}

// advance applies a checkpoint that continues the segment before it
// (start): the recorder writes the snapshot it rotates at only as the
// next segment's checkpoint, so its changes are found by comparing: what
// the checkpoint lacks went then, what it has is each kernel as of then.
// Right after a stall (h.stallAt set), the checkpoint is the first poll
// after it and is read as deltas after it are.
func (h *histWalk) advance(inCk ckHeads, start time.Time) {
	for id, tr := range h.cur {
		if _, ok := inCk[id]; !ok {
			if h.stallAt.IsZero() {
				h.gone(id, start, false)
				continue
			}
			for _, iv := range tr.open {
				h.closeAfterStall(iv, start)
			}
			delete(h.cur, id)
		}
	}
	for _, kh := range inCk {
		if tr := h.cur[kh.ID]; tr != nil && sameHead(tr.head, *kh) {
			continue
		}
		h.putDelta(*kh, start)
	}
}

// deltas applies one group of a delta stream, recorded at tm. Kernel
// ids are looked up from their bytes: a tracked kernel's id string is
// its head's.
func (h *histWalk) deltas(tm time.Time, grp []rawRec) {
	for _, rr := range grp {
		switch rr.typ {
		case recKernel:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			var id model.KernelID
			if tr := h.cur[model.KernelID(h.idb)]; tr != nil {
				id = tr.head.ID
			} else {
				id = model.KernelID(h.idb)
			}
			kh := decodeHeadRest(&d, id, h.want())
			if d.err == nil {
				h.putDelta(kh, tm)
			}
		case recKernelPatch:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			tr := h.cur[model.KernelID(h.idb)]
			if d.err != nil || tr == nil {
				continue
			}
			id := tr.head.ID
			k := &model.Kernel{ID: id, Agent: tr.head.Agent, State: tr.head.State, Alloc: tr.head.Alloc}
			if tr.head.Session != "" || tr.head.User != "" || tr.head.Project != "" {
				k.Record = &model.KernelRecord{SessionID: tr.head.Session, OwnerUserID: tr.head.User, OwnerProjectID: tr.head.Project}
			}
			mask := decodePatchHead(&d, k, h.want())
			if d.err != nil || mask&headFields == 0 {
				continue
			}
			kh := kernelHead{ID: id, Agent: k.Agent, State: k.State, Alloc: k.Alloc}
			if r := k.Record; r != nil {
				kh.Session, kh.User, kh.Project = r.SessionID, r.OwnerUserID, r.OwnerProjectID
			}
			h.putDelta(kh, tm)
		case recKernelGone:
			d := dec{b: rr.body, in: h.in}
			h.idb = d.appendID(h.idb[:0])
			if tr := h.cur[model.KernelID(h.idb)]; d.err == nil && tr != nil {
				if h.stallAt.IsZero() {
					h.gone(tr.head.ID, tm, false)
					continue
				}
				for _, iv := range tr.open {
					h.closeAfterStall(iv, tm)
				}
				delete(h.cur, tr.head.ID)
			}
		}
	}
}

// closeAfterStall closes iv, ended by a group at tm that follows a stall
// of the recorder: in the stall ("?" at its start), or, where iv began
// after the stall did (seen first by a poll after it), at tm.
func (h *histWalk) closeAfterStall(iv *Interval, tm time.Time) {
	if iv.From.After(h.stallAt) {
		h.close(iv, tm, false)
		return
	}
	h.close(iv, h.stallAt, true)
}

// putDelta is put of a delta's head at tm, or, after a silence of the
// recorder, putAfter its start.
func (h *histWalk) putDelta(kh kernelHead, tm time.Time) {
	if h.stallAt.IsZero() {
		h.put(kh, tm, false)
		return
	}
	h.putAfter(kh, tm, false, h.stallAt, true)
}

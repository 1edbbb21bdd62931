package history

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
)

// A segment's fold is what the sessions walk needs of a sealed segment
// whose every moment lies in the asked span: one entry per kernel it
// met (in its checkpoint or its deltas), saying how the kernel's stay
// went there, so that Sessions joins it onto what came before without
// decoding the segment.
//
// The join's rules, as the walk (sessWalk) applies a segment in the span:
//
//   - At the segment's start, a kernel the walk follows that the
//     checkpoint lacks is gone (at the start when the segment before
//     continues into it, else at the gap's start, in the gap); every
//     kernel of the checkpoint is put at the start (Since when the
//     record restarts and the walk did not follow it). Putting a head
//     the walk already has changes nothing, so the walk's skip of an
//     unchanged head is not the fold's concern.
//   - After the checkpoint, what the segment does to a kernel depends on
//     what came before only through whether its session had already
//     begun (and with what): whether it follows the kernel, its pending
//     identity and whether it holds anything are all set by the
//     checkpoint. So the deltas fold into: the first moment it held
//     something (its arrival when none came before), whether a later
//     holding did not lie within that first one, every amount it held
//     (a union; two amounts of one device disagreeing is a change
//     whatever it arrived with), who it was while it held (the last
//     known of each field), what it learnt of its identity, its last
//     departure, and how it ends (followed, pending, holding).
//
// A fold is used only for a segment wholly inside the span (its start at
// or after since, its last moment at or before until), read without a
// follower: the segments a span's end cuts are walked.
type segFold struct {
	// start is the segment's start; end, clean, rotated and rotateAt
	// how it ends (segEnd).
	start, end     time.Time
	clean, rotated bool
	rotateAt       time.Time
	last           time.Time // the latest moment of its deltas
	journal        [][]byte
	ents           []foldEnt
	// inCk are the kernels of the checkpoint (an absolute fold's): true
	// for each; a fold read from its file lists its other kernels too,
	// false.
	inCk map[model.KernelID]bool
	// rel: the fold is relative to the segment before it, which rotated
	// into it (prevSize and prevCRC name it): a kernel whose checkpoint
	// head is the one it ended that segment with is left out unless its
	// deltas say something (same), and left are the kernels that segment
	// ended with that the checkpoint lacks. It is used only right after
	// that segment, continued into this one.
	rel      bool
	prevSize int64
	prevCRC  uint32
	left     []model.KernelID
	// give, when not nil, takes ents and slabs back once the walk has
	// joined the fold (foldStep): nothing keeps an entry or an
	// allocation's entries past its join (the walk keeps its own:
	// keepEnts).
	give  chan foldBuf
	slabs [][]allocEnt
	// tab, decs and seen are the file's strings and amounts, for heldOf.
	tab  []string
	decs []model.Dec
	seen []bool
}

// heldOf is e.held, decoded from the fold's body where it was read from
// a file.
func (f *segFold) heldOf(e *foldEnt) []allocEnt {
	if e.heldN == 0 {
		return e.held
	}
	d := &foldDec{b: e.heldRaw, tab: f.tab, decs: f.decs, seen: f.seen}
	out := make([]allocEnt, e.heldN)
	for j := range out {
		out[j] = allocEnt{slot: model.SlotName(d.str()), dev: model.DeviceID(d.str()), amt: d.amt()}
	}
	if d.err != nil {
		// The parse checked these very bytes.
		panic(fmt.Sprintf("history: a fold's amounts read once and not again: %v", d.err))
	}
	return out
}

// foldEnt is one kernel's stay in a segment.
type foldEnt struct {
	id model.KernelID
	// inCk: the checkpoint lists it, as ck (the head's identity and
	// allocation; its state is not the walk's concern).
	inCk bool
	ck   sessHead
	// same: (a relative fold's) the checkpoint's head is the one the
	// segment before ended with; ck is not kept.
	same bool
	// touched: its deltas name it (the builder's; not kept).
	touched bool
	// first: it held something in the deltas; firstAt, firstAgent,
	// firstFA and firstSlots the first such moment, and firstBare: its
	// recovery record was not read then (ksum.bare).
	first      bool
	firstAt    time.Time
	firstAgent model.AgentID
	firstFA    flatAlloc
	firstSlots model.ResourceSlot
	firstBare  bool
	// changed: a later holding in the deltas was not within firstFA.
	changed bool
	// held: every amount it held in the deltas, once per slot and
	// device; conflict: one of them was held in two amounts. A fold read
	// from its file keeps them as its body has them, heldN of them at
	// heldRaw (checked whole as it was read), decoded only where the
	// join asks (segFold.heldOf): the join needs them of few kernels.
	held     []allocEnt
	heldRaw  []byte
	heldN    int
	conflict bool
	// who: who it was while it held in the deltas; learnt: what it
	// learnt of who it is there.
	who, learnt identity
	// rel: it stopped holding anything in the deltas, last at relAt
	// (relGone: in a gap).
	rel     bool
	relAt   time.Time
	relGone bool
	// How it ends: followed (present), pending and holding.
	present, pending, holding bool
}

// foldBuilder folds one segment.
type foldBuilder struct {
	f   *segFold
	in  *interner
	idb []byte
	// heads are the kernels' heads, for the patches.
	heads map[model.KernelID]*sessHead
	at    map[model.KernelID]int
}

// buildFold folds segment sr; false when it is not whole (unreadable,
// damaged or torn): such a segment is walked.
func buildFold(sr *segRead, in *interner) (*segFold, bool) {
	f, _, ok := foldSegment(sr, in)
	return f, ok
}

// buildFoldAfter folds segment sr relative to prev, the segment before
// it, of prevSize bytes and CRC-32C prevCRC, when prev is whole and
// rotated into sr; else absolutely.
func buildFoldAfter(sr, prev *segRead, prevSize int64, prevCRC uint32, in *interner) (*segFold, bool) {
	f, _, ok := foldSegment(sr, in)
	if !ok || prev == nil {
		return f, ok
	}
	pf, ends, pok := foldSegment(prev, in)
	if !pok || !pf.rotated || !pf.rotateAt.Equal(sr.file.Start) {
		return f, ok
	}
	f.rel, f.prevSize, f.prevCRC = true, prevSize, prevCRC
	for id := range ends {
		if !f.inCk[id] {
			f.left = append(f.left, id)
		}
	}
	slices.Sort(f.left)
	kept := f.ents[:0]
	for _, e := range f.ents {
		if e.inCk {
			if was := ends[e.id]; was != nil && was.same(&e.ck) {
				e.same, e.ck = true, sessHead{}
				if !e.touched {
					continue
				}
			}
		}
		kept = append(kept, e)
	}
	f.ents, f.inCk = kept, nil
	return f, true
}

// foldSegment is buildFold that also gives the heads the segment ends
// with.
func foldSegment(sr *segRead, in *interner) (*segFold, map[model.KernelID]*sessHead, bool) {
	if sr.err != nil || sr.data == nil || sr.data.Checkpoint == nil || sr.data.Damage != "" || sr.data.Torn {
		return nil, nil, false
	}
	b := &foldBuilder{f: &segFold{start: sr.file.Start, inCk: map[model.KernelID]bool{}}, in: in,
		heads: map[model.KernelID]*sessHead{}, at: map[model.KernelID]int{}}
	h := &histWalk{in: in}
	ck := h.sessCkptHeads(sr)
	// In the kernels' order, so that a segment folds to the same bytes.
	ids := make([]model.KernelID, 0, len(ck))
	for id := range ck {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		kh := ck[id]
		e := b.ent(kh.ID)
		e.inCk, e.ck = true, *kh
		e.present, e.pending, e.holding = true, !kh.known(), kh.fa.holds()
		b.f.inCk[kh.ID] = true
		b.heads[kh.ID] = kh
	}
	w := walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
		if !ckpt {
			b.deltas(tm, grp)
		}
	}}
	w.onJournal = func(body []byte) { b.f.journal = append(b.f.journal, append([]byte(nil), body...)) }
	w.scan(sr, nil, time.Time{})
	if sr.data.Damage != "" || len(w.stalls) > 0 {
		// A stall's changes are joined as after a gap: walked.
		return nil, nil, false
	}
	b.f.end, b.f.clean, b.f.rotated, b.f.rotateAt = sr.end, sr.clean, w.rotated, w.rotateAt
	for i := range b.f.ents {
		slices.SortFunc(b.f.ents[i].held, func(x, y allocEnt) int {
			return cmp.Or(strings.Compare(string(x.slot), string(y.slot)), strings.Compare(string(x.dev), string(y.dev)))
		})
	}
	return b.f, b.heads, true
}

func (b *foldBuilder) ent(id model.KernelID) *foldEnt {
	if i, ok := b.at[id]; ok {
		return &b.f.ents[i]
	}
	b.at[id] = len(b.f.ents)
	b.f.ents = append(b.f.ents, foldEnt{id: id})
	return &b.f.ents[len(b.f.ents)-1]
}

// deltas is sessWalk.deltas into the fold.
func (b *foldBuilder) deltas(tm time.Time, grp []rawRec) {
	if tm.After(b.f.last) {
		b.f.last = tm
	}
	for _, rr := range grp {
		switch rr.typ {
		case recKernel:
			d := dec{b: rr.body, in: b.in}
			b.idb = d.appendID(b.idb[:0])
			id := model.KernelID(b.idb)
			if prev := b.heads[id]; prev != nil {
				id = prev.ID
			}
			kh := decodeSessHeadRest(&d, id)
			if d.err == nil {
				b.put(kh, tm)
			}
		case recKernelPatch:
			d := dec{b: rr.body, in: b.in}
			b.idb = d.appendID(b.idb[:0])
			prev := b.heads[model.KernelID(b.idb)]
			if d.err != nil || prev == nil {
				continue
			}
			kh, mask := decodeSessPatch(&d, prev)
			if d.err != nil || mask&sessFields == 0 {
				continue
			}
			b.put(kh, tm)
		case recKernelGone:
			d := dec{b: rr.body, in: b.in}
			b.idb = d.appendID(b.idb[:0])
			if prev := b.heads[model.KernelID(b.idb)]; d.err == nil && prev != nil {
				b.gone(prev.ID, tm)
			}
		}
	}
}

// put is sessWalk.put of a delta, folded.
func (b *foldBuilder) put(kh sessHead, t time.Time) {
	e := b.ent(kh.ID)
	e.touched = true
	nh := kh
	b.heads[kh.ID] = &nh
	if !e.present {
		e.present, e.pending = true, false
	}
	if e.pending && kh.known() {
		e.learnt.take(identity{Agent: kh.Agent, Session: kh.Session, User: kh.User, Project: kh.Project})
		e.pending = false
	}
	if !kh.known() {
		e.pending = true
	}
	if !kh.fa.holds() {
		if e.holding {
			e.holding = false
			e.rel, e.relAt, e.relGone = true, t, false
		}
		return
	}
	e.holding = true
	e.who.take(identity{Session: kh.Session, User: kh.User, Project: kh.Project})
	if !e.first {
		e.first, e.firstAt, e.firstAgent, e.firstFA, e.firstSlots, e.firstBare = true, t, kh.Agent, kh.fa, kh.slots, kh.Session == ""
	} else if !e.changed && !kh.fa.within(e.firstFA.toMap()) {
		e.changed = true
	}
	eachHeld(&kh.fa, func(slot model.SlotName, dev model.DeviceID, amt model.Dec) {
		for i := range e.held {
			if h := &e.held[i]; h.slot == slot && h.dev == dev {
				if !h.amt.Equal(amt) {
					e.conflict = true
				}
				return
			}
		}
		e.held = append(e.held, allocEnt{slot: slot, dev: dev, amt: amt})
	})
}

// gone is sessWalk.gone of a delta, folded.
func (b *foldBuilder) gone(id model.KernelID, t time.Time) {
	e := b.ent(id)
	e.touched = true
	delete(b.heads, id)
	if e.holding {
		e.rel, e.relAt, e.relGone = true, t, false
	}
	e.present, e.pending, e.holding = false, false, false
}

// eachHeld calls f for every amount fa holds, as within reads it.
func eachHeld(fa *flatAlloc, f func(model.SlotName, model.DeviceID, model.Dec)) {
	if fa.irregular {
		for slot, devs := range fa.toMap() {
			for dev, amt := range devs {
				f(slot, dev, amt)
			}
		}
		return
	}
	for i := range fa.ents {
		e := &fa.ents[i]
		f(e.slot, e.dev, e.amt)
	}
}

// usable reports whether the walk may take f for segment i of q in
// place of walking it: the segment lies wholly in the asked span.
func (q *histRun) foldUsable(f *segFold) bool {
	if f == nil {
		return false
	}
	if !q.f.Since.IsZero() && f.start.Before(q.f.Since) {
		return false
	}
	if !q.f.Until.IsZero() && (f.end.After(q.f.Until) || f.last.After(q.f.Until)) {
		return false
	}
	return true
}

// foldStep is stepWith for a segment taken from its fold.
func (q *histRun) foldStep(i int, f *segFold, sw *sessWalk) {
	q.i++
	q.folded++
	start := q.segs[i].Start
	gapAt := q.prevEnd
	if i == 0 {
		gapAt = start
	}
	sw.applyFold(f, start, gapAt, q.carry)
	for _, body := range f.journal {
		q.res.Partitions = q.f.journal(q.res.Partitions, body)
	}
	if f.give != nil {
		// Cleared, so that the buffer keeps none of this fold's strings
		// and allocations alive while it waits.
		clear(f.ents)
		for _, s := range f.slabs {
			clear(s[:cap(s)])
		}
		select {
		case f.give <- foldBuf{ents: f.ents[:0], slabs: f.slabs}:
		default:
		}
		f.ents, f.slabs = nil, nil
	}
	q.finish(i, &segData{}, segEnd{end: f.end, clean: f.clean, rotated: f.rotated, rotateAt: f.rotateAt})
}

// applyFold joins f onto the walk: the checkpoint through the walk's own
// restart or advance, then each kernel's deltas as folded.
func (sw *sessWalk) applyFold(f *segFold, start, gapAt time.Time, carry bool) {
	if f.rel {
		// Right after the segment it is relative to (foldStep): the walk
		// follows the kernels that segment ended with, as it ended them.
		for _, id := range f.left {
			if sw.heads[id] != nil {
				sw.gone(id, start, false)
			}
		}
		for i := range f.ents {
			if e := &f.ents[i]; e.inCk && !e.same {
				sw.put(e.ck, start, false)
			}
		}
		sw.reach(start)
		for i := range f.ents {
			sw.joinDeltas(f, &f.ents[i])
		}
		return
	}
	for id := range sw.heads {
		if !f.inCk[id] {
			if carry {
				sw.gone(id, start, false)
			} else {
				sw.gone(id, gapAt, true)
			}
		}
	}
	for i := range f.ents {
		if e := &f.ents[i]; e.inCk {
			_, known := sw.heads[e.id]
			sw.put(e.ck, start, !carry && !known)
		}
	}
	sw.reach(start)
	for i := range f.ents {
		sw.joinDeltas(f, &f.ents[i])
	}
}

// joinDeltas applies a kernel's folded deltas (in the span).
func (sw *sessWalk) joinDeltas(f *segFold, e *foldEnt) {
	var k *ksum
	if e.first || e.rel || e.learnt != (identity{}) || !e.inCk || e.holding {
		k = sw.sums[e.id]
	}
	if e.learnt != (identity{}) {
		sw.h.learn(kernelHead{ID: e.id, Agent: e.learnt.Agent, Session: e.learnt.Session, User: e.learnt.User, Project: e.learnt.Project})
	}
	if e.first {
		if k == nil {
			k = sw.newSum(e.id)
		}
		if !k.started {
			k.started = true
			k.s = ksess{Kernel: e.id, Agent: e.firstAgent, From: e.firstAt, Slots: e.firstSlots}
			k.s.Changed, k.bare = e.changed, e.firstBare
			if e.firstFA.irregular {
				k.lazy = false
				k.s.Alloc = cloneHeld(e.firstFA.toMap())
			} else {
				// Its maps made off the walk, as put has a walked
				// arrival's: they were half of the join's time. The
				// job reads the fold's entries, which the rest of the
				// fold's allocations share, only until its batch is
				// mapped; the session keeps its own (keepEnts).
				sw.mapLater(k, e.firstFA)
			}
		} else if !k.s.Changed && (e.conflict || !sw.arrivalHolds(k, f.heldOf(e))) {
			k.s.Changed = true
		}
		k.who.take(e.who)
	}
	if e.rel && k != nil {
		k.s.To, k.s.Gone = e.relAt, e.relGone
	}
	if k != nil {
		k.holding = e.holding
	}
	if !e.present {
		delete(sw.heads, e.id)
		return
	}
	tr := sw.heads[e.id]
	if tr == nil {
		tr = &sessTrack{}
		sw.heads[e.id] = tr
	}
	tr.pending, tr.folded = e.pending, true
	tr.head = sessHead{kernelHead: kernelHead{ID: e.id}}
	if k == nil {
		k = sw.sums[e.id]
	}
	if k != nil {
		tr.sum = k
	}
}

// keepEnts is ents as the walk keeps them to its end, in its own blocks:
// each entry its place in sw.tab, where every distinct one is once. A
// busy week's 200,000 arrivals hold 1.2 million entries, 48 bytes each,
// of 2,000 distinct ones (the same devices in the same amounts, each
// amount one Dec of its segment).
func (sw *sessWalk) keepEnts(ents []allocEnt) []uint32 {
	if cap(sw.idx)-len(sw.idx) < len(ents) {
		sw.idx = make([]uint32, 0, max(len(ents), 16384))
	}
	if sw.tabAt == nil {
		sw.tabAt = map[allocEnt]uint32{}
	}
	k := len(sw.idx)
	for _, e := range ents {
		// The key is what the entry holds; first is where it lies.
		e.first = false
		at, ok := sw.tabAt[e]
		if !ok {
			at = uint32(len(sw.tab))
			sw.tab = append(sw.tab, e)
			sw.tabAt[e] = at
		}
		sw.idx = append(sw.idx, at)
	}
	return sw.idx[k:len(sw.idx):len(sw.idx)]
}

// keptFA is k's arrival allocation as flat entries (lazy only): those
// keepEnts kept, each slot's first marked again (a regular allocation
// lists each slot's devices together).
func (sw *sessWalk) keptFA(k *ksum) flatAlloc {
	return keptAlloc(make([]allocEnt, 0, len(k.ents)), sw.tab, k.ents, k.nslots)
}

// keptAlloc is the regular allocation of n slots whose entries keepEnts
// kept as ents, their places in tab, its entries appended to buf.
func keptAlloc(buf, tab []allocEnt, ents []uint32, n int32) flatAlloc {
	for i, at := range ents {
		e := tab[at]
		e.first = i == 0 || e.slot != buf[len(buf)-1].slot
		buf = append(buf, e)
	}
	return flatAlloc{ents: buf, n: int(n)}
}

// arrivalHolds reports whether every amount of held is held, Equal, in
// k's arrival (within, of each holding the amounts came from).
func (sw *sessWalk) arrivalHolds(k *ksum, held []allocEnt) bool {
	for i := range held {
		e := &held[i]
		if k.lazy {
			if !sw.keptHolds(k, e) {
				return false
			}
			continue
		}
		if had, ok := k.s.Alloc[e.slot][e.dev]; !ok || !had.Equal(e.amt) {
			return false
		}
	}
	return true
}

// keptHolds reports whether k's kept arrival entries hold e's amount,
// Equal, of e's slot on e's device (withinFlat of one entry).
func (sw *sessWalk) keptHolds(k *ksum, e *allocEnt) bool {
	for _, at := range k.ents {
		if b := &sw.tab[at]; b.dev == e.dev && b.slot == e.slot {
			return b.amt.Equal(e.amt)
		}
	}
	return false
}

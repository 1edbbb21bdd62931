package history

import "time"

// segFolder is what a walk of the segments in order folds them into:
// History's intervals (histWalk) or Sessions' sessions (sessWalk). The
// walk (walkSeq, histRun.stepWith) is the same for both: read ahead on
// another core, a segment's checkpoint first (a fresh start after a gap,
// else a step from the segment before), then its deltas, its journal
// and its end.
type segFolder interface {
	// checkpoint applies segment sr's checkpoint at start: carry, the
	// segment before continues into it; else the record restarts after
	// a gap that began at gapAt.
	checkpoint(sr *segRead, start, gapAt time.Time, carry bool)
	deltas(tm time.Time, grp []rawRec)
}

func (h *histWalk) checkpoint(sr *segRead, start, gapAt time.Time, carry bool) {
	inCk := h.ckptHeads(sr)
	if carry {
		h.advance(inCk, start)
	} else {
		h.restart(inCk, start, gapAt)
	}
}

func (sw *sessWalk) checkpoint(sr *segRead, start, gapAt time.Time, carry bool) {
	inCk := sr.sessCk
	if inCk == nil {
		inCk = sw.h.sessCkptHeads(sr)
	}
	sr.sessCk = nil
	if carry && !sw.h.stallAt.IsZero() {
		sw.flush(sw.h.stallAt)
	} else if carry {
		sw.flush(start)
	} else {
		sw.flush(gapAt)
	}
	if carry {
		sw.advance(inCk, start)
	} else {
		sw.restart(inCk, start, gapAt)
	}
}

// preFolder is a segFolder with work of a segment's that needs nothing
// of the walk's state: the read-ahead does it, on its own core, before
// it hands the segment over.
type preFolder interface {
	pre(sr *segRead, in *interner)
}

// pre decodes the checkpoint's heads (a third of the sessions walk's own
// time on a busy week) with the read-ahead's interner: the heads are the
// same values the walk would decode, and the walk compares them by value.
func (sw *sessWalk) pre(sr *segRead, in *interner) {
	if sr.err != nil || sr.data == nil || sr.data.Checkpoint == nil {
		return
	}
	h := &histWalk{in: in}
	sr.sessCk = h.sessCkptHeads(sr)
}

// walkSeq walks q's segments in order into fo, the next one read and
// decompressed ahead on another goroutine, stopping at r's context.
func (r *Reader) walkSeq(q *histRun, fo segFolder) error {
	pre := make(chan *segRead, 1)
	stop := make(chan struct{})
	defer func() {
		// The read-ahead ends with the call: bounded by the same
		// context, it stops inside its segment once that is done.
		close(stop)
		for range pre {
		}
	}()
	segs := q.segs
	go func() {
		defer close(pre)
		// Three buffers in turn: one being walked, one waiting in pre,
		// one being filled; the walk keeps no slice of a segment's bytes
		// past the segment.
		rd := &Reader{dir: r.dir, segs: segs, bufs: make([][]byte, 3), ctx: r.ctx}
		pf, _ := fo.(preFolder)
		in := newInterner()
		for i := range q.n {
			var sr *segRead
			if q.foldOf != nil {
				var prev *segFile
				if i > 0 {
					prev = &segs[i-1]
				}
				if f := q.foldOf(segs[i], prev); q.foldUsable(f) {
					sr = &segRead{file: segs[i], fold: f}
				}
			}
			if sr == nil {
				sr = rd.read(i, false)
			}
			if pf != nil && rd.ctxErr() == nil {
				pf.pre(sr, in)
			}
			select {
			case pre <- sr:
			case <-stop:
				return
			}
		}
	}()
	for range q.n {
		if err := r.ctxErr(); err != nil {
			return err
		}
		sr := <-pre
		if err := r.ctxErr(); err != nil {
			// A segment the read-ahead stopped in is not a damaged one.
			return err
		}
		_, afterStall := q.stallBefore(q.i)
		if sr.fold != nil && (sr.fold.rel && !q.carry || afterStall) {
			// Relative to a segment that did not continue into it (that
			// one was damaged), or begun right after a stall, whose
			// changes its first polls carry (a fold reads them as
			// changes at their own times): walked.
			sr = (&Reader{dir: r.dir, segs: segs, ctx: r.ctx}).read(q.i, false)
		}
		// Segments wholly before Since matter only for what is open when
		// it begins; their checkpoint alone would not say since when, so
		// they are read all the same.
		q.stepWith(sr, fo)
	}
	return nil
}

// stepWith walks the next segment, as read, into fo.
func (q *histRun) stepWith(sr *segRead, fo segFolder) {
	i := q.i
	if sr.fold != nil {
		q.foldStep(i, sr.fold, fo.(*sessWalk))
		return
	}
	q.i++
	if q.unreadable(i, sr) {
		return
	}
	start := q.segs[i].Start
	gapAt := q.prevEnd
	if i == 0 {
		gapAt = start
	}
	h := walkOf(fo)
	if st, ok := q.stallBefore(i); ok && h != nil {
		h.stallAt = st.From
	}
	fo.checkpoint(sr, start, gapAt, q.carry)
	if h != nil {
		h.stallAt = time.Time{}
	}
	q.walkRestWith(i, sr, fo)
}

// walkRestWith is stepWith after the checkpoint: the deltas folded, the
// journal kept, the segment's end noted.
func (q *histRun) walkRestWith(i int, sr *segRead, fo segFolder) {
	var w walker
	h := walkOf(fo)
	if st, ok := q.stallBefore(i); ok {
		// The segment before ended in a stall: its first polls carry
		// the stall's changes.
		w.stallFrom, w.stallEnd = st.From, st.To.Add(stallSlack)
	}
	w.onGroup = func(tm time.Time, grp []rawRec, ckpt bool) {
		if !ckpt {
			if h != nil {
				h.stallAt = w.stallAt
			}
			fo.deltas(tm, grp)
		}
	}
	w.onJournal = func(body []byte) { q.res.Partitions = q.f.journal(q.res.Partitions, body) }
	w.scan(sr, nil, time.Time{})
	q.finish(i, sr.data, segEnd{end: sr.end, clean: sr.clean, rotated: w.rotated, rotateAt: w.rotateAt, stalls: w.stalls})
}

// walkOf is the histWalk fo folds with (that of the sessions walk).
func walkOf(fo segFolder) *histWalk {
	if sw, ok := fo.(*sessWalk); ok {
		return sw.h
	}
	h, _ := fo.(*histWalk)
	return h
}

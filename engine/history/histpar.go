package history

import (
	"runtime"
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// History lists who held what over the record, oldest first.
//
// Each segment begins with a checkpoint of the whole state, so the
// segments are walked on their own, on up to GOMAXPROCS goroutines, each
// from its checkpoint; the walks are then joined in order as the
// sequential walk (historySeq) would have gone from one segment into the
// next. Where a segment's checkpoint does not say what the walk before it
// ended with (it never should, but the record is outside input), that
// segment is walked again from the state before it.
func (r *Reader) History(f Filter) (*HistoryResult, error) {
	if len(r.segs) == 0 {
		return nil, r.empty()
	}
	var res *HistoryResult
	if workers := runtime.GOMAXPROCS(0); workers < 2 {
		var err error
		if res, err = r.historySeq(f); err != nil {
			return nil, err
		}
	} else {
		res = r.historyPar(f, workers)
	}
	if res.To.IsZero() {
		// A span that ends before the record begins walks no segment, so
		// nothing set the record's end: "covers ... to 0001-01-01" said so.
		_, to, err := r.Span()
		if err != nil {
			return nil, err
		}
		res.To = to
	} else if res.More {
		// The walk stopped at --until: say where the record ends, not
		// where the part read does (which depends on where its
		// segments begin).
		if _, to, err := r.Span(); err == nil && to.After(res.To) {
			res.RecordTo = to
		}
	}
	return res, nil
}

// segWalk is one segment walked on its own from its checkpoint.
type segWalk struct {
	sr *segRead
	// inCk are the checkpoint's kernels; h the walk from them, whose
	// tracked kernels at the checkpoint were init.
	inCk ckHeads
	h    *histWalk
	init []initTrack
	end  segEnd
	// stillOpen are the intervals opened at the checkpoint and open at
	// the end.
	stillOpen []*Interval
	parts     []agentconfig.JournalRecord
}

// initTrack is a kernel the walk of a segment tracked at its checkpoint:
// its head then and the devices it held (open intervals).
type initTrack struct {
	head kernelHead
	open []model.DeviceKey
}

// good: the segment and its checkpoint were read.
func (sw *segWalk) good() bool { return sw.sr.err == nil && sw.sr.data.Checkpoint != nil }

// walkSeg walks segment i of q from its checkpoint.
func (q *histRun) walkSeg(rd *Reader, in *interner, i int) *segWalk {
	sw := &segWalk{sr: rd.read(i, false)}
	if !sw.good() {
		return sw
	}
	sr := sw.sr
	start := q.segs[i].Start
	h := &histWalk{f: q.f, all: true, in: in}
	sw.h = h
	sw.inCk = h.ckptHeads(sr)
	// Room for the checkpoint's kernels and a few more, and for them all
	// in one block of trackers.
	h.cur = make(map[model.KernelID]*ktrack, len(sw.inCk)+len(sw.inCk)/8)
	trs := make([]ktrack, len(sw.inCk))
	for _, kh := range sw.inCk {
		if !h.f.follows() {
			tr := &trs[0]
			trs = trs[1:]
			h.cur[kh.ID] = tr
		}
		h.put(*kh, start, true)
	}
	// The start of the walk matters to the join only under a kernel or
	// user filter (fits).
	for _, tr := range h.cur {
		if !h.f.follows() {
			break
		}
		it := initTrack{head: tr.head}
		for k := range tr.open {
			it.open = append(it.open, k)
		}
		sw.init = append(sw.init, it)
	}
	var w walker
	w.onGroup = func(tm time.Time, grp []rawRec, ckpt bool) {
		if !ckpt {
			h.stallAt = w.stallAt
			h.deltas(tm, grp)
		}
	}
	w.onJournal = func(body []byte) { sw.parts = q.f.journal(sw.parts, body) }
	w.scan(sr, nil, time.Time{})
	sw.end = segEnd{end: sr.end, clean: sr.clean, rotated: w.rotated, rotateAt: w.rotateAt, stalls: w.stalls}
	for _, tr := range h.cur {
		for _, iv := range tr.open {
			if iv.Since {
				sw.stillOpen = append(sw.stillOpen, iv)
			}
		}
	}
	return sw
}

// historyPar is History on workers goroutines.
func (r *Reader) historyPar(f Filter, workers int) *HistoryResult {
	q := r.newHistRun(f)
	n := q.n
	results := make([]chan *segWalk, n)
	for i := range results {
		results[i] = make(chan *segWalk, 1)
	}
	// At most a few segments walked ahead of the join: each holds its
	// kernels' state.
	ahead := make(chan struct{}, workers)
	var next int
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := &Reader{dir: r.dir, segs: q.segs, bufs: make([][]byte, 1), sb: &segBufs{}}
			in := newInterner()
			for {
				select {
				case ahead <- struct{}{}:
				case <-stop:
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				results[i] <- q.walkSeg(rd, in, i)
			}
		}()
	}
	q.rs = &Reader{dir: r.dir, segs: q.segs}
	for i := range n {
		sw := <-results[i]
		<-ahead
		if !q.join(i, sw) {
			// The sequential step, as historySeq reads the segment.
			q.step(q.rs.read(i, false))
		}
	}
	return q.done()
}

// join takes segment i's own walk into the query, as if it had been
// walked from the state before it; false (and nothing changed) when the
// segment or its checkpoint could not be read, or it begins right after
// a stall (histRun.stallBefore). Where the state after the
// checkpoint is not the one the walk began with, the segment is walked
// again on the state.
func (q *histRun) join(i int, sw *segWalk) bool {
	if _, ok := q.stallBefore(i); !sw.good() || ok {
		// Right after a stall, the segment's first polls carry its
		// changes, which its own walk (begun with no stall) cannot know:
		// walked on the state.
		return false
	}
	h := q.h
	start := q.segs[i].Start
	// What the sequential step does first.
	if !q.carry {
		gapAt := q.prevEnd
		if i == 0 {
			gapAt = start
		}
		h.restart(sw.inCk, start, gapAt)
	} else {
		h.advance(sw.inCk, start)
	}
	q.i = i + 1
	// Without a kernel or who filter every kernel is tracked, so after
	// the checkpoint h's kernels are the checkpoint's with its heads:
	// those the walk began with.
	if q.f.follows() && !sw.fits(h) {
		// The rest of the sequential step.
		if sr := q.rs.read(i, false); !q.unreadable(i, sr) {
			q.walkRest(i, sr)
		}
		return true
	}
	// The state before matches the checkpoint's: the walk's intervals
	// opened at the checkpoint are the ones open before it.
	// Kept in place, in the walk's own slice.
	out := sw.h.out[:0]
	for j := range sw.h.out {
		iv := sw.h.out[j]
		if iv.Since {
			prev := *h.cur[iv.Kernel].open[iv.Device]
			prev.To, prev.Gone = iv.To, iv.Gone
			iv = prev
		}
		if h.match(&iv) {
			out = append(out, iv)
		}
	}
	q.outs = append(q.outs, out)
	for _, iv := range sw.stillOpen {
		*iv = *h.cur[iv.Kernel].open[iv.Device]
	}
	h.cur = sw.h.cur
	h.mergeIdent(sw.h.ident)
	q.res.Partitions = append(q.res.Partitions, sw.parts...)
	q.finish(i, sw.sr.data, sw.end)
	return true
}

// fits reports whether h's tracked kernels are those the segment's own
// walk began with, with the same heads: then each open interval of h is
// one of the walk's initial ones but for when and how it began (From,
// Since, Project), and the walk goes on from there as h's would.
func (sw *segWalk) fits(h *histWalk) bool {
	if len(h.cur) != len(sw.init) {
		return false
	}
	// As many kernels, each of the walk's found with the same head: the
	// same kernels.
	for i := range sw.init {
		it := &sw.init[i]
		tr := h.cur[it.head.ID]
		if tr == nil || !sameHead(tr.head, it.head) || len(tr.open) != len(it.open) {
			return false
		}
		for _, k := range it.open {
			if tr.open[k] == nil {
				return false
			}
		}
	}
	return true
}

func sameHead(a, b kernelHead) bool {
	return a.ID == b.ID && a.Agent == b.Agent && a.State == b.State && a.Session == b.Session && a.User == b.User &&
		a.Project == b.Project && allocIdentical(a.Alloc, b.Alloc)
}

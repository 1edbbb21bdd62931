package replay

import (
	"container/heap"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// LoadStarted is Load with the run of rec under the partitions in force
// (Start(rec, rec.AsItWas(), opts)) started as the record is read: the
// walk gives the sessions in arrival order, and the run takes each
// moment once the walk has passed it (every arrival then read, every
// departure before it known), on the core the walk leaves free instead
// of after it. What the run took is checked against the record once it
// is read (the sessions, their order, agents, requests and departures;
// one partition throughout); where the record says otherwise (an agent
// learnt late, a kernel that came back after leaving, a partition
// changed inside the span, a walk out of order), the run is made again
// on the record as read, so the result is always Run's.
//
// It does so only where opts.Fed asks: by default it reads, then runs.
// On this project's two-core machine the read keeps both cores busy
// already (the walk, the read-ahead and the arrivals' maps), and a run
// beside it was measured to cost a fifth more CPU (the collector active
// throughout, the run's data live during the walk) for no less wall
// time; on more cores it has not been measured yet (BENCHMARKS.md).
func LoadStarted(rd *history.Reader, from, to time.Time, opts Options) (*Record, *Pending, error) {
	if !opts.Fed {
		rec, err := Load(rd, from, to)
		if err != nil {
			return nil, nil, err
		}
		if opts.AfterRead != nil {
			opts.AfterRead()
		}
		opts.Fidelity = true
		return rec, Start(rec, rec.AsItWas(), opts), nil
	}
	return loadStarted(rd, from, to, opts, 0)
}

// loadStarted is LoadStarted with the walk's notes sent every so many
// (history.Reader.SessionsFollow).
func loadStarted(rd *history.Reader, from, to time.Time, opts Options, every int) (*Record, *Pending, error) {
	rec, err := loadHead(rd, from, to)
	if err != nil {
		return nil, nil, err
	}
	notes := make(chan history.SessionBatch, 4)
	fw := newFollower(rec, opts)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fw.follow(notes)
	}()
	res, err := rd.SessionsFollow(rec.From, rec.To, notes, every)
	<-done
	if err != nil {
		return nil, nil, fmt.Errorf("replay: reading the sessions: %w", err)
	}
	rec.Missing = inSpan(res.Missing, rec.From, rec.To)
	why := fw.adopt(res, rec)
	if why != "" {
		rec.Sessions = sessionsOf(res.Sessions, rec.From, rec.To, rec.Devices)
	}
	rec.loadEnd(rd, res)
	if why == "" && len(rec.Epochs) != 1 {
		why = "the partition changed inside the span"
	}
	if why != "" {
		p := Start(rec, rec.AsItWas(), opts)
		p.redo = why
		return rec, p, nil
	}
	fw.r.rec = rec
	fw.runTo(time.Time{}, true)
	p := &Pending{done: make(chan struct{}), res: fw.r.end()}
	close(p.done)
	return rec, p, nil
}

// follower is the run fed by the walk's notes.
type follower struct {
	// work is the record as far as the run has taken it: its sessions
	// grow as the walk gives them.
	work *Record
	r    *runner
	// pending are arrivals not taken in yet, by (At, kernel).
	pending []history.SessionNote
	// seqs are the walk's kernels by SessionNote.Seq: the session taken
	// in, or the departure of one not taken in yet.
	seqs []seqState
	// left[i]: session i's departure is an event of the run.
	left []bool
	deps depHeap
	// next is the next session to arrive.
	next int
	// last is the last session taken in (its At and kernel).
	lastAt     time.Time
	lastKernel model.KernelID
	// done: when the run's last event was; began: there was one.
	done  time.Time
	began bool
	// broken says why the run cannot stand ("": it can so far).
	broken string
	// noAgent is the first session taken in with no agent, plus one (0:
	// none).
	noAgent int
	// asks are the requests made (askedOf); slotsOf[i] the SLOTS session
	// i's note gave, for adopt's check.
	asks    *askMemo
	slotsOf []model.ResourceSlot
}

func newFollower(rec *Record, opts Options) *follower {
	work := &Record{From: rec.From, To: rec.To, Node: rec.Node, Devices: rec.Devices, Settings: rec.Settings, Epochs: rec.Epochs[:1:1]}
	opts.Fidelity = true
	r := &runner{rec: work, part: work.AsItWas(), opts: opts, res: &Result{From: work.From, To: work.To}}
	return &follower{work: work, r: r, asks: newAskMemo(work.Devices)}
}

// seqState is what the follower knows of one of the walk's kernels.
type seqState struct {
	// idx is its session's index in the run, plus one (0: none yet).
	idx int
	// end is when it left, with ended, before it was taken in.
	end   time.Time
	ended bool
}

// seq is the state of the walk's kernel n.
func (fw *follower) seq(n int) *seqState {
	if n >= len(fw.seqs) {
		if n >= cap(fw.seqs) {
			fw.seqs = slices.Grow(fw.seqs, max(n+1, 2*cap(fw.seqs))-len(fw.seqs))
		}
		fw.seqs = fw.seqs[:n+1]
	}
	return &fw.seqs[n]
}

// follow takes the batches to their close: it always reads them all, so
// the walk never waits on a run that stopped.
func (fw *follower) follow(notes <-chan history.SessionBatch) {
	fw.r.begin()
	for b := range notes {
		if fw.broken != "" {
			continue
		}
		fw.take(b.Notes)
		if fw.broken == "" {
			fw.runTo(b.Upto, false)
		}
	}
	if fw.broken == "" {
		// The rest is run once the record is read (LoadStarted): a
		// session whose agent was not known yet takes the one learnt.
		fw.admit(time.Time{}, true)
	}
}

// take files a batch's notes, and breaks the run where one says what it
// may have taken otherwise already.
func (fw *follower) take(notes []history.SessionNote) {
	arrived := false
	for i := range notes {
		n := &notes[i]
		switch n.Kind {
		case history.NoteArrive:
			if fw.began && !n.At.After(fw.done.Add(OrderSlack)) {
				fw.broken = fmt.Sprintf("%s arrived at %s, after the run passed it", n.Kernel, n.At)
				return
			}
			if !fw.lastAt.IsZero() && cmpNote(n.At, n.Kernel, fw.lastAt, fw.lastKernel) <= 0 {
				fw.broken = fmt.Sprintf("%s arrived at %s, before a session already taken", n.Kernel, n.At)
				return
			}
			fw.pending = append(fw.pending, *n)
			arrived = true
		case history.NoteLeave:
			st := fw.seq(n.Seq)
			if st.idx == 0 {
				st.end, st.ended = n.At, true
				continue
			}
			i := st.idx - 1
			if fw.left[i] || !n.At.After(fw.work.From) || fw.began && !n.At.After(fw.done) {
				fw.broken = fmt.Sprintf("%s left at %s, after the run passed it", n.Kernel, n.At)
				return
			}
			fw.leaves(i, n.At)
		case history.NoteResume:
			st := fw.seq(n.Seq)
			if st.idx == 0 {
				st.ended = false
				continue
			}
			if fw.left[st.idx-1] {
				fw.broken = fmt.Sprintf("%s came back after it left", n.Kernel)
				return
			}
		}
	}
	if arrived && !slices.IsSortedFunc(fw.pending, func(a, b history.SessionNote) int { return cmpNote(a.At, a.Kernel, b.At, b.Kernel) }) {
		slices.SortStableFunc(fw.pending, func(a, b history.SessionNote) int { return cmpNote(a.At, a.Kernel, b.At, b.Kernel) })
	}
}

func cmpNote(at time.Time, k model.KernelID, bt time.Time, bk model.KernelID) int {
	if c := at.Compare(bt); c != 0 {
		return c
	}
	return strings.Compare(string(k), string(bk))
}

// leaves makes session i's departure at t an event, where it is one.
func (fw *follower) leaves(i int, t time.Time) {
	s := &fw.work.Sessions[i]
	if !t.Before(fw.work.To) {
		return
	}
	s.End, s.Open = t, false
	fw.left[i] = true
	// A session that left at or before it arrived leaves right after its
	// arrival, as events orders it (runTo takes the arrival first).
	at := s.Start
	if s.Before && at.Before(fw.work.From) {
		at = fw.work.From
	}
	heap.Push(&fw.deps, event{t: later(t, at), leave: true, i: i})
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// admit takes in the pending arrivals before upto (all with final), as
// sessionsOf makes them.
func (fw *follower) admit(upto time.Time, final bool) {
	rec := fw.work
	if !final && !upto.After(rec.From) {
		// A session running at the span's start that left at it is not
		// one: wait until the walk is past it.
		return
	}
	n := 0
	for ; n < len(fw.pending); n++ {
		p := &fw.pending[n]
		if !final && !p.At.Before(upto) {
			break
		}
		fw.lastAt, fw.lastKernel = p.At, p.Kernel
		st := fw.seq(p.Seq)
		end, ended := st.end, st.ended
		st.ended = false
		if ended && !end.After(rec.From) || p.At.After(rec.To) || !holdsAny(p.Alloc) {
			continue
		}
		s := Session{Kernel: p.Kernel, Agent: p.Agent, Start: p.At, End: rec.To, Open: true, Got: p.Alloc, Requested: fw.asks.askedOf(p.Slots, p.Alloc)}
		s.Before = !s.Start.After(rec.From)
		i := len(rec.Sessions)
		rec.Sessions = append(doubled(rec.Sessions), s)
		fw.r.live = append(fw.r.live, nil)
		fw.left = append(fw.left, false)
		fw.slotsOf = append(fw.slotsOf, p.Slots)
		st.idx = i + 1
		if s.Agent == "" && fw.noAgent == 0 {
			fw.noAgent = i + 1
		}
		if ended {
			fw.leaves(i, end)
		}
	}
	fw.pending = fw.pending[n:]
}

// runTo takes the run's events of moments the walk has passed (before
// upto, less OrderSlack: where a session lands depends on who arrived
// just after it); all of them with final. The order is events': by
// time, departures before arrivals, each in the sessions' order.
func (fw *follower) runTo(upto time.Time, final bool) {
	fw.admit(upto, final)
	rec := fw.work
	for {
		var ev event
		arr := fw.next < len(rec.Sessions)
		var at time.Time
		if arr {
			s := &rec.Sessions[fw.next]
			at = s.Start
			if s.Before && at.Before(rec.From) {
				at = rec.From
			}
		}
		switch {
		case len(fw.deps) > 0 && (!arr || !at.Before(fw.deps[0].t) && fw.deps[0].i < fw.next):
			// A departure of a session yet to arrive (one that left as
			// it arrived) waits for its arrival.
			ev = fw.deps[0]
		case arr:
			ev = event{t: at, i: fw.next}
		default:
			return
		}
		if !final && !ev.t.Add(OrderSlack).Before(upto) {
			return
		}
		if !final && !ev.leave && fw.unnamed(ev) {
			return
		}
		if ev.leave {
			heap.Pop(&fw.deps)
		} else {
			fw.next++
		}
		fw.r.step(ev)
		fw.done, fw.began = ev.t, true
	}
}

// unnamed: the arrival ev, or one OrderSlack after it (where it lands
// depends on them: sameMoment), has no agent yet. Its agent may be learnt
// later in the record: ev and all after it wait for the walk's end.
func (fw *follower) unnamed(ev event) bool {
	// The first session with no agent, at or after ev (the run never
	// passes it): those between are no later than it.
	return fw.noAgent > 0 && !fw.work.Sessions[fw.noAgent-1].Start.After(ev.t.Add(OrderSlack))
}

// adopt makes the run's sessions rec's, as sessionsOf makes them of the
// record as read (res), where the two agree on all the run took: the
// same sessions in the same order, of the same kernels, arrivals,
// agents and allocations, leaving when the run took them to. It says
// where they do not ("": rec.Sessions are the run's, finished).
func (fw *follower) adopt(res *history.SessionsResult, rec *Record) string {
	if fw.broken != "" {
		return fw.broken
	}
	ws := fw.work.Sessions
	from, to := rec.From, rec.To
	j := 0
	for i := range res.Sessions {
		k := &res.Sessions[i]
		if !keeps(k, from, to) {
			continue
		}
		if j == len(ws) {
			return fmt.Sprintf("the record has more sessions than the run took (%s)", k.Kernel)
		}
		w := &ws[j]
		if w.Agent == "" && j >= fw.next {
			// Learnt late, of a session the run has neither taken
			// nor looked at yet (unnamed).
			w.Agent = k.Agent
		}
		if w.Kernel != k.Kernel || !w.Start.Equal(k.From) || w.Agent != k.Agent || !sameMap(w.Got, k.Alloc) || !sameMap(fw.slotsOf[j], k.Slots) {
			return fmt.Sprintf("session %d (%s) is not what the run took: %s at %s on %s (%s), read as %s at %s on %s (%s)", j, k.Kernel,
				w.Kernel, w.Start, w.Agent, Requested(w.Requested), k.Kernel, k.From, k.Agent, Requested(newAskMemo(fw.work.Devices).askedOf(k.Slots, k.Alloc)))
		}
		leaves := !k.Open && k.To.Before(to)
		if leaves != fw.left[j] || leaves && !w.End.Equal(k.To) {
			return fmt.Sprintf("session %d (%s) did not leave when the run took it to", j, k.Kernel)
		}
		j++
	}
	if j != len(ws) {
		return fmt.Sprintf("the record has %d sessions, the run took %d", j, len(ws))
	}
	j = 0
	for i := range res.Sessions {
		if k := &res.Sessions[i]; keeps(k, from, to) {
			ws[j].finish(k, from, to)
			j++
		}
	}
	rec.Sessions = ws
	return ""
}

// sameMap: a and b are the one map, or both none (the walk gave the
// follower the allocation, or the request, it gives the result).
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// doubled is s with room for one more, doubling where it grows: append
// grows a long slice by a quarter, so a week's 200,000 sessions were
// copied, onto fresh pages, a dozen times over.
func doubled[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	d := make([]T, len(s), max(2*cap(s), 1024))
	copy(d, s)
	return d
}

// depHeap are departures by (time, session).
type depHeap []event

func (h depHeap) Len() int { return len(h) }
func (h depHeap) Less(i, j int) bool {
	if c := h[i].t.Compare(h[j].t); c != 0 {
		return c < 0
	}
	return h[i].i < h[j].i
}
func (h depHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *depHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *depHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

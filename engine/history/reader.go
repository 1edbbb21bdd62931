package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// Missing is a stretch of time the record cannot answer for exactly.
type Missing struct {
	From, To time.Time
	// Why, in an operator's words: a segment that is damaged, or the
	// recorder not running.
	Why string
}

func (m Missing) String() string {
	if m.To.Equal(m.From) {
		// The lost end of a damaged last segment: how far it went is
		// lost with it.
		return fmt.Sprintf("from %s on: %s", fmtTime(m.From), m.Why)
	}
	// Local time with its zone, as the tables and the record's other
	// messages say a moment (the JSON documents carry RFC 3339 UTC); a
	// stretch within one second with its fractions, not "08:25:39 to
	// 08:25:39".
	st := Stamps(m.From, m.To)
	return fmt.Sprintf("%s to %s: %s", st[0], st[1], m.Why)
}

// Reader answers from a history directory. It reads the segments as they
// are when asked; a recorder may be writing the last one meanwhile. A
// Reader is for one goroutine at a time.
type Reader struct {
	dir  string
	segs []segFile
	// skipped are the files named like segments left out of segs.
	skipped []Skipped
	// Active: a recorder holds the directory now.
	Active bool
	// Now, when set, is the clock At judges a moment against: a moment
	// after it is in the future, whatever a recorder writes (nil: At
	// answers any moment from the record, as the recorder's own resume
	// asks for the end of it).
	Now func() time.Time

	dec *zstd.Decoder
	// bufs, when set, are buffers the delta streams are decompressed
	// into in turn: a reader whose caller is done with a segment by the
	// time len(bufs) more are read.
	bufs [][]byte
	nbuf int
	// sb, when set, are reused for each segment read: a reader whose
	// caller is done with a segment before it reads the next.
	sb       *segBufs
	spanDone bool
	spanTo   time.Time
	// ctx, when set, bounds the reads (SetContext).
	ctx context.Context
	// foldOf, when set, gives a segment's fold (nil: none), which
	// Sessions takes in place of walking a segment wholly in its span.
	foldOf func(sf segFile, prev *segFile) *segFold
	// noFolds: Sessions walks every segment, folded or not (the tests'
	// reference).
	noFolds bool
	// Folds counts the fold files Sessions took and refused.
	Folds FoldStats
}

// Fork is a reader of the same segments, as this one lists them, for
// another goroutine: its own decoder and buffers, the same clock, context
// and folds. This one's span, when known, is copied, not shared.
func (r *Reader) Fork() *Reader {
	return &Reader{dir: r.dir, segs: r.segs, skipped: r.skipped, Active: r.Active, Now: r.Now, ctx: r.ctx,
		foldOf: r.foldOf, noFolds: r.noFolds, spanDone: r.spanDone, spanTo: r.spanTo}
}

// SetContext bounds the reader's reads by ctx (nil: no bound): once it is
// done, the segment being read stops where it is, even part way through
// decompressing: At and Series return ctx's error, Step finds nothing. A console
// sets it to the read's deadline, or to one it cancels when the read is
// replaced or the session ends.
func (r *Reader) SetContext(ctx context.Context) { r.ctx = ctx }

func (r *Reader) context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// ctxErr is the bounding context's error, wrapped (nil when reads go on).
func (r *Reader) ctxErr() error {
	if r.ctx == nil {
		return nil
	}
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("reading the record stopped: %w", err)
	}
	return nil
}

// OpenReader lists a history directory.
func OpenReader(dir string) (*Reader, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("history %s: not a directory", dir)
	}
	segs, odd, err := listSegmentsNoted(dir)
	if err != nil {
		return nil, err
	}
	// A segment named for a time to come is none a recorder wrote (it
	// names each for its clock's now): left in, it would stretch the
	// record's span to that time and make a gap run backwards.
	now := time.Now()
	own := segs[:0]
	for _, s := range segs {
		if s.Start.After(now.Add(futureSlack)) {
			odd = append(odd, Skipped{Path: s.Path, Why: fmt.Sprintf("named for %s, a time still to come: not a segment fgtop wrote (move it out of the history directory)",
				s.Start.UTC().Format("2006-01-02 15:04:05 MST"))})
			continue
		}
		if notSegment(s) {
			// Garbage, or a copy gone wrong: left in, it would be taken
			// for a segment whose content is lost, a gap over time the
			// segments around it recorded (or the record's end).
			odd = append(odd, Skipped{Path: s.Path, Why: "not an fgtop history segment (it does not begin with a segment's header; move it out of the history directory)"})
			continue
		}
		own = append(own, s)
	}
	return &Reader{dir: dir, segs: own, skipped: odd, Active: writerActive(dir)}, nil
}

// notSegment reports whether s holds a whole header's bytes and they are
// not a segment header's: no recorder wrote it. A shorter file may be a
// segment a recorder is creating, and one of another format version is a
// segment all the same (the read says which): both stay.
func notSegment(s segFile) bool {
	if s.Size < headerSize {
		return false
	}
	f, err := safefile.Open(s.Path, true)
	if err != nil {
		return false // the read says why
	}
	defer f.Close()
	h := make([]byte, headerSize)
	if _, err := io.ReadFull(f, h); err != nil {
		return false
	}
	return errors.Is(checkHeader(h), errNotSegment)
}

// Size is the bytes of the record's segments on disk (their folds
// aside): what a query over all of it reads.
func (r *Reader) Size() int64 {
	var n int64
	for _, s := range r.segs {
		n += s.Size
	}
	return n
}

// Skipped is a file named like a segment that a reader leaves out of the
// record, and why (not a regular file, or named for a time to come).
type Skipped struct {
	Path string
	Why  string
}

func (s Skipped) String() string { return fmt.Sprintf("%s: %s", s.Path, s.Why) }

// Skipped lists the files named like segments that the reader left out
// of the record (OpenReader), to be said beside its answers.
func (r *Reader) Skipped() []Skipped { return r.skipped }

// empty is ErrEmpty, saying which files were skipped when some were: a
// directory holding only a planted FIFO is not silently empty.
func (r *Reader) empty() error {
	if len(r.skipped) == 0 {
		return ErrEmpty
	}
	var b strings.Builder
	for i, s := range r.skipped {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("skipped " + s.String())
	}
	return fmt.Errorf("%w (%s)", ErrEmpty, b.String())
}

// NotWriting is why the record lacks the time after the last write of a
// recorder that holds the directory and has not written for longer than
// its heartbeat allows: snapshot --at of a moment there and history of a
// span running there say it alike.
const NotWriting = "nothing recorded since: the recorder holding the directory is not writing (stopped, or a full disk?)"

// SilentAfter is how long a recorder that holds the directory may go
// without writing: its heartbeat and two flushes. Longer, it is not
// writing.
const SilentAfter = DefaultBeatEvery + 2*DefaultFlushEvery

// ErrEmpty: the directory holds no record.
var ErrEmpty = errors.New("the history directory holds no record yet")

// OutsideError says the asked time is before or after what is recorded.
type OutsideError struct {
	At, From, To time.Time
	// Now is set when At is in the future (Reader.Now).
	Now time.Time
	// Damage, when set, says why the record ends at To: its last segment
	// is damaged there (which, at what byte, what is lost), rather than
	// no recorder having written since.
	Damage string
	// Unread, when set, names the record's first or last segment that
	// cannot be read at all (Reader.Unreadable): the span is then only
	// the names of files that hold nothing of it.
	Unread string
}

func (e *OutsideError) Error() string {
	// The bound the asked time lies beyond, with the fraction of a second
	// where both fall in one: "08:25:39 is before the record begins; the
	// record covers 08:25:39 to ..." contradicted itself.
	st := Stamps(e.At, e.From, e.To)
	at, to := st[0], st[2]
	span := fmt.Sprintf("the record covers %s to %s", st[1], to)
	if e.Unread != "" {
		span += "; but the record is damaged (" + e.Unread + ")"
	}
	if !e.Now.IsZero() {
		return fmt.Sprintf("%s is in the future (it is %s now); %s", fmtTime(e.At), fmtTime(e.Now), span)
	}
	if e.At.Before(e.From) {
		return fmt.Sprintf("%s is before the record begins; %s", at, span)
	}
	if e.Damage != "" {
		return fmt.Sprintf("%s is after the last intact change in the record (%s): %s; %s", at, to, e.Damage, span)
	}
	return fmt.Sprintf("%s is after the record ends (no recorder has written since); %s", at, span)
}

func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

// segRead is one segment as read: its records, where it ends, why.
type segRead struct {
	file segFile
	data *segData
	err  error
	// end is the last time the segment vouches for (a tick, heartbeat or
	// end record); clean: it ends with an end or rotate record.
	end   time.Time
	clean bool
	// dec decompresses a lazily read delta stream.
	dec *zstd.Decoder
	// sessCk are the checkpoint's heads as the sessions walk reads them,
	// decoded ahead (sessWalk.pre); nil when not.
	sessCk sessCkHeads
	// fold, when set, is the segment's fold, taken in place of reading
	// it (Sessions).
	fold *segFold
}

func (r *Reader) read(i int, skipCkpt bool) *segRead { return r.readOf(i, skipCkpt, false) }

// readOf reads segment i; lazy leaves the delta stream compressed, for
// the walker to decompress as it goes.
func (r *Reader) readOf(i int, skipCkpt, lazy bool) *segRead {
	sr := &segRead{file: r.segs[i]}
	// The tail before the segment: a recorder that compresses the tail
	// into the segment meanwhile leaves the segment longer than the tail
	// says, and the segment then holds the tail's records.
	tail := readTail(sr.file.Path)
	if err := r.ctxErr(); err != nil {
		sr.err = err
		return sr
	}
	var into []byte
	if r.sb != nil {
		into = r.sb.file
	}
	b, err := readSegmentFile(sr.file.Path, into)
	if r.sb != nil && cap(b) > 0 {
		r.sb.file = b[:0]
	}
	if err != nil {
		sr.err = err
		return sr
	}
	if r.dec == nil {
		if r.dec, err = newDecoder(); err != nil {
			sr.err = err
			return sr
		}
	}
	var buf []byte
	if len(r.bufs) > 0 {
		buf = r.bufs[r.nbuf%len(r.bufs)]
	}
	sr.data, sr.err = parseSegmentCtx(r.context(), b, skipCkpt, lazy, r.dec, buf, r.sb)
	attachTail(sr.data, tail, sr.file.Path)
	if len(r.bufs) > 0 && sr.data != nil && cap(sr.data.Deltas) > cap(buf) {
		r.bufs[r.nbuf%len(r.bufs)] = sr.data.Deltas[:0]
	}
	if len(r.bufs) > 0 {
		r.nbuf++
	}
	sr.dec = r.dec
	return sr
}

// unreadable says why a segment as read holds nothing to start from (it
// cannot be read, or its checkpoint cannot), and whether it does not.
func (sr *segRead) unreadable() (why string, bad bool) {
	switch {
	case sr.err != nil:
		return sr.err.Error(), true
	case sr.data.Checkpoint != nil:
		return "", false
	case sr.data.Damage != "":
		return sr.data.Damage, true
	}
	return "cannot be read", true
}

// Unreadable names the record's first and last segments where they hold
// nothing to read, as history's missing lines name them ("seg-….fgh: not
// an fgtop history segment (8 bytes, shorter than its header)"), joined
// by "; "; "" when both can be read. The record's span comes from those
// files' names: an answer that the asked time lies outside it says this
// too, or a record of one garbage file reads as an intact one of a
// moment.
func (r *Reader) Unreadable() string {
	var out []string
	for i, idx := range []int{0, len(r.segs) - 1} {
		if idx < 0 || i == 1 && idx == 0 {
			continue
		}
		if u := r.unreadableSeg(idx); u != "" {
			out = append(out, u)
		}
	}
	return strings.Join(out, "; ")
}

// unreadableSeg names segment idx and why, where it holds nothing to
// read; "" where it can be read.
func (r *Reader) unreadableSeg(idx int) string {
	if why, bad := r.readOf(idx, false, true).unreadable(); bad {
		return filepath.Base(r.segs[idx].Path) + ": " + why
	}
	return ""
}

// SkippedBefore names the files named like segments, of earlier names
// than the record's first segment, that the reader skipped ("skipped
// DIR/seg-….fgh: why", joined by "; "): what may have held the time
// before the record begins; "" where there is none. A span before the
// record holds nothing of it because of these, not because of damage at
// the record's end.
func (r *Reader) SkippedBefore() string {
	var out []string
	for _, sk := range r.skipped {
		if len(r.segs) == 0 || filepath.Base(sk.Path) < filepath.Base(r.segs[0].Path) {
			out = append(out, "skipped "+sk.String())
		}
	}
	return strings.Join(out, "; ")
}

// UnreadableFirst is Unreadable of the record's first segment alone.
func (r *Reader) UnreadableFirst() string {
	if len(r.segs) == 0 {
		return ""
	}
	return r.unreadableSeg(0)
}

// UnreadableLast is Unreadable of the record's last segment alone.
func (r *Reader) UnreadableLast() string {
	if len(r.segs) == 0 {
		return ""
	}
	return r.unreadableSeg(len(r.segs) - 1)
}

// Result is the answer to At.
type Result struct {
	Snap *model.Snapshot
	// Missing lists what the record lacks around the asked time; when the
	// asked time falls in one of them, Snap is the node as last recorded
	// before it and Exact is false.
	Missing []Missing
	Exact   bool
	// From and To are the whole recorded span.
	From, To time.Time
	// Skipped are the files named like segments the reader left out.
	Skipped []Skipped
}

// Span returns the first and last recorded moments.
func (r *Reader) Span() (from, to time.Time, err error) {
	if len(r.segs) == 0 {
		return from, to, ErrEmpty
	}
	from = r.segs[0].Start
	if r.spanDone {
		return from, r.spanTo, nil
	}
	defer func() {
		// A read cancelled part way found no end to keep.
		if err == nil {
			r.spanDone, r.spanTo = true, to
		}
	}()
	last := r.read(len(r.segs)-1, true)
	if err := r.ctxErr(); err != nil {
		return from, to, err
	}
	if last.err != nil {
		return from, r.segs[len(r.segs)-1].Start, nil
	}
	w := walker{}
	w.scan(last, nil, time.Time{})
	if err := r.ctxErr(); err != nil {
		return from, time.Time{}, err
	}
	to = last.end
	if to.IsZero() {
		to = last.file.Start
	}
	return from, to, nil
}

// At replays the record up to t and returns the node as it was then.
func (r *Reader) At(t time.Time) (*Result, error) { return r.AtContext(context.Background(), t) }

// AtContext is At that gives up, with ctx's error, once ctx is done: a
// console's read that a newer one replaced, or whose session ended.
func (r *Reader) AtContext(ctx context.Context, t time.Time) (*Result, error) {
	if len(r.segs) == 0 {
		return nil, r.empty()
	}
	res := &Result{From: r.segs[0].Start, Skipped: r.skipped}
	// The start fgtop prints, to the second, pasted back as --at: the
	// record's beginning, not "before the record begins" (AtStart).
	t = AtStart(t, res.From)
	if r.Now != nil {
		// Before the record's own gaps: with a recorder running, a moment
		// to come would read as one it failed to write (a full disk?).
		if now := r.Now(); t.After(now) {
			_, to, err := r.Span()
			if err != nil {
				return nil, err
			}
			return nil, &OutsideError{At: t, From: res.From, To: to, Now: now}
		}
	}
	if t.Before(res.From) {
		_, to, err := r.Span()
		if err != nil {
			return nil, err
		}
		return nil, &OutsideError{At: t, From: res.From, To: to, Unread: r.Unreadable()}
	}
	slack := SilentAfter
	// unread are the files named after the segment that answers, whose
	// checkpoint could not be read (each a stretch of res.Missing).
	var unread []Skipped
	// The last segment that begins at or before t, and any before it whose
	// checkpoint cannot be read.
	i := len(r.segs) - 1
	for i > 0 && r.segs[i].Start.After(t) {
		i--
	}
	for ; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		sr := r.readOf(i, false, true)
		if err := r.ctxErr(); err != nil {
			return nil, err
		}
		if why, bad := sr.unreadable(); bad {
			res.Missing = append(res.Missing, Missing{From: sr.file.Start, To: t,
				Why: fmt.Sprintf("segment %s: %s", filepath.Base(sr.file.Path), why)})
			unread = append(unread, Skipped{Path: sr.file.Path, Why: why + " (named for a time the segment before it recorded through)"})
			continue
		}
		w := walker{stopPast: true, ctx: ctx}
		st := newState()
		w.scan(sr, st, t)
		if w.err != nil {
			return nil, w.err
		}
		if err := r.ctxErr(); err != nil {
			return nil, err
		}
		end := sr.end
		if w.stopped {
			// A change after t is in this segment: t is recorded.
			snap, err := st.snapshot()
			if err != nil {
				return nil, err
			}
			// Every stretch noted so far is a file after this segment that
			// could not be read, named at or before t, which this segment
			// recorded through: it hides nothing, skipped, not missing.
			if len(unread) > 0 {
				res.Skipped = append(slices.Clip(res.Skipped), unread...) // the reader's own list: copied
				res.Missing = nil
			}
			r.learnAhead(snap, i, t)
			res.Snap, res.Exact = snap, true
			if m, ok := w.stallHolding(t); ok {
				// A change after t, but after a silence t falls in: the
				// node is as last recorded before it.
				res.Missing = append(res.Missing, m)
				res.Exact = false
			}
			return res, nil
		}
		if i == len(r.segs)-1 {
			r.spanDone, r.spanTo = true, end
			res.To = end
			// Damage cut the record at end: a moment after it is lost,
			// not covered by the beat's slack; nor is one after a clean
			// stop (its end record is the moment the recorder stopped:
			// a kernel gone a second later read as present, exit 0).
			stopped := sr.clean && !w.rotated
			if (t.After(end.Add(slack)) || (sr.data.Damage != "" || stopped) && t.After(end)) && !r.Active {
				oe := &OutsideError{At: t, From: res.From, To: end}
				if sr.data.Damage != "" {
					// The record ends here because the segment is damaged
					// (a crash cut its last chunk, or bytes went bad), not
					// because nothing was recorded: say which and what.
					at := ""
					if sr.data.Offset > 0 {
						// A stream's damage has no byte to name.
						at = fmt.Sprintf(" at byte %d", sr.data.Offset)
					}
					oe.Damage = fmt.Sprintf("segment %s is damaged%s: %s; whatever it recorded after %s is lost",
						filepath.Base(sr.file.Path), at, sr.data.Damage, fmtTime(end))
				}
				return nil, oe
			}
			if t.After(end.Add(slack)) && sr.data.Damage == "" {
				// A recorder writes at least every few seconds: one that
				// holds the directory and has not cannot write (a full
				// disk, a directory gone read-only). Past damage, what it
				// wrote is there but unreadable: the damage says so below.
				res.Missing = append(res.Missing, Missing{From: end, To: t,
					Why: NotWriting})
			}
		}
		if m, ok := w.stallHolding(t); ok {
			res.Missing = append(res.Missing, m)
		}
		if sr.data.Damage != "" && !sr.data.Torn || sr.data.Damage != "" && i < len(r.segs)-1 {
			// Bad bytes, or a torn tail of a segment the recorder
			// did not go on with: the rest of it is lost.
			next := t
			if i+1 < len(r.segs) {
				next = r.segs[i+1].Start
			}
			res.Missing = append(res.Missing, Missing{From: end, To: next,
				Why: fmt.Sprintf("segment %s: %s at byte %d; the rest of it is lost", filepath.Base(sr.file.Path), sr.data.Damage, sr.data.Offset)})
		} else if i+1 < len(r.segs) {
			if m, ok := gapBetween(end, r.segs[i+1].Start, sr.clean, w.rotated, w.continues(r.segs[i+1].Start)); ok {
				res.Missing = append(res.Missing, m)
			}
		}
		if !st.time.IsZero() || st.seq > 0 {
			snap, err := st.snapshot()
			if err != nil {
				return nil, err
			}
			r.learnAhead(snap, i, t)
			res.Snap = snap
		}
		break
	}
	if res.Snap == nil {
		return nil, fmt.Errorf("no intact record at or before %s: %w", fmtTime(t), errors.Join(missingErrs(res.Missing)...))
	}
	res.Exact = true
	for _, m := range res.Missing {
		if t.After(m.From) && !t.After(m.To) || t.After(m.From) && m.To.Before(m.From) {
			res.Exact = false
		}
	}
	return res, nil
}

func missingErrs(ms []Missing) []error {
	var out []error
	for _, m := range ms {
		out = append(out, errors.New(m.String()))
	}
	return out
}

// walker replays one segment's records.
type walker struct {
	grp     []rawRec
	err     error
	rotated bool
	// rotateAt is when the next segment begins, by the rotate record.
	rotateAt time.Time
	// stopPast: stop at the first group past the asked time (stopped
	// says it did, and the segment's end is then not known).
	stopPast, stopped bool
	// onGroup is handed each complete group (history queries), ckpt for
	// the checkpoint's.
	onGroup func(tm time.Time, grp []rawRec, ckpt bool)
	// onJournal is handed each agent.toml journal record's body.
	onJournal func(body []byte)
	// ctx, when set, stops the scan once done (err says so); looked at
	// every ctxEvery ticks.
	ctx   context.Context
	ticks int
	// halt, set by onGroup, ends the scan after that group (the caller
	// has what it reads for).
	halt bool
	// stalls are the stretches the recorder said it was not running
	// (its stall records; nil while none: most segments have none).
	// stallAt, while a group is handed to onGroup, is when the stall its
	// changes may have happened in began (zero when none): a group
	// stamped at most stallSlack after the last stall's end (stallEnd)
	// is the first poll after it, or one taken just before it and handed
	// over late; later ones the recorder watched.
	stalls            []Missing
	stallAt, stallEnd time.Time
	stallFrom         time.Time
}

// stallSlack is how long after a stall the first poll of the node may be
// stamped: the engine polls every second.
const stallSlack = 2 * time.Second

// stallWhy says what a stall gap lacks.
const stallWhy = "not recorded: the recorder was not running or was held up (stopped, starved, suspended, or a write blocked); what changed meanwhile is seen only after it"

// stalled notes a stall record's stretch.
func (w *walker) stalled(body []byte) {
	d := dec{b: body}
	from, to := time.Unix(0, d.varint()), time.Unix(0, d.varint())
	if d.err != nil || !to.After(from) {
		return
	}
	w.stalls = append(w.stalls, Missing{From: from, To: to, Why: stallWhy})
	w.stallFrom, w.stallEnd = from, to.Add(stallSlack)
}

// stallHolding is the stall t falls in (after its start, before the
// record that ends it), if any.
func (w *walker) stallHolding(t time.Time) (Missing, bool) {
	for _, m := range w.stalls {
		if t.After(m.From) && t.Before(m.To) {
			return m, true
		}
	}
	return Missing{}, false
}

// ctxEvery is how many ticks a scan replays between looks at its context.
const ctxEvery = 64

// scan replays the segment into st (nil: only find where it ends) up to
// and including the groups whose tick is at or before until (zero: all).
func (w *walker) scan(sr *segRead, st *state, until time.Time) {
	if sr.data == nil {
		return
	}
	type iter interface {
		next() (byte, []byte, bool)
	}
	stop := false
	run := func(it iter, ckpt bool) {
		for !stop && !w.halt {
			typ, body, ok := it.next()
			if !ok {
				break
			}
			switch typ {
			case recTick:
				if w.ctx != nil {
					if w.ticks++; w.ticks%ctxEvery == 0 && w.ctx.Err() != nil {
						w.err, stop = fmt.Errorf("history: %w", w.ctx.Err()), true
						break
					}
				}
				d := dec{b: body}
				seq := d.uvarint()
				tm := time.Unix(0, d.varint())
				if d.err != nil {
					w.grp = w.grp[:0]
					continue
				}
				if st != nil && !until.IsZero() && tm.After(until) {
					// Past the asked time: only where the segment ends
					// matters from here, and not even that when the
					// caller reads the stream lazily (the asked time is
					// inside the segment then).
					st = nil
					if w.stopPast {
						stop, w.stopped = true, true
					}
				}
				if st != nil {
					for _, rr := range w.grp {
						if err := st.apply(rr.typ, rr.body); err != nil {
							// One bad record costs that record, not the
							// rest: the CRC vouched for the bytes, so
							// this is a newer writer's record type.
							continue
						}
						if rr.typ == recDevices {
							st.devTime = tm
						}
					}
					st.seq, st.time = seq, tm
				}
				w.stallAt = time.Time{}
				if !w.stallFrom.IsZero() && !tm.After(w.stallEnd) {
					w.stallAt = w.stallFrom
				}
				if w.onGroup != nil && (until.IsZero() || !tm.After(until)) {
					w.onGroup(tm, w.grp, ckpt)
				}
				w.grp = w.grp[:0]
				sr.end = tm
			case recStall:
				// Stands alone; its end is no moment the recorder vouches
				// for (the record after it is).
				w.stalled(body)
			case recJournal:
				// Stands alone.
				if w.onJournal != nil {
					w.onJournal(body)
				}
			case recMinute, recBeat, recEnd, recRotate:
				var tm time.Time
				if typ == recMinute && st == nil {
					continue
				}
				if typ == recMinute {
					var m minuteRec
					if jsonUnmarshal(body, &m) == nil {
						tm = m.Start.Add(time.Minute)
						if st != nil && (until.IsZero() || !tm.After(until)) {
							st.minute = &m
						}
					}
				} else {
					d := dec{b: body}
					tm = time.Unix(0, d.varint())
					if d.err != nil {
						continue
					}
				}
				if typ != recMinute && tm.After(sr.end) {
					sr.end = tm
				}
				if typ == recEnd || typ == recRotate {
					sr.clean = true
					w.rotated = typ == recRotate
					if w.rotated {
						w.rotateAt = tm
					}
				}
			default:
				if st != nil || w.onGroup != nil {
					w.grp = append(w.grp, rawRec{typ, body})
				}
			}
		}
	}
	run(&recIter{b: sr.data.Checkpoint}, true)
	w.grp = w.grp[:0]
	if sr.data.deltaZ != nil && sr.dec != nil {
		si := newStreamIterOf(sr.data.ctx, sr.data.deltaZ, sr.dec, sr.data.capOf("its delta stream"))
		run(si, false)
		si.close()
		// A stream read part way holds the decoder: let it go.
		sr.dec.Reset(nil)
		if si.err != nil && sr.data.Damage == "" {
			sr.data.Damage = streamDamage("a delta stream", si.err)
		}
		if si.err == nil {
			run(&recIter{b: sr.data.Tail}, false)
		}
		sealedTail(sr)
		return
	}
	run(&recIter{b: sr.data.Deltas}, false)
	sealedTail(sr)
}

// sealedTail drops the damage of a tail that cannot be used from a
// segment that ends with its end or rotate record: the recorder writes
// that record last and compresses its tail into the segment before it
// removes the tail, so one left beside it (a crash between, or bytes gone
// bad since) held nothing the segment lacks.
func sealedTail(sr *segRead) {
	if sr.clean && sr.data.tailLost {
		sr.data.Damage, sr.data.Offset, sr.data.Torn, sr.data.tailLost = "", 0, false, false
	}
}

// gapBetween says whether the time between a segment's last record and
// the next segment's start went unrecorded: any time at all after a
// recorder that stopped without its end record (what it had not written
// yet is lost), more than a second or so after one that stopped cleanly.
// continues reports whether the segment ended by rotating into one that
// begins at next (a segment deleted in between breaks the chain).
func (w *walker) continues(next time.Time) bool { return w.rotated && w.rotateAt.Equal(next) }

func gapBetween(end, next time.Time, clean, rotated, continues bool) (Missing, bool) {
	switch {
	case continues || !next.After(end):
		return Missing{}, false
	case rotated:
		return Missing{From: end, To: next, Why: "a segment is missing here (deleted or lost)"}, true
	case !clean:
		return Missing{From: end, To: next, Why: "not recorded: the recorder stopped without a word (killed, or the machine went down); up to its last second of changes is lost"}, true
	case next.Sub(end) > 2*DefaultFlushEvery:
		return Missing{From: end, To: next, Why: "not recorded: no recorder was running"}, true
	}
	return Missing{}, false
}

// Step returns the time of the recorded change next after t (dir > 0) or
// last before it (dir < 0): a snapshot with something in it besides the
// passing of time, not a tick of utilisation only. ok is false when
// there is none that way.
func (r *Reader) Step(t time.Time, dir int) (time.Time, bool) {
	return r.StepShownContext(context.Background(), t, dir, 0)
}

// StepContext is Step that gives up (ok false) once ctx is done.
func (r *Reader) StepContext(ctx context.Context, t time.Time, dir int) (time.Time, bool) {
	return r.StepShownContext(ctx, t, dir, 0)
}

// StepShown is Step for a reader who sees time in units of unit (the
// console's PAST 14:02:17 shows seconds): it steps to the next (or an
// earlier) unit that holds a change, never within the one t is in, and
// returns the last change of that unit, so that the shown time moves and
// the node shown is as it was at the end of it. unit 0 is Step.
func (r *Reader) StepShown(t time.Time, dir int, unit time.Duration) (time.Time, bool) {
	return r.StepShownContext(context.Background(), t, dir, unit)
}

// StepShownContext is StepShown that gives up (ok false) once ctx is done.
func (r *Reader) StepShownContext(ctx context.Context, t time.Time, dir int, unit time.Duration) (time.Time, bool) {
	trunc := func(x time.Time) time.Time {
		if unit <= 0 {
			return x
		}
		return x.Truncate(unit)
	}
	base := trunc(t)
	if len(r.segs) == 0 {
		return time.Time{}, false
	}
	i := len(r.segs) - 1
	for i > 0 && r.segs[i].Start.After(t) {
		i--
	}
	inc := -1
	if dir > 0 {
		inc = 1
	}
	// found outlives a segment: a unit stepped forward to may go on in
	// the next one (a recorder restarted or rotated within it).
	var found time.Time
	for ; i >= 0 && i < len(r.segs); i += inc {
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		sr := r.read(i, false)
		if r.ctxErr() != nil {
			return time.Time{}, false
		}
		if sr.err != nil || sr.data == nil {
			continue
		}
		w := walker{ctx: ctx, onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
			if len(grp) == 0 {
				return
			}
			switch {
			case dir > 0 && unit <= 0 && tm.After(t) && found.IsZero():
				found = tm
			case dir > 0 && unit > 0 && trunc(tm).After(base) && (found.IsZero() || trunc(tm).Equal(trunc(found))):
				// The unit's last change: later ones in it replace it.
				found = tm
			case dir < 0 && unit <= 0 && tm.Before(t):
				found = tm
			case dir < 0 && unit > 0 && trunc(tm).Before(base):
				found = tm
			}
		}}
		w.scan(sr, nil, time.Time{})
		if w.err != nil {
			return time.Time{}, false
		}
		if !found.IsZero() {
			if dir > 0 && unit > 0 && i+1 < len(r.segs) && !trunc(r.segs[i+1].Start).After(trunc(found)) {
				continue
			}
			return found, true
		}
	}
	return found, !found.IsZero()
}

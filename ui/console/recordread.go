package console

import (
	"context"

	tea "charm.land/bubbletea/v2"
)

// A console reads the history record for :at, [ and ], and :span. Each
// read may take seconds and a good deal of memory, and in `fgtop serve`
// any viewer may ask for one with every line it pastes: four consoles of
// one key pasting `:at` 100 times grew serve past 6 GB (issue 31). So a
// console runs one read at a time: a new one cancels the one in flight and
// starts only once that one has returned, and Close ends the last.

// readKind says what a read of the record is for.
type readKind uint8

const (
	readPast readKind = iota + 1
	readGraph
)

// recordReads is a console's one slot for reads of the record.
type recordReads struct {
	base context.Context // ends with the console (Close)
	stop context.CancelFunc
	// id is the newest read's; an answer with another id is stale.
	id     int
	kind   readKind
	open   bool // the newest read has not answered yet
	cancel context.CancelFunc
	done   chan struct{} // closed when the newest read has returned
	// started, when set, is called in each read's goroutine as it starts
	// reading, with the read's context (tests count reads running).
	started func(ctx context.Context)
}

// inFlight reports whether a read of kind (0: any) has not answered yet.
func (r *recordReads) inFlight(kind readKind) bool {
	return r.open && (kind == 0 || r.kind == kind)
}

// run returns a Cmd that reads with read once every earlier read has
// returned; it cancels the read in flight first. The Cmd's message is
// read's, or cancelled's when this read was itself replaced (or the
// console closed) before it began.
func (r *recordReads) run(kind readKind, read func(ctx context.Context, id int) tea.Msg, cancelled func(id int) tea.Msg) tea.Cmd {
	if r.base == nil {
		r.base, r.stop = context.WithCancel(context.Background())
	}
	if r.cancel != nil {
		r.cancel()
	}
	ctx, cancel := context.WithCancel(r.base)
	prev, done := r.done, make(chan struct{})
	r.id++
	id := r.id
	r.kind, r.open, r.cancel, r.done = kind, true, cancel, done
	started := r.started
	return func() tea.Msg {
		defer close(done)
		defer cancel()
		if prev != nil {
			<-prev
		}
		if ctx.Err() != nil {
			return cancelled(id)
		}
		if started != nil {
			started(ctx)
		}
		return read(ctx, id)
	}
}

// answered takes the answer of read id: true when it is the newest read's
// (the slot is free again), false for a stale one, which the caller drops.
func (r *recordReads) answered(id int) bool {
	if id != r.id {
		return false
	}
	r.open = false
	return true
}

// close cancels the read in flight and any to come.
func (r *recordReads) close() {
	if r.stop != nil {
		r.stop()
	}
	if r.cancel != nil {
		r.cancel()
	}
	r.open = false
}

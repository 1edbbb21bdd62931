package sshserve

import (
	"errors"
	"io"
	"strconv"
	"sync"
	"time"
)

// Issue 23: a viewer that asked for a 500x200 terminal and never read its
// output held its session slot forever. The console's renderer wrote to
// the SSH channel while holding its own lock; the write waited for the
// client's window, the resize handler waited for the lock, and the
// connection's request loop waited for the resize handler, so not even
// the client's disconnect was read. A session's output now goes through
// an outQueue: writers append to a bounded buffer and never wait on the
// client; one goroutine per session sends it, and a session whose client
// takes nothing for StuckTimeout (or lets MaxQueued bytes pile up) is
// dropped.
const (
	// DefaultStuckTimeout is how long a session's client may leave its
	// output untaken (its SSH window closed) before the session is
	// dropped.
	DefaultStuckTimeout = 30 * time.Second
	// MaxQueued is the most output a session may have waiting for its
	// client: several full redraws of the largest window.
	MaxQueued = 4 << 20
)

// errOutputStuck is what a writer gets once the session's output is given
// up on.
var errOutputStuck = errors.New("the client does not take its output")

// outQueue is a session's output, sent on by its own goroutine.
type outQueue struct {
	w     io.Writer
	limit int

	mu    sync.Mutex
	buf   []byte
	spare []byte
	// since is when the oldest output still waiting was queued (zero when
	// nothing waits): what the stuck timeout measures.
	since  time.Time
	err    error
	closed bool
	wake   chan struct{}
	done   chan struct{} // closed when the sending goroutine ends
	// gaveUp is called once, off the writer's goroutine, when the queue
	// overflows or a write fails.
	gaveUp func(why string)
	once   sync.Once
}

func newOutQueue(w io.Writer, limit int, gaveUp func(string)) *outQueue {
	q := &outQueue{w: w, limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{}), gaveUp: gaveUp}
	go q.run()
	return q
}

// Write queues p for the client; it never waits on the client.
func (q *outQueue) Write(p []byte) (int, error) {
	q.mu.Lock()
	if q.err != nil {
		err := q.err
		q.mu.Unlock()
		return 0, err
	}
	if len(q.buf)+len(p) > q.limit {
		q.err = errOutputStuck
		q.mu.Unlock()
		q.fail("more than " + byteSize(q.limit) + " of output waiting for the client")
		return 0, errOutputStuck
	}
	if len(q.buf) == 0 && q.since.IsZero() {
		q.since = time.Now()
	}
	q.buf = append(q.buf, p...)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// waitingSince returns since when output has waited for the client (zero
// when none waits).
func (q *outQueue) waitingSince() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.since
}

// Close stops the queue: what is queued is dropped, writes fail, and the
// sending goroutine ends once its current write returns (closing the
// connection makes it return).
func (q *outQueue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		if q.err == nil {
			q.err = io.ErrClosedPipe
		}
		q.buf = nil
		close(q.wake)
	}
	q.mu.Unlock()
}

// flush waits up to d for the queue to be sent, and reports whether it
// was.
func (q *outQueue) flush(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if q.waitingSince().IsZero() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func (q *outQueue) fail(why string) {
	if q.gaveUp != nil {
		q.once.Do(func() { go q.gaveUp(why) })
	}
}

func (q *outQueue) run() {
	defer close(q.done)
	for range q.wake {
		for {
			q.mu.Lock()
			if len(q.buf) == 0 || q.closed {
				q.since = time.Time{}
				q.mu.Unlock()
				break
			}
			chunk := q.buf
			q.buf, q.spare = q.spare[:0], nil
			q.mu.Unlock()
			_, err := q.w.Write(chunk)
			q.mu.Lock()
			if q.spare == nil && cap(chunk) <= q.limit {
				q.spare = chunk[:0]
			}
			if len(q.buf) == 0 {
				q.since = time.Time{}
			} else {
				// What was queued meanwhile waits from now.
				q.since = time.Now()
			}
			if err != nil && q.err == nil {
				q.err = err
			}
			failed := err != nil
			q.mu.Unlock()
			if failed {
				q.fail("client gone")
				return
			}
		}
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

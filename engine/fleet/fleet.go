// Package fleet follows many nodes at once: each node's latest snapshot,
// whether it is live, stale or unreachable (and why), and what the fleet
// table shows of it (Summary). Sources feed it: SSH streams from each
// node's `fgtop serve` (Dial), or Prometheus queries. A node is never
// dropped: one that stops answering turns stale, then unreachable, and
// comes back live on its next line.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// State says how current a node's figures are.
type State string

// Node states.
const (
	// Connecting: no line from the node yet, and no failure either.
	Connecting State = "connecting"
	// Live: a line (snapshot or heartbeat) came within StaleAfter.
	Live State = "live"
	// Stale: the last line is older than StaleAfter, or the connection
	// was lost; the figures are the last ones received.
	Stale State = "stale"
	// Unreachable: nothing from the node for UnreachableAfter, or it never
	// answered; Reason says what the last attempt got.
	Unreachable State = "unreachable"
)

// Defaults of Options.
const (
	DefaultStaleAfter       = 6 * time.Second
	DefaultUnreachableAfter = 20 * time.Second
)

// Node is one node of the fleet at one moment.
type Node struct {
	// Addr identifies the node in the fleet: the host:port dialled, or
	// Prometheus's node label.
	Addr string
	// Name is the node's own name (its snapshot's), Addr until known.
	Name   string
	Source string // "ssh" or "prometheus"
	// Target is, through Prometheus, the scrape target its series come
	// from (their instance label; several, comma-separated, for a name
	// two targets export): what to fix when it is down. "" over SSH, and
	// while Prometheus has not said.
	Target string
	State  State
	// Reason says why a node is stale or unreachable ("" when live).
	Reason string
	// Note marks a node that misbehaves for the rest of the run, whatever
	// its state ("" for most): one that floods lines.
	Note string
	// LastSeen is when the node last sent anything (zero: never).
	LastSeen time.Time
	// Updated is when its last snapshot came.
	Updated time.Time
	// Snap is its last snapshot (nil before the first).
	Snap *model.Snapshot
	Sum  Summary

	// heard is when the source last vouched for the node (the tracker's
	// clock), what ageing counts from: LastSeen over SSH, the refresh that
	// found its series current through Prometheus (whose LastSeen is the
	// node's last scrape, up to a scrape interval older).
	heard time.Time
	// grace is the last Err event's Event.Grace: added to
	// UnreachableAfter while the node stays so.
	grace time.Duration
}

// Fleet is every node at one moment, in the order they were given.
// Immutable once published.
type Fleet struct {
	Seq   uint64
	Time  time.Time
	Nodes []Node
	// Err is why the source itself fails now (Prometheus unreachable),
	// "" when it works.
	Err string
}

// Address is where the node is reached, as the operator sees it: the
// host:port dialled over SSH, the scrape target through Prometheus
// (Addr, the node's name, until Prometheus says which).
func (n *Node) Address() string { return cmp.Or(n.Target, n.Addr) }

// Node returns the node with addr, or nil.
func (f *Fleet) Node(addr string) *Node {
	for i := range f.Nodes {
		if f.Nodes[i].Addr == addr {
			return &f.Nodes[i]
		}
	}
	return nil
}

// Answered reports whether every node has sent a snapshot or failed at
// least once: what `fleet --once` waits for.
func (f *Fleet) Answered() bool {
	for _, n := range f.Nodes {
		if n.Snap == nil && n.State != Unreachable {
			return false
		}
	}
	return true
}

// Event is what a source reports about one node.
type Event struct {
	Addr string
	// Snap is a new snapshot and Sum its summary (computed by the source,
	// off the tracker's goroutine).
	Snap *model.Snapshot
	Sum  Summary
	// Alive is a heartbeat: the node is there, nothing changed.
	Alive bool
	// Note, when set, marks the node for the rest of the run (a node
	// that floods lines): Node.Note.
	Note string
	// Err is a failed attempt or a lost connection.
	Err error
	// At is when it happened; zero means now.
	At time.Time
	// Seen, when set, is when the node itself was last seen, if not At:
	// its last scrape, through Prometheus. An Err event with Seen set comes
	// from a source that lists the node (its target is down), and a Snap
	// with it is the node's last figures: the node is added (Dynamic) and
	// ages from Seen.
	Seen time.Time
	// Waiting, with Alive, says the node answers but has no snapshot to
	// give, and why (through Prometheus: its exporter is up but has
	// published none yet). It is connecting, or stale on the figures it
	// had before, with this reason, and last seen now (Seen): it does not
	// age while it keeps answering.
	Waiting string
	// Grace, with Err and Seen, is the silence it took the source to tell
	// the node is not heard from (through Prometheus: a few of its scrape
	// intervals): stale until Seen + Grace + UnreachableAfter, aged from
	// Seen (the refreshes that listed it current vouched for nothing).
	Grace time.Duration
	// Target, when set, is the node's scrape target (Node.Target).
	Target string

	setErr *string // SetError's event
}

// SetError says the source itself fails now (nil: works again).
func (t *Tracker) SetError(ctx context.Context, err error) {
	msg := ""
	if err != nil {
		msg = untrusted.Text(err.Error())
	}
	t.Send(ctx, Event{setErr: &msg})
}

// Options configure a Tracker.
type Options struct {
	// StaleAfter and UnreachableAfter: see State; zero means the default.
	StaleAfter, UnreachableAfter time.Duration
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
	// Dynamic adds a node the first time an event names it (Prometheus
	// tells which nodes there are); otherwise only the nodes given exist.
	Dynamic bool
}

// Tracker owns the fleet's state in one goroutine: sources send it
// events, it publishes an immutable Fleet to its subscribers (latest
// wins: a slow subscriber skips states and never blocks it).
type Tracker struct {
	opts   Options
	events chan Event
	nodes  []Node
	index  map[string]int
	seq    uint64
	// dirty: something not worth an immediate publication changed.
	dirty  bool
	source string
	err    string

	mu     sync.Mutex
	latest *Fleet
	subs   map[chan *Fleet]struct{}

	// handshakes are the SSH handshakes under way or cut short, by
	// address (*heardConn): what a one-shot run whose time ran out says
	// of a node that never answered (WaitAnswered).
	handshakes sync.Map
}

// handshaking notes the SSH handshake with addr under way (h), or done
// (nil).
func (t *Tracker) handshaking(addr string, h *heardConn) {
	if h == nil {
		t.handshakes.Delete(addr)
		return
	}
	t.handshakes.Store(addr, h)
}

// NewTracker returns a tracker of the nodes addrs (in that order), each
// connecting; source names where they are read from.
func NewTracker(addrs []string, source string, opts Options) *Tracker {
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.UnreachableAfter <= 0 {
		opts.UnreachableAfter = DefaultUnreachableAfter
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Tracker{opts: opts, events: make(chan Event, 256), index: map[string]int{}, subs: map[chan *Fleet]struct{}{}, source: source}
	for _, a := range addrs {
		if _, dup := t.index[a]; dup {
			continue
		}
		t.index[a] = len(t.nodes)
		t.nodes = append(t.nodes, Node{Addr: a, Name: a, Source: source, State: Connecting})
	}
	t.publish()
	return t
}

// Send reports an event; it blocks only while the tracker's queue is
// full, and returns false once ctx is done.
func (t *Tracker) Send(ctx context.Context, e Event) bool {
	select {
	case t.events <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// Latest returns the current fleet.
func (t *Tracker) Latest() *Fleet {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latest
}

// Subscribe returns a channel of fleet states, the current one first,
// closed when ctx is done.
func (t *Tracker) Subscribe(ctx context.Context) <-chan *Fleet {
	ch := make(chan *Fleet, 1)
	t.mu.Lock()
	t.subs[ch] = struct{}{}
	ch <- t.latest
	t.mu.Unlock()
	go func() {
		<-ctx.Done()
		t.mu.Lock()
		delete(t.subs, ch)
		close(ch)
		t.mu.Unlock()
	}()
	return ch
}

// Run applies events and ages nodes until ctx is done.
func (t *Tracker) Run(ctx context.Context) error {
	tick := time.NewTicker(min(t.opts.StaleAfter/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-t.events:
			urgent := t.apply(e)
			// Drain what is queued before publishing: 100 nodes changing at
			// once make one publication, not 100.
			for more := true; more; {
				select {
				case e := <-t.events:
					urgent = t.apply(e) || urgent
				default:
					more = false
				}
			}
			if urgent {
				t.publish()
			}
		case <-tick.C:
			if t.age() || t.dirty {
				t.publish()
			}
		}
	}
}

// apply records an event and says whether it is worth publishing now.
func (t *Tracker) apply(e Event) bool {
	if e.setErr != nil {
		t.err = *e.setErr
		return true
	}
	i, ok := t.index[e.Addr]
	if !ok {
		if !t.opts.Dynamic || (e.Err != nil && e.Seen.IsZero()) {
			return false
		}
		i = len(t.nodes)
		t.index[e.Addr] = i
		t.nodes = append(t.nodes, Node{Addr: e.Addr, Name: e.Addr, Source: t.source, State: Connecting})
	}
	n := &t.nodes[i]
	at := e.At
	if at.IsZero() {
		at = t.opts.Now()
	}
	seen := cmp.Or(e.Seen, at)
	noted := false
	if e.Note != "" && n.Note != e.Note {
		n.Note, noted = e.Note, true
	}
	if e.Target != "" && n.Target != e.Target {
		n.Target, noted = e.Target, true
	}
	if e.Snap != nil {
		n.Snap, n.Sum, n.Updated = e.Snap, e.Sum, seen
		if e.Snap.Node != "" {
			n.Name = e.Snap.Node
		}
	}
	switch {
	case e.Err != nil:
		n.Reason = untrusted.Text(e.Err.Error()) // may quote the node's stderr or an HTTP body
		// A node refused as too large stays so: marked like a flooding
		// one, so that the table and --json say why beyond "unreachable".
		if tl := (*TooLargeError)(nil); errors.As(e.Err, &tl) {
			n.Note = tl.Error()
		}
		since := n.heard
		n.grace = e.Grace
		if e.Grace > 0 {
			n.heard = time.Time{} // age from its last scrape
		}
		switch {
		case !e.Seen.IsZero():
			since = e.Seen
			if n.LastSeen.Before(e.Seen) {
				n.LastSeen = e.Seen
			}
		case since.IsZero():
			since = n.LastSeen // a node only ever listed as down
		}
		if since.IsZero() || at.Sub(since) >= t.opts.UnreachableAfter+n.grace {
			n.State = Unreachable
		} else {
			n.State = Stale
		}
	case e.Snap != nil:
		n.LastSeen, n.heard, n.grace = seen, at, 0
		n.State, n.Reason = Live, ""
	case e.Alive && e.Waiting != "":
		n.LastSeen, n.heard, n.grace = seen, at, 0
		st := Connecting
		if n.Snap != nil {
			st = Stale // figures from before, not the node's now
		}
		if n.State == st && n.Reason == e.Waiting {
			t.dirty = true
			return false
		}
		n.State, n.Reason = st, e.Waiting
	case e.Alive:
		n.LastSeen, n.heard, n.grace = seen, at, 0
		if n.Snap != nil && n.State != Live {
			n.State, n.Reason = Live, ""
			return true
		}
		// Only "last seen" moved: published with the next tick, so 100
		// nodes' heartbeats make one publication a second, not 50.
		t.dirty = true
		return noted
	default:
		return false
	}
	return true
}

// age turns silent nodes stale, then unreachable: from when the source
// last vouched for them or, for a node only ever listed as down (through
// Prometheus, which stops listing it past --lookback, shorter than
// --unreachable-after maybe), from its last scrape.
func (t *Tracker) age() bool {
	now := t.opts.Now()
	changed := false
	for i := range t.nodes {
		n := &t.nodes[i]
		since := cmp.Or(n.heard, n.LastSeen)
		if since.IsZero() {
			continue
		}
		quiet := now.Sub(since)
		switch {
		case quiet >= t.opts.UnreachableAfter+n.grace && n.State != Unreachable:
			n.State = Unreachable
			if n.Reason == "" {
				n.Reason = "no answer for " + quiet.Round(time.Second).String()
			}
			changed = true
		case quiet >= t.opts.StaleAfter && n.State == Live:
			n.State, n.Reason = Stale, "no line for "+quiet.Round(time.Second).String()
			changed = true
		}
	}
	return changed
}

func (t *Tracker) publish() {
	t.dirty = false
	t.seq++
	f := &Fleet{Seq: t.seq, Time: t.opts.Now(), Nodes: slices.Clone(t.nodes), Err: t.err}
	markTwins(f.Nodes)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latest = f
	for ch := range t.subs {
		select {
		case <-ch:
		default:
		}
		ch <- f
	}
}

// markTwins marks the nodes dialled over SSH that give one node name from
// two addresses: one node reached twice (its figures counted twice in the
// totals) or two nodes sharing a name (a cloned config). Which it is
// cannot be told, so each names the others, and a script's --once sees a
// marked node. Prometheus's shared names are refused where they are read
// (PromNode.Conflict); a node's own mark (one that floods) is kept.
func markTwins(ns []Node) {
	by := map[string][]int{}
	for i := range ns {
		if n := &ns[i]; n.Source == "ssh" && n.Snap != nil && n.Snap.Node != "" {
			by[n.Snap.Node] = append(by[n.Snap.Node], i)
		}
	}
	for name, idx := range by {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			if ns[i].Note != "" {
				continue
			}
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, ns[j].Addr)
				}
			}
			ns[i].Note = fmt.Sprintf("shares its name (%s) with %s: one node reached twice, or two nodes with one name; the totals count each", untrusted.Text(name), strings.Join(others, ", "))
		}
	}
}

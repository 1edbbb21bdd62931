package screen

import (
	"bytes"
	"hash/maphash"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	uv "github.com/charmbracelet/ultraviolet"
)

// Transitions lets the drawers of many programs (serve's sessions) write
// a frame change that one of them already computed, instead of each
// parsing and diffing it again: idle viewers of the same node draw the
// same frames, and the diff was most of what each one cost.
//
// It is exact, not a guess: a drawer made with a Transitions ends every
// frame in a canonical state (its renderer's picture is the frame, the
// pen reset, the cursor at the frame's cursor or the top left corner), so
// the bytes that take a terminal from frame A to frame B depend only on A,
// B and what the drawer's renderer was made with (its terminal's
// environment, the newline mapping, and the synchronized-output and
// grapheme modes the terminal reported). Those are the class a change is
// stored under; A and B are compared whole, by value. A drawer that
// writes a stored change leaves its own renderer behind, and brings it up
// to the frame on the terminal (with the output thrown away) before it
// next computes a change itself.
//
// Only changes between two full-screen frames of the same size and
// colour profile are shared (and a program's first frame): a screen
// switch, a resize or a profile change is computed by each drawer.
//
// A change no drawer of the class computed yet is painted by one of the
// class's painters: renderers of the store's own, each following the
// frames of one state the class's drawers are in (at rest, the few
// states idle viewers settle in), so a change is one paint from the
// frame the painter drew last. The drawer's own renderer, which may
// have drawn nothing for minutes, would first have to catch up with the
// frame on its terminal: for a dense page, a paint of most lines.
type Transitions struct {
	seed maphash.Seed

	mu      sync.Mutex
	classes map[transClass]*transRing
	// painters is how many painters the classes hold (under mu).
	painters int

	hits, misses atomic.Int64

	// hashes are the recent frames' content hashes, by the content's
	// memory: sessions that take a frame another composed (serve's idle
	// viewers in one state) hold the same string, which is hashed once
	// rather than by each (hashing a frame was 0.8 % of the server's CPU
	// at 50 viewers). A string's bytes never change, so its memory and
	// length are its content. hashed counts the hashes computed (tests).
	hmu    sync.Mutex
	hashes [hashesKept]contentHash
	hnext  int
	hashed atomic.Int64
}

// hashesKept is how many frames' hashes are kept: at rest a few states'
// last frames and the ones before.
const hashesKept = 16

// contentHash is a frame content's hash, by where the content is.
type contentHash struct {
	p *byte
	n int
	h uint64
}

// NewTransitions returns an empty store, for the drawers of programs that
// often draw the same frames.
func NewTransitions() *Transitions {
	return &Transitions{seed: maphash.MakeSeed(), classes: map[transClass]*transRing{}}
}

// Stats says how many frame changes were written from the store (hits)
// and how many were computed (misses) by the drawers sharing it.
func (t *Transitions) Stats() (hits, misses int64) {
	return t.hits.Load(), t.misses.Load()
}

// transClass is what, besides the two frames, a change's bytes depend on.
type transClass struct {
	env          string // what the renderer took from its environment (envKey)
	mapNl        bool
	synced       bool
	wide, wideOn bool
	// reparse: grapheme widths were just turned on, so the next frame
	// is parsed whole.
	reparse bool
}

// transRingLen is how many recent changes a class keeps: at rest a class
// sees a few (the snapshot's frame, the clock's), and a change is looked
// up within milliseconds of being computed, by the sessions that drew
// the same frames.
const transRingLen = 8

// transRing is a class's recent changes, and the lock under which one of
// its drawers computes a change while the others wait for it.
type transRing struct {
	mu   sync.Mutex
	ents [transRingLen]transition
	next int
	// painters follow the class's states (under mu); clock orders
	// their use, the least recent giving way.
	painters []*painter
	clock    uint64

	// held is how many painters the class was allowed, and gone that
	// it was forgotten (both under the Transitions' mu).
	held int
	gone bool
}

// painter is a renderer of a class's own, at the frame it drew last.
type painter struct {
	d    *drawer
	hash uint64 // the hash of d.rlast's content
	used uint64
	// spoilt: a paint began and did not end (it panicked): its renderer
	// may be anywhere between two frames, so it follows no state, and is
	// made anew before it paints again.
	spoilt bool
}

// classPainters is how many states one class follows with painters: at
// rest a few (one per device the viewers' cursors settle on, a size or
// two); maxPainters bounds them all, as each holds a frame's cells.
// Frames of more than maxPaintedCells (a large terminal's) are painted
// by the drawers' own renderers: a painter keeps the cells of the
// largest frame it drew, and a client may ask for any size.
const (
	classPainters   = 8
	maxPainters     = 16
	maxPaintedCells = 256 * 96
)

// painted says whether the changes of a class are painted by painters:
// not while grapheme widths are being turned on (the class then changes
// with the frame, and the next frame is parsed whole).
func (c transClass) painted() bool { return !c.reparse && c.wide == c.wideOn }

// paintWith paints the change from → to of class c with one of r's
// painters, the one at from when there is one, else one brought there
// first (a new one while the bounds allow, else the least recently
// used). ok is false when r has no painter and may have none, or the
// frames are too large for one (maxPaintedCells). environ
// is the environment of a drawer of the class, which a new painter's
// renderer is made with. Called with r.mu held.
func (t *Transitions) paintWith(r *transRing, c transClass, environ []string, from *frame, fromHash uint64, to *frame, toHash uint64) (out []byte, ok bool) {
	if from.width*from.height > maxPaintedCells || to.width*to.height > maxPaintedCells {
		return nil, false
	}
	r.clock++
	var p *painter
	for _, q := range r.painters {
		if !q.spoilt && q.hash == fromHash && from.same(q.d.rlast) {
			p = q
			break
		}
	}
	fresh := func() *drawer {
		d := newDrawer(io.Discard, environ, c.mapNl)
		d.canon, d.synced, d.wide, d.wideOn = true, c.synced, c.wide, c.wideOn
		return d
	}
	if p == nil {
		if len(r.painters) < classPainters && t.holdPainter(r) {
			p = &painter{d: fresh()}
			r.painters = append(r.painters, p)
		} else {
			for _, q := range r.painters {
				if p == nil || q.used < p.used {
					p = q
				}
			}
		}
		if p == nil {
			return nil, false
		}
		if p.spoilt {
			p.d = fresh()
		}
		p.spoilt = true
		p.d.paint(from, nil, true)
	}
	p.spoilt = true
	p.d.paint(to, nil, false)
	p.hash, p.used, p.spoilt = toHash, r.clock, false
	return bytes.Clone(p.d.buf.Bytes()), true
}

// holdPainter says whether class r may make one more painter, and
// counts it.
func (t *Transitions) holdPainter(r *transRing) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.gone || t.painters >= maxPainters {
		return false
	}
	t.painters++
	r.held++
	return true
}

// transition is the bytes that take a terminal from one frame to the
// next; from is nil for a program's first frame.
type transition struct {
	from, to         *frame
	fromHash, toHash uint64
	out              []byte
}

// maxClasses bounds the classes kept: a client names its terminal type,
// and one that names a new one for each session must not make the store
// grow. Terminals of a few kinds keep theirs.
const maxClasses = 32

// class returns the ring of c, made on first use; beyond maxClasses an
// arbitrary other class is forgotten (its changes are computed again).
func (t *Transitions) class(c transClass) *transRing {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.classes[c]
	if r == nil {
		if len(t.classes) >= maxClasses {
			for k, old := range t.classes {
				delete(t.classes, k)
				// Its painters are dropped with it (a drawer
				// still painting with one finishes).
				old.gone = true
				t.painters -= old.held
				break
			}
		}
		r = &transRing{}
		t.classes[c] = r
	}
	return r
}

// hash is the hash of a frame's content, which picks the candidates that
// are then compared whole.
func (t *Transitions) hash(f *frame) uint64 {
	p, n := unsafe.StringData(f.content), len(f.content)
	if n == 0 {
		return maphash.String(t.seed, f.content)
	}
	t.hmu.Lock()
	for i := range t.hashes {
		if e := &t.hashes[i]; e.p == p && e.n == n {
			h := e.h
			t.hmu.Unlock()
			return h
		}
	}
	t.hmu.Unlock()
	h := maphash.String(t.seed, f.content)
	t.hashed.Add(1)
	t.hmu.Lock()
	t.hashes[t.hnext] = contentHash{p: p, n: n, h: h}
	t.hnext = (t.hnext + 1) % hashesKept
	t.hmu.Unlock()
	return h
}

// find returns the stored change from → to. Called with r.mu held.
func (r *transRing) find(from *frame, fromHash uint64, to *frame, toHash uint64) []byte {
	for i := range r.ents {
		e := &r.ents[i]
		if e.out == nil || e.toHash != toHash || e.fromHash != fromHash || (e.from == nil) != (from == nil) {
			continue
		}
		if from != nil && !from.same(e.from) || !to.same(e.to) {
			continue
		}
		return e.out
	}
	return nil
}

// add stores a change, the oldest giving way. Called with r.mu held.
func (r *transRing) add(e transition) {
	r.ents[r.next] = e
	r.next = (r.next + 1) % transRingLen
}

// envKey is what a renderer made with env takes from it: the terminal's
// type (its capabilities). It also detects a colour profile there, which
// a drawer's first frame replaces with the frame's.
func envKey(env []string) string { return uv.Environ(env).Getenv("TERM") }

package screen

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

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
type Transitions struct {
	seed maphash.Seed

	mu      sync.Mutex
	classes map[transClass]*transRing

	hits, misses atomic.Int64
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
			for k := range t.classes {
				delete(t.classes, k)
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
func (t *Transitions) hash(f *frame) uint64 { return maphash.String(t.seed, f.content) }

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

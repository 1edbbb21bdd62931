package render

import (
	"sync"

	"github.com/fgtop/fgtop/model"
)

// Deriver derives snapshots for any number of consoles at once: `serve`
// runs one console per SSH session, every one fed the same snapshots by
// the engine, and each snapshot is derived once for all of them (per set
// of options: a theme's glyphs and looks), not once per session. A
// console alone has one of its own. It is safe for concurrent use; the
// Derived values it hands out are shared, and nobody modifies them.
type Deriver struct {
	mu      sync.Mutex
	entries []*deriverEntry // most recently used first
	// made counts the derivations made (full or from the previous one);
	// tests read it.
	made int
}

// deriverEntry is one set of options' cache and its latest derivations,
// for sessions a snapshot or two behind the others.
type deriverEntry struct {
	o      DeriveOptions
	c      *DeriveCache
	recent [deriverRecent]*Derived
	next   int
}

// deriverRecent is how many of the latest snapshots stay derived: a
// session whose program is still drawing the last one asks for it after
// another session asked for the next.
const deriverRecent = 4

// deriverOptions bounds how many sets of options are kept (themes and
// ASCII in use by sessions at once); the least recently used goes first.
const deriverOptions = 8

// NewDeriver is an empty Deriver.
func NewDeriver() *Deriver { return &Deriver{} }

// Derive is Derive(s, o, cache) with a cache per set of options, and the
// latest snapshots' derivations handed out again to whoever asks for the
// same snapshot.
func (v *Deriver) Derive(s *model.Snapshot, o DeriveOptions) *Derived {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(o)
	for _, d := range e.recent {
		if d != nil && d.Snap == s {
			return d
		}
	}
	d := Derive(s, o, e.c)
	v.made++
	e.recent[e.next] = d
	e.next = (e.next + 1) % deriverRecent
	return d
}

// Made is how many derivations the Deriver has made.
func (v *Deriver) Made() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.made
}

func (v *Deriver) entry(o DeriveOptions) *deriverEntry {
	for i, e := range v.entries {
		if sameOptions(&e.o, &o) {
			copy(v.entries[1:i+1], v.entries[:i])
			v.entries[0] = e
			return e
		}
	}
	e := &deriverEntry{o: o, c: NewDeriveCache()}
	if len(v.entries) == deriverOptions {
		v.entries = v.entries[:deriverOptions-1]
	}
	v.entries = append([]*deriverEntry{e}, v.entries...)
	return e
}

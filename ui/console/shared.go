package console

import (
	"sync"
	"time"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// common is what every component of the main console shares, by pointer:
// the kit's shared state and what was derived from the adopted snapshot
// once for every view (nil before the first snapshot).
type common struct {
	*kit.Common
	d *render.Derived
	// memo keeps the last frames' expensive pieces (memo.go); nil draws
	// everything afresh.
	memo *viewMemo
}

// Samples is the history graphs' samples of the live snapshots, kept once
// for the consoles fed the same snapshots (serve's sessions). A console's
// graphs are its own history, from the snapshots it adopted; one that
// joins late starts from these, so it draws what the consoles there
// before it draw (and shares their frame changes, screen.Transitions)
// from its first snapshot rather than after the graphs' five minutes.
type Samples struct {
	mu   sync.Mutex
	h    history
	last *model.Snapshot
}

// samplesGap is how long the samples may go without a snapshot before
// they are taken to have missed some: the engine publishes every poll
// (a second), retimed when nothing changed.
const samplesGap = 5 * time.Second

// NewSamples returns an empty Samples.
func NewSamples() *Samples { return &Samples{h: history{}} }

// record adds s, which a console adopts, unless a console added it or a
// newer one already. Its content the last one's (the engine's same
// generation), the last samples repeat, as a console's retime repeats
// them; else frac computes its samples, as the console's adopt does
// (nil: it cannot, and s is left out).
func (sm *Samples) record(s *model.Snapshot, frac func(*model.Device) sample) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.last != nil && s.Time.Sub(sm.last.Time) > samplesGap {
		// No console recorded the snapshots in between (every session
		// had left): a history would fill the gap
		// with the last readings before it, which no snapshot said. The
		// samples start again, as a lone console's graphs start.
		sm.h, sm.last = history{}, nil
	}
	switch {
	case sm.last != nil && !s.Time.After(sm.last.Time):
	case sm.last != nil && s.Gen != 0 && s.Gen == sm.last.Gen:
		sm.h.retime(s.Time.Unix(), nil)
		sm.last = s
	case frac != nil:
		sm.h.observe(s, frac)
		sm.last = s
	}
}

// clone returns a copy of the samples, for a console's own history.
func (sm *Samples) clone() history {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	h := make(history, len(sm.h))
	for k, dh := range sm.h {
		c := *dh
		h[k] = &c
	}
	return h
}

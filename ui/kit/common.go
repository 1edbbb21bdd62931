package kit

import (
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Common is what every component of one program shares, by pointer (like
// soft-serve's common.Common and gh-dash's ProgramContext): styles, key
// map, size, clock, actor and the data they draw. One console program owns
// one; an SSH server runs many programs, so none of this is a package
// global. The root model changes it (a resize, a theme, a new snapshot)
// and the components read it when they next draw.
type Common struct {
	St   *Styles
	Keys KeyMap
	Now  func() time.Time
	// At is the moment the screen shows when it is not now (the console
	// in the past: :at, [ and ]); zero while live. Ages count to it.
	At    time.Time
	Th    Thresholds
	Actor agentconfig.Actor
	// width and height are the terminal's size as reported; 0 until the
	// terminal said (size() then draws at 80x24).
	Width, Height int
	// snap is the adopted snapshot; nil before the first one.
	Snap *model.Snapshot
	// frameOK says the root's cached frame is current; a component that
	// changes what it draws drops it with invalidate.
	FrameOK bool
	// flash is the status line's message; any component may set it.
	Flash Flash
	// bus carries what components ask of the root (layers.go).
	bus
	// staleAt is the earliest instant at which a text of the frame being
	// composed changes by time alone (zero: none noted); see ChangesAt.
	staleAt time.Time
}

// BeginStale starts noting, for a frame about to be composed, when its
// time-dependent texts change.
func (c *Common) BeginStale() { c.staleAt = time.Time{} }

// ChangesAt notes that the frame being composed shows a text that changes
// at t by time alone (an age turning over, a flash running out).
func (c *Common) ChangesAt(t time.Time) {
	if c.staleAt.IsZero() || t.Before(c.staleAt) {
		c.staleAt = t
	}
}

// StaleAt is the earliest instant noted since BeginStale (zero: none):
// until then the frame composed reads the same at any moment.
func (c *Common) StaleAt() time.Time { return c.staleAt }

// AgeNow is the moment an age is counted to: At in the past, else now.
func (c *Common) AgeNow() time.Time {
	if !c.At.IsZero() {
		return c.At
	}
	return c.Now()
}

// Age is FmtAge(now-since), noting when that text next changes.
func (c *Common) Age(now, since time.Time) string {
	text, next := AgeAt(now, since)
	if !next.IsZero() && c.At.IsZero() {
		// In the past an age is counted to a moment time does not move.
		c.ChangesAt(next)
	}
	return text
}

// Invalidate drops the cached frame: the next View composes a new one.
func (c *Common) Invalidate() { c.FrameOK = false }

// Size is the size to draw at (TermSize of the reported size).
func (c *Common) Size() (int, int) { return TermSize(c.Width, c.Height) }

// TermSize is the size to draw at: 80x24 until the terminal said.
func TermSize(w, h int) (int, int) {
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	return w, h
}

// Flashf shows a message in the footer; any component may.
func (c *Common) Flashf(l Level, text string) {
	c.Flash = Flash{Lvl: l, Text: text, Until: c.Now().Add(FlashDuration(l))}
	c.Invalidate()
}

// DropFlash clears the flash when its text begins with prefix: an answer
// the operator's next step made untrue (an invalid plan now valid) must
// not stay its time beside what says otherwise.
func (c *Common) DropFlash(prefix string) {
	if c.Flash.Text != "" && strings.HasPrefix(c.Flash.Text, prefix) {
		c.Flash = Flash{}
		c.Invalidate()
	}
}

// ExpireFlash clears a flash whose time is up; it reports whether it did.
func (c *Common) ExpireFlash() bool {
	if c.Flash.Text != "" && !c.Now().Before(c.Flash.Until) {
		c.Flash = Flash{}
		return true
	}
	return false
}

// FlashLine is the flash as a footer row.
func (c *Common) FlashLine(w int) string {
	l := NewLine(Paint{})
	PutSpans(l, c.St, []Span{{c.Flash.Lvl, c.Flash.Text}}, w)
	return l.Finish(w)
}

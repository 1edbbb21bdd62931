package ui

import (
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// kitCommon is what every component of one program shares, by pointer (like
// soft-serve's common.Common and gh-dash's ProgramContext): styles, key
// map, size, clock, actor and the data they draw. One console program owns
// one; an SSH server runs many programs, so none of this is a package
// global. The root model changes it (a resize, a theme, a new snapshot)
// and the components read it when they next draw.
type kitCommon struct {
	st    *Styles
	keys  KeyMap
	now   func() time.Time
	th    Thresholds
	actor agentconfig.Actor
	// width and height are the terminal's size as reported; 0 until the
	// terminal said (size() then draws at 80x24).
	width, height int
	// snap is the adopted snapshot; nil before the first one.
	snap *model.Snapshot
	// frameOK says the root's cached frame is current; a component that
	// changes what it draws drops it with invalidate.
	frameOK bool
	// flash is the status line's message; any component may set it.
	flash flash
	// bus carries what components ask of the root (layers.go).
	bus
}

// invalidate drops the cached frame: the next View composes a new one.
func (c *kitCommon) invalidate() { c.frameOK = false }

func (c *kitCommon) size() (int, int) { return termSize(c.width, c.height) }

// termSize is the size to draw at: 80x24 until the terminal said.
func termSize(w, h int) (int, int) {
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	return w, h
}

// flashf shows a message in the footer; any component may.
func (c *kitCommon) flashf(l level, text string) {
	c.flash = flash{lvl: l, text: text, until: c.now().Add(flashDuration(l))}
	c.invalidate()
}

// expireFlash clears a flash whose time is up; it reports whether it did.
func (c *kitCommon) expireFlash() bool {
	if c.flash.text != "" && !c.now().Before(c.flash.until) {
		c.flash = flash{}
		return true
	}
	return false
}

// flashLine is the flash as a footer row.
func (c *kitCommon) flashLine(w int) string {
	l := newLine(paint{})
	putSpans(l, c.st, []span{{c.flash.lvl, c.flash.text}}, w)
	return l.finish(w)
}

package ui

import (
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// common is what every component of one console shares, by pointer (like
// soft-serve's common.Common and gh-dash's ProgramContext): styles, key
// map, size, clock, actor and the data they draw. One console program owns
// one; an SSH server runs many programs, so none of this is a package
// global. The root model changes it (a resize, a theme, a new snapshot)
// and the components read it when they next draw.
type common struct {
	st    *Styles
	keys  KeyMap
	now   func() time.Time
	th    Thresholds
	actor agentconfig.Actor
	// width and height are the terminal's size as reported; 0 until the
	// terminal said (size() then draws at 80x24).
	width, height int
	// snap is the adopted snapshot and d what was derived from it once for
	// every view; both nil before the first snapshot.
	snap *model.Snapshot
	d    *derived
	// frameOK says the root's cached frame is current; a component that
	// changes what it draws drops it with invalidate.
	frameOK bool
	// flash is the status line's message; any component may set it.
	flash flash
	// bus carries what components ask of the root (layers.go).
	bus
}

// invalidate drops the cached frame: the next View composes a new one.
func (c *common) invalidate() { c.frameOK = false }

func (c *common) size() (int, int) { return termSize(c.width, c.height) }

package ui

import (
	"math"
	"strconv"
	"time"

	"github.com/fgtop/fgtop/model"
)

// flash is the status line's message: a level, a text and when it clears
// itself (k9s clears after about 6 s).
type flash struct {
	lvl   level
	text  string
	until time.Time
}

func flashDuration(l level) time.Duration {
	switch l {
	case lvlCrit:
		return 8 * time.Second
	case lvlWarn:
		return 6 * time.Second
	}
	return 4 * time.Second
}

// flashf shows a message in the footer; any component may.
func (c *common) flashf(l level, text string) {
	c.flash = flash{lvl: l, text: text, until: c.now().Add(flashDuration(l))}
	c.invalidate()
}

// expireFlash clears a flash whose time is up; it reports whether it did.
func (c *common) expireFlash() bool {
	if c.flash.text != "" && !c.now().Before(c.flash.until) {
		c.flash = flash{}
		return true
	}
	return false
}

// flashLine is the flash as a footer row.
func (c *common) flashLine(w int) string {
	l := newLine(paint{})
	putSpans(l, c.st, []span{{c.flash.lvl, c.flash.text}}, w)
	return l.finish(w)
}

// flashNewIssues flashes issues that appeared since the last snapshot. The
// first snapshot's issues are not news: they are in the issues pane and
// counted in the header.
func (a *App) flashNewIssues(first bool) {
	seen := make(map[string]bool, len(a.d.issues))
	var fresh []*issueRow
	for i := range a.d.issues {
		r := &a.d.issues[i]
		seen[r.id] = true
		if !first && !a.seenIssues[r.id] {
			fresh = append(fresh, r)
		}
	}
	a.seenIssues = seen
	if len(fresh) == 0 {
		return
	}
	worst := fresh[0] // issues are sorted by severity, highest first
	lvl := lvlOK
	switch worst.is.Severity {
	case model.SevError:
		lvl = lvlCrit
	case model.SevWarning:
		lvl = lvlWarn
	}
	text := "new issue: " + worst.text
	if len(fresh) > 1 {
		text = strconv.Itoa(len(fresh)) + " new issues; " + worst.text
	}
	a.flashf(lvl, text)
}

func nan() float64 { return math.NaN() }

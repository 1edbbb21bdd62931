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

func (a *App) flashf(l level, text string) {
	a.flash = flash{lvl: l, text: text, until: a.now().Add(flashDuration(l))}
	a.invalidate()
}

// expireFlash clears a flash whose time is up; it reports whether it did.
func (a *App) expireFlash() bool {
	if a.flash.text != "" && !a.now().Before(a.flash.until) {
		a.flash = flash{}
		return true
	}
	return false
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

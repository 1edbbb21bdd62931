package kit

import (
	"time"

	"charm.land/bubbles/v2/key"
)

// Flash is the status line's message: a level, a text and when it clears
// itself (k9s clears after about 6 s).
type Flash struct {
	Lvl   Level
	Text  string
	Until time.Time
	// Issue, for a flash about a new issue, is the issue's identity and
	// Lead what the text says before the issue's own: the console
	// rewrites the text from each snapshot while the flash lasts, so its
	// figures are the issue's current ones, not those of its first
	// sighting. Flashf clears both.
	Issue, Lead string
	// News says the flash is the console's own news (new issues), which
	// newer news may replace; any other is an answer to the operator,
	// which stays its time. Flashf clears it.
	News bool
	// Short, when set, is what the footer shows where Text does not fit
	// (an issue named by its label alone, its amounts kept): at 80 columns
	// the keys beside it left no room for the amounts.
	Short string
}

// FlashDuration is how long a flash of level l stays: a warning longer
// than news, a critical one longest.
func FlashDuration(l Level) time.Duration {
	switch l {
	case LvlCrit:
		return 8 * time.Second
	case LvlWarn:
		return 6 * time.Second
	}
	return 4 * time.Second
}

// minFlashCells is the least of a flash the footer shows beside the keys
// it keeps; on a narrower line the keys go first. Twelve cells keep the
// ways out (esc back, ctrl+c quit: 22 cells) beside a message at 40
// columns, where 20 dropped esc, the help screen's only way back.
const minFlashCells = 12

// FlashFooter is a flash message as the footer row, with keep drawn at its
// right (help and quit, and what else must not hide behind it): on a busy
// node new-issue flashes follow each other, and the way to help and out
// must stay in sight. keep is ordered least needed first: where the line
// cannot hold the keys and minFlashCells of the flash, the first go
// first, down to the flash alone.
func FlashFooter(st *Styles, f Flash, keep []key.Binding, w int) string {
	return FooterBeside(st, func(w int) string {
		text := f.Text
		if f.Short != "" && Width(text) > w {
			text = f.Short
		}
		l := NewLine(Paint{})
		PutSpans(l, st, []Span{{f.Lvl, text}}, w)
		return l.Finish(w)
	}, keep, w)
}

// FooterBeside is a footer row of w cells: left(n) drawn in the n cells
// the keys leave, and keep at its right. keep is ordered least needed
// first: where the line cannot hold the keys and minFlashCells of the left
// part, the first go first, down to the left part alone.
func FooterBeside(st *Styles, left func(w int) string, keep []key.Binding, w int) string {
	keysW := func(bs []key.Binding) int {
		n := 0
		for i, b := range bs {
			h := b.Help()
			if i > 0 {
				n += 3
			}
			n += Width(h.Key) + 1 + Width(h.Desc)
		}
		return n
	}
	for len(keep) > 0 && w < keysW(keep)+2+minFlashCells {
		keep = keep[1:]
	}
	if len(keep) == 0 {
		return left(w)
	}
	tw := keysW(keep)
	sep := " • "
	if st.ASCII {
		sep = " | "
	}
	l := NewLine(Paint{})
	for i, b := range keep {
		if i > 0 {
			l.PutW(st.Border, sep, 3)
		}
		h := b.Help()
		l.Put(st.HelpKey, h.Key)
		l.Gap(1)
		l.Put(st.HelpDesc, h.Desc)
	}
	return left(w-tw-2) + "  " + l.Finish(tw)
}

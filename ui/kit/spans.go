package kit

import (
	"slices"
	"strings"
)

// Span is a piece of plain text with a colour level: the unit pure
// presentation functions return, so they stay testable without styles.
type Span struct {
	Lvl  Level
	Text string
}

// PutSpans appends spans into at most w cells; when they do not all fit,
// what fits is followed by an ellipsis (in the paint of the span it cut),
// so a cut never leaves a fragment that reads as a value ("20g-mig 0" of
// "20g-mig 0/1"). It returns the cells used.
func PutSpans(l *Line, st *Styles, spans []Span, w int) int {
	if w <= 0 {
		return 0
	}
	spans = st.Words(spans)
	budget, ell := w, ""
	if total := SpansWidth(spans); total > w {
		ell = st.G.Ellipsis
		budget = w - Width(ell)
		if budget < 0 {
			budget, ell = w, ""
		}
	}
	used := 0
	last := Paint{}
	for _, sp := range spans {
		if used >= budget {
			break
		}
		t := Truncate(sp.Text, budget-used, "")
		tw := Width(t)
		last = st.Level(sp.Lvl)
		l.PutW(last, t, tw)
		used += tw
	}
	if ell != "" {
		l.PutW(last, ell, Width(ell))
		used += Width(ell)
	}
	return used
}

// Words is spans as st's terminal reads them: with --ascii, the "…" of
// words ("reading it back…") is three dots, as More is, not the cut
// mark's "~" that the frame's stand-in would make of it.
func (st *Styles) Words(spans []Span) []Span {
	if !st.ASCII || !slices.ContainsFunc(spans, func(sp Span) bool { return strings.Contains(sp.Text, "…") }) {
		return spans
	}
	out := make([]Span, len(spans))
	for i, sp := range spans {
		out[i] = Span{Lvl: sp.Lvl, Text: strings.ReplaceAll(sp.Text, "…", st.G.More)}
	}
	return out
}

// SpansWidth is the cells spans take.
func SpansWidth(spans []Span) int {
	n := 0
	for _, sp := range spans {
		n += Width(sp.Text)
	}
	return n
}

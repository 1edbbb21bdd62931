package ui

// span is a piece of plain text with a colour level: the unit pure
// presentation functions return, so they stay testable without styles.
type span struct {
	lvl  level
	text string
}

// putSpans appends spans into at most w cells; when they do not all fit,
// what fits is followed by an ellipsis (in the paint of the span it cut),
// so a cut never leaves a fragment that reads as a value ("20g-mig 0" of
// "20g-mig 0/1"). It returns the cells used.
func putSpans(l *line, st *Styles, spans []span, w int) int {
	if w <= 0 {
		return 0
	}
	budget, ell := w, ""
	if total := spansWidth(spans); total > w {
		ell = st.G.Ellipsis
		budget = w - width(ell)
		if budget < 0 {
			budget, ell = w, ""
		}
	}
	used := 0
	last := paint{}
	for _, sp := range spans {
		if used >= budget {
			break
		}
		t := truncate(sp.text, budget-used, "")
		tw := width(t)
		last = st.level(sp.lvl)
		l.putW(last, t, tw)
		used += tw
	}
	if ell != "" {
		l.putW(last, ell, width(ell))
		used += width(ell)
	}
	return used
}

func spansWidth(spans []span) int {
	n := 0
	for _, sp := range spans {
		n += width(sp.text)
	}
	return n
}

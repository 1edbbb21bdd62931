package ui

// span is a piece of plain text with a colour level: the unit pure
// presentation functions return, so they stay testable without styles.
type span struct {
	lvl  level
	text string
}

// putSpans appends spans into at most w cells, cutting the last one that
// does not fit (with an ellipsis) and dropping the rest; it returns the
// cells used.
func putSpans(l *line, st *Styles, spans []span, w int) int {
	used := 0
	for _, sp := range spans {
		if used >= w {
			break
		}
		t := truncate(sp.text, w-used, st.G.Ellipsis)
		tw := width(t)
		l.putW(st.level(sp.lvl), t, tw)
		used += tw
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

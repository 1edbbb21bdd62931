package kit

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// HelpRowsOf packs help groups into rows of columns that fit w cells (the
// node and fleet consoles' help screens): bubbles' FullHelpView puts every
// group side by side and cuts what does not fit, which at 80 columns would
// hide quit and help.
func HelpRowsOf(h *help.Model, groups [][]key.Binding, w int) [][][]key.Binding {
	h.SetWidth(0)
	var rows [][][]key.Binding
	used := 0
	for _, g := range groups {
		gw := lipgloss.Width(h.FullHelpView([][]key.Binding{g}))
		sep := Width(h.FullSeparator)
		if len(rows) == 0 || used+sep+gw > w {
			rows = append(rows, [][]key.Binding{g})
			used = gw
			continue
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], g)
		used += sep + gw
	}
	h.SetWidth(w)
	return rows
}

// SpansRow draws spans as one row of exactly w cells.
func SpansRow(st *Styles, sp []Span, w int) string {
	l := NewLine(Paint{})
	PutSpans(l, st, sp, w)
	return l.Finish(w)
}

// ShortHelpOf is a footer of key help in w cells. Help and quit always
// show (an operator at a small terminal must find both): when not all
// fits, the other items first lose their parenthesised notes ("filter
// (!x inverts)" -> "filter"), then drop from the end, leaving an ellipsis
// before help and quit. The node console and the fleet console share it.
func ShortHelpOf(st *Styles, bs []key.Binding, w int) string {
	type item struct {
		Key, Desc, Short string
		must             bool
	}
	var items []item
	for _, b := range bs {
		h := b.Help()
		it := item{Key: h.Key, Desc: h.Desc, Short: h.Desc, must: h.Key == "?" || h.Key == "q"}
		if i := strings.Index(h.Desc, " ("); i > 0 {
			it.Short = h.Desc[:i]
		}
		items = append(items, it)
	}
	sepG := " • "
	if st.ASCII {
		sepG = " | "
	}
	itemW := func(it item, short bool) int {
		if short {
			return Width(it.Key) + 1 + Width(it.Short)
		}
		return Width(it.Key) + 1 + Width(it.Desc)
	}
	lineW := func(keep []bool, short, dropped bool) int {
		n, k := 0, 0
		for i, it := range items {
			if keep[i] {
				n += itemW(it, short)
				k++
			}
		}
		if dropped {
			n += 3 + Width(st.G.More) // " • …" before help and quit
		}
		return n + 3*max(k-1, 0)
	}
	keep := make([]bool, len(items))
	for i := range keep {
		keep[i] = true
	}
	short, dropped := false, false
	if lineW(keep, false, false) > w {
		short = true
	}
	for lineW(keep, short, dropped) > w {
		last := -1
		for i, it := range items {
			if keep[i] && !it.must {
				last = i
			}
		}
		if last < 0 {
			break
		}
		keep[last], dropped = false, true
	}
	if dropped && lineW(keep, short, true) > w {
		// Help and quit alone fill the line: they matter more than the
		// mark of what went ("..." is wider than "~" was).
		dropped = false
	}
	l := NewLine(Paint{})
	first := true
	put := func(it item) {
		if !first {
			l.PutW(st.Border, sepG, 3)
		}
		first = false
		l.Put(st.HelpKey, it.Key)
		l.Gap(1)
		if short {
			l.Put(st.HelpDesc, it.Short)
		} else {
			l.Put(st.HelpDesc, it.Desc)
		}
	}
	for i, it := range items {
		if keep[i] && !it.must {
			put(it)
		}
	}
	if dropped {
		if !first {
			l.PutW(st.Border, sepG, 3)
		}
		l.Put(st.Border, st.G.More)
		first = false
	}
	for i, it := range items {
		if keep[i] && it.must {
			put(it)
		}
	}
	return ClampLine(l.Finish(w), w)
}

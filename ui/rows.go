package ui

import "strconv"

// titleRowOf is a pane's title rule: title on the left, info and the
// scroll position on the right. The node and fleet consoles share it.
func titleRowOf(st *Styles, w int, title, info []span, total, visible, offset int) string {
	l := newLine(paint{})
	l.putW(st.Border, st.G.Rule, 1)
	putSpans(l, st, title, max(w-2, 0))
	var right []span
	if total > visible && visible > 0 {
		from, to := offset+1, min(offset+visible, total)
		right = append(right, span{lvlDim, strconv.Itoa(from) + "-" + strconv.Itoa(to) + "/" + strconv.Itoa(total)})
	}
	if len(info) > 0 {
		if len(right) > 0 {
			info = append(append([]span{}, info...), span{lvlDim, "  "})
		}
		right = append(info, right...)
	}
	if len(right) > 0 {
		right = append(append([]span{{lvlDim, " "}}, right...), span{lvlDim, " "})
	}
	rw := spansWidth(right)
	if l.w+rw+2 > w {
		right, rw = nil, 0
	}
	fill := max(w-l.w-rw-1, 0)
	l.putW(st.Border, repeat(st.G.Rule, fill), fill)
	putSpans(l, st, right, rw)
	if l.w < w {
		l.putW(st.Border, st.G.Rule, 1)
	}
	return l.finish(w)
}

// rowStart begins a list row: the selection background when highlighted,
// then the cursor mark (or its blank) in the first two cells.
func rowStart(st *Styles, highlighted, marked bool) *line {
	base := paint{}
	if highlighted {
		base = st.Selected
	}
	l := newLine(base)
	if marked {
		l.putW(st.Accent, st.G.Cursor, 1)
		l.gap(1)
	} else {
		l.gap(2)
	}
	return l
}

// emptyRow is a pane's line when it has no rows: the reason, dimmed.
func emptyRow(st *Styles, w int, text string) string {
	l := newLine(paint{})
	l.gap(2)
	l.cell(st.Dim, text, w-2, false, st.G.Ellipsis)
	return l.finish(w)
}

package kit

import "strconv"

// TitleRowOf is a pane's title rule: title on the left, info and the
// scroll position on the right. The node and fleet consoles share it.
func TitleRowOf(st *Styles, w int, title, info []Span, total, visible, offset int) string {
	l := NewLine(Paint{})
	l.PutW(st.Border, st.G.Rule, 1)
	PutSpans(l, st, title, max(w-2, 0))
	var right []Span
	if total > visible && visible > 0 {
		from, to := offset+1, min(offset+visible, total)
		right = append(right, Span{LvlDim, strconv.Itoa(from) + "-" + strconv.Itoa(to) + "/" + strconv.Itoa(total)})
	}
	if len(info) > 0 {
		if len(right) > 0 {
			info = append(append([]Span{}, info...), Span{LvlDim, "  "})
		}
		right = append(info, right...)
	}
	if len(right) > 0 {
		right = append(append([]Span{{LvlDim, " "}}, right...), Span{LvlDim, " "})
	}
	rw := SpansWidth(right)
	if l.W+rw+2 > w {
		right, rw = nil, 0
	}
	fill := max(w-l.W-rw-1, 0)
	l.PutW(st.Border, Repeat(st.G.Rule, fill), fill)
	PutSpans(l, st, right, rw)
	if l.W < w {
		l.PutW(st.Border, st.G.Rule, 1)
	}
	return l.Finish(w)
}

// RowStart begins a list row: the selection background when highlighted,
// then the cursor mark (or its blank) in the first two cells.
func RowStart(st *Styles, highlighted, marked bool) *Line {
	base := Paint{}
	if highlighted {
		base = st.Selected
	}
	l := NewLine(base)
	if marked {
		l.PutW(st.Accent, st.G.Cursor, 1)
		l.Gap(1)
	} else {
		l.Gap(2)
	}
	return l
}

// EmptyRow is a pane's line when it has no rows: the reason, dimmed.
func EmptyRow(st *Styles, w int, text string) string {
	l := NewLine(Paint{})
	l.Gap(2)
	l.Cell(st.Dim, text, w-2, false, st.G.Ellipsis)
	return l.Finish(w)
}

package kit

import "strconv"

// titleKeep is how much of a title TitleRowOf keeps before it gives up
// the right-hand part: enough to say which pane this is.
const titleKeep = 12

// TitleRowOf is a pane's title rule: title on the left, info and the
// scroll position on the right. The node and fleet consoles share it.
// Where they do not fit together the title is cut first (its end, the
// description of what is shown, goes before its name), down to
// titleKeep cells; then the info goes, and the position, which says
// which of how many rows are shown, last.
func TitleRowOf(st *Styles, w int, title, info []Span, total, visible, offset int) string {
	pos := position(total, visible, offset)
	keep := min(SpansWidth(title), titleKeep)
	right := titleRight(info, pos)
	// A leading rule, the title, at least one rule before the right-hand
	// part and one after it.
	if 1+keep+SpansWidth(right)+2 > w {
		right = titleRight(nil, pos)
	}
	rw := SpansWidth(right)
	if 1+keep+rw+2 > w {
		right, rw = nil, 0
	}
	l := NewLine(Paint{})
	l.PutW(st.Border, st.G.Rule, 1)
	room := w - 2
	if rw > 0 {
		room = w - 3 - rw
	}
	PutSpans(l, st, title, max(room, 0))
	fill := max(w-l.W-rw-1, 0)
	l.PutW(st.Border, Repeat(st.G.Rule, fill), fill)
	PutSpans(l, st, right, rw)
	if l.W < w {
		l.PutW(st.Border, st.G.Rule, 1)
	}
	return l.Finish(w)
}

// TitleRowFirst is TitleRowOf with the first of titles (longest first)
// that fits whole beside the right-hand part, else the last (cut as
// TitleRowOf cuts): a title with short forms keeps what matters at 80
// columns instead of losing its end.
func TitleRowFirst(st *Styles, w int, titles [][]Span, info []Span, total, visible, offset int) string {
	rw := SpansWidth(titleRight(info, position(total, visible, offset)))
	pick := titles[len(titles)-1]
	for _, t := range titles {
		if SpansWidth(t) <= w-3-rw {
			pick = t
			break
		}
	}
	return TitleRowOf(st, w, pick, info, total, visible, offset)
}

// position is a title's scroll position, "from-to/total", when not every
// row shows.
func position(total, visible, offset int) []Span {
	if total > visible && visible > 0 {
		from, to := offset+1, min(offset+visible, total)
		return []Span{{LvlDim, strconv.Itoa(from) + "-" + strconv.Itoa(to) + "/" + strconv.Itoa(total)}}
	}
	return nil
}

// titleRight is a title's right-hand part: the info, then the position,
// a space either side; nil when both are empty.
func titleRight(info, pos []Span) []Span {
	right := append([]Span{}, info...)
	if len(info) > 0 && len(pos) > 0 {
		right = append(right, Span{LvlDim, "  "})
	}
	right = append(right, pos...)
	if len(right) == 0 {
		return nil
	}
	return append(append([]Span{{LvlDim, " "}}, right...), Span{LvlDim, " "})
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

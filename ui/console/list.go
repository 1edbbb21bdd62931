package console

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// list is the scrolling skeleton every main-screen pane embeds: the
// cursor, the first row shown, the size, the title row and the loop that
// draws the visible rows. It is written once so a pane only says how many
// rows it has, how tall each is and how one is drawn.
//
// A pane's rectangle is its title row, head further fixed rows (a column
// header) and the body the rows scroll in. Rows are one line each unless
// lines is set (the agents pane's blocks).
type list struct {
	*common
	ID      pane
	W, H    int
	head    int
	focused bool
	Cursor  int
	offset  int
	// size is how many rows the cursor moves over in the derived data
	// (none before the first snapshot); lines, when not nil, how many
	// screen lines row i takes.
	Size  func(d *render.Derived) int
	Lines func(i int) int
	// moved, when not nil, runs after the cursor landed on a row (the
	// devices pane's cursor picks the kernels the kernels pane follows).
	moved func()
}

// SetSize sets the pane's rectangle: w cells by h rows, title included.
func (l *list) SetSize(w, h int) { l.W, l.H = w, h }

// setFocus says whether keys go to this pane (its title and selected row
// are highlighted then).
func (l *list) setFocus(f bool) { l.focused = f }

// Len is how many rows the cursor moves over.
func (l *list) Len() int { return l.count() }

func (l *list) count() int {
	if l.d == nil {
		return 0
	}
	return l.Size(l.d)
}

// Body is how many screen lines the rows have below the title and head.
func (l *list) Body() int { return l.H - 1 - l.head }

// visible is how many rows fit from the offset: at least one, so paging
// always moves.
func (l *list) visible() int {
	if l.Lines == nil {
		return max(l.Body(), 1)
	}
	n, used := 0, 0
	for i := l.offset; i < l.count(); i++ {
		used += l.Lines(i)
		if used > l.Body() {
			break
		}
		n++
	}
	return max(n, 1)
}

// move moves the cursor by delta rows, clamped to the rows there are.
func (l *list) move(delta int) {
	n := l.count()
	if n == 0 {
		return
	}
	c := min(max(l.Cursor+delta, 0), n-1)
	if c == l.Cursor {
		return
	}
	l.Cursor = c
	l.ensureVisible()
	if l.moved != nil {
		l.moved()
	}
}

// selectRow puts the cursor on row i, if there is one.
func (l *list) selectRow(i int) {
	if i < 0 || i >= l.count() {
		return
	}
	l.Cursor = i
	l.ensureVisible()
	if l.moved != nil {
		l.moved()
	}
}

// ensureVisible scrolls so the cursor's row shows; a block of several
// lines scrolls until all of it fits.
func (l *list) ensureVisible() {
	n := l.count()
	c, off := l.Cursor, l.offset
	if c < off {
		off = c
	}
	if l.Lines != nil {
		for off < c {
			used := 0
			for i := off; i <= c; i++ {
				used += l.Lines(i)
			}
			if used <= l.Body() {
				break
			}
			off++
		}
	} else if vis := l.visible(); c >= off+vis {
		off = c - vis + 1
	}
	l.offset = min(max(off, 0), max(n-1, 0))
}

// Clamp keeps cursor and offset within the rows a new snapshot or size
// leaves.
func (l *list) Clamp() {
	n := l.count()
	l.Cursor = min(l.Cursor, max(n-1, 0))
	if l.Lines != nil {
		l.offset = min(l.offset, l.Cursor)
	} else {
		l.offset = min(l.offset, max(n-l.visible(), 0))
	}
	l.ensureVisible()
}

// rowAt is the row under body line y (0 is the first line below the
// head), or false.
func (l *list) rowAt(y int) (int, bool) {
	if y < 0 {
		return 0, false
	}
	if l.Lines == nil {
		return l.offset + y, l.offset+y < l.count()
	}
	for i := l.offset; i < l.count(); i++ {
		n := l.Lines(i)
		if y < n {
			return i, true
		}
		y -= n
	}
	return 0, false
}

// Update is what a pane without keys of its own does: move.
func (l *list) Update(msg tea.Msg) tea.Cmd {
	l.updateList(msg, nil)
	return nil
}

// owns: a plain list has no actions of its own.
func (l *list) Owns(kit.Action) bool { return false }

// Bindings: a plain list has no keys of its own.
func (l *list) Bindings() []key.Binding { return nil }

// updateList handles what every pane does alike: cursor keys, the wheel
// and a click on a row, and reports whether it did. A click on a head row
// goes to headClick (nil: ignored), its Y 0 for the first head row.
func (l *list) updateList(msg tea.Msg, headClick func(m tea.Mouse)) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		delta, ok := kit.CursorDelta(l.Keys.Lookup(msg), l.visible())
		if ok {
			l.move(delta)
		}
		return ok
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			l.move(-1)
		} else {
			l.move(1)
		}
		return true
	case tea.MouseClickMsg:
		m := msg.Mouse()
		if m.Y >= 1 && m.Y <= l.head && headClick != nil {
			headClick(tea.Mouse{X: m.X, Y: m.Y - 1, Button: m.Button})
			return true
		}
		if i, ok := l.rowAt(m.Y - 1 - l.head); ok {
			l.selectRow(i)
		}
		return true
	}
	return false
}

// frame draws the pane skeleton as exactly h rows of w cells: the title
// row, then, once there is data, the head rows, the rows from the offset
// (row draws one, as its lines) or, with none, the empty line.
// noData is what shows under the title before the first snapshot ("" for
// nothing).
func (l *list) frame(title, info []kit.Span, hasData bool, noData string,
	head func() []string, empty func() string, row func(i int, dst []string) []string) []string {
	st := l.St
	out := make([]string, 0, l.H)
	n := l.count()
	vis := l.Body()
	if l.Lines != nil {
		vis = l.visible()
	}
	out = append(out, kit.TitleRowOf(st, l.W, title, info, n, vis, l.offset))
	switch {
	case l.H < 2:
	case !hasData:
		if noData != "" {
			out = append(out, kit.EmptyRow(st, l.W, noData))
		}
	default:
		if head != nil {
			out = append(out, head()...)
		}
		if n == 0 {
			out = append(out, kit.EmptyRow(st, l.W, empty()))
			break
		}
		for i := l.offset; i < n && len(out) < l.H; i++ {
			out = row(i, out)
		}
	}
	for len(out) < l.H {
		out = append(out, kit.Spaces(l.W))
	}
	return out[:max(l.H, 0)]
}

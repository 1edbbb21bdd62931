package kit

import tea "charm.land/bubbletea/v2"

// CursorDelta is how far a cursor key moves a cursor in a list showing
// visible rows (a page is one row less, so a row stays in view); false
// for a key that is not a cursor key. The partition editor's grid moves
// the same way.
func CursorDelta(act Action, visible int) (int, bool) {
	switch act {
	case ActUp:
		return -1, true
	case ActDown:
		return 1, true
	case ActTop:
		return -1 << 30, true
	case ActBottom:
		return 1 << 30, true
	case ActPageUp:
		return -max(visible-1, 1), true
	case ActPageDown:
		return max(visible-1, 1), true
	}
	return 0, false
}

// Scroll moves a scrolling screen (help, detail, the editor's plan and
// journal) by a key's action.
func (c *Common) Scroll(off *int, act Action) {
	_, h := c.Size()
	page := max(h-4, 1)
	switch act {
	case ActUp:
		*off--
	case ActDown:
		*off++
	case ActPageUp:
		*off -= page
	case ActPageDown:
		*off += page
	case ActTop:
		*off = 0
	case ActBottom:
		*off = 1 << 30 // clamped when drawn
	}
	*off = max(*off, 0)
}

// WheelDelta is a wheel event as rows: -1 up, 1 down.
func WheelDelta(m tea.Mouse) int {
	if m.Button == tea.MouseWheelUp {
		return -1
	}
	return 1
}

package ui

import tea "charm.land/bubbletea/v2"

// cursorDelta is how far a cursor key moves a cursor in a list showing
// visible rows (a page is one row less, so a row stays in view); false
// for a key that is not a cursor key. The partition editor's grid moves
// the same way.
func cursorDelta(act action, visible int) (int, bool) {
	switch act {
	case actUp:
		return -1, true
	case actDown:
		return 1, true
	case actTop:
		return -1 << 30, true
	case actBottom:
		return 1 << 30, true
	case actPageUp:
		return -max(visible-1, 1), true
	case actPageDown:
		return max(visible-1, 1), true
	}
	return 0, false
}

// scroll moves a scrolling screen (help, detail, the editor's plan and
// journal) by a key's action.
func (c *kitCommon) scroll(off *int, act action) {
	_, h := c.size()
	page := max(h-4, 1)
	switch act {
	case actUp:
		*off--
	case actDown:
		*off++
	case actPageUp:
		*off -= page
	case actPageDown:
		*off += page
	case actTop:
		*off = 0
	case actBottom:
		*off = 1 << 30 // clamped when drawn
	}
	*off = max(*off, 0)
}

// wheelDelta is a wheel event as rows: -1 up, 1 down.
func wheelDelta(m tea.Mouse) int {
	if m.Button == tea.MouseWheelUp {
		return -1
	}
	return 1
}

package ui

// wideWidth is where panes go side by side.
const wideWidth = 160

// rect is a screen area; panes include their title row.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout places the header, the panes and the footer. In compact mode the
// devices pane sits on top and one of the other three panes (the focused
// one, kernels by default) below it; from wideWidth columns on, devices and
// kernels stack on the left and agents and issues on the right.
type layout struct {
	wide    bool
	header  rect
	footer  rect
	panes   [numPanes]rect
	visible [numPanes]bool
	sepX    int
}

// computeLayout is pure: sizes in, rectangles out. devLines and agentLines
// are the rows those panes would like (without their title).
func computeLayout(w, h, headerH, devLines, agentLines int, focus pane) layout {
	l := layout{wide: w >= wideWidth}
	l.header = rect{0, 0, w, headerH}
	l.footer = rect{0, h - 1, w, 1}
	top := headerH
	body := max(h-headerH-1, 0)
	split := func(total, want, capNum, capDen, least int) int {
		limit := max(total*capNum/capDen, least)
		return max(min(want+1, limit, total), 0)
	}
	if !l.wide {
		devH := split(body, devLines, 3, 5, 3)
		l.panes[paneDevices] = rect{0, top, w, devH}
		bottom := rect{0, top + devH, w, body - devH}
		shown := paneKernels
		if focus == paneAgents || focus == paneIssues {
			shown = focus
		}
		for p := paneKernels; p < numPanes; p++ {
			l.panes[p] = bottom
		}
		l.visible[paneDevices] = devH > 0
		l.visible[shown] = bottom.h > 0
		return l
	}
	lw := w * 3 / 5
	rw := w - lw - 1
	l.sepX = lw
	devH := split(body, devLines, 3, 5, 3)
	l.panes[paneDevices] = rect{0, top, lw, devH}
	l.panes[paneKernels] = rect{0, top + devH, lw, body - devH}
	agH := split(body, agentLines, 1, 2, 3)
	l.panes[paneAgents] = rect{lw + 1, top, rw, agH}
	l.panes[paneIssues] = rect{lw + 1, top + agH, rw, body - agH}
	for p := range l.visible {
		l.visible[p] = l.panes[p].h > 0
	}
	return l
}

// paneAt returns the visible pane under a screen cell.
func (l layout) paneAt(x, y int) (pane, bool) {
	for p := range numPanes {
		if l.visible[p] && l.panes[p].contains(x, y) {
			return p, true
		}
	}
	return 0, false
}

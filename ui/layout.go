package ui

// wideWidth is where panes go side by side.
const wideWidth = 160

// wideSplit is the width of the wide layout's left column (devices and
// kernels); the separator follows it.
func wideSplit(w int) int { return w * 3 / 5 }

// The history graphs take what the panes do not need, and only from
// graphMinH rows on. The kernels and issues panes keep what their content
// needs first, and at least kernMinH and issuesMinH rows (title included).
const (
	graphMinH  = 10
	kernMinH   = 6
	issuesMinH = 4
)

// rect is a screen area; panes include their title row.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout places the header, the panes, the history graphs and the footer.
// In compact mode the devices pane sits on top and one of the other three
// panes (the focused one, kernels by default) below it; from wideWidth
// columns on, devices and kernels stack on the left and agents and issues
// on the right. When the terminal is taller than the panes need, the
// history graphs take the rest, full width, at the bottom.
type layout struct {
	wide    bool
	header  rect
	footer  rect
	panes   [numPanes]rect
	visible [numPanes]bool
	sepX    int
	// graph is the history graphs' area when graphOn.
	graph   rect
	graphOn bool
}

// fillWants is what decides whether the history graphs get rows: the rows
// the kernels and issues panes would like (without their title; the
// kernels' column header counts), and whether there is any history to
// draw.
type fillWants struct {
	kernLines, issueLines int
	graphs                bool
}

// computeLayout is pure: sizes in, rectangles out. devLines and agentLines
// are the rows those panes would like (without their title). With the zero
// fillWants there are no graphs and the panes share the whole body.
func computeLayout(w, h, headerH, devLines, agentLines int, focus pane, fill fillWants) layout {
	l := layout{wide: w >= wideWidth}
	l.header = rect{0, 0, w, headerH}
	l.footer = rect{0, h - 1, w, 1}
	top := headerH
	body := max(h-headerH-1, 0)
	split := func(total, want, capNum, capDen, least int) int {
		limit := max(total*capNum/capDen, least)
		return max(min(want+1, limit, total), 0)
	}
	// graphRows is what is left for the graphs below panes needing need
	// of the rest rows: nothing under graphMinH, except that a tall
	// terminal keeps graphMinH rows for them beside a long list (it
	// scrolls anyway, and a busy node is where history matters most).
	graphRows := func(rest, need int) int {
		if !fill.graphs {
			return 0
		}
		g := rest - need
		if g < graphMinH && rest >= 3*graphMinH {
			g = graphMinH
		}
		if g < graphMinH {
			return 0
		}
		return g
	}
	if !l.wide {
		devH := split(body, devLines, 3, 5, 3)
		l.panes[paneDevices] = rect{0, top, w, devH}
		shown := paneKernels
		if focus == paneAgents || focus == paneIssues {
			shown = focus
		}
		// The bottom pane keeps the rows the pane it shows would like.
		want := [...]int{paneKernels: fill.kernLines, paneAgents: agentLines, paneIssues: fill.issueLines}[shown] + 1
		g := graphRows(body-devH, max(want, kernMinH))
		bottom := rect{0, top + devH, w, body - devH - g}
		if g > 0 {
			l.graph, l.graphOn = rect{0, top + body - g, w, g}, true
		}
		for p := paneKernels; p < numPanes; p++ {
			l.panes[p] = bottom
		}
		l.visible[paneDevices] = devH > 0
		l.visible[shown] = bottom.h > 0
		return l
	}
	lw := wideSplit(w)
	rw := w - lw - 1
	l.sepX = lw
	devH := split(body, devLines, 3, 5, 3)
	agH := split(body, agentLines, 1, 2, 3)
	need := max(devH+max(fill.kernLines+1, kernMinH), agH+max(fill.issueLines+1, issuesMinH))
	g := graphRows(body-devH, need-devH)
	if g > 0 {
		l.graph, l.graphOn = rect{0, top + body - g, w, g}, true
	}
	panesH := body - g
	l.panes[paneDevices] = rect{0, top, lw, devH}
	l.panes[paneKernels] = rect{0, top + devH, lw, max(panesH-devH, 0)}
	l.panes[paneAgents] = rect{lw + 1, top, rw, min(agH, panesH)}
	l.panes[paneIssues] = rect{lw + 1, top + agH, rw, max(panesH-agH, 0)}
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

package console

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
type rect struct{ x, y, W, H int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.W && y >= r.y && y < r.y+r.H
}

// layout places the header, the panes, the history graphs and the footer.
// In compact mode the devices pane sits on top and one of the other three
// panes (the focused one, kernels by default) below it; from wideWidth
// columns on, devices and kernels stack on the left and agents and issues
// on the right. When the terminal is taller than the panes need, the
// history graphs take the rest, full width, at the bottom.
type layout struct {
	wide    bool
	Header  rect
	Footer  rect
	panes   [numPanes]rect
	visible [numPanes]bool
	sepX    int
	// graph is the history graphs' area when graphOn.
	graph   rect
	graphOn bool
}

// paneRole is a pane's place in the layout (paneSpecs gives each pane
// one). In the wide layout a column is its panes stacked in table order:
// each but the last gets the rows it wants, at most capNum/capDen of the
// body but at least least; the last takes the rest and keeps at least
// minH (title included) before the graphs get rows. In the compact layout
// the left column's first pane sits on top and every other pane is a tab
// below it.
type paneRole struct {
	col                   int
	capNum, capDen, least int
	minH                  int
}

// The wide layout's columns.
const (
	colLeft = iota
	colRight
)

// paneColumn is the panes of a wide column, top to bottom.
func paneColumn(c int) []pane {
	var out []pane
	for p := range numPanes {
		if paneSpecs[p].role.col == c {
			out = append(out, p)
		}
	}
	return out
}

// wideCols are the wide layout's columns, from paneSpecs.
var wideCols = [...][]pane{colLeft: paneColumn(colLeft), colRight: paneColumn(colRight)}

// compactTop is the pane on top in the compact layout.
func compactTop() pane { return wideCols[colLeft][0] }

// compactTabs are the panes that share the compact layout's bottom area,
// in Tab's order: every pane but compactTop.
var compactTabs = func() []pane {
	var out []pane
	for p := range numPanes {
		if p != compactTop() {
			out = append(out, p)
		}
	}
	return out
}()

// placePanes is pure: sizes in, rectangles out. wants are the rows each
// pane would like (without its title); the graphs get rows only with
// graphs set.
func placePanes(w, h, headerH int, wants [numPanes]int, focus pane, graphs bool) layout {
	l := layout{wide: w >= wideWidth}
	l.Header = rect{0, 0, w, headerH}
	l.Footer = rect{0, h - 1, w, 1}
	top := headerH
	body := max(h-headerH-1, 0)
	split := func(p pane, total int) int {
		r := paneSpecs[p].role
		limit := max(total*r.capNum/r.capDen, r.least)
		return max(min(wants[p]+1, limit, total), 0)
	}
	// graphRows is what is left for the graphs below panes needing need
	// of the rest rows: nothing under graphMinH, except that a tall
	// terminal keeps graphMinH rows for them beside a long list (it
	// scrolls anyway, and a busy node is where history matters most).
	graphRows := func(rest, need int) int {
		if !graphs {
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
	first := compactTop()
	if !l.wide {
		topH := split(first, body)
		l.panes[first] = rect{0, top, w, topH}
		tabs := compactTabs
		shown := tabs[0]
		// The bottom area keeps the rows the pane it shows would like,
		// and at least the most any tab must keep.
		least := 0
		for _, p := range tabs {
			least = max(least, paneSpecs[p].role.minH)
			if p == focus {
				shown = p
			}
		}
		g := graphRows(body-topH, max(wants[shown]+1, least))
		bottom := rect{0, top + topH, w, body - topH - g}
		if g > 0 {
			l.graph, l.graphOn = rect{0, top + body - g, w, g}, true
		}
		for _, p := range tabs {
			l.panes[p] = bottom
		}
		l.visible[first] = topH > 0
		l.visible[shown] = bottom.H > 0
		return l
	}
	lw := wideSplit(w)
	rw := w - lw - 1
	l.sepX = lw
	cols := wideCols
	xs, ws := [...]int{0, lw + 1}, [...]int{lw, rw}
	// heights are the rows of each column's panes above its last; need
	// is what the taller column would like.
	var heights [numPanes]int
	need := 0
	for _, col := range cols {
		used := 0
		for _, p := range col[:len(col)-1] {
			heights[p] = split(p, body)
			used += heights[p]
		}
		last := col[len(col)-1]
		need = max(need, used+max(wants[last]+1, paneSpecs[last].role.minH))
	}
	topH := heights[first]
	g := graphRows(body-topH, need-topH)
	if g > 0 {
		l.graph, l.graphOn = rect{0, top + body - g, w, g}, true
	}
	panesH := body - g
	for c, col := range cols {
		used := 0
		for i, p := range col {
			ph := max(panesH-used, 0)
			if i < len(col)-1 {
				ph = min(heights[p], ph)
			}
			l.panes[p] = rect{xs[c], top + used, ws[c], ph}
			used += heights[p]
		}
	}
	for p := range l.visible {
		l.visible[p] = l.panes[p].H > 0
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

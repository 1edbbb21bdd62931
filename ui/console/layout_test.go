package console

import "testing"

// computeLayout is placePanes with the wants named, as the table tests
// give them: devLines and agentLines are the rows the devices and agents
// panes would like (without their title). With the zero fillWants there
// are no graphs and the panes share the whole body.
func computeLayout(w, h, headerH, devLines, agentLines int, focus pane, fill fillWants) layout {
	wants := [numPanes]int{paneDevices: devLines, paneKernels: fill.kernLines, paneAgents: agentLines, paneIssues: fill.issueLines}
	return placePanes(w, h, headerH, wants, focus, fill.graphs)
}

// fillWants is what decides whether the history graphs get rows: the rows
// the kernels and issues panes would like (without their title; the
// kernels' column header counts), and whether there is any history to
// draw.
type fillWants struct {
	kernLines, issueLines int
	graphs                bool
}

// checkTiles fails unless the layout's visible areas tile the body: the
// compact column (devices, shown pane, graphs) or the wide columns (devices
// and kernels left, agents and issues right, graphs under both) each run
// from the header to the footer without gap or overlap.
func checkTiles(t *testing.T, l layout, w, h int) {
	t.Helper()
	body := l.Footer.y - l.Header.H
	stack := func(rs ...rect) {
		t.Helper()
		y := l.Header.H
		for _, r := range rs {
			if r.y != y {
				t.Errorf("%dx%d: %+v starts at row %d, want %d (layout %+v)", w, h, r, r.y, y, l)
			}
			y += r.H
		}
		if y != l.Header.H+body {
			t.Errorf("%dx%d: areas end at row %d, the footer is at %d (layout %+v)", w, h, y, l.Footer.y, l)
		}
	}
	var g []rect
	if l.graphOn {
		g = []rect{l.graph}
		if l.graph.W != w || l.graph.x != 0 {
			t.Errorf("%dx%d: graphs %+v are not full width", w, h, l.graph)
		}
	}
	if !l.wide {
		shown := paneKernels
		for p := paneKernels; p < numPanes; p++ {
			if l.visible[p] {
				shown = p
			}
		}
		stack(append([]rect{l.panes[paneDevices], l.panes[shown]}, g...)...)
		return
	}
	stack(append([]rect{l.panes[paneDevices], l.panes[paneKernels]}, g...)...)
	stack(append([]rect{l.panes[paneAgents], l.panes[paneIssues]}, g...)...)
}

func TestComputeLayoutGraphs(t *testing.T) {
	demo := fillWants{kernLines: 4, issueLines: 1, graphs: true}
	busy := fillWants{kernLines: 1001, issueLines: 30, graphs: true}
	tests := []struct {
		Name          string
		W, H, headerH int
		Dev, ag       int
		focus         pane
		fill          fillWants
		graphH        int // 0: no graphs
		kernH         int // the kernels pane's rows, title included
	}{
		{"80x24 demo: nothing changes", 80, 24, 2, 10, 7, paneDevices, demo, 0, 10},
		{"120x40 demo: graphs take the rest", 120, 40, 2, 10, 7, paneDevices, demo, 37 - 11 - kernMinH, kernMinH},
		{"120x40 agents shown keep their rows", 120, 40, 2, 10, 7, paneAgents, demo, 37 - 11 - 8, 8},
		{"120x40 long kernel list: no graphs", 120, 40, 2, 10, 7, paneDevices, busy, 0, 26},
		{"120x60 long kernel list keeps graphMinH", 120, 60, 1, 10, 7, paneDevices, busy, graphMinH, 58 - 11 - graphMinH},
		{"120x40 no history: no graphs", 120, 40, 2, 10, 7, paneDevices, fillWants{kernLines: 4, issueLines: 1}, 0, 26},
		{"200x60 demo: graphs under both columns", 200, 60, 2, 10, 7, paneDevices, demo, 57 - 11 - kernMinH, kernMinH},
		{"200x60 right column needs more", 200, 60, 2, 3, 20, paneDevices, demo, 57 - 21 - issuesMinH, 25 - 4},
		{"160x48 busy node: no graphs", 160, 48, 1, 18, 7, paneDevices, busy, 0, 46 - 19},
		{"240x70 busy node keeps graphMinH", 240, 70, 1, 18, 7, paneDevices, busy, graphMinH, 68 - 19 - graphMinH},
		{"200x30 demo: graphMinH fits", 200, 30, 2, 10, 7, paneDevices, demo, graphMinH, kernMinH},
		{"200x26 short: no graphs", 200, 26, 2, 10, 7, paneDevices, demo, 0, 23 - 11},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			l := computeLayout(tt.W, tt.H, tt.headerH, tt.Dev, tt.ag, tt.focus, tt.fill)
			checkTiles(t, l, tt.W, tt.H)
			got := 0
			if l.graphOn {
				got = l.graph.H
			}
			if got != tt.graphH {
				t.Errorf("graphs %d rows, want %d (layout %+v)", got, tt.graphH, l)
			}
			if l.graphOn && l.graph.H < graphMinH {
				t.Errorf("graphs get %d rows, under graphMinH", l.graph.H)
			}
			shown := paneKernels
			if !l.wide && (tt.focus == paneAgents || tt.focus == paneIssues) {
				shown = tt.focus
			}
			if k := l.panes[shown].H; k != tt.kernH {
				t.Errorf("%s pane %d rows, want %d (layout %+v)", shown.Title(), k, tt.kernH, l)
			}
			if !tt.fill.graphs || tt.graphH == 0 {
				// Without graphs the layout is the one before them.
				if old := computeLayout(tt.W, tt.H, tt.headerH, tt.Dev, tt.ag, tt.focus, fillWants{}); old != l {
					t.Errorf("without graphs the layout changed:\n got %+v\nwant %+v", l, old)
				}
			}
		})
	}
}

// TestComputeLayoutTiles: at every size, with and without graphs, the
// areas tile the body and the graphs get graphMinH rows or none.
func TestComputeLayoutTiles(t *testing.T) {
	for w := 20; w <= 260; w += 30 {
		for h := 3; h <= 90; h += 7 {
			for _, fill := range []fillWants{{}, {kernLines: 3, issueLines: 1, graphs: true}, {kernLines: 500, issueLines: 40, graphs: true}} {
				for _, focus := range []pane{paneDevices, paneAgents, paneIssues} {
					l := computeLayout(w, h, 2, 12, 9, focus, fill)
					if h >= 4 {
						checkTiles(t, l, w, h)
					}
					if l.graphOn && (l.graph.H < graphMinH || !fill.graphs) {
						t.Fatalf("%dx%d %+v: graphs %+v", w, h, fill, l.graph)
					}
				}
			}
		}
	}
}

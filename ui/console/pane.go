package console

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/kit"
)

// paneModel is one pane of the main screen (devices, kernels, agents,
// issues): a component in soft-serve's sense. It shares the console's
// *common, keeps its own cursor and scroll (the embedded list) and knows
// how to draw itself; the root only sizes it, gives it focus and routes
// keys and mouse events to it.
type paneModel interface {
	// Update handles a key press (cursor moves and the pane's own
	// actions) or a mouse event in pane-local coordinates (0,0 is the
	// title row's first cell).
	Update(msg tea.Msg) tea.Cmd
	// View draws the pane with its own title: exactly h rows of w cells.
	View() []string
	// SetSize sets the pane's rectangle, title row included.
	SetSize(w, h int)
	// Title is the pane's title: its name, count and focus.
	Title() []kit.Span
	// Len is how many rows the cursor moves over.
	Len() int
	// Selected is the selected row's id, what y copies ("" for none).
	Selected() string
	// Bindings are the pane's own keys, beyond moving the cursor.
	Bindings() []key.Binding
	// detailFor is what Enter opens for the selected row: a detail
	// screen (the root gives it the common and pushes it), or, for a row
	// that has none, a line to flash instead.
	detailFor() (*detail, string)

	// owns reports whether act is one of the pane's own actions: those
	// reach the pane whichever pane has focus (s sorts the kernels from
	// the devices pane too).
	Owns(act kit.Action) bool
	// viewTitled draws the pane under another title (the compact layout's
	// tabs).
	viewTitled(title []kit.Span) []string
	// tab is the pane's name and count as a tab that is not shown.
	tab() kit.Span
	setFocus(bool)
	Clamp()
}

// keysFor returns the map's bindings of the given actions.
func keysFor(km kit.KeyMap, acts ...kit.Action) []key.Binding {
	var out []key.Binding
	for _, b := range km.BindingList {
		for _, a := range acts {
			if b.Act == a && b.Scope&ScMain != 0 {
				out = append(out, b.Key)
			}
		}
	}
	return out
}

// paneTitle is a pane's name and count, in the focused or plain title
// style.
func paneTitle(p pane, focused bool, count string) []kit.Span {
	lvl := kit.LvlTitle
	if focused {
		lvl = kit.LvlFocus
	}
	t := " " + p.Title() + " "
	if count != "" {
		// "Kernels (7)": a bare count after a name reads as part of it
		// ("Kernels on GPU0 1").
		t += "(" + count + ") "
	}
	return []kit.Span{{Lvl: lvl, Text: t}}
}

// tabSpan is a pane that is not shown, as a dim tab with its count.
func tabSpan(p pane, lvl kit.Level, n int) kit.Span {
	return kit.Span{Lvl: lvl, Text: " " + p.Title() + " (" + strconv.Itoa(n) + ") "}
}

// sizePanes gives every pane its rectangle in the current layout. The
// layout follows the data (how many devices and agent lines) and the
// header's height, so it is computed when a pane is about to move or draw.
func (a *App) sizePanes() layout {
	lay := a.layoutNow()
	for p, pm := range a.panes {
		r := lay.panes[p]
		pm.SetSize(r.W, r.H)
		pm.setFocus(pane(p) == a.focus)
	}
	return lay
}

// setFocusPane gives a pane the keys.
func (a *App) setFocusPane(p pane) {
	a.focus = p
	for q, pm := range a.panes {
		pm.setFocus(pane(q) == p)
	}
}

// clampCursors keeps every pane's cursor and scroll within the rows a new
// snapshot or size leaves.
func (a *App) clampCursors() {
	a.sizePanes()
	for _, pm := range a.panes {
		pm.Clamp()
	}
}

// paneKey sends a key to the focused pane when it moves the cursor or is
// the pane's own, else to the pane that owns it.
func (a *App) paneKey(act kit.Action, msg tea.KeyPressMsg) tea.Cmd {
	a.sizePanes()
	if f := a.panes[a.focus]; isMove(act) || f.Owns(act) {
		return f.Update(msg)
	}
	for _, pm := range a.panes {
		if pm.Owns(act) {
			return pm.Update(msg)
		}
	}
	return nil
}

func isMove(act kit.Action) bool {
	_, ok := kit.CursorDelta(act, 1)
	return ok
}

// paneMouse sends a wheel or click to the pane under the pointer, in that
// pane's coordinates; a click also focuses it.
func (a *App) paneMouse(msg tea.Msg, m tea.Mouse) {
	p, ok := a.lay.paneAt(m.X, m.Y)
	if !ok {
		return
	}
	r := a.lay.panes[p]
	local := tea.Mouse{X: m.X - r.x, Y: m.Y - r.y, Button: m.Button, Mod: m.Mod}
	switch msg.(type) {
	case tea.MouseClickMsg:
		a.setFocusPane(p)
		a.sizePanes()
		a.panes[p].Update(tea.MouseClickMsg(local))
	case tea.MouseWheelMsg:
		a.sizePanes()
		a.panes[p].Update(tea.MouseWheelMsg(local))
	}
	a.Invalidate()
}

// tabsTitle names the panes that share the bottom area in compact mode,
// the shown one highlighted, so Tab's cycle is visible.
func (a *App) tabsTitle(shown pane) []kit.Span {
	var out []kit.Span
	for _, p := range compactTabs {
		if p == shown {
			out = append(out, a.panes[p].Title()...)
			continue
		}
		out = append(out, a.panes[p].tab())
	}
	return out
}

// pane is one of the main screen's panes, an index into paneSpecs.
type pane uint8

// The panes, in focus order (Tab's cycle). A new pane is its own file, a
// constant here and its line in paneSpecs: the layout, the compact tabs
// and the frame follow the table.
const (
	paneDevices pane = iota
	paneKernels
	paneAgents
	paneIssues
	numPanes
)

// paneSpec registers a pane: its title, how it is built, how many rows it
// would like and its place in the layout.
type paneSpec struct {
	Title string
	// build makes the pane (and sets the App's typed pointer to it, for
	// what crosses panes).
	build func(a *App) paneModel
	// want is the rows the pane would like, without its title row.
	want func(a *App) int
	// role is its place in the layout (layout.go).
	role paneRole
}

// paneSpecs is the main screen's panes, indexed by pane.
var paneSpecs = [numPanes]paneSpec{
	paneDevices: {"Devices", func(a *App) paneModel {
		a.devices = newDevicesPane(a.common, &a.hist, func() { a.Kernels.refresh() })
		a.devices.hits = func() []bool { return a.Kernels.matchDevs }
		a.devices.geoms = &a.geoms
		return a.devices
	}, devicesWant, paneRole{col: colLeft, capNum: 3, capDen: 5, least: 3}},
	paneKernels: {"Kernels", func(a *App) paneModel {
		a.Kernels = newKernelsPane(a.common, func() int { return a.devices.Cursor })
		return a.Kernels
	}, (*App).kernelsWant, paneRole{col: colLeft, minH: kernMinH}},
	paneAgents: {"Agents", func(a *App) paneModel { a.Agents = newAgentsPane(a.common); return a.Agents },
		agentsWant, paneRole{col: colRight, capNum: 1, capDen: 2, least: 3}},
	paneIssues: {"Issues", func(a *App) paneModel { a.Issues = newIssuesPane(a.common); return a.Issues },
		issuesWant, paneRole{col: colRight, minH: issuesMinH}},
}

// Title is the pane's name in its title row and the tabs.
func (p pane) Title() string { return paneSpecs[p].Title }

// newPanes builds the main screen's panes from paneSpecs.
func (a *App) newPanes() {
	for p, s := range paneSpecs {
		a.panes[p] = s.build(a)
	}
}

package console

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestPanesDrawTheirRect: every pane, through the interface the root
// uses, draws exactly h rows of w cells at any size, focused or not.
func TestPanesDrawTheirRect(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f") // every kernel
	sizes := [][2]int{{40, 0}, {40, 1}, {40, 2}, {60, 3}, {80, 10}, {120, 30}, {200, 5}}
	for p, pm := range a.panes {
		if pm.Len() == 0 {
			t.Fatalf("pane %s has no rows in the fixture", pane(p).Title())
		}
		for _, focused := range []bool{false, true} {
			pm.setFocus(focused)
			for _, s := range sizes {
				w, h := s[0], s[1]
				pm.SetSize(w, h)
				pm.Clamp()
				for _, rows := range [][]string{pm.View(), pm.viewTitled(a.tabsTitle(pane(p)))} {
					if len(rows) != h {
						t.Fatalf("%s %dx%d: %d rows", pane(p).Title(), w, h, len(rows))
					}
					for i, r := range rows {
						if got := ansi.StringWidth(r); got != w {
							t.Fatalf("%s %dx%d row %d: %d cells: %q", pane(p).Title(), w, h, i, got, ansi.Strip(r))
						}
					}
				}
			}
		}
	}
}

// TestPaneClicks gives each pane clicks in its own coordinates (0,0 is its
// title's first cell), as the root does after finding the pane under the
// pointer.
func TestPaneClicks(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f")
	click := func(pm paneModel, x, y int) { pm.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}) }
	for _, pm := range a.panes {
		pm.SetSize(100, 20)
	}

	click(a.devices, 5, 2+2) // title, header, third row
	if a.devices.Cursor != 2 {
		t.Errorf("devices: cursor %d, want 2", a.devices.Cursor)
	}
	click(a.devices, 5, 1) // the column header selects nothing
	if a.devices.Cursor != 2 {
		t.Errorf("devices header click moved the cursor to %d", a.devices.Cursor)
	}

	click(a.Issues, 5, 1+1)
	if a.Issues.Cursor != 1 {
		t.Errorf("issues: cursor %d, want 1", a.Issues.Cursor)
	}

	if len(a.d.Agents) < 2 {
		t.Fatal("the fixture has fewer than two agents")
	}
	click(a.Agents, 5, 1+agentLines(&a.d.Agents[0])) // the second block's first line
	if a.Agents.Cursor != 1 {
		t.Errorf("agents: cursor %d, want 1", a.Agents.Cursor)
	}

	a.Kernels.View() // lays out the columns the header click hits
	i := slices.IndexFunc(a.Kernels.cols, func(c kernCol) bool { return c.Key == "agent" })
	if i < 0 {
		t.Fatal("no agent column at 100 cells")
	}
	col := a.Kernels.cols[i]
	click(a.Kernels, col.x, 1)
	if a.Kernels.sortCol != "agent" || a.Kernels.sortDesc {
		t.Errorf("header click: sort %q desc %v", a.Kernels.sortCol, a.Kernels.sortDesc)
	}
	click(a.Kernels, col.x+col.W-1, 1)
	if a.Kernels.sortCol != "agent" || !a.Kernels.sortDesc {
		t.Errorf("second header click: sort %q desc %v, want agent descending", a.Kernels.sortCol, a.Kernels.sortDesc)
	}
	click(a.Kernels, 5, 2+3)
	if a.Kernels.Cursor != 3 {
		t.Errorf("kernels: cursor %d, want 3", a.Kernels.Cursor)
	}
}

// TestPaneKeysRouting: cursor keys move the focused pane only; a pane's own
// keys (s sorts the kernels, a splits the bars per agent) work whichever
// pane has focus, as they always did; each pane lists its own keys.
func TestPaneKeysRouting(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	for a.focus != paneAgents {
		a.Update(keyCode(tea.KeyTab))
	}
	dev := a.devices.Cursor
	typeKeys(a, "j")
	if a.Agents.Cursor != 1 || a.devices.Cursor != dev {
		t.Errorf("j on agents: agents cursor %d, devices cursor %d (was %d)", a.Agents.Cursor, a.devices.Cursor, dev)
	}
	sort := a.Kernels.sortCol
	typeKeys(a, "s")
	if a.Kernels.sortCol == sort {
		t.Errorf("s from the agents pane left the kernel sort at %q", sort)
	}
	typeKeys(a, "a")
	if !a.devices.byAgent {
		t.Error("a from the agents pane did not split the bars per agent")
	}
	for _, tc := range []struct {
		p    paneModel
		want []string
	}{{a.devices, []string{"a"}}, {a.Kernels, []string{"s", "S", "f"}}, {a.Agents, nil}, {a.Issues, nil}} {
		var got []string
		for _, b := range tc.p.Bindings() {
			got = append(got, b.Keys()...)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%T bindings %q, want %q", tc.p, got, tc.want)
		}
	}
	// The selected ids are the rows under the cursors.
	if got, want := a.Agents.Selected(), string(a.d.Agents[1].A.ID); got != want {
		t.Errorf("agents selected %q, want %q", got, want)
	}
	if got, want := a.devices.Selected(), string(a.d.Devs[dev].Key.ID); got != want {
		t.Errorf("devices selected %q, want %q", got, want)
	}
}

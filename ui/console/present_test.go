package console

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

// presentWidths are the widths the row renderers are checked at: a split
// pane, the classic terminal, a wide one and a very wide one.
var presentWidths = []int{40, 80, 120, 200}

// TestRowRenderers draws each pane's rows with the pure renderers at
// several widths, in colour and in ASCII, selected and not, and checks
// each row is exactly w cells (so side-by-side panes line up and nothing
// overflows), keeps what identifies it, and marks a cut with the
// ellipsis rather than leaving a fragment that reads as a value.
func TestRowRenderers(t *testing.T) {
	a := testApp(t, 200, 60, fake.Node(fake.Options{}), Options{})
	d := a.d
	if len(d.Devs) == 0 || len(d.Kernels) == 0 || len(d.Agents) == 0 || len(d.Issues) == 0 {
		t.Fatalf("fixture lacks rows: %d devices, %d kernels, %d agents, %d issues",
			len(d.Devs), len(d.Kernels), len(d.Agents), len(d.Issues))
	}
	long := strings.Repeat("long-", 60) // wider than any width tested

	// A device whose label no column holds.
	longDev := d.Devs[0]
	longDev.Label = "GPU-" + long
	// A kernel on more devices than the column shows.
	longKern := d.Kernels[0]
	longKern.Devs = long
	// An agent whose header no row holds.
	longAgent := d.Agents[0]
	longAgent.Header = append(append([]kit.Span{}, longAgent.Header...), kit.Span{Lvl: kit.LvlDim, Text: " " + long})
	// An issue whose text no row holds.
	longIssue := d.Issues[0]
	longIssue.Text = long

	type rowCase struct {
		Name string
		// draw draws the rows at width w.
		draw func(st *kit.Styles, w int, sel bool) []string
		// want is what every width shows; cut, when set, is a prefix that
		// shows, cut, with the ellipsis after it.
		want []string
		cut  string
		// wide is what shows from 80 cells on.
		wide []string
		// head: a header row, which has no selection.
		head bool
	}
	dev := &d.Devs[0]
	kr := &d.Kernels[0]
	cases := []rowCase{
		{Name: "device", want: []string{dev.Label, dev.Held + "/" + dev.Capacity},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, dev, (a.hist)[dev.Key], deviceColumns(w, d.DevMeas), false, w, sel, sel, false)}
			}},
		{Name: "device per agent", want: []string{dev.Label},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, dev, nil, deviceColumns(w, d.DevMeas), true, w, sel, sel, false)}
			}},
		{Name: "device long label", cut: "GPU-",
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, &longDev, nil, deviceColumns(w, d.DevMeas), false, w, sel, sel, false)}
			}},
		{Name: "device header", head: true, want: []string{"DEVICE", "HELD"},
			draw: func(st *kit.Styles, w int, _ bool) []string {
				return []string{deviceHeaderRow(st, deviceColumns(w, d.DevMeas), false, w)}
			}},
		{Name: "host", want: []string{"CPU", d.Host.CPUHeld + "/" + d.Host.CPUCap},
			wide: []string{"MEM ", d.Host.MemHeld + "/" + d.Host.MemCap, kit.Plural(d.Host.Cores, "core")},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{hostRowOf(st, &d.Host, deviceColumns(w, d.DevMeas), w, sel, sel)}
			}},
		{Name: "kernel", want: []string{kr.Short, string(kr.K.State)},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				cols := kernelColumns(w, d, d.KernMeas, "", "id")
				return []string{kernelRowOf(st, kr, "", cols, w, fixedNow(), sel, sel)}
			}},
		{Name: "kernel header", head: true, want: []string{"ID", "STATE"},
			draw: func(st *kit.Styles, w int, _ bool) []string {
				return []string{kernelHeaderRow(st, kernelColumns(w, d, d.KernMeas, "", "state"), "state", true, w)}
			}},
		{Name: "agent", want: []string{string(d.Agents[0].A.ID)},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return agentBlockOf(st, &d.Agents[0], w, sel, sel, nil)
			}},
		{Name: "agent long header", cut: string(d.Agents[0].A.ID),
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return agentBlockOf(st, &longAgent, w, sel, sel, nil)[:1]
			}},
		{Name: "issue", want: []string{d.Issues[0].Sev.Text},
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{issueRowOf(st, &d.Issues[0], w, sel, sel)}
			}},
		{Name: "issue long text", cut: d.Issues[0].Sev.Text + " long-",
			draw: func(st *kit.Styles, w int, sel bool) []string {
				return []string{issueRowOf(st, &longIssue, w, sel, sel)}
			}},
	}
	for _, style := range []struct {
		Name  string
		theme string
		ascii bool
	}{{"dark", themes.Dark, false}, {"mono-ascii", themes.Mono, true}} {
		st := testStyles(t, style.theme, style.ascii)
		for _, tc := range cases {
			for _, w := range presentWidths {
				for _, sel := range []bool{false, true} {
					rows := tc.draw(st, w, sel)
					if len(rows) == 0 {
						t.Fatalf("%s %s w=%d: no rows", style.Name, tc.Name, w)
					}
					for i, r := range rows {
						if lw, aw := lipgloss.Width(r), ansi.StringWidth(r); lw != w || aw != w {
							t.Errorf("%s %s w=%d sel=%v row %d: %d/%d cells, want %d:\n%q",
								style.Name, tc.Name, w, sel, i, lw, aw, w, ansi.Strip(r))
						}
					}
					text := ansi.Strip(strings.Join(rows, "\n"))
					want := tc.want
					if w >= 80 {
						want = append(want[:len(want):len(want)], tc.wide...)
					}
					for _, s := range want {
						if !strings.Contains(text, s) {
							t.Errorf("%s %s w=%d: %q missing from %q", style.Name, tc.Name, w, s, text)
						}
					}
					if tc.cut != "" {
						i := strings.Index(text, tc.cut)
						if i < 0 || !strings.Contains(text[i:], st.G.Ellipsis) || strings.Contains(text, long) {
							t.Errorf("%s %s w=%d: want %q cut with %q, got %q", style.Name, tc.Name, w, tc.cut, st.G.Ellipsis, text)
						}
					}
					if sel && !tc.head && !strings.HasPrefix(strings.TrimLeft(ansi.Strip(rows[0]), " "), strings.TrimSpace(st.G.Cursor)) {
						t.Errorf("%s %s w=%d: selected row lacks the cursor mark %q: %q", style.Name, tc.Name, w, st.G.Cursor, ansi.Strip(rows[0]))
					}
				}
			}
		}
	}
}

// TestKernelRowCutsDevices: a kernel's devices column, when the table has
// one, ends a list longer than it in the ellipsis.
func TestKernelRowCutsDevices(t *testing.T) {
	a := testApp(t, 200, 60, fake.Node(fake.Options{}), Options{})
	d := a.d
	kr := d.Kernels[0]
	kr.Devs = strings.Repeat("GPU9,", 40)
	st := a.St
	shown := 0
	for _, w := range presentWidths {
		cols := kernelColumns(w, d, d.KernMeas, "", "id")
		row := ansi.Strip(kernelRowOf(st, &kr, "", cols, w, fixedNow(), false, false))
		if got := ansi.StringWidth(row); got != w {
			t.Errorf("w=%d: %d cells", w, got)
		}
		for _, c := range cols {
			if c.Key != "devices" {
				continue
			}
			shown++
			cell := row[c.x : c.x+len(kit.Fit(kr.Devs, c.W, false, st.G.Ellipsis))]
			if !strings.HasPrefix(cell, "GPU9,") || !strings.HasSuffix(cell, st.G.Ellipsis) {
				t.Errorf("w=%d: devices cell %q, want a cut list ending in %q", w, cell, st.G.Ellipsis)
			}
		}
	}
	if shown == 0 {
		t.Fatal("no width showed the devices column")
	}
}

// TestHostRowNarrow: the cpu/mem line is exactly w cells at every width a
// pane can have, and when its tail does not fit it ends in the ellipsis,
// not in a fragment of a figure.
func TestHostRowNarrow(t *testing.T) {
	a := testApp(t, 200, 60, fake.Node(fake.Options{}), Options{})
	d := a.d
	full := []string{d.Host.CPUHeld + "/" + d.Host.CPUCap, kit.Plural(d.Host.Cores, "core"), d.Host.MemHeld + "/" + d.Host.MemCap}
	for _, style := range []struct {
		theme string
		ascii bool
	}{{themes.Dark, false}, {themes.Mono, true}} {
		st := testStyles(t, style.theme, style.ascii)
		cuts := 0
		for w := 30; w <= 100; w++ {
			row := hostRowOf(st, &d.Host, deviceColumns(w, d.DevMeas), w, false, false)
			if got := ansi.StringWidth(row); got != w {
				t.Fatalf("w=%d: %d cells: %q", w, got, ansi.Strip(row))
			}
			text := strings.TrimRight(ansi.Strip(row), " ")
			whole := false
			for _, f := range full {
				whole = whole || strings.HasSuffix(text, f)
			}
			if !whole {
				cuts++
				if !strings.HasSuffix(text, st.G.Ellipsis) {
					t.Errorf("w=%d: cut without an ellipsis: %q", w, text)
				}
			}
		}
		if cuts == 0 {
			t.Errorf("%s: no width cut the line; the test checks nothing", style.theme)
		}
	}
}

package ui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
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
	if len(d.devs) == 0 || len(d.kernels) == 0 || len(d.agents) == 0 || len(d.issues) == 0 {
		t.Fatalf("fixture lacks rows: %d devices, %d kernels, %d agents, %d issues",
			len(d.devs), len(d.kernels), len(d.agents), len(d.issues))
	}
	long := strings.Repeat("long-", 60) // wider than any width tested

	// A device whose label no column holds.
	longDev := d.devs[0]
	longDev.label = "GPU-" + long
	// A kernel on more devices than the column shows.
	longKern := d.kernels[0]
	longKern.devs = long
	// An agent whose header no row holds.
	longAgent := d.agents[0]
	longAgent.header = append(append([]span{}, longAgent.header...), span{lvlDim, " " + long})
	// An issue whose text no row holds.
	longIssue := d.issues[0]
	longIssue.text = long

	type rowCase struct {
		name string
		// draw draws the rows at width w.
		draw func(st *Styles, w int, sel bool) []string
		// want is what every width shows; cut, when set, is a prefix that
		// shows, cut, with the ellipsis after it.
		want []string
		cut  string
		// wide is what shows from 80 cells on.
		wide []string
		// head: a header row, which has no selection.
		head bool
	}
	dev := &d.devs[0]
	kr := &d.kernels[0]
	cases := []rowCase{
		{name: "device", want: []string{dev.label, dev.held + "/" + dev.capacity},
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, dev, (a.hist)[dev.key], deviceColumns(w, d.devMeas), false, w, sel, sel, false)}
			}},
		{name: "device per agent", want: []string{dev.label},
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, dev, nil, deviceColumns(w, d.devMeas), true, w, sel, sel, false)}
			}},
		{name: "device long label", cut: "GPU-",
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{deviceRowOf(st, &longDev, nil, deviceColumns(w, d.devMeas), false, w, sel, sel, false)}
			}},
		{name: "device header", head: true, want: []string{"DEVICE", "HELD"},
			draw: func(st *Styles, w int, _ bool) []string {
				return []string{deviceHeaderRow(st, deviceColumns(w, d.devMeas), false, w)}
			}},
		{name: "host", want: []string{"CPU", d.host.cpuHeld + "/" + d.host.cpuCap},
			wide: []string{"MEM ", d.host.memHeld + "/" + d.host.memCap, plural(d.host.cores, "core")},
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{hostRowOf(st, &d.host, deviceColumns(w, d.devMeas), w, sel, sel)}
			}},
		{name: "kernel", want: []string{kr.short, string(kr.k.State)},
			draw: func(st *Styles, w int, sel bool) []string {
				cols := kernelColumns(w, d, d.kernMeas, "", "id")
				return []string{kernelRowOf(st, kr, "", cols, w, fixedNow(), sel, sel)}
			}},
		{name: "kernel header", head: true, want: []string{"ID", "STATE"},
			draw: func(st *Styles, w int, _ bool) []string {
				return []string{kernelHeaderRow(st, kernelColumns(w, d, d.kernMeas, "", "state"), "state", true, w)}
			}},
		{name: "agent", want: []string{string(d.agents[0].a.ID)},
			draw: func(st *Styles, w int, sel bool) []string {
				return agentBlockOf(st, &d.agents[0], w, sel, sel, nil)
			}},
		{name: "agent long header", cut: string(d.agents[0].a.ID),
			draw: func(st *Styles, w int, sel bool) []string {
				return agentBlockOf(st, &longAgent, w, sel, sel, nil)[:1]
			}},
		{name: "issue", want: []string{d.issues[0].sev.text},
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{issueRowOf(st, &d.issues[0], w, sel, sel)}
			}},
		{name: "issue long text", cut: d.issues[0].sev.text + " long-",
			draw: func(st *Styles, w int, sel bool) []string {
				return []string{issueRowOf(st, &longIssue, w, sel, sel)}
			}},
	}
	for _, style := range []struct {
		name  string
		theme string
		ascii bool
	}{{"dark", themes.Dark, false}, {"mono-ascii", themes.Mono, true}} {
		st := testStyles(t, style.theme, style.ascii)
		for _, tc := range cases {
			for _, w := range presentWidths {
				for _, sel := range []bool{false, true} {
					rows := tc.draw(st, w, sel)
					if len(rows) == 0 {
						t.Fatalf("%s %s w=%d: no rows", style.name, tc.name, w)
					}
					for i, r := range rows {
						if lw, aw := lipgloss.Width(r), ansi.StringWidth(r); lw != w || aw != w {
							t.Errorf("%s %s w=%d sel=%v row %d: %d/%d cells, want %d:\n%q",
								style.name, tc.name, w, sel, i, lw, aw, w, ansi.Strip(r))
						}
					}
					text := ansi.Strip(strings.Join(rows, "\n"))
					want := tc.want
					if w >= 80 {
						want = append(want[:len(want):len(want)], tc.wide...)
					}
					for _, s := range want {
						if !strings.Contains(text, s) {
							t.Errorf("%s %s w=%d: %q missing from %q", style.name, tc.name, w, s, text)
						}
					}
					if tc.cut != "" {
						i := strings.Index(text, tc.cut)
						if i < 0 || !strings.Contains(text[i:], st.G.Ellipsis) || strings.Contains(text, long) {
							t.Errorf("%s %s w=%d: want %q cut with %q, got %q", style.name, tc.name, w, tc.cut, st.G.Ellipsis, text)
						}
					}
					if sel && !tc.head && !strings.HasPrefix(strings.TrimLeft(ansi.Strip(rows[0]), " "), strings.TrimSpace(st.G.Cursor)) {
						t.Errorf("%s %s w=%d: selected row lacks the cursor mark %q: %q", style.name, tc.name, w, st.G.Cursor, ansi.Strip(rows[0]))
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
	kr := d.kernels[0]
	kr.devs = strings.Repeat("GPU9,", 40)
	st := a.st
	shown := 0
	for _, w := range presentWidths {
		cols := kernelColumns(w, d, d.kernMeas, "", "id")
		row := ansi.Strip(kernelRowOf(st, &kr, "", cols, w, fixedNow(), false, false))
		if got := ansi.StringWidth(row); got != w {
			t.Errorf("w=%d: %d cells", w, got)
		}
		for _, c := range cols {
			if c.key != "devices" {
				continue
			}
			shown++
			cell := row[c.x : c.x+len(fit(kr.devs, c.w, false, st.G.Ellipsis))]
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
	full := []string{d.host.cpuHeld + "/" + d.host.cpuCap, plural(d.host.cores, "core"), d.host.memHeld + "/" + d.host.memCap}
	for _, style := range []struct {
		theme string
		ascii bool
	}{{themes.Dark, false}, {themes.Mono, true}} {
		st := testStyles(t, style.theme, style.ascii)
		cuts := 0
		for w := 30; w <= 100; w++ {
			row := hostRowOf(st, &d.host, deviceColumns(w, d.devMeas), w, false, false)
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

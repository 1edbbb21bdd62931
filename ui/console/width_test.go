package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// screens opens each screen of the console on an app.
var screens = []struct {
	Name string
	Open func(a *App)
}{
	{"main", func(a *App) {}},
	{"main-agents", func(a *App) { a.Update(keyCode(tea.KeyTab)); a.Update(keyCode(tea.KeyTab)) }},
	{"main-issues", func(a *App) { a.focus = paneIssues; a.Invalidate() }},
	{"per-agent-bars", func(a *App) { typeKeys(a, "a") }},
	{"filter-prompt", func(a *App) { typeKeys(a, "/!numa0 a long filter that will not fit anywhere at all") }},
	{"help", func(a *App) { typeKeys(a, "?") }},
	{"device-detail", func(a *App) { a.Update(keyCode(tea.KeyEnter)) }},
	{"kernel-detail", func(a *App) { a.focus = paneKernels; a.Update(keyCode(tea.KeyEnter)) }},
	{"issue-detail", func(a *App) { a.focus = paneIssues; a.Update(keyCode(tea.KeyEnter)) }},
	{"flash", func(a *App) { a.Flashf(kit.LvlCrit, strings.Repeat("a very long flash message ", 20)) }},
}

// checkFrame fails when the frame does not have exactly h rows or a row is
// wider than w cells (measured both ways the brief asks for).
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	rows := strings.Split(frame, "\n")
	if len(rows) != h {
		t.Fatalf("%d rows, want %d", len(rows), h)
	}
	for i, r := range rows {
		if lw, aw := lipgloss.Width(r), ansi.StringWidth(r); lw > w || aw > w {
			t.Fatalf("row %d is %d/%d cells wide, more than %d:\n%s", i, lw, aw, w, ansi.Strip(r))
		}
	}
}

// checkRows checks the rows before the safety clamp: every row but the
// footer fills the width exactly (so side-by-side panes line up), and none
// is wider, so the clamp never has to cut anything.
func checkRows(t *testing.T, a *App, w, h int) {
	t.Helper()
	rows := a.Rows(w, h)
	for i, r := range rows {
		rw := ansi.StringWidth(r)
		if rw > w || (i < len(rows)-1 && rw != w && r != "") {
			t.Fatalf("row %d is %d cells, want %d:\n%q", i, rw, w, ansi.Strip(r))
		}
	}
}

// checkASCII fails on any character beyond 7 bits outside escape
// sequences: --ascii is for terminals without them.
func checkASCII(t *testing.T, frame string) {
	t.Helper()
	for i, r := range ansi.Strip(frame) {
		if r >= 0x80 {
			t.Fatalf("non-ASCII %q at byte %d in:\n%s", r, i, ansi.Strip(frame))
		}
	}
}

// TestFramesFit renders every screen at many sizes, with every source
// kind, in unicode and ASCII: no row is ever wider than the terminal.
func TestFramesFit(t *testing.T) {
	snaps := map[string]*model.Snapshot{
		"nvml": fake.Node(fake.Options{}), "degraded": fake.Node(fake.Options{Source: "degraded"}),
		"mock": fake.Node(fake.Options{Source: "mock"}), "large": fake.Large(16, 300),
	}
	sizes := [][2]int{{80, 24}, {200, 50}, {160, 48}, {120, 30}, {100, 20}, {60, 15}, {40, 10}, {159, 40}, {240, 70}}
	for sname, s := range snaps {
		for _, sz := range sizes {
			for _, ascii := range []bool{false, true} {
				for _, sc := range screens {
					name := fmt.Sprintf("%s/%dx%d/ascii=%v/%s", sname, sz[0], sz[1], ascii, sc.Name)
					t.Run(name, func(t *testing.T) {
						a := testApp(t, sz[0], sz[1], s, Options{ASCII: ascii})
						sc.Open(a)
						checkFrame(t, a.View().Content, sz[0], sz[1])
						checkRows(t, a, sz[0], sz[1])
						if ascii {
							checkASCII(t, a.View().Content)
						}
					})
				}
			}
		}
	}
}

// TestDeviceColumnsFit checks the pure column chooser at every width.
func TestDeviceColumnsFit(t *testing.T) {
	d := render.Derive(fake.Node(fake.Options{}), render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for w := 30; w <= 300; w++ {
		c := deviceColumns(w, d.DevMeas)
		used := 2 + c.Label + 1 + c.bar + 1 + c.Figs
		for _, x := range []int{c.Owner, c.Util, c.Mem, c.Temp, c.Power, c.sparkA, c.sparkU, c.Abbrev, c.Model} {
			if x > 0 {
				used += 1 + x
			}
		}
		if used > w {
			t.Fatalf("w=%d: columns take %d cells: %+v", w, used, c)
		}
		if c.bar < 4 || c.bar > barMax {
			t.Fatalf("w=%d: bar %d", w, c.bar)
		}
	}
	if c := deviceColumns(80, d.DevMeas); c.Util == 0 || c.Mem == 0 || c.Owner == 0 {
		t.Errorf("80 columns should still show owner, util and memory: %+v", c)
	}
}

func TestKernelColumnsFit(t *testing.T) {
	d := render.Derive(fake.Node(fake.Options{}), render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for w := 20; w <= 300; w++ {
		for _, on := range []string{"", "ON GPU0"} {
			cols := kernelColumns(w, d, d.KernMeas, on, "")
			end := 0
			for _, c := range cols {
				end = c.x + c.W
			}
			if end > w {
				t.Fatalf("w=%d on=%q: columns end at %d", w, on, end)
			}
			if w >= 20 && (len(cols) == 0 || cols[0].Key != "id") {
				t.Fatalf("w=%d: the id column must always show: %+v", w, cols)
			}
		}
	}
}

// TestSortArrowFits: whichever column the kernels are sorted by, at every
// width, its title and the arrow fit in it (the arrow vanished on columns
// exactly as wide as their title: AGENT, UTIL, GMEM, DEVICES).
func TestSortArrowFits(t *testing.T) {
	d := render.Derive(fake.Node(fake.Options{}), render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	keys := map[string]bool{}
	for _, c := range kernelColumns(400, d, d.KernMeas, "ON GPU0", "") {
		keys[c.Key] = true
	}
	if len(keys) < 8 {
		t.Fatalf("only %d columns at 400 cells", len(keys))
	}
	for key := range keys {
		for w := 20; w <= 300; w++ {
			for _, c := range kernelColumns(w, d, d.KernMeas, "ON GPU0", key) {
				if c.Key == key && c.W < kit.Width(c.Title)+1 {
					t.Fatalf("sorted by %s at %d cells: column %d wide for %q and its arrow", key, w, c.W, c.Title)
				}
			}
		}
	}
}

func TestThemesRender(t *testing.T) {
	for _, name := range themes.Names() {
		t.Run(name, func(t *testing.T) {
			a := testApp(t, 120, 30, fake.Node(fake.Options{}), Options{Theme: themes.MustBuiltin(name)})
			checkFrame(t, a.View().Content, 120, 30)
		})
	}
}

// TestOwnerTitleNotCut: a column of short owner names ("a0") is still as
// wide as its title, which was cut to "OWNE" at 120 columns.
func TestOwnerTitleNotCut(t *testing.T) {
	for _, owner := range []string{"a0", "numa", "unowned"} {
		d := &render.Derived{Devs: []render.DevRow{{Label: "GPU0", Owner: owner, Held: "0", Capacity: "1", Dev: &model.Device{Model: "A100"}}}}
		if m := d.DevMeasures(); m.Owner < len("OWNER") {
			t.Errorf("owner %q: column %d wide", owner, m.Owner)
		}
	}
}

// TestCutSpansEndInEllipsis: spans that do not fit end in an ellipsis,
// however the cut falls: never a fragment that reads as a value.
func TestCutSpansEndInEllipsis(t *testing.T) {
	st, err := kit.NewStyles(themes.MustBuiltin(themes.Mono), false)
	if err != nil {
		t.Fatal(err)
	}
	spans := []kit.Span{{Lvl: kit.LvlPlain, Text: "20g-mig "}, {Lvl: kit.LvlPlain, Text: "0"}, {Lvl: kit.LvlPlain, Text: "/1"}}
	for w, want := range map[int]string{
		11: "20g-mig 0/1", 10: "20g-mig 0…", 9: "20g-mig …", 8: "20g-mig…", 1: "…",
	} {
		l := kit.NewLine(kit.Paint{})
		n := kit.PutSpans(l, st, spans, w)
		if got := ansi.Strip(l.Finish(w)); strings.TrimRight(got, " ") != want || n > w {
			t.Errorf("w=%d: %q (%d cells), want %q", w, got, n, want)
		}
	}
	if got := kit.Truncate("20g-mig", 1, "…"); got != "…" {
		t.Errorf("one cell: %q", got)
	}
}

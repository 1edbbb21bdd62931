package screen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// twinRun draws frames on d (direct allowed) and on a fresh drawer each
// step, and reports the first step whose emulated screen differs.
func twinRun(t *testing.T, env string, prof colorprofile.Profile, mapNl bool, w, h int, frames []tea.View) (directs int) {
	return twinRunC(t, env, prof, mapNl, w, h, frames, true, modes{})
}

// modes are the drawers' synchronized-output and grapheme-width modes;
// strict compares with a fresh drawing only, not also with a twin that
// never writes directly (which forgives the renderer's own quirks).
type modes struct{ sync, wide, strict bool }

func twinRunC(t *testing.T, env string, prof colorprofile.Profile, mapNl bool, w, h int, frames []tea.View, cursors bool, m modes) (directs int) {
	t.Helper()
	var out bytes.Buffer
	e := newEmu(w, h, mapNl)
	d := newDrawer(&out, []string{"TERM=" + env}, mapNl)
	twin := newEmu(w, h, mapNl)
	dt := newDrawer(twin, []string{"TERM=" + env}, mapNl)
	dt.noDirect = true
	d.synced, dt.synced = m.sync, m.sync
	wide := m.wide
	d.wide, dt.wide = wide, wide
	for step, v := range frames {
		f := newFrame(v, w, h, prof)
		dt.draw(&f)
		before, was := out.Len(), d.directs
		d.draw(&f)
		e.Write(out.Bytes()[before:])
		if d.directs > was {
			directs++
		}
		te := newEmu(w, h, mapNl)
		td := newDrawer(te, []string{"TERM=" + env}, mapNl)
		td.wide = wide
		td.draw(&f)
		got, want, ren := seen(e.screen()), seen(te.screen()), seen(twin.screen())
		if m.strict {
			ren = want
		}
		gc, wc := got[strings.LastIndexByte(got, '@'):], want[strings.LastIndexByte(want, '@'):]
		if v.Cursor == nil || !cursors {
			got, want, ren = got[:strings.LastIndexByte(got, '@')], want[:strings.LastIndexByte(want, '@')], ren[:strings.LastIndexByte(ren, '@')]
		}
		if !rowsOf(got, want, ren) {
			gl, wl, rl := strings.Split(got, "\n"), strings.Split(want, "\n"), strings.Split(ren, "\n")
			for y := range min(len(gl), len(wl)) {
				if gl[y] != wl[y] && gl[y] != rl[y] {
					gcs, wcs := strings.Split(gl[y], "\t"), strings.Split(wl[y], "\t")
					for x := range min(len(gcs), len(wcs)) {
						if gcs[x] != wcs[x] {
							t.Errorf("cell %d,%d: got %q want %q", x, y, gcs[x], wcs[x])
							break
						}
					}
				}
			}
			t.Fatalf("step %d (direct %v): screen differs\nwrote %q\ngot\n%s%s\nwant\n%s%s", step, d.directs > was,
				out.Bytes()[before:], e.text(), gc, te.text(), wc)
		}
	}
	return directs
}

func pageOf(w, h int, fill func(y int) string) string {
	var ls []string
	for y := range h {
		ls = append(ls, fill(y))
	}
	return strings.Join(ls, "\n")
}

// TestDirectCursorPastEdge: a cursor at the right edge (x == width: after
// the last character of a full-width input) or beyond, a frame that could
// be written directly, then a small change: the screen and the cursor are
// a fresh drawing's (the terminal clamps a position the renderer wraps).
func TestDirectCursorPastEdge(t *testing.T) {
	const w, h = 20, 6
	a := pageOf(w, h, func(y int) string { return fmt.Sprintf("line %d", y) })
	b := pageOf(w, h, func(y int) string { return fmt.Sprintf("\x1b[31mhelp %d\x1b[m", y) })
	c := pageOf(w, h, func(y int) string {
		if y == 4 {
			return "\x1b[31mhelp X\x1b[m"
		}
		return fmt.Sprintf("\x1b[31mhelp %d\x1b[m", y)
	})
	for _, x := range []int{w - 1, w, w + 3} {
		t.Run(fmt.Sprint("x=", x), func(t *testing.T) {
			cur := func() *tea.Cursor { return tea.NewCursor(x, 3) }
			n := twinRun(t, "xterm-256color", colorprofile.TrueColor, false, w, h, []tea.View{
				{Content: a, AltScreen: true, Cursor: cur()},
				{Content: b, AltScreen: true, Cursor: cur()},
				{Content: c, AltScreen: true, Cursor: cur()},
			})
			// A cursor off the screen sends the frame to the renderer,
			// which agrees with a fresh drawing on where it goes.
			if x < w && n == 0 {
				t.Fatal("no frame written directly")
			}
			if x >= w && n != 0 {
				t.Fatalf("%d frames written directly with the cursor off the screen", n)
			}
		})
		t.Run(fmt.Sprint("cells-only/x=", x), func(t *testing.T) {
			cur := func() *tea.Cursor { return tea.NewCursor(x, 3) }
			twinRunC(t, "xterm-256color", colorprofile.TrueColor, false, w, h, []tea.View{
				{Content: a, AltScreen: true, Cursor: cur()},
				{Content: b, AltScreen: true, Cursor: cur()},
				{Content: c, AltScreen: true, Cursor: cur()},
			}, false, modes{})
		})
	}
}

// lineMix is how the random tests make a console's lines: one time in
// oneIn each, one of whole as it is (blank, full width on a background),
// else up to 11 pieces, the styles reset at the end.
type lineMix struct {
	pieces, whole []string
	oneIn         int
}

func (m lineMix) line(r *rand.Rand) string {
	if k := r.IntN(m.oneIn); k < len(m.whole) {
		return m.whole[k]
	}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(m.pieces[r.IntN(len(m.pieces))])
	}
	return b.String() + "\x1b[m"
}

// randomViews is steps full-screen frames of h lines of m: every third
// changes one or two lines (a frame for the renderer), the others half
// the lines or more (frames that may be written directly). With
// cursorCols > 0 each has a cursor in [0, cursorCols) x [0, h).
func randomViews(r *rand.Rand, m lineMix, h, steps, cursorCols int) []tea.View {
	lines := make([]string, h)
	for i := range lines {
		lines[i] = m.line(r)
	}
	var vs []tea.View
	for step := range steps {
		n := 1 + r.IntN(2)
		if step%3 != 0 {
			n = h/2 + r.IntN(h/2+1)
		}
		for _, y := range r.Perm(h)[:n] {
			lines[y] = m.line(r)
		}
		v := tea.View{Content: strings.Join(lines, "\n"), AltScreen: true}
		if cursorCols > 0 {
			v.Cursor = tea.NewCursor(r.IntN(cursorCols), r.IntN(h))
		}
		vs = append(vs, v)
	}
	return vs
}

// Random differential test with harder pieces (wide and combining
// characters, rarer SGR attributes) and cursors anywhere in [0, w] x
// [0, h): one past the last column is the edge the renderer wraps.
func TestDirectRandomHard(t *testing.T) {
	const w, h, steps = 24, 8, 400
	mix := lineMix{
		pieces: []string{"abc", " ", "   ", "─┼─", "█", "µ×°", "→", "Ωж", "\u00a0", "x",
			"\x1b[31m", "\x1b[48;5;200m", "\x1b[m", "\x1b[0m", "\x1b[4:3m", "\x1b[7m", "\x1b[21m", "\x1b[5m", "\x1b[8m",
			"\x1b[53m", "\x1b[38;5;9m", "\x1b[48;2;200;100;0m", "\x1b[;1m", "\x1b[58;2;1;2;3m", "\x1b[49m", "\x1b[41m   ",
			"\u2764", "\u2600", "\u0483", "e\u0301", "\u2b50", "\u25b6", "\u2122", "\u2139", "\u24c2", "\u2194"},
		// exactly full width, with a background
		whole: []string{"\x1b[44m" + strings.Repeat("z", w) + "\x1b[m"},
		oneIn: 6,
	}
	for _, tc := range []struct {
		env  string
		prof colorprofile.Profile
		cur  bool
	}{
		{"xterm-256color", colorprofile.TrueColor, false},
		{"xterm-256color", colorprofile.ANSI, true},
		{"linux", colorprofile.ANSI256, true},
		{"screen-256color", colorprofile.TrueColor, true},
	} {
		t.Run(fmt.Sprint(tc.env, tc.prof, tc.cur), func(t *testing.T) {
			r := rand.New(rand.NewPCG(12, uint64(tc.prof)))
			cursorCols := 0
			if tc.cur {
				cursorCols = w + 1
			}
			vs := randomViews(r, mix, h, steps, cursorCols)
			t.Logf("%d directs", twinRun(t, tc.env, tc.prof, false, w, h, vs))
		})
	}
}

// A styled blank row (background spaces) above a bottom that turns
// blank: blankLine counts it blank, ultraviolet's clearBottom does not.
func TestStyledBlankAboveClearedBottom(t *testing.T) {
	const w, h = 12, 6
	S := "\x1b[44m" + strings.Repeat(" ", w) + "\x1b[m"
	mk := func(rows ...string) string { return strings.Join(rows, "\n") }
	for _, tc := range []struct {
		name   string
		frames []string
	}{
		// renderer path only: one line of six changes
		{"renderer", []string{
			mk("a", "b", "c", "X", S, "Z"),
			mk("a", "b", "c", "X", S, ""),
		}},
		// a direct frame whose catch-up clears S in the model, then S
		// turns blank through the renderer
		{"direct-then-renderer", []string{
			mk("a", "b", "c", "X", S, "Z"),
			mk("A", "B", "C", "X", S, ""),
			mk("A", "B", "C", "X", "", ""),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vs []tea.View
			for _, c := range tc.frames {
				vs = append(vs, tea.View{Content: c, AltScreen: true})
			}
			n := strictRun(t, "xterm-256color", colorprofile.TrueColor, false, w, h, vs)
			t.Logf("%d direct", n)
		})
	}
}

// strictRun compares with a fresh drawing only (no twin leniency).
func strictRun(t *testing.T, env string, prof colorprofile.Profile, mapNl bool, w, h int, frames []tea.View) (directs int) {
	t.Helper()
	return twinRunC(t, env, prof, mapNl, w, h, frames, false, modes{strict: true})
}

// Random frames of lines a console draws (some blank, some styled blank,
// some full width on a background), with "\n" mapping and synchronized
// output; cursors inside the screen. Strict against a fresh drawing
// except rows the renderer-only twin also leaves.
func TestDirectRandomConsole(t *testing.T) {
	const w, h, steps = 30, 9, 600
	mix := lineMix{
		pieces: []string{"abc", " ", "  ", "─┼─", "█▌", "µ×°", "→↑", "…•", "Ωж", "\u00a0",
			"\x1b[31m", "\x1b[1;38;2;10;20;30m", "\x1b[48;5;200m", "\x1b[m", "\x1b[0m", "\x1b[4:3m", "\x1b[7m",
			"\x1b[22;39m", "\x1b[38;5;9m", "\x1b[48;2;200;100;0m", "\x1b[;1m", "\x1b[9m", "\x1b[58;2;1;2;3m", "\x1b[49m"},
		whole: []string{"", "\x1b[44m" + strings.Repeat(" ", w) + "\x1b[m", "\x1b[42m" + strings.Repeat("=", w) + "\x1b[m"},
		oneIn: 10,
	}
	for _, tc := range []struct {
		env   string
		prof  colorprofile.Profile
		mapNl bool
		cur   bool
	}{
		{"xterm-256color", colorprofile.TrueColor, true, false},
		{"xterm-256color", colorprofile.ANSI, false, true},
		{"screen-256color", colorprofile.ANSI256, true, true},
		{"linux", colorprofile.ANSI, false, false},
	} {
		t.Run(fmt.Sprint(tc.env, tc.prof, tc.mapNl, tc.cur), func(t *testing.T) {
			r := rand.New(rand.NewPCG(99, uint64(tc.prof)))
			cursorCols := 0
			if tc.cur {
				cursorCols = w
			}
			vs := randomViews(r, mix, h, steps, cursorCols)
			for _, m := range []modes{{}, {sync: true}, {wide: true}} {
				t.Logf("%+v: %d directs", m, twinRunC(t, tc.env, tc.prof, tc.mapNl, w, h, vs, true, m))
			}
		})
	}
}

// Profiles without colours (NO_COLOR: Ascii) and NoTTY never go direct.
func TestDirectRefusesAscii(t *testing.T) {
	for _, p := range []colorprofile.Profile{colorprofile.Ascii, colorprofile.NoTTY} {
		var out bytes.Buffer
		d := newDrawer(&out, []string{"TERM=xterm-256color"}, false)
		for i := range 4 {
			f := newFrame(tea.View{Content: pageOf(20, 6, func(y int) string { return fmt.Sprint("\x1b[31mrow", y, i, "\x1b[m") }), AltScreen: true}, 20, 6, p)
			d.draw(&f)
		}
		if d.directs != 0 {
			t.Errorf("%v: %d direct frames", p, d.directs)
		}
	}
}

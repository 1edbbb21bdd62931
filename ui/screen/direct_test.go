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

// directLine is a line a console draws: text, box drawing, symbols and
// SGR sequences in their many spellings; one in eight holds something
// the direct path must leave to the renderer (a wide character, a line
// wider than the screen, a control character, another sequence).
func directLine(r *rand.Rand, w int) string {
	pieces := []string{"abc", " ", "   ", "─┼─", "█▌░", "µ×°", "→↑", "…•", "x", "Ωж",
		"\x1b[31m", "\x1b[1;38;2;10;20;30m", "\x1b[48;5;200m", "\x1b[m", "\x1b[0m", "\x1b[4:3m", "\x1b[7m",
		"\x1b[22;39m", "\x1b[38;5;9m", "\x1b[48;2;200;100;0m", "\x1b[;1m", "\x1b[2;3;9m", "\x1b[58;2;1;2;3m", "\x1b[49m"}
	var b strings.Builder
	for range r.IntN(14) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	if r.IntN(8) == 0 {
		b.WriteString([]string{"漢字", strings.Repeat("y", w+1), "é", "🙂"}[r.IntN(4)])
	}
	return b.String() + "\x1b[m"
}

// TestDirectExactOnScreen: frames that change most lines, written
// directly where they can be, leave on an emulated terminal (emu) the
// screen a fresh drawing of the same frame leaves, row by row, or at the
// least the row the renderer's diff leaves on a twin that writes nothing
// directly (the renderer's own slips with tabs and wide lines are not
// the direct path's to fix), in every colour profile, with and
// without a cursor, synchronized output and "\n" mapping. Frames between
// them that change a line or two go through the renderer, which must
// have caught up with the direct ones.
func TestDirectExactOnScreen(t *testing.T) {
	const w, h, steps = 40, 10, 300
	for _, tc := range []struct {
		env    string
		prof   colorprofile.Profile
		mapNl  bool
		cursor bool
	}{
		{"xterm-256color", colorprofile.TrueColor, false, false},
		{"xterm-256color", colorprofile.ANSI256, true, false},
		{"screen-256color", colorprofile.ANSI, false, true},
		{"linux", colorprofile.ANSI256, true, true},
		{"xterm-256color", colorprofile.TrueColor, true, true},
	} {
		t.Run(fmt.Sprint(tc.env, "/", tc.prof, "/nl=", tc.mapNl, "/cursor=", tc.cursor), func(t *testing.T) {
			r := rand.New(rand.NewPCG(29, uint64(tc.prof)))
			env := []string{"TERM=" + tc.env}
			var out bytes.Buffer
			e, twin := newEmu(w, h, tc.mapNl), newEmu(w, h, tc.mapNl)
			d := newDrawer(&out, env, tc.mapNl)
			dt := newDrawer(twin, env, tc.mapNl)
			dt.noDirect = true
			lines := make([]string, h)
			for i := range lines {
				lines[i] = directLine(r, w)
			}
			directs := 0
			for step := range steps {
				n := 1 + r.IntN(2)
				if step%3 != 0 {
					n = h/2 + r.IntN(h/2+1)
				}
				for _, y := range r.Perm(h)[:n] {
					lines[y] = directLine(r, w)
				}
				v := tea.View{Content: strings.Join(lines, "\n"), AltScreen: true, MouseMode: tea.MouseModeCellMotion}
				if tc.cursor {
					v.Cursor = tea.NewCursor(r.IntN(w), r.IntN(h))
				}
				f := newFrame(v, w, h, tc.prof)
				d.synced, dt.synced = step >= steps/2, step >= steps/2
				dt.draw(&f)
				before, was := out.Len(), d.directs
				d.draw(&f)
				if d.directs > was {
					directs++
				}
				e.Write(out.Bytes()[before:])

				te := newEmu(w, h, tc.mapNl)
				td := newDrawer(te, env, tc.mapNl)
				td.draw(&f)
				got, want, renderer := seen(e.screen()), seen(te.screen()), seen(twin.screen())
				if !tc.cursor {
					// A hidden cursor may be anywhere.
					got, want, renderer = got[:strings.LastIndexByte(got, '@')], want[:strings.LastIndexByte(want, '@')], renderer[:strings.LastIndexByte(renderer, '@')]
				}
				if !rowsOf(got, want, renderer) {
					gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
					for y := range min(len(gl), len(wl)) {
						if gl[y] != wl[y] {
							gc, wc := strings.Split(gl[y], "\t"), strings.Split(wl[y], "\t")
							for x := range min(len(gc), len(wc)) {
								if gc[x] != wc[x] {
									t.Errorf("cell %d,%d: got %q want %q", x, y, gc[x], wc[x])
									break
								}
							}
						}
					}
					t.Fatalf("step %d (direct %v): the screen differs from a fresh drawing\nwrote %q\ngot\n%s\nwant\n%s", step, d.directs > was, out.Bytes()[before:], e.text(), te.text())
				}
			}
			t.Logf("%d of %d frames written directly", directs, steps)
			if directs < steps/4 {
				t.Errorf("%d of %d frames written directly; want at least %d", directs, steps, steps/4)
			}
			if directs > steps*3/4 {
				t.Errorf("%d of %d frames written directly: the renderer's own frames are not tested", directs, steps)
			}
		})
	}
}

// rowsOf says each row of got is that row of want or of alt (and the
// cursors agree with one of them).
func rowsOf(got, want, alt string) bool {
	g, w, a := strings.Split(got, "\n"), strings.Split(want, "\n"), strings.Split(alt, "\n")
	for y := range g {
		if g[y] != w[y] && g[y] != a[y] {
			return false
		}
	}
	return true
}

// seen is an emu's screen as a person sees it: a blank's pen shows only
// its background, and the colours its reverse, underline or strike draw
// (the renderer erases a bold blank rather than write it).
func seen(screen string) string {
	rows := strings.Split(screen, "\n")
	for y, row := range rows {
		cells := strings.Split(row, "\t")
		for x, c := range cells {
			text, pen, ok := strings.Cut(c, "\x00")
			if !ok || text != " " {
				continue
			}
			has := map[string]bool{}
			for _, p := range strings.Split(pen, "|") {
				k, _, _ := strings.Cut(p, "=")
				has[k] = true
			}
			var keep []string
			for _, p := range strings.Split(pen, "|") {
				k, _, _ := strings.Cut(p, "=")
				if k == "bg" || k == "a7" || k == "a4" || k == "a9" ||
					k == "fg" && (has["a7"] || has["a4"] && !has["ul"] || has["a9"]) || k == "ul" && has["a4"] {
					keep = append(keep, p)
				}
			}
			cells[x] = text + "\x00" + strings.Join(keep, "|")
		}
		rows[y] = strings.Join(cells, "\t")
	}
	return strings.Join(rows, "\n")
}

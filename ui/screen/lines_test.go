package screen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
)

// randomLine is a line of styled pieces; unless clean, it may leave a
// style set at its end, which the next line inherits.
func randomLine(r *rand.Rand, clean bool) string {
	pieces := []string{"abc", " ", "漢字", "─┼─", "█▌", "\x1b[31m", "\x1b[1;38;2;10;20;30m", "\x1b[48;5;200m", "\x1b[m", "\x1b[0m", "x"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	if clean && r.IntN(4) > 0 {
		b.WriteString("\x1b[m")
	}
	return b.String()
}

// TestLinesRedrawnAlone: drawing only the changed lines leaves the same
// cells as parsing the whole frame, whether lines end with their styles
// reset (redrawn alone) or carry them to the next line (the whole frame
// is parsed).
func TestLinesRedrawnAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 29))
	const w, h = 30, 8
	d := newDrawer(io.Discard, []string{"TERM=xterm-256color"}, false)
	lines := make([]string, h)
	for i := range lines {
		lines[i] = randomLine(r, true)
	}
	alone := 0
	for frame := range 400 {
		clean := frame%5 != 0 // one frame in five may carry styles across lines
		for range 1 + r.IntN(3) {
			lines[r.IntN(h)] = randomLine(r, clean)
		}
		if clean && frame%5 == 1 {
			for i := range lines { // back to clean lines
				if !independent(lines[i:i+1:i+1]) || i < h-1 && !independent([]string{lines[i], ""}) {
					lines[i] = randomLine(r, true) + "\x1b[m"
				}
			}
		}
		content := strings.Join(lines, "\n")
		wasIndep := d.indep && d.lines != nil
		f := newFrame(tea.View{Content: content, AltScreen: true}, w, h, colorprofile.TrueColor)
		d.draw(&f)
		if wasIndep && d.indep {
			alone++
		}
		want := uv.NewScreenBuffer(w, h)
		uv.NewStyledString(content).Draw(want, want.Bounds())
		if got, want := d.cells.Render(), want.Render(); got != want {
			t.Fatalf("frame %d: the cells differ from the whole frame parsed:\n got %q\nwant %q\nframe %q", frame, got, want, content)
		}
	}
	if alone < 100 {
		t.Errorf("only %d of 400 frames were drawn line by line; the test does not exercise it", alone)
	}
}

// TestFrameSplitOnce: each frame's content is split into lines once,
// whether it is written directly (the renderer catching up after), refused
// by the direct path and painted (a frame at rest: one line changed), or
// painted without the direct path.
func TestFrameSplitOnce(t *testing.T) {
	const w, h = 20, 6
	page := func(mark string, changed int) string {
		return pageOf(w, h, func(y int) string {
			if y < changed {
				return fmt.Sprintf("\x1b[31m%s %d\x1b[m", mark, y)
			}
			return fmt.Sprintf("row %d", y)
		})
	}
	for _, noDirect := range []bool{false, true} {
		d := newDrawer(io.Discard, []string{"TERM=xterm-256color"}, false)
		d.noDirect = noDirect
		frames := []string{page("a", 0), page("b", 1), page("c", 1), page("d", h), page("e", h), page("e", h-1)}
		for i, c := range frames {
			f := newFrame(tea.View{Content: c, AltScreen: true}, w, h, colorprofile.TrueColor)
			d.draw(&f)
			if d.splits != i+1 {
				t.Fatalf("noDirect %v: frame %d: %d splits after %d frames (%d written directly, %d paints)", noDirect, i, d.splits, i+1, d.directs, d.paints)
			}
		}
		if !noDirect && (d.directs == 0 || d.paints-d.directs < 3) {
			t.Errorf("%d frames written directly, %d paints: the test does not exercise both paths", d.directs, d.paints)
		}
	}
}

package screen

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// TestBlankBottomKeepsLineAbove: a lone drawer (no Transitions) whose
// next frame blanks the bottom lines leaves the line above them as the
// frame has it.
func TestBlankBottomKeepsLineAbove(t *testing.T) {
	const w, h = 40, 10
	var a, b []string
	for i := range h {
		a = append(a, fmt.Sprintf("line %d\x1b[m", i))
		if i < 8 {
			b = append(b, a[i])
		} else {
			b = append(b, "")
		}
	}
	fa := newFrame(tea.View{Content: strings.Join(a, "\n"), AltScreen: true}, w, h, colorprofile.TrueColor)
	fb := newFrame(tea.View{Content: strings.Join(b, "\n"), AltScreen: true}, w, h, colorprofile.TrueColor)
	for _, canon := range []bool{false, true} {
		e := newEmu(w, h, true)
		d := newDrawer(e, []string{"TERM=xterm-256color"}, true)
		d.canon = canon
		d.draw(&fa)
		n := 0
		_ = n
		var rec strings.Builder
		d.out = teeW{e, &rec}
		d.draw(&fb)
		te := newEmu(w, h, true)
		td := newDrawer(te, []string{"TERM=xterm-256color"}, true)
		td.canon = canon
		td.draw(&fb)
		if e.text() != te.text() {
			t.Errorf("canon=%v: A then B wrote %q; the terminal shows\n%s\nB drawn alone shows\n%s", canon, rec.String(), e.text(), te.text())
		}
	}
}

type teeW struct {
	a *emu
	b *strings.Builder
}

func (t teeW) Write(p []byte) (int, error) { t.b.Write(p); return t.a.Write(p) }

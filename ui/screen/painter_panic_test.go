package screen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// TestPainterPanicSpoils: a painter whose paint panics partway follows no
// state after it (its renderer may be between two frames): it is not
// taken for the frame it was at, and the class's next change of that
// frame is a lone drawer's (hrev11: it kept its state's hash, and would
// have stored wrong bytes for every session of the class).
func TestPainterPanicSpoils(t *testing.T) {
	const w, h = 40, 10
	page := func(tag string) *frame {
		var lines []string
		for i := range h {
			lines = append(lines, fmt.Sprintf("%s line %d\x1b[m", tag, i))
		}
		f := newFrame(tea.View{Content: strings.Join(lines, "\n"), AltScreen: true}, w, h, colorprofile.TrueColor)
		return &f
	}
	env := []string{"TERM=xterm-256color"}
	fa, fb, fc := page("a"), page("b"), page("c")
	tr := NewTransitions()
	c := transClass{env: "xterm-256color", mapNl: true}
	r := tr.class(c)
	paint := func(from, to *frame) (out []byte, ok bool, panicked any) {
		defer func() { panicked = recover() }()
		r.mu.Lock()
		defer r.mu.Unlock()
		out, ok = tr.paintWith(r, c, env, from, tr.hash(from), to, tr.hash(to))
		return out, ok, nil
	}
	if _, ok, p := paint(fa, fb); !ok || p != nil {
		t.Fatalf("the first paint: ok %v, panic %v", ok, p)
	}
	spoilt := r.painters[0]
	spoilt.d.scr = nil // its next paint panics partway
	if _, _, p := paint(fb, fc); p == nil {
		t.Fatal("the sabotaged paint did not panic")
	}
	if !spoilt.spoilt {
		t.Fatal("a painter whose paint panicked is not marked spoilt")
	}
	out, ok, p := paint(fb, fc)
	if !ok || p != nil {
		t.Fatalf("the next paint: ok %v, panic %v", ok, p)
	}
	var lone bytes.Buffer
	d := newDrawer(&lone, env, true)
	d.canon = true
	d.draw(fb)
	n := lone.Len()
	d.draw(fc)
	if want := lone.String()[n:]; string(out) != want {
		t.Errorf("after the panic the class painted b→c as\n%q\na lone drawer\n%q", out, want)
	}
}

package console

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestHelpLinesMemo: the help opened again (each ? opens a new one) with
// nothing changed is given back from the memo, not made again; and
// whatever it is made from changing (the width, a typed filter, the
// theme, the columns the screen draws) makes it again: it is always what
// a fresh making gives.
func TestHelpLinesMemo(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	a.View()
	check := func(what string, w int, wantKept bool) {
		t.Helper()
		a.openHelp()
		hs := helpOf(a)
		if f := hs.Filter; f != "" {
			t.Fatalf("a new help has a filter %q", f)
		}
		for _, r := range []struct{ filter string }{{""}, {"sort"}} {
			hs.Filter = r.filter
			kept := a.memo.kept
			got := hs.Lines(w)
			if fresh := hs.lines(w); !slices.Equal(got, fresh) {
				t.Errorf("%s, filter %q: the help's body differs from a fresh making", what, r.filter)
			}
			if k := a.memo.kept > kept; r.filter == "" && k != wantKept {
				t.Errorf("%s: body given back from the memo %v; want %v", what, k, wantKept)
			}
		}
		hs.Filter = ""
		hs.Lines(w) // the memo holds the unfiltered body again
		a.layers = a.layers[:len(a.layers)-1]
		a.Invalidate()
	}
	check("first opening", 160, false)
	check("opened again", 160, true)
	check("another width", 120, false)
	check("that width again", 120, true)
	if err := a.setTheme(themes.MustBuiltin(themes.Light)); err != nil {
		t.Fatal(err)
	}
	check("another theme", 120, false)
	// A narrow screen draws fewer columns, which the help explains.
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	a.View()
	check("the screen narrowed", 120, false)
}

// BenchmarkHelpOpen: ? on the main screen at 160x48, as far as the
// console goes: the help opened and its frame composed (memo: the body
// of the last help given back; fresh: made again, as before the memo).
func BenchmarkHelpOpen(b *testing.B) {
	for _, fresh := range []bool{false, true} {
		b.Run(map[bool]string{false: "memo", true: "fresh"}[fresh], func(b *testing.B) {
			a := testApp(b, 160, 48, fake.Node(fake.Options{}), Options{})
			a.View()
			for b.Loop() {
				if fresh {
					a.memo.help = nil
				}
				a.openHelp()
				a.Invalidate()
				a.View()
				a.layers = a.layers[:len(a.layers)-1]
			}
		})
	}
}

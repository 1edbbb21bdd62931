package console

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestHelpMemoThemeAtReusedAddress: the help memo once keyed the styles
// by their address as text, which did not keep them alive: a theme's
// styles freed and a later theme's made at the same address gave back the
// old theme's body (309 stale bodies in 400 rounds). The memo now holds
// the styles themselves.
func TestHelpMemoThemeAtReusedAddress(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	a.View()
	names := themes.Names()
	reused, stale := 0, 0
	for i := range 400 {
		// help made under the current theme
		a.openHelp()
		hs := helpOf(a)
		hs.Lines(120)
		made := fmt.Sprintf("%p", a.St)
		a.layers = a.layers[:len(a.layers)-1]
		a.Invalidate()
		// another theme; its frame drawn (the old styles let go)
		if err := a.setTheme(themes.MustBuiltin(names[i%len(names)])); err != nil {
			t.Fatal(err)
		}
		a.View()
		runtime.GC()
		runtime.GC()
		// a third theme, possibly where the first styles were
		if err := a.setTheme(themes.MustBuiltin(names[(i+2)%len(names)])); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%p", a.St) != made {
			a.View()
			continue
		}
		reused++
		a.openHelp()
		hs = helpOf(a)
		if got, fresh := hs.Lines(120), hs.lines(120); !slices.Equal(got, fresh) {
			stale++
			if stale == 1 {
				t.Errorf("iteration %d: styles at the same address %s: help body from the memo differs from a fresh one (theme %s)", i, made, a.St.Theme.Name)
			}
		}
		a.layers = a.layers[:len(a.layers)-1]
		a.Invalidate()
		a.View()
	}
	t.Logf("address reused %d times, stale body %d times", reused, stale)
}

package fleet

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestASCIIFleet renders the fleet console, its help, an unreachable node
// and the prompt with --ascii and finds no byte >= 0x80.
func TestASCIIFleet(t *testing.T) {
	check := func(t *testing.T, what, frame string) {
		t.Helper()
		if bad := nonASCII(frame); bad != "" {
			t.Errorf("%s: non-ASCII byte at %s", what, bad)
		}
	}
	for _, w := range []int{80, 160} {
		th := themes.MustBuiltin(themes.Dark)
		m := New(nil, Options{Theme: th, ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts"})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		m.Update(fleetMsg{fleetOf(t)})
		check(t, "fleet", fleetScreen(m))
		fleetPress(m, "?")
		check(t, "fleet help", fleetScreen(m))
		fleetPress(m, "esc", "j", "j")
		check(t, "fleet unreachable", fleetScreen(m))
		fleetPress(m, ":")
		check(t, "fleet prompt", fleetScreen(m))
	}
}

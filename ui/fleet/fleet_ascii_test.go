package fleet

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
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
		if hdr := stripANSI(strings.SplitN(fleetScreen(m), "\n", 2)[0]); strings.Contains(hdr, " ,") || !strings.Contains(hdr, "live, ") {
			t.Errorf("w=%d: the header's list reads %q (a space before a comma)", w, hdr)
		}
		fleetPress(m, "?")
		check(t, "fleet help", fleetScreen(m))
		fleetPress(m, "esc", "j", "j")
		check(t, "fleet unreachable", fleetScreen(m))
		fleetPress(m, ":")
		check(t, "fleet prompt", fleetScreen(m))
	}
}

// TestFleetFlashKeepsHelpAndQuit: a flash (a node that has no snapshot
// yet, a :fit answer) shortens beside "? help" and "q quit" instead of
// taking the whole footer, as on the node console.
func TestFleetFlashKeepsHelpAndQuit(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		m := New(nil, Options{Theme: themes.MustBuiltin(themes.Dark), ASCII: ascii, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts"})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.Update(fleetMsg{fleetOf(t)})
		m.flashf(kit.LvlWarn, "10.0.0.3:2222: no snapshot yet (unreachable), and many more words after that")
		for _, w := range []int{50, 80, 200} {
			f := stripANSI(m.viewFooter(w))
			if kit.Width(f) > w {
				t.Fatalf("ascii=%v w=%d: footer %d cells: %q", ascii, w, kit.Width(f), f)
			}
			for _, want := range []string{"no snapshot yet", "? help", "q quit"} {
				if !strings.Contains(f, want) {
					t.Errorf("ascii=%v w=%d: footer lacks %q: %q", ascii, w, want, f)
				}
			}
		}
	}
}

package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestMarkedNodesShown feeds the table nodes the fleet marked: one that
// floods lines, one refused over SSH as too large, one Prometheus
// reported with more devices than the fleet follows (Summary.TooLarge),
// and one whose mark carries hostile bytes. Each row shows its mark next
// to its state, the detail the full note, escaped and, with --ascii, in
// 7-bit ASCII.
func TestMarkedNodesShown(t *testing.T) {
	now := fake.T0
	addrs := []string{"10.0.0.1:2222", "10.0.0.2:2222", "10.0.0.3:2222", "10.0.0.4:2222"}
	tr := fleet.NewTracker(addrs, "ssh", fleet.Options{StaleAfter: 5 * time.Second, UnreachableAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	go func() { _ = tr.Run(ctx) }()
	snap := func(name string) *fleet.Event {
		s := *fake.Node(fake.Options{})
		s.Node = name
		return &fleet.Event{Snap: &s, Sum: fleet.Summarize(&s, fleet.Settings{}), At: now}
	}
	flood := "floods lines (asked for a heartbeat every 2s): read at most 10 a second"
	a := snap("gpu-flood")
	a.Addr, a.Note = addrs[0], flood
	tr.Send(ctx, *a)
	tr.Send(ctx, fleet.Event{Addr: addrs[1], Err: fmt.Errorf("node: %w", &fleet.TooLargeError{Devices: 20000}), At: now})
	c := snap("gpu-prom-big")
	c.Addr, c.Sum.TooLarge = addrs[2], true
	tr.Send(ctx, *c)
	d := snap("gpu-evil")
	d.Addr, d.Note = addrs[3], "floods"+hostile.Payload
	tr.Send(ctx, *d)
	waitTracker(t, tr, func(f *fleet.Fleet) bool {
		return f.Node(addrs[1]).State == fleet.Unreachable && f.Node(addrs[3]).State == fleet.Live
	})
	for _, ascii := range []bool{true, false} {
		m := New(nil, Options{Theme: themes.MustBuiltin(themes.Dark), ASCII: ascii, Now: func() time.Time { return now }, Source: "ssh: 4 hosts"})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
		m.Update(fleetMsg{tr.Latest()})
		screen := stripANSI(fleetScreen(m))
		checkClean(t, "fleet table", m.View())
		rowOf := func(name string) string {
			for _, ln := range strings.Split(screen, "\n") {
				if strings.Contains(ln, name) {
					return ln
				}
			}
			t.Fatalf("ascii=%v: no row for %s:\n%s", ascii, name, screen)
			return ""
		}
		for name, want := range map[string]string{
			"gpu-flood":     "live, floods lines",
			"10.0.0.2:2222": "UNREACHABLE, too large",
			"gpu-prom-big":  "live, too large",
			"gpu-evil":      `live, floods\x1b]52`,
		} {
			if row := rowOf(name); !strings.Contains(row, want) {
				t.Errorf("ascii=%v: the row of %s does not show %q:\n%s", ascii, name, want, row)
			}
		}
		details := ""
		fleetPress(m, "g")
		for range addrs {
			checkClean(t, "fleet detail", m.View())
			details += stripANSI(fleetScreen(m))
			fleetPress(m, "j")
		}
		for _, want := range []string{
			"marked: " + flood,
			"marked: too large: 20000 devices",
			"marked: too large: ",
			`marked: floods\x1b]52;c;`,
		} {
			if !strings.Contains(details, want) {
				t.Errorf("ascii=%v: no detail shows %q", ascii, want)
			}
		}
		if ascii {
			if bad := nonASCII(details + screen); bad != "" {
				t.Errorf("--ascii: non-ASCII byte at %s", bad)
			}
		}
	}
}

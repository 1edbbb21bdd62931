package fleet

import (
	"errors"
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

// TestHostileFleet renders the fleet screen, its help and a node opened
// from it with hostile nodes: one whose snapshot holds the payload in
// every field, one whose connection failed with it (a node's stderr).
func TestHostileFleet(t *testing.T) {
	now := fake.T0
	addrs := []string{"10.0.0.1:2222", "10.0.0.2:2222", "10.0.0.3:2222"}
	tr := fleet.NewTracker(addrs, "ssh", fleet.Options{StaleAfter: 5 * time.Second, UnreachableAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	go func() { _ = tr.Run(ctx) }()
	a, b := hostileNode(t, fake.Options{}), hostileNode(t, fake.Options{Source: "mock"})
	tr.Send(ctx, fleet.Event{Addr: addrs[0], Snap: a, Sum: fleet.Summarize(a, fleet.Settings{}), At: now})
	tr.Send(ctx, fleet.Event{Addr: addrs[1], Snap: b, Sum: fleet.Summarize(b, fleet.Settings{}), At: now.Add(-10 * time.Second)})
	tr.Send(ctx, fleet.Event{Addr: addrs[2], Err: errors.New("ssh: " + hostile.Payload), At: now})
	waitTracker(t, tr, func(f *fleet.Fleet) bool {
		return f.Node(addrs[2]).State == fleet.Unreachable && f.Node(addrs[1]).State == fleet.Stale
	})
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		m := New(nil, Options{Theme: themes.MustBuiltin(themes.Mono), ASCII: true, Now: func() time.Time { return now }, Source: "ssh: 3 hosts"})
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m.Update(fleetMsg{tr.Latest()})
		checkClean(t, "fleet table", m.View())
		if !strings.Contains(m.View().Content, `\x1b]52;c;`) {
			t.Fatalf("the payload is not in the table, escaped:\n%s", m.View().Content)
		}
		for _, keys := range [][]string{{"G"}, {"g"}, {"j"}, {"?"}, {"esc"}, {"/", "x"}, {"esc"}, {":"}, {"esc"},
			{"g", "enter"}, {"j"}, {"enter"}, {"esc"}, {"esc"}, {"j", "enter"}, {"esc"}, {"esc"}, {"G", "enter"}} {
			fleetPress(m, keys...)
			checkClean(t, fmt.Sprintf("fleet %dx%d after %v", size[0], size[1], keys), m.View())
		}
	}
}

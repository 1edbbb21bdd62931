package fleet

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestDrillSaysItsVerdict: a node opened while stale or unreachable says
// so in its header, in words (colour alone said nothing with NO_COLOR),
// on the first line at 80 columns, with why and how old its figures are;
// the header follows the node while it is open, and says nothing once it
// is live again.
func TestDrillSaysItsVerdict(t *testing.T) {
	base := fleetOf(t)
	with := func(st fleet.State, reason string) *fleet.Fleet {
		f := *base
		f.Nodes = slices.Clone(base.Nodes)
		for i := range f.Nodes {
			if f.Nodes[i].Name == "gpu-node02" {
				f.Nodes[i].State, f.Nodes[i].Reason = st, reason
			}
		}
		return &f
	}
	// The reason as the fleet gives it: longer than 80 columns leave.
	const refused = "not listening (connection refused)"
	const why = refused + ": is fgtop serve running there, on this port? (systemctl status fgtop-serve on the node)"
	now := fake.T0.Add(4 * time.Minute)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := New(nil, Options{ASCII: true, Now: func() time.Time { return now }, Source: "ssh: 3 hosts"})
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.Update(fleetMsg{with(fleet.Unreachable, why)})
			i := slices.IndexFunc(m.Rows, func(r int) bool { return m.fl.Nodes[r].Name == "gpu-node02" })
			if i < 0 {
				t.Fatal("no gpu-node02 row")
			}
			m.Cursor, m.moved = i, true
			typeKeys(m, "enter")
			if m.drill == nil {
				t.Fatalf("gpu-node02 not opened:\n%s", stripANSI(fleetScreen(m)))
			}
			m.Update(console.SnapshotMsg{Snap: m.drillLast})
			header := func() (first, both string) {
				lines := strings.Split(stripANSI(fleetScreen(m)), "\n")
				return lines[0], lines[0] + "\n" + lines[1]
			}
			first, both := header()
			if !strings.Contains(first, "UNREACHABLE") || !strings.Contains(first, "gpu-node02") {
				t.Fatalf("the unreachable node's first header line does not say so:\n%s", both)
			}
			for _, want := range []string{refused, "last figures from 4m ago"} {
				if !strings.Contains(both, want) {
					t.Errorf("the unreachable node's header lacks %q:\n%s", want, both)
				}
			}
			m.Update(fleetMsg{with(fleet.Stale, "no line for 10s")})
			if first, both := header(); !strings.Contains(first, "STALE") || strings.Contains(both, "UNREACHABLE") || !strings.Contains(both, "no line for 10s") {
				t.Errorf("the node gone stale while open:\n%s", both)
			}
			m.Update(fleetMsg{with(fleet.Live, "")})
			if _, both := header(); strings.Contains(both, "STALE") || strings.Contains(both, "last figures") {
				t.Errorf("the node live again still says it is not:\n%s", both)
			}
		})
	}
}

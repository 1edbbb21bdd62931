package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestFleetAddressShown: ADDRESS and the node pane's title say where the
// node is reached, the scrape target through Prometheus (it was the name
// again: "demo-1 ... demo-1"), and the title names a node that has not
// said its name once, not "10.0.0.3:2222 10.0.0.3:2222 UNREACHABLE".
func TestFleetAddressShown(t *testing.T) {
	f := *fleetOf(t)
	f.Nodes = slices.Clone(f.Nodes)
	snap := *fake.Node(fake.Options{})
	snap.Node = "demo-1"
	f.Nodes = append(f.Nodes, fleet.Node{Addr: "demo-1", Name: "demo-1", Source: "prometheus", Target: "127.0.0.1:9471",
		State: fleet.Live, Snap: &snap, Sum: fleet.Summarize(&snap, fleet.Settings{}), LastSeen: fake.T0, Updated: fake.T0})
	m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts"})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m.Update(fleetMsg{&f})
	// pane selects a node and returns its pane's title and its table row.
	pane := func(name string) (title, row string) {
		t.Helper()
		i := slices.IndexFunc(m.Rows, func(r int) bool { return m.fl.Nodes[r].Name == name })
		if i < 0 {
			t.Fatalf("no %s row", name)
		}
		m.Cursor, m.moved = i, true
		lines := strings.Split(stripANSI(fleetScreen(m)), "\n")
		for _, l := range lines {
			if strings.Contains(l, " "+name+" ") && strings.Contains(l, "--") {
				title = l
			} else if strings.HasPrefix(strings.TrimLeft(l, " >*"), name) && row == "" {
				row = l
			}
		}
		if title == "" || row == "" {
			t.Fatalf("%s: no pane title or row:\n%s", name, strings.Join(lines, "\n"))
		}
		return title, row
	}
	title, row := pane("demo-1")
	if !strings.Contains(title, "demo-1 127.0.0.1:9471 live") {
		t.Errorf("the Prometheus node's title: %q, want its scrape target", title)
	}
	if !strings.Contains(row, "127.0.0.1:9471") || strings.Count(row, "demo-1") != 1 {
		t.Errorf("the Prometheus node's row: %q, want ADDRESS its scrape target", row)
	}
	title, _ = pane("10.0.0.3:2222")
	if strings.Count(title, "10.0.0.3:2222") != 1 || !strings.Contains(title, "UNREACHABLE") {
		t.Errorf("the nameless node's title: %q, want its address once", title)
	}
	title, _ = pane("gpu-node02")
	if !strings.Contains(title, "gpu-node02 10.0.0.2:2222 STALE") {
		t.Errorf("the named SSH node's title: %q, want its name and address", title)
	}
}

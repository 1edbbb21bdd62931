package fleet

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestNamelessNodesKeepTheirPortAt80: at 80 columns the NODE column is 14
// cells; two nodes that never answered on one host, on different ports (a
// wrong port in --hosts), were both "127.0.0.1:222…", with no ADDRESS column
// there to tell them apart. A name that is its address keeps its port (a
// host name is cut before it) and an IP address its end, where two differ; a
// node's own name is cut at its end as before.
func TestNamelessNodesKeepTheirPortAt80(t *testing.T) {
	f := &fleet.Fleet{Time: fake.T0}
	for _, a := range []string{"127.0.0.1:22290", "127.0.0.1:22291", "192.168.10.31:2222", "192.168.10.32:2222", "gpu-node-rack1.example:2222", "gpu-node-rack1.example:2223"} {
		f.Nodes = append(f.Nodes, fleet.Node{Addr: a, Name: a, Source: "ssh", State: fleet.Unreachable, Reason: "not listening"})
	}
	f.Nodes = append(f.Nodes, fleet.Node{Addr: "10.0.0.9:2222", Name: "gpu-node-rack12-07", Source: "ssh", State: fleet.Unreachable, Reason: "not listening"})
	m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(fleetMsg{f})
	screen := stripANSI(fleetScreen(m))
	for _, want := range []string{"~7.0.0.1:22290 ", "~7.0.0.1:22291 ", "~68.10.31:2222 ", "~68.10.32:2222 ", "gpu-node~:2222 ", "gpu-node~:2223 ", "gpu-node-rack~ "} {
		if !strings.Contains(screen, want) {
			t.Errorf("no %q in the 80-column table:\n%s", want, screen)
		}
	}
}

package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
)

// TestAtFleetNoFiguresThen: `fleet --prometheus --at T` gives no figures,
// and exits 1, for a node whose name two targets exported then (it was
// listed live with no figures and no reason, exit 0), and for one whose
// series Prometheus still answered with though it had scraped nothing of
// it for --unreachable-after before T (Prometheus itself down: its last
// figures were listed live, exit 0, against the documented "no data at").
func TestAtFleetNoFiguresThen(t *testing.T) {
	at := time.Date(2026, 12, 7, 4, 41, 40, 0, time.UTC)
	const unreachableAfter = 20 * time.Second
	current := func(name string, age time.Duration) PromNode {
		s := shortNode()
		s.Node = name
		return PromNode{Name: name, Target: name + ":9477", Scraped: at.Add(-age), Snap: s, Sum: Summarize(s, Settings{})}
	}
	twin := PromNode{Name: "twin", Scraped: at.Add(-2 * time.Second),
		Conflict: "2 Prometheus targets export this node name (fgtop/a:9477, fgtop/b:9477): two nodes share it"}
	for _, tc := range []struct {
		name      string
		node      PromNode
		state     State
		reason    string // a prefix of the reason
		contains  string // and part of it
		noFigures bool
	}{
		{"scraped then", current("fresh", 3*time.Second), Live, "", "", false},
		{"scraped just under the bound", current("edge", unreachableAfter-time.Second), Live, "", "", false},
		{"not scraped for 31s", current("silent", 31*time.Second), Unreachable, NoDataAt(at) + ": ", "last scraped 31s before it", true},
		{"a name two targets export", twin, Unreachable, twin.Conflict, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := atFleet([]PromNode{tc.node}, nil, at, unreachableAfter)
			n := fl.Node(tc.node.Name)
			if n == nil {
				t.Fatalf("%s not listed: %+v", tc.node.Name, fl.Nodes)
			}
			if n.State != tc.state || !strings.HasPrefix(n.Reason, tc.reason) || !strings.Contains(n.Reason, tc.contains) {
				t.Errorf("%s %q, want %s %q…%q", n.State, n.Reason, tc.state, tc.reason, tc.contains)
			}
			if tc.noFigures && (n.Snap != nil || len(n.Sum.Devices) != 0) {
				t.Errorf("figures given for a node with no data then: %+v", n.Sum)
			}
			a := NewAnswer(fl, false, alloc.Request{}, "", Settings{})
			if failed := a.Failure != ""; failed != (tc.state != Live) {
				t.Errorf("failure %q, want one only for a node not live", a.Failure)
			}
		})
	}
}

package fleet

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// bigFleet is a fleet of n nodes named gpu-node1..gpu-nodeN, at
// 10.0.1.i:2222, the last stale ones silent for 10 s.
func bigFleet(t *testing.T, n, stale int) *fleet.Fleet {
	t.Helper()
	now := fake.T0
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.0.1.%d:2222", i+1)
	}
	tr := fleet.NewTracker(addrs, "ssh", fleet.Options{StaleAfter: 5 * time.Second, UnreachableAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	go func() { _ = tr.Run(ctx) }()
	for i, a := range addrs {
		s := *fake.Node(fake.Options{})
		s.Node = fmt.Sprintf("gpu-node%d", i+1)
		at := now
		if i >= n-stale {
			at = now.Add(-10 * time.Second)
		}
		tr.Send(ctx, fleet.Event{Addr: a, Snap: &s, Sum: fleet.Summarize(&s, fleet.Settings{}), At: at})
	}
	waitTracker(t, tr, func(f *fleet.Fleet) bool {
		last := f.Node(addrs[n-1])
		return last.Name == fmt.Sprintf("gpu-node%d", n) && (stale == 0 || last.State == fleet.Stale)
	})
	return tr.Latest()
}

// TestFleetFilterNodeNames: / narrows a fleet of 40 to the nodes whose
// name holds the text (case ignored) term by term as the kernels filter
// reads it, and the title says how many match as the kernels table does.
// / reopens a kept filter with a space after it, so that a second term is
// one of its own: matched as one string, that space narrowed gpu-node1
// to gpu-node1 alone, and a second term to nothing.
func TestFleetFilterNodeNames(t *testing.T) {
	th, err := themes.Load("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(nil, Options{Theme: th, ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 40 hosts"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 50})
	m.Update(fleetMsg{bigFleet(t, 40, 3)})
	typeIn := func(text string) {
		for _, r := range text {
			fleetPress(m, string(r))
		}
	}
	teens := []string{"gpu-node10", "gpu-node11", "gpu-node12", "gpu-node13", "gpu-node14", "gpu-node15", "gpu-node16", "gpu-node17", "gpu-node18", "gpu-node19"}
	for _, c := range []struct {
		name  string
		keys  func()
		title string
		want  []string
	}{
		{"name, any case", func() { fleetPress(m, "/"); typeIn("GPU-Node1"); fleetPress(m, "enter") },
			"matching /GPU-Node1 (11)", append([]string{"gpu-node1"}, teens...)},
		{"reopened, as kept", func() { fleetPress(m, "/", "enter") },
			"matching /GPU-Node1 (11)", append([]string{"gpu-node1"}, teens...)},
		{"reopened, a second term", func() { fleetPress(m, "/"); typeIn("!gpu-node10"); fleetPress(m, "enter") },
			"matching /GPU-Node1 !gpu-node10 (10)", append([]string{"gpu-node1"}, teens[1:]...)},
		{"name and state", func() { fleetPress(m, "esc", "/"); typeIn("gpu-node3 stale"); fleetPress(m, "enter") },
			"matching /gpu-node3 stale (2)", []string{"gpu-node38", "gpu-node39"}},
		{"address", func() { fleetPress(m, "esc", "/"); typeIn("10.0.1.7:"); fleetPress(m, "enter") },
			"matching /10.0.1.7: (1)", []string{"gpu-node7"}},
	} {
		c.keys()
		var got []string
		for _, r := range m.Rows {
			got = append(got, m.fl.Nodes[r].Name)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		s := stripANSI(fleetScreen(m))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s (/%s): rows %v, want %v\n%s", c.name, m.Filter, got, c.want, s)
		}
		if c.title != "" && !strings.Contains(s, c.title) {
			t.Errorf("%s: title lacks %q:\n%s", c.name, c.title, s)
		}
	}
}

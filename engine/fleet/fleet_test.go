package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

func demoSnapshot(t *testing.T, seed int64) *model.Snapshot {
	t.Helper()
	n, err := demo.Start(context.Background(), demo.Options{Seed: seed, Speed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Pause()
	s, err := engine.Build(context.Background(), n.EngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLargestIsTheAllocatorsAnswer: the largest request Summarize reports
// is the one a linear scan over every quantum multiple finds with the
// allocator (bisection assumes a smaller request fits wherever a larger
// one does; this checks it), for both strategies and with fragmentation
// forbidden; LargestClear is the largest of them that overcommits no
// device across every agent. The demo node is slot-based, as main is:
// each agent's allocator sees every device but only its own kernels, so
// many sizes it takes overcommit a GPU the other agent fills, and the
// manager sends an agent no more than it is given less what its kernels
// hold.
func TestLargestIsTheAllocatorsAnswer(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 5, 8} {
		s := demoSnapshot(t, seed)
		for _, ps := range []placement.Settings{
			{},
			{Strategy: alloc.Fill},
			{ForbidFragmentation: true},
			{Quantum: model.MustDec("0.1")},
		} {
			set := Settings{Settings: ps}
			sum := Summarize(s, set)
			if sum.Slot != "cuda.shares" {
				t.Fatalf("slot %q", sum.Slot)
			}
			step := SettingsFor(s, set).Quantum
			if step.IsZero() {
				step = placement.DefaultQuantum
			}
			want, wantClear, wantOver := model.Zero, model.Zero, false
			planner := placement.NewPlanner(s, SettingsFor(s, set))
			for _, st := range planner.Agents() {
				for k := int64(1); ; k++ {
					amt := step.Mul(model.DecFromInt64(k))
					if st.Node.FreeOf(sum.Slot).Less(amt) {
						break
					}
					if g, ok := st.Agent.Given[sum.Slot]; ok && g.Sub(st.Agent.Held[sum.Slot]).Less(amt) {
						break // the manager would not send it to this agent
					}
					got, err := st.Node.Try(alloc.Request{{Slot: sum.Slot, Amount: amt}})
					if err != nil {
						continue
					}
					_, over := planner.Physical().After(placement.FlattenAllocation(got))
					if want.Less(amt) || (want.Equal(amt) && wantOver && !over) {
						want, wantOver = amt, over
					}
					if !over && wantClear.Less(amt) {
						wantClear = amt
					}
				}
			}
			if !sum.Largest.Equal(want) || sum.LargestOvercommits != wantOver {
				t.Errorf("seed %d %+v: largest %s (overcommits %v), a linear scan finds %s (%v)", seed, set, sum.Largest, sum.LargestOvercommits, want, wantOver)
			}
			if !sum.LargestClear.Equal(wantClear) {
				t.Errorf("seed %d %+v: largest clear %s, a linear scan finds %s", seed, set, sum.LargestClear, wantClear)
			}
			if sum.Free.Less(sum.LargestClear) {
				t.Errorf("seed %d: largest clear %s beyond free %s", seed, sum.LargestClear, sum.Free)
			}
			fit := FitRequest(s, alloc.Request{{Slot: sum.Slot, Amount: sum.Largest}}, set)
			if sum.Largest.Sign() > 0 && !fit.OK {
				t.Errorf("seed %d: the largest (%s) does not fit: %s", seed, sum.Largest, fit.Reason)
			}
			if more := FitRequest(s, alloc.Request{{Slot: sum.Slot, Amount: sum.Largest.Add(step)}}, set); more.OK {
				t.Errorf("seed %d: one quantum more than the largest %s fits: %+v", seed, sum.Largest, more)
			} else if more.Reason == "" {
				t.Errorf("seed %d: one quantum more does not fit, and no reason: %+v", seed, more)
			}
		}
	}
}

// TestTrackerStates: a node goes live on its snapshot, stale when silent,
// unreachable after longer, live again on its next line; a node that
// never answered is unreachable at its first failure; none is dropped.
func TestTrackerStates(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	tr := NewTracker([]string{"a:1", "b:1", "a:1"}, "ssh", Options{StaleAfter: 5 * time.Second, UnreachableAfter: 20 * time.Second, Now: clock})
	if got := len(tr.Latest().Nodes); got != 2 {
		t.Fatalf("%d nodes, want the duplicate dropped", got)
	}
	snap := &model.Snapshot{Node: "gpu-a"}
	steps := []struct {
		name    string
		advance time.Duration
		ev      *Event
		a, b    State
	}{
		{"start", 0, nil, Connecting, Connecting},
		{"a's snapshot", 0, &Event{Addr: "a:1", Snap: snap}, Live, Connecting},
		{"b fails first", 0, &Event{Addr: "b:1", Err: errors.New("connection refused")}, Live, Unreachable},
		{"a heartbeats", 4 * time.Second, &Event{Addr: "a:1", Alive: true}, Live, Unreachable},
		{"a silent", 6 * time.Second, nil, Stale, Unreachable},
		{"a lost", 0, &Event{Addr: "a:1", Err: errors.New("EOF")}, Stale, Unreachable},
		{"a long silent", 15 * time.Second, nil, Unreachable, Unreachable},
		{"a back", time.Second, &Event{Addr: "a:1", Alive: true}, Live, Unreachable},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		if st.ev != nil {
			tr.apply(*st.ev)
		}
		tr.age()
		tr.publish()
		f := tr.Latest()
		if a, b := f.Node("a:1"), f.Node("b:1"); a.State != st.a || b.State != st.b {
			t.Fatalf("%s: a %s (%s), b %s (%s); want %s, %s", st.name, a.State, a.Reason, b.State, b.Reason, st.a, st.b)
		}
	}
	f := tr.Latest()
	if a := f.Node("a:1"); a.Name != "gpu-a" || a.Snap != snap {
		t.Fatalf("a: %+v", a)
	}
	if !f.Answered() {
		t.Fatal("every node answered")
	}
}

// TestTrackerPrometheusSeen: through Prometheus a node's last seen is its
// last scrape (Event.Seen), up to a scrape interval old, while liveness
// counts from the refresh that found its series current: a node scraped
// every 15 s stays live. A node listed down (an Err with Seen, its last
// scrape's figures with it) is added, stale, last seen at that scrape,
// and unreachable once that scrape is UnreachableAfter old.
func TestTrackerPrometheusSeen(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(nil, "prometheus", Options{StaleAfter: 6 * time.Second, UnreachableAfter: 20 * time.Second, Dynamic: true,
		Now: func() time.Time { return now }})
	snap := &model.Snapshot{Node: "p", Seq: 1}
	scraped := now.Add(-14 * time.Second)
	tr.apply(Event{Addr: "p", Snap: snap, Seen: scraped})
	for range 5 { // refreshes every 2 s, no new scrape yet
		now = now.Add(2 * time.Second)
		tr.apply(Event{Addr: "p", Alive: true, Seen: scraped})
		tr.age()
	}
	tr.publish()
	if n := tr.Latest().Node("p"); n.State != Live || !n.LastSeen.Equal(scraped) {
		t.Fatalf("p: %s (%s), last seen %s; want live, last seen %s", n.State, n.Reason, n.LastSeen, scraped)
	}
	down := &model.Snapshot{Node: "q", Seq: 7}
	last := now.Add(-3 * time.Second)
	tr.apply(Event{Addr: "q", Snap: down, Seen: last, Err: errors.New("target down")})
	tr.age()
	tr.publish()
	if n := tr.Latest().Node("q"); n == nil || n.State != Stale || n.Snap != down || !n.LastSeen.Equal(last) || n.Reason != "target down" {
		t.Fatalf("q: %+v; want it stale with its last figures, last seen %s", n, last)
	}
	now = last.Add(20 * time.Second)
	tr.apply(Event{Addr: "q", Seen: last, Err: errors.New("target down")})
	tr.age()
	tr.publish()
	if n := tr.Latest().Node("q"); n.State != Unreachable || n.Snap != down || !n.LastSeen.Equal(last) {
		t.Fatalf("q: %s, last seen %s; want unreachable, last seen %s", n.State, n.LastSeen, last)
	}
	// An error without Seen (Prometheus itself failing) adds no node.
	tr.apply(Event{Addr: "r", Err: errors.New("prometheus: connection refused")})
	if tr.Latest().Node("r") != nil || len(tr.nodes) != 2 {
		t.Fatalf("nodes %v", tr.nodes)
	}
}

// TestTrackerPrometheusTarget: the console's node through Prometheus is
// at its scrape target (Event.Target), kept while it is down, and at its
// new one once it moves; over SSH the address is the one dialled.
func TestTrackerPrometheusTarget(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(nil, "prometheus", Options{Dynamic: true, Now: func() time.Time { return now }})
	steps := []struct {
		ev   Event
		want string
	}{
		{Event{Addr: "demo-1", Snap: &model.Snapshot{Node: "demo-1", Seq: 1}, Seen: now, Target: "127.0.0.1:9471"}, "127.0.0.1:9471"},
		{Event{Addr: "demo-1", Seen: now, Err: errors.New("target down")}, "127.0.0.1:9471"},
		{Event{Addr: "demo-1", Alive: true, Seen: now, Target: "10.0.0.5:9471"}, "10.0.0.5:9471"},
	}
	for i, s := range steps {
		tr.apply(s.ev)
		tr.publish()
		if n := tr.Latest().Node("demo-1"); n == nil || n.Address() != s.want || n.Name != "demo-1" {
			t.Fatalf("step %d: %+v; want demo-1 at %s", i, n, s.want)
		}
	}
	ssh := NewTracker([]string{"10.0.0.1:2222"}, "ssh", Options{Now: func() time.Time { return now }})
	ssh.apply(Event{Addr: "10.0.0.1:2222", Snap: &model.Snapshot{Node: "gpu1", Seq: 1}})
	ssh.publish()
	if n := ssh.Latest().Node("10.0.0.1:2222"); n.Address() != "10.0.0.1:2222" || n.Name != "gpu1" {
		t.Fatalf("over SSH: %s at %s", n.Name, n.Address())
	}
}

// TestTrackerPrometheusWaiting: a node whose exporter is up but has
// published no snapshot yet (Alive with Waiting, each refresh) is added,
// connecting with that reason, last seen at its current scrape, and never
// ages while it keeps answering; live on its first snapshot; after a
// restart, waiting again, it is stale on its old figures, not unreachable.
func TestTrackerPrometheusWaiting(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(nil, "prometheus", Options{StaleAfter: 6 * time.Second, UnreachableAfter: 20 * time.Second, Dynamic: true,
		Now: func() time.Time { return now }})
	const why = "exporter up, no snapshot yet"
	check := func(step string, st State, reason string, seen time.Time) {
		t.Helper()
		tr.age()
		tr.publish()
		n := tr.Latest().Node("w")
		if n == nil || n.State != st || n.Reason != reason || !n.LastSeen.Equal(seen) {
			t.Fatalf("%s: %+v; want %s %q, last seen %s", step, n, st, reason, seen)
		}
	}
	for range 20 { // 40 s of refreshes, scraped every second
		now = now.Add(2 * time.Second)
		tr.apply(Event{Addr: "w", Alive: true, Seen: now.Add(-time.Second), Waiting: why})
		check("waiting", Connecting, why, now.Add(-time.Second))
	}
	snap := &model.Snapshot{Node: "w", Seq: 1}
	tr.apply(Event{Addr: "w", Snap: snap, Seen: now})
	check("first snapshot", Live, "", now)
	for range 20 { // restarted: up, no snapshot yet again
		now = now.Add(2 * time.Second)
		tr.apply(Event{Addr: "w", Alive: true, Seen: now.Add(-time.Second), Waiting: why})
		check("restarted", Stale, why, now.Add(-time.Second))
	}
	if n := tr.Latest().Node("w"); n.Snap != snap {
		t.Fatalf("restarted: figures %+v, want the last ones kept", n.Snap)
	}
	tr.apply(Event{Addr: "w", Alive: true, Seen: now})
	check("snapshot again (same sequence)", Live, "", now)
}

// TestTrackerDownOnlyAges: a node only ever listed as down (through
// Prometheus, never current) turns unreachable UnreachableAfter past its
// last scrape even when the source stops listing it before then (a
// --lookback shorter than --unreachable-after): it stayed stale forever.
func TestTrackerDownOnlyAges(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker(nil, "prometheus", Options{StaleAfter: 6 * time.Second, UnreachableAfter: 20 * time.Second, Dynamic: true,
		Now: func() time.Time { return now }})
	last := now.Add(-3 * time.Second)
	for range 3 { // listed while within a 10 s lookback
		tr.apply(Event{Addr: "q", Seen: last, Err: errors.New("target down")})
		tr.age()
		now = now.Add(2 * time.Second)
	}
	tr.publish()
	if n := tr.Latest().Node("q"); n.State != Stale || !n.LastSeen.Equal(last) {
		t.Fatalf("q listed: %s, last seen %s", n.State, n.LastSeen)
	}
	for now.Sub(last) < 25*time.Second { // no longer listed
		now = now.Add(time.Second)
		tr.age()
	}
	tr.publish()
	if n := tr.Latest().Node("q"); n.State != Unreachable || !n.LastSeen.Equal(last) {
		t.Fatalf("q 25 s after its last scrape: %s (%s), last seen %s; want unreachable", n.State, n.Reason, n.LastSeen)
	}
}

// TestTrackerMarksTwins: two addresses over SSH that give one node name
// are marked, each naming the other (one node reached twice, or a cloned
// name: its figures would be counted twice); a third of another name is
// not, and --once's answer fails on the marked ones.
func TestTrackerMarksTwins(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := NewTracker([]string{"10.0.0.1:22", "10.0.0.2:22", "10.0.0.3:22"}, "ssh", Options{Now: func() time.Time { return now }})
	for addr, name := range map[string]string{"10.0.0.1:22": "gpu-a", "10.0.0.2:22": "gpu-a", "10.0.0.3:22": "gpu-c"} {
		tr.apply(Event{Addr: addr, Snap: &model.Snapshot{Node: name}})
	}
	tr.publish()
	f := tr.Latest()
	for _, c := range []struct{ addr, other string }{{"10.0.0.1:22", "10.0.0.2:22"}, {"10.0.0.2:22", "10.0.0.1:22"}} {
		if n := f.Node(c.addr); !strings.HasPrefix(n.Note, "shares its name (gpu-a) with "+c.other+":") {
			t.Errorf("%s: note %q", c.addr, n.Note)
		}
	}
	if n := f.Node("10.0.0.3:22"); n.Note != "" {
		t.Errorf("gpu-c marked: %q", n.Note)
	}
	if a := NewAnswer(f, false, nil, "", Settings{}); a.Failure == "" || len(a.NodeLines) != 2 {
		t.Errorf("--once: failure %q, lines %q", a.Failure, a.NodeLines)
	}
}

package fleet

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/internal/promtest"
)

// TestPromSilentNodes reads the fleet from VictoriaMetrics, fed by a real
// Prometheus that scrapes one node every 2 s and another every 5 s, then
// stops Prometheus: nothing scrapes either node any more, no staleness
// marker is written, and the store answers with their last samples for
// minutes. While Prometheus runs, neither node leaves live, the slow one
// included, whose last scrape is often older than --unreachable-after
// (3 s here); once it is stopped, each turns stale within a bounded time
// (a few of its own intervals, from its last scrape), then unreachable,
// with its last scrape's age, in --once's fleet and in the console's
// tracker alike. Both stayed live ("SEEN 43s") and --once exited 0.
func TestPromSilentNodes(t *testing.T) {
	promtest.Prometheus(t)
	vm := promtest.StartVictoria(t)
	const (
		fastEvery = 2 * time.Second
		slowEvery = 5 * time.Second
		ua        = 3 * time.Second
	)
	fast := promtest.NewFakeTarget(t, promtest.Snapshot("fast", 1))
	slow := promtest.NewFakeTarget(t, promtest.Snapshot("slow", 1))
	srv := promtest.StartWith(t, []promtest.Target{{Addr: fast.Addr, Interval: fastEvery}, {Addr: slow.Addr, Interval: slowEvery}},
		promtest.Options{RemoteWrite: vm.WriteURL()})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)

	po := PromOptions{URL: vm.URL, Interval: 250 * time.Millisecond, Timeout: 5 * time.Second, Lookback: 5 * time.Minute, UnreachableAfter: ua}
	c, err := NewPromClient(po)
	if err != nil {
		t.Fatal(err)
	}
	refresh := func() ([]PromNode, time.Time) {
		t.Helper()
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return nodes, time.Now()
	}
	// Until the store holds enough of the slow node's scrapes to tell its
	// interval (judged by the 1 min default before).
	for {
		nodes, _ := refresh()
		if len(nodes) == 2 && promNode(t, nodes, "slow").Overdue < SilentScrapes*DefaultScrapeInterval &&
			promNode(t, nodes, "fast").Overdue < SilentScrapes*DefaultScrapeInterval {
			t.Logf("overdue after: fast %s, slow %s", promNode(t, nodes, "fast").Overdue, promNode(t, nodes, "slow").Overdue)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the scrape intervals were never learnt: %+v", nodes)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// The console's source, fed by the same store.
	src, err := StartPrometheus(ctx, po, Options{StaleAfter: ua, UnreachableAfter: ua}, true)
	if err != nil {
		t.Fatal(err)
	}
	state := func(name string) Node {
		if n := src.Tracker.Latest().Node(name); n != nil {
			return *n
		}
		return Node{}
	}

	// Healthy: three of the slow node's intervals, every refresh live.
	var oldest time.Duration
	for end := time.Now().Add(3 * slowEvery); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		nodes, now := refresh()
		fl := PromFleet(nodes, now, ua)
		for _, name := range []string{"fast", "slow"} {
			if n := fl.Node(name); n == nil || n.State != Live {
				t.Fatalf("--once while Prometheus scrapes: %s is %+v, want live", name, n)
			}
			oldest = max(oldest, now.Sub(promNode(t, nodes, name).Scraped))
			if n := state(name); n.Addr != "" && n.State != Live {
				t.Fatalf("console while Prometheus scrapes: %s is %s (%s), want live", name, n.State, n.Reason)
			}
		}
	}
	if oldest < ua {
		t.Logf("the slow node's last scrape was never older than --unreachable-after (%s): the test did not test a node scraped less often", oldest)
	}

	srv.Stop()
	stopped := time.Now()
	// Stale within SilentScrapes of its interval (its Overdue, from its
	// last scrape), plus the estimate's slack and a refresh; unreachable
	// --unreachable-after later.
	bound := map[string]time.Duration{"fast": SilentScrapes*fastEvery*3/2 + 2*time.Second, "slow": SilentScrapes*slowEvery*3/2 + 2*time.Second}
	staleAt := map[string]time.Duration{}
	for len(staleAt) < 2 || time.Since(stopped) < bound["fast"]+ua {
		nodes, now := refresh()
		fl := PromFleet(nodes, now, ua)
		for _, name := range []string{"fast", "slow"} {
			n := fl.Node(name)
			if n == nil {
				t.Fatalf("%s left the fleet", name)
			}
			if _, ok := staleAt[name]; !ok && n.State != Live {
				staleAt[name] = time.Since(stopped)
				if !strings.Contains(n.Reason, "last scraped") || !strings.Contains(n.Reason, "no longer scraped") {
					t.Errorf("%s: reason %q, want since when it was last scraped", name, n.Reason)
				}
				t.Logf("%s %s %.1fs after Prometheus stopped: %s", name, n.State, staleAt[name].Seconds(), n.Reason)
			}
			if n.State == Unreachable && now.Sub(n.LastSeen) < promNode(t, nodes, name).Overdue+ua {
				t.Errorf("%s unreachable %s after its last scrape, before its overdue %s + %s", name, now.Sub(n.LastSeen), promNode(t, nodes, name).Overdue, ua)
			}
		}
		if d := time.Since(stopped); d > bound["slow"]+ua+5*time.Second {
			t.Fatalf("%.0fs after Prometheus stopped: still live: %v (stale at %v)", d.Seconds(), fl.Nodes, staleAt)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for name, at := range staleAt {
		if at > bound[name] {
			t.Errorf("%s turned stale %s after Prometheus stopped, want within %s", name, at, bound[name])
		}
	}
	nodes, now := refresh()
	if n := PromFleet(nodes, now, ua).Node("fast"); n.State != Unreachable {
		t.Errorf("--once %s after Prometheus stopped: fast is %s (%s), want unreachable", now.Sub(stopped), n.State, n.Reason)
	}
	// The console saw it too.
	time.Sleep(time.Second)
	for _, name := range []string{"fast", "slow"} {
		if n := state(name); n.State == Live || !strings.Contains(n.Reason, "last scraped") {
			t.Errorf("console %s after Prometheus stopped: %s is %s (%s), want stale or unreachable, since when", time.Since(stopped), name, n.State, n.Reason)
		}
	}
	if n := state("fast"); n.State != Unreachable {
		t.Errorf("console: fast is %s (%s), want unreachable", n.State, n.Reason)
	}
}

// TestScrapeIntervals: the counts are the store's answer, outside input:
// what is no count of at least minScrapes says no interval (the default
// is used), never one shorter than the spacing the counts allow.
func TestScrapeIntervals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	last := now.Add(-time.Second)
	vec := func(c float64) pmodel.Vector {
		return pmodel.Vector{{Metric: pmodel.Metric{"node": "a"}, Value: pmodel.SampleValue(c), Timestamp: pmodel.TimeFromUnixNano(now.UnixNano())}}
	}
	none := pmodel.Vector{}
	for _, tc := range []struct {
		name   string
		counts []pmodel.Vector
		last   time.Time
		want   time.Duration // 0: not known
	}{
		{"every 1s: 15 in 15s", []pmodel.Vector{vec(15), vec(60), vec(240), vec(600)}, last, time.Second},
		{"every 5s, for 20s", []pmodel.Vector{vec(3), vec(4), vec(4), vec(4)}, last, 7 * time.Second},
		{"every 2m", []pmodel.Vector{none, none, vec(2), vec(5)}, last, 149750 * time.Millisecond},
		{"too few anywhere", []pmodel.Vector{vec(1), vec(2), vec(2), vec(2)}, last, 0},
		{"NaN", []pmodel.Vector{vec(math.NaN()), vec(math.NaN()), none, none}, last, 0},
		{"+Inf", []pmodel.Vector{vec(math.Inf(1)), none, none, none}, last, 0},
		{"-Inf and negative", []pmodel.Vector{vec(math.Inf(-1)), vec(-5), none, none}, last, 0},
		{"huge", []pmodel.Vector{vec(1e300), none, none, none}, last, 0},
		{"last scrape after now", []pmodel.Vector{vec(15), none, none, none}, now.Add(time.Minute), 0},
		{"last scrape before the window", []pmodel.Vector{vec(15), none, none, none}, now.Add(-time.Minute), 0},
		{"more answers than windows", []pmodel.Vector{none, none, none, none, vec(1000)}, last, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scrapeIntervals(tc.counts, map[string]time.Time{"a": tc.last}, now)["a"]
			if got != tc.want {
				t.Errorf("interval %s, want %s", got, tc.want)
			}
		})
	}
}

// TestLearnSpacing: the step between two scrapes the refreshes read is
// the node's interval, over a count's estimate stretched by a gap in the
// store's data (Prometheus down a while within the window): read from
// the count alone, a node scraped every 15 s was still live 57 s after
// its last scrape, right after Prometheus came back. A step follows a
// longer interval at once; a node no longer current is forgotten.
func TestLearnSpacing(t *testing.T) {
	c, err := NewPromClient(PromOptions{URL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	steps := []struct {
		scraped  map[string]time.Time
		counted  map[string]time.Duration
		want     map[string]time.Duration
		remember int
	}{
		{map[string]time.Time{"a": t0, "b": t0}, map[string]time.Duration{"a": 23 * time.Second}, map[string]time.Duration{"a": 23 * time.Second}, 2},
		// The same scrape read again: no step yet.
		{map[string]time.Time{"a": t0, "b": t0}, map[string]time.Duration{"a": 23 * time.Second}, map[string]time.Duration{"a": 23 * time.Second}, 2},
		{map[string]time.Time{"a": t0.Add(15 * time.Second), "b": t0.Add(time.Second)}, map[string]time.Duration{"a": 23 * time.Second},
			map[string]time.Duration{"a": 15 * time.Second, "b": time.Second}, 2},
		// A scrape older than the last read (a lagging replica) is no step.
		{map[string]time.Time{"a": t0.Add(10 * time.Second), "b": t0.Add(time.Minute + time.Second)}, map[string]time.Duration{},
			map[string]time.Duration{"a": 15 * time.Second, "b": time.Minute}, 2},
		// a is no longer current: forgotten.
		{map[string]time.Time{"b": t0.Add(2*time.Minute + time.Second)}, map[string]time.Duration{}, map[string]time.Duration{"b": time.Minute}, 1},
		{map[string]time.Time{"a": t0.Add(time.Hour)}, map[string]time.Duration{"a": 40 * time.Second}, map[string]time.Duration{"a": 40 * time.Second}, 1},
	}
	for i, st := range steps {
		got := c.learnSpacing(st.counted, st.scraped)
		if len(got) != len(st.want) {
			t.Errorf("refresh %d: intervals %v, want %v", i, got, st.want)
		}
		for name, w := range st.want {
			if got[name] != w {
				t.Errorf("refresh %d: %s every %s, want %s", i, name, got[name], w)
			}
		}
		if len(c.spacing) != st.remember {
			t.Errorf("refresh %d: %d nodes remembered, want %d", i, len(c.spacing), st.remember)
		}
	}
}

// TestByWindow: qCounts' answer is outside input: a sample is put in the
// window its label names, or dropped.
func TestByWindow(t *testing.T) {
	smp := func(node, window string) *pmodel.Sample {
		m := pmodel.Metric{"node": pmodel.LabelValue(node)}
		if window != "-" {
			m["window"] = pmodel.LabelValue(window)
		}
		return &pmodel.Sample{Metric: m, Value: 5}
	}
	got := byWindow(pmodel.Vector{smp("a", "0"), smp("b", "3"), smp("c", "1"), smp("d", "01"), smp("e", "-1"),
		smp("f", "4"), smp("g", "x"), smp("h", "-"), smp("i", " 2"), smp("j", "1")})
	want := [][]string{{"a"}, {"c", "j"}, nil, {"b"}}
	if len(got) != len(intervalWindows) {
		t.Fatalf("%d windows, want %d", len(got), len(intervalWindows))
	}
	for i, w := range want {
		var names []string
		for _, s := range got[i] {
			names = append(names, string(s.Metric["node"]))
		}
		if strings.Join(names, ",") != strings.Join(w, ",") {
			t.Errorf("window %d: %v, want %v", i, names, w)
		}
	}
}

package fleet

import (
	"bytes"
	"context"
	"fmt"
	"github.com/fgtop/fgtop/engine/metrics"
	"github.com/fgtop/fgtop/model"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/internal/promtest"
)

// promNode returns the node named name of a refresh, or fails.
func promNode(t *testing.T, nodes []PromNode, name string) PromNode {
	t.Helper()
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s in %+v", name, nodes)
	return PromNode{}
}

func newTestPromClient(t *testing.T, url string) *PromClient {
	t.Helper()
	c, err := NewPromClient(PromOptions{URL: url, Interval: 200 * time.Millisecond, Timeout: 5 * time.Second, Lookback: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPromClient runs one real Prometheus scraping fake exporters (its
// scrapes start about 5 s after it does), for the subtests.
func TestPromClient(t *testing.T) {
	promtest.Prometheus(t)
	ready := promtest.NewFakeTarget(t, promtest.Snapshot("ready", 3))
	fresh := promtest.NewFakeTarget(t, promtest.BuildInfo("fresh"))
	b := promtest.NewFakeTarget(t, promtest.Snapshot("b", 5))
	d := promtest.NewFakeTarget(t, promtest.Snapshot("d", 7))
	// Two exporters given one node name (a cloned config).
	twin1 := promtest.NewFakeTarget(t, promtest.Snapshot("twin", 2))
	twin2 := promtest.NewFakeTarget(t, promtest.Snapshot("twin", 4))
	// A slot-based node, as the real exporter serves it: each agent given
	// 1.0 cuda.shares over three free GPUs.
	slotNode := slotBasedNode()
	given := promtest.NewFakeTarget(t, exporterText(t, slotNode))
	srv := promtest.Start(t, []promtest.Target{{Addr: ready.Addr}, {Addr: fresh.Addr}, {Addr: b.Addr}, {Addr: d.Addr}, {Addr: twin1.Addr}, {Addr: twin2.Addr}, {Addr: given.Addr}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	srv.WaitQuery(t, ctx, `count(fgtop_build_info)`, func(v pmodel.Vector) bool { return len(v) == 1 && v[0].Value == 7 })

	// --fit on it through Prometheus keeps the manager's limit: 1.5 fits
	// the GPUs but no agent's 1.0 (it "fitted" when only memory's given
	// amount was exported).
	t.Run("ManagerLimit", func(t *testing.T) {
		c := newTestPromClient(t, srv.URL)
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := promNode(t, nodes, "given")
		if n.Snap == nil {
			t.Fatalf("given: %+v", n)
		}
		for _, r := range []string{"cuda.shares=1.5", "cuda.shares=0.5"} {
			req, err := ParseRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			got, want := FitRequest(n.Snap, req, Settings{}), FitRequest(slotNode, req, Settings{})
			if got.OK != want.OK || got.Agent != want.Agent || got.ErrKind != want.ErrKind {
				t.Errorf("%s through Prometheus: ok %v agent %s %s %q; from the snapshot: ok %v agent %s %s %q", r,
					got.OK, got.Agent, got.ErrKind, got.Reason, want.OK, want.Agent, want.ErrKind, want.Reason)
			}
			if r == "cuda.shares=1.5" && (got.OK || !strings.Contains(got.Reason, "the manager would not send it there")) {
				t.Errorf("%s: %+v, want the manager's refusal", r, got)
			}
		}
		// Its console counts the node's kernels, not its rows.
		if k := n.Snap.SummaryKernels; k == nil || *k != slotNode.NumKernels() {
			t.Errorf("kernels through Prometheus: %v, the node has %d", k, slotNode.NumKernels())
		}
		// Its console draws what is held (one holding an agent: kernels
		// are not series) and says it has an error, not "no issues".
		hs := n.Snap.Usage[model.DeviceKey{Name: "cuda", ID: "C"}].Holdings()
		if len(hs) != 1 || hs[0].Agent != "a1" || hs[0].Amount.String() != "0.25" {
			t.Errorf("holdings of C through Prometheus: %+v", hs)
		}
		if len(n.Snap.Issues) != 1 || n.Snap.Issues[0].Code != model.IssueFromSummary || n.Snap.Issues[0].Severity != model.SevError ||
			!strings.Contains(n.Snap.Issues[0].Message, "the node has 1 error(s) and 0 warning(s)") || n.Sum.Issues != 1 {
			t.Errorf("issues through Prometheus: %+v (summary %d)", n.Snap.Issues, n.Sum.Issues)
		}
	})

	// Their series would be summed into one node's: the name is said to
	// be shared, with the targets, and no figures are given.
	t.Run("SharedName", func(t *testing.T) {
		c := newTestPromClient(t, srv.URL)
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tw := promNode(t, nodes, "twin")
		if tw.Snap != nil || !strings.HasPrefix(tw.Conflict, "2 Prometheus targets export this node name (") ||
			!strings.Contains(tw.Conflict, twin1.Addr) || !strings.Contains(tw.Conflict, twin2.Addr) {
			t.Fatalf("twin: %+v", tw)
		}
		fl := PromFleet(nodes, time.Now(), time.Minute)
		if n := fl.Node("twin"); n.State != Unreachable || n.Reason != tw.Conflict || n.Snap != nil {
			t.Fatalf("--once: twin %s %q", n.State, n.Reason)
		}
		if n := fl.Node("ready"); n.State != Live || n.Snap == nil {
			t.Fatalf("--once: ready %s %q", n.State, n.Reason)
		}
	})
	// ADDRESS through Prometheus is the scrape target, what an operator
	// fixes (it was the node's name again: "demo-1 ... demo-1"): in the
	// node, the fleet and --json, for a node with figures, one waiting
	// for its first, and a name two targets export (both).
	t.Run("Target", func(t *testing.T) {
		c := newTestPromClient(t, srv.URL)
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fl := PromFleet(nodes, time.Now(), time.Minute)
		js := map[string]string{}
		for _, n := range ToJSON(fl).Nodes {
			js[n.Node] = n.Address
		}
		for _, tc := range []struct {
			node string
			want []string
		}{
			{"ready", []string{ready.Addr}},
			{"fresh", []string{fresh.Addr}},
			{"twin", []string{twin1.Addr, twin2.Addr}},
		} {
			slices.Sort(tc.want)
			want := strings.Join(tc.want, ", ")
			if got := promNode(t, nodes, tc.node).Target; got != want {
				t.Errorf("%s: target %q, want %q", tc.node, got, want)
			}
			if got := fl.Node(tc.node).Address(); got != want {
				t.Errorf("%s: address %q in the fleet, want %q", tc.node, got, want)
			}
			if got := js[tc.node]; got != want {
				t.Errorf("%s: --json address %q, want %q", tc.node, got, want)
			}
		}
	})
	// goDown takes a target down and waits until Prometheus saw it.
	goDown := func(t *testing.T, ctx context.Context, f *promtest.FakeTarget, node string) {
		t.Helper()
		f.Set("")
		srv.WaitQuery(t, ctx, fmt.Sprintf(`up{instance=%q} == 0`, f.Addr), func(v pmodel.Vector) bool { return len(v) == 1 })
		srv.WaitQuery(t, ctx, fmt.Sprintf(`fgtop_build_info{node=%q}`, node), func(v pmodel.Vector) bool { return len(v) == 0 })
	}

	// An exporter that is up but has published no snapshot yet serves
	// fgtop_build_info alone. It is not down: listed connecting ("exporter
	// up, no snapshot yet"), last seen at its current scrape, which moves
	// on with every scrape (it was read once and cached, as a down node's
	// last scrape, so it froze and turned unreachable while Prometheus
	// scraped it every second); the console's tracker keeps it connecting
	// past --unreachable-after; --once waits for its first snapshot, and
	// the console turns it live then.
	t.Run("NoSnapshotYet", func(t *testing.T) {
		c := newTestPromClient(t, srv.URL)
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if r := promNode(t, nodes, "ready"); r.Down != "" || r.Waiting != "" || r.Snap == nil || r.Snap.Seq != 3 {
			t.Fatalf("ready: %+v", r)
		}
		first := promNode(t, nodes, "fresh")
		if first.Down != "" || first.Waiting != WaitingFirstSnapshot || first.Snap != nil || now.Sub(first.Scraped) > 3*time.Second {
			t.Fatalf("fresh: down %q waiting %q snap %v scraped %s ago; want up, no snapshot yet, scraped just now",
				first.Down, first.Waiting, first.Snap, now.Sub(first.Scraped))
		}
		fl := PromFleet(nodes, now, time.Second)
		if n := fl.Node("fresh"); n.State != Connecting || !strings.Contains(n.Reason, "no snapshot yet") || !n.LastSeen.Equal(first.Scraped) {
			t.Fatalf("--once: fresh %s %q, last seen %s; want connecting, no snapshot yet, at %s", n.State, n.Reason, n.LastSeen, first.Scraped)
		}
		if n := fl.Node("ready"); n.State != Live {
			t.Fatalf("--once: ready %s %q", n.State, n.Reason)
		}
		// Its scrape time moves on with Prometheus's scrapes (every second).
		for later := first; !later.Scraped.After(first.Scraped); {
			if time.Since(now) > 5*time.Second {
				t.Fatalf("fresh: last scraped still %s (%s ago): frozen", later.Scraped, time.Since(later.Scraped))
			}
			time.Sleep(200 * time.Millisecond)
			nodes, err := c.Refresh(ctx)
			if err != nil {
				t.Fatal(err)
			}
			later = promNode(t, nodes, "fresh")
			if later.Waiting != WaitingFirstSnapshot || later.Down != "" {
				t.Fatalf("fresh, later: down %q waiting %q", later.Down, later.Waiting)
			}
		}

		// The console: connecting with the reason for well past
		// UnreachableAfter.
		tr := NewTracker(nil, "prometheus", Options{StaleAfter: 300 * time.Millisecond, UnreachableAfter: time.Second, Dynamic: true})
		fctx, fcancel := context.WithCancel(ctx)
		done := make(chan struct{}, 2)
		go func() { _ = tr.Run(fctx); done <- struct{}{} }()
		go func() { FollowPrometheus(fctx, tr, c); done <- struct{}{} }()
		defer func() { fcancel(); <-done; <-done }()
		start := time.Now()
		sub := tr.Subscribe(fctx)
		for f := range sub {
			n := f.Node("fresh")
			if n == nil {
				continue
			}
			if n.State != Connecting || n.Reason != WaitingFirstSnapshot {
				t.Fatalf("console: fresh %s %q, last seen %s ago; want connecting, %s", n.State, n.Reason, time.Since(n.LastSeen), WaitingFirstSnapshot)
			}
			if time.Since(start) > 2500*time.Millisecond {
				if age := time.Since(n.LastSeen); age > 2500*time.Millisecond {
					t.Fatalf("console: fresh last seen %s ago, want its current scrape", age)
				}
				break
			}
		}
		// --once waits (at most its --timeout) for the first snapshot.
		got := make(chan []PromNode, 1)
		go func() {
			nodes, err := c.RefreshAnswered(ctx, 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			got <- nodes
		}()
		time.Sleep(500 * time.Millisecond)
		fresh.Set(promtest.Snapshot("fresh", 1))
		if n := promNode(t, <-got, "fresh"); n.Waiting != "" || n.Snap == nil || n.Snap.Seq != 1 {
			t.Fatalf("--once: fresh waiting %q snap %+v; want its first snapshot", n.Waiting, n.Snap)
		}
		for f := range sub {
			if n := f.Node("fresh"); n.State == Live && n.Snap != nil && n.Snap.Seq == 1 && n.Reason == "" {
				return
			}
		}
		t.Fatalf("console: fresh never live with its first snapshot: %+v", tr.Latest().Node("fresh"))
	})

	// A down node's figures are kept between refreshes only while its
	// last scrape stays the same: a target that came back for one scrape
	// between two refreshes, and went down again, is read again at that
	// newer scrape (its figures were kept from the first one).
	t.Run("DownReread", func(t *testing.T) {
		goDown(t, ctx, b, "b")
		c := newTestPromClient(t, srv.URL)
		nodes, err := c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first := promNode(t, nodes, "b")
		if first.Down != "target down" || first.Snap == nil || first.Snap.Seq != 5 {
			t.Fatalf("b: down %q snap %+v; want target down, seq 5", first.Down, first.Snap)
		}
		// The target to fix is said of a node that is down too.
		if first.Target != b.Addr {
			t.Errorf("b, down: target %q, want %s", first.Target, b.Addr)
		}
		// Back for a scrape with snapshot 6, then down again, between two
		// refreshes.
		b.Set(promtest.Snapshot("b", 6))
		srv.WaitQuery(t, ctx, `fgtop_snapshot_sequence{node="b"} == 6`, func(v pmodel.Vector) bool { return len(v) == 1 })
		goDown(t, ctx, b, "b")
		nodes, err = c.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		again := promNode(t, nodes, "b")
		if again.Down != "target down" || again.Snap == nil || again.Snap.Seq != 6 || !again.Scraped.After(first.Scraped) {
			t.Fatalf("b: down %q snap %+v last scraped %s (before: %s); want target down, seq 6, a later scrape",
				again.Down, again.Snap, again.Scraped, first.Scraped)
		}
	})

	// A failed read of a down node fails nothing else: the refresh still
	// returns the current nodes (it failed whole, and the console then
	// marked every live node stale), lists the down node without figures,
	// saying they could not be read, at its last scrape when that much was
	// read, and reads it again next refresh.
	t.Run("DownReadFails", func(t *testing.T) {
		goDown(t, ctx, d, "d")
		var fail atomic.Value // a query containing it fails
		fail.Store("")
		proxy := httptest.NewServer(failingProxy(t, srv.URL, func(q string) bool {
			f := fail.Load().(string)
			return f != "" && strings.Contains(q, f)
		}))
		defer proxy.Close()
		c := newTestPromClient(t, proxy.URL)
		refresh := func(step string) PromNode {
			t.Helper()
			nodes, err := c.Refresh(ctx)
			if err != nil {
				t.Fatalf("%s: the refresh failed: %v", step, err)
			}
			if r := promNode(t, nodes, "ready"); r.Down != "" || r.Snap == nil || r.Snap.Seq != 3 {
				t.Fatalf("%s: ready %+v, want it current", step, r)
			}
			return promNode(t, nodes, "d")
		}
		// Its last scrape cannot be read: listed, no figures, no time.
		fail.Store(`fgtop_build_info{node=~`)
		n := refresh("last scrape unread")
		if n.Snap != nil || !n.Scraped.IsZero() || !strings.HasPrefix(n.Down, "target down (its last scrape could not be read: ") {
			t.Fatalf("last scrape unread: d %q snap %+v scraped %s", n.Down, n.Snap, n.Scraped)
		}
		if f := PromFleet([]PromNode{n}, time.Now(), time.Second).Node("d"); f.State != Stale || f.Reason != n.Down {
			t.Fatalf("last scrape unread, --once: d %s %q", f.State, f.Reason)
		}
		// Its figures cannot be read: listed at its last scrape, no figures.
		fail.Store(`{node="d"}`)
		n = refresh("figures unread")
		if n.Snap != nil || n.Scraped.IsZero() || time.Since(n.Scraped) > 20*time.Second ||
			!strings.HasPrefix(n.Down, "target down (its figures could not be read: ") {
			t.Fatalf("figures unread: d %q snap %+v scraped %s", n.Down, n.Snap, n.Scraped)
		}
		if f := PromFleet([]PromNode{n}, time.Now(), time.Minute).Node("d"); f.State != Stale || !strings.Contains(f.Reason, "could not be read") ||
			!strings.Contains(f.Reason, "last scraped") || !f.LastSeen.Equal(n.Scraped) {
			t.Fatalf("figures unread, --once: d %s %q last seen %s", f.State, f.Reason, f.LastSeen)
		}
		// Read next refresh, once Prometheus answers.
		fail.Store("")
		again := refresh("read again")
		if again.Down != "target down" || again.Snap == nil || again.Snap.Seq != 7 || !again.Scraped.Equal(n.Scraped) {
			t.Fatalf("read again: d %q snap %+v scraped %s; want target down, seq 7, at %s", again.Down, again.Snap, again.Scraped, n.Scraped)
		}
	})
}

// failingProxy forwards to Prometheus at url, answering 503 to a query
// that fail accepts.
func failingProxy(t *testing.T, url string, fail func(query string) bool) http.Handler {
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := neturl.ParseQuery(string(body))
		if q := r.URL.Query().Get("query") + form.Get("query"); fail(q) {
			http.Error(w, "injected failure", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// slotBasedNode is shortNode in main's slot-based form: every agent on
// every device, each given 1.0 cuda.shares; a1's one kernel holds 0.25
// of GPU C, and the node has one error issue.
func slotBasedNode() *model.Snapshot {
	s := shortNode()
	s.Node = "given"
	for i := range s.Agents {
		s.Agents[i].Owns = nil
		s.Agents[i].Given = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.0"), model.SlotCPU: model.MustDec("2"), model.SlotMem: model.NewDec(32<<30, 0)}
	}
	amt := model.MustDec("0.25")
	s.SetKernels([]*model.Kernel{{ID: "11111111-2222-4333-8444-555555555555", Agent: "a1", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"C": amt}}}})
	key := model.DeviceKey{Name: "cuda", ID: "C"}
	s.Usage = map[model.DeviceKey]*model.DeviceUsage{key: {Key: key, Held: model.ResourceSlot{model.SlotCUDAShares: amt}, Kernels: 1,
		ByAgent: map[model.AgentID]model.ResourceSlot{"a1": {model.SlotCUDAShares: amt}}}}
	s.Issues = []model.Issue{{Severity: model.SevError, Code: model.IssueOverCapacity, Message: "held beyond its capacity"}}
	return s
}

// exporterText is what fgtop's exporter serves for s.
func exporterText(t *testing.T, s *model.Snapshot) string {
	t.Helper()
	return string(promtest.Exposition(t, metrics.New(metrics.Options{Latest: func() *model.Snapshot { return s }})))
}

// A node gone from the store's current series while no node at all is
// scraped is not said to be "no longer a target" alone: with Prometheus
// down, every target's up series leaves the store's lookback too.
func TestGoneReason(t *testing.T) {
	for _, tt := range []struct {
		isTarget, isUp, anyCurrent bool
		want                       string
	}{
		{false, false, true, "no longer a Prometheus target"},
		{false, false, false, "no node is scraped now: Prometheus down or no longer feeding the store, or this node no longer a target"},
		{true, true, true, "its target is up but no longer exports this node"},
		{true, false, true, "target down"},
		{true, false, false, "target down"},
	} {
		if got := goneReason(tt.isTarget, tt.isUp, tt.anyCurrent); got != tt.want {
			t.Errorf("goneReason(%v, %v, %v) = %q, want %q", tt.isTarget, tt.isUp, tt.anyCurrent, got, tt.want)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/model"
)

// TestFleetPrometheusOnce is the issue's check: three nodes, each with its
// fgtop exporter, scraped by a real Prometheus, into `fleet --prometheus
// URL --once --json`: every node's devices (held, capacity, free) equal its
// own `snapshot --json` as exact decimals, its summary (free, pieces,
// largest fit, kernels, issues) equals the one the fleet computes from that
// snapshot, and --fit through Prometheus places requests where the
// snapshot itself places them.
func TestFleetPrometheusOnce(t *testing.T) {
	promtest.Prometheus(t) // skip early, before building three nodes
	type member struct {
		name string
		n    *node
		k    int
		addr string
	}
	nodes := []*member{{name: "node-1"}, {name: "node-2"}, {name: "node-3"}}
	shares := [][]string{{"0.3", "0.25", "0.6"}, {"0.5", "0.125", "0.75", "0.2", "0.4"}, {"1.0"}}
	var targets []promtest.Target
	for i, m := range nodes {
		m.n = newNode(t)
		m.k = populate(t, m.n, shares[i]...)
		m.addr = startExporter(t, &sourceFlags{config: m.n.config, devices: m.n.mock, mockEtcd: m.n.etcd},
			&exporterFlags{listen: "127.0.0.1:0", node: m.name})
		scrapeUntil(t, m.addr, okKernels(m.k))
		targets = append(targets, promtest.Target{Addr: m.addr})
	}
	srv := promtest.Start(t, targets)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	srv.WaitQuery(t, ctx, `fgtop_kernels{state="ok"}`, func(v pmodel.Vector) bool {
		for _, m := range nodes {
			ok := false
			for _, s := range v {
				ok = ok || (string(s.Metric["node"]) == m.name && s.Value == pmodel.SampleValue(m.k))
			}
			if !ok {
				return false
			}
		}
		return true
	})
	out, stderr, code := runFleetCmd(t, "--prometheus", srv.URL, "--once", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Nodes) != 3 {
		t.Fatalf("%d nodes: %s", len(got.Nodes), out)
	}
	for i, m := range nodes {
		j := got.Nodes[i]
		doc := snapshotJSON(t, "--config", m.n.config, "--devices", m.n.mock, "--mock-etcd", m.n.etcd)
		doc.Node = m.name
		snap, err := doc.Model()
		if err != nil {
			t.Fatal(err)
		}
		want := fleet.Summarize(snap, fleet.Settings{})
		if j.Node != m.name || j.State != fleet.Live || j.Source != "prometheus" {
			t.Fatalf("node %d: %+v", i, j)
		}
		var gotDevs, wantDevs []string
		for _, d := range j.Devices {
			gotDevs = append(gotDevs, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
		}
		for _, d := range want.Devices {
			wantDevs = append(wantDevs, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
		}
		if strings.Join(gotDevs, "; ") != strings.Join(wantDevs, "; ") {
			t.Errorf("%s devices through Prometheus:\n got %s\nwant %s (its snapshot --json)", m.name, strings.Join(gotDevs, "; "), strings.Join(wantDevs, "; "))
		}
		// Exactly, trailing zeros included ("1.00", not "1"): the exporter's
		// exponent series carry what a float sample drops.
		eq := func(what string, a *model.Dec, b model.Dec) {
			if a == nil || !a.Identical(b) {
				t.Errorf("%s %s: %v through Prometheus, %s from its snapshot", m.name, what, a, b)
			}
		}
		eq("held", j.Held, want.Held)
		eq("capacity", j.Capacity, want.Capacity)
		eq("free", j.Free, want.Free)
		eq("largest fit", j.Largest, want.Largest)
		if j.Pieces == nil || j.Kernels == nil || j.Issues == nil || j.GPUs == nil ||
			*j.Pieces != want.Pieces || *j.Kernels != m.k || *j.Issues != want.Issues || *j.GPUs != want.GPUs {
			t.Errorf("%s: pieces %v kernels %v issues %v gpus %v; want %d %d %d %d", m.name, j.Pieces, j.Kernels, j.Issues, j.GPUs,
				want.Pieces, m.k, want.Issues, want.GPUs)
		}
		if i == 0 {
			// A typo'd slot is refused, naming the fleet's slots.
			_, errOut, code := runFleetCmd(t, "--prometheus", srv.URL, "--fit", "cuda.shres=1", "--json")
			if code != exitBadUsage || !strings.Contains(errOut, `unknown slot "cuda.shres": did you mean cuda.shares?`) {
				t.Errorf("--fit cuda.shres=1: exit %d, %s", code, errOut)
			}
		}
		// --fit through Prometheus places as the node's own snapshot does.
		for _, reqText := range []string{"cuda.shares=0.5", "cuda.shares=1.5", "cuda.shares=3", "cuda.shares=0.2,cpu=1,mem=1g"} {
			out, _, _ := runFleetCmd(t, "--prometheus", srv.URL, "--fit", reqText, "--json", "--compact")
			var fr fleet.JSONFitReport
			if err := json.Unmarshal([]byte(out), &fr); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			req, _ := fleet.ParseRequest(reqText)
			wf := fleet.FitRequest(snap, req, fleet.Settings{})
			gf := fr.Nodes[i].Fit
			if gf.Fits != wf.OK || gf.Agent != string(wf.Agent) || gf.Error != wf.ErrKind || placementJSON(gf.Placement) != placementJSON(fitPlacement(wf)) {
				t.Errorf("%s --fit %s through Prometheus: %+v; from its snapshot: ok %v agent %s %s %s", m.name, reqText, gf, wf.OK, wf.Agent, wf.ErrKind, placementJSON(fitPlacement(wf)))
			}
		}
	}
}

func placementJSON(m map[string]map[string]string) string {
	if m == nil {
		m = map[string]map[string]string{}
	}
	// Amounts through Prometheus drop trailing zeros: compare as decimals.
	for _, devs := range m {
		for d, v := range devs {
			devs[d] = model.MustDec(v).Normalize().String()
		}
	}
	return placementString(m)
}

func fitPlacement(f fleet.Fit) map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, s := range f.Placement {
		d := map[string]string{}
		for _, sh := range s.Shares {
			d[string(sh.Device)] = sh.Amount.String()
		}
		m[string(s.Slot)] = d
	}
	return m
}

// TestFleetPrometheusNodeDown: three exporters scraped by a real
// Prometheus, one of them stopped. Its series go stale at the next failed
// scrape, yet `fleet --prometheus --once --json` still lists all three:
// the stopped one stale (or unreachable), last seen at its real last
// scrape (before the stop, not the query's time), with that scrape's
// figures; the other two live, last seen at their own last scrape. The
// console's source (FollowPrometheus through the tracker) says the same.
func TestFleetPrometheusNodeDown(t *testing.T) {
	promtest.Prometheus(t)
	names := []string{"node-1", "node-2", "node-3"}
	var targets []promtest.Target
	var stops []func()
	var dead *node
	for i, name := range names {
		n := newNode(t)
		addr, stop := startExporterStoppable(t, &sourceFlags{config: n.config, devices: n.mock, mockEtcd: n.etcd},
			&exporterFlags{listen: "127.0.0.1:0", node: name})
		scrapeUntil(t, addr, okKernels(0))
		targets = append(targets, promtest.Target{Addr: addr})
		stops = append(stops, stop)
		if i == 2 {
			dead = n
		}
	}
	srv := promtest.Start(t, targets)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	srv.WaitQuery(t, ctx, `count(fgtop_snapshot_sequence)`, func(v pmodel.Vector) bool { return len(v) == 1 && v[0].Value == 3 })
	stopped := time.Now()
	stops[2]()
	// Prometheus's next scrape of node-3 fails: up 0, its series stale.
	srv.WaitQuery(t, ctx, `up == 0`, func(v pmodel.Vector) bool { return len(v) == 1 })
	srv.WaitQuery(t, ctx, `count(fgtop_build_info)`, func(v pmodel.Vector) bool { return len(v) == 1 && v[0].Value == 2 })

	out, stderr, code := runFleetCmd(t, "--prometheus", srv.URL, "--once", "--json")
	queried := time.Now()
	if code != exitProblem || !strings.Contains(stderr, "node-3: stale: target down") {
		t.Fatalf("exit %d, want 1 (node-3 is stale, not yet unreachable, and its figures are its last): %s\n%s", code, stderr, out)
	}
	var got fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3 (the stopped one listed): %s", len(got.Nodes), out)
	}
	doc := snapshotJSON(t, "--config", dead.config, "--devices", dead.mock, "--mock-etcd", dead.etcd)
	snap, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range fleet.Summarize(snap, fleet.Settings{}).Devices {
		want = append(want, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
	}
	wantDevs := strings.Join(want, "; ")
	for i, j := range got.Nodes {
		if j.Node != names[i] {
			t.Fatalf("node %d is %s, want %s", i, j.Node, names[i])
		}
		seen, err := time.Parse(time.RFC3339Nano, j.LastSeen)
		if err != nil {
			t.Fatalf("%s: last_seen %q: %v", j.Node, j.LastSeen, err)
		}
		if i < 2 {
			// Scraped every second: its last scrape is under 3 s old, and
			// not the query's own time.
			if j.State != fleet.Live || j.Error != "" || queried.Sub(seen) > 3*time.Second || seen.After(queried) {
				t.Errorf("%s: %s %q, last seen %s (queried %s)", j.Node, j.State, j.Error, seen, queried)
			}
			continue
		}
		if j.State != fleet.Stale && j.State != fleet.Unreachable {
			t.Errorf("%s, stopped: state %s, want stale or unreachable", j.Node, j.State)
		}
		if !seen.Before(stopped) || stopped.Sub(seen) > 3*time.Second {
			t.Errorf("%s: last seen %s, want its last scrape, just before the stop at %s", j.Node, seen, stopped)
		}
		if !strings.Contains(j.Error, "target down") || !strings.Contains(j.Error, "last scraped") {
			t.Errorf("%s: error %q, want the target down and since when", j.Node, j.Error)
		}
		if devs := jsonDevices(j); devs != wantDevs {
			t.Errorf("%s: devices %s, want its last figures %s", j.Node, devs, wantDevs)
		}
	}
	if !strings.Contains(stderr, "node-3: stale") && !strings.Contains(stderr, "node-3: unreachable") {
		t.Errorf("stderr does not name the stopped node: %q", stderr)
	}

	// The console's source: the tracker lists node-3 down, at the same
	// last scrape, with its figures, and the live two live.
	f := &fleetFlags{prometheus: srv.URL, refresh: 200 * time.Millisecond, lookback: fleet.DefaultLookback, timeout: 10 * time.Second,
		staleAfter: fleet.DefaultStaleAfter, unreachable: fleet.DefaultUnreachableAfter, heartbeat: time.Second, alloc: allocFlags{strategy: "evenly"}}
	fctx, fcancel := context.WithCancel(context.Background())
	defer fcancel()
	src, err := f.start(fctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Wait()
	defer fcancel()
	waitFleet(t, src.Tracker, "node-3 down, the others live", func(fl *fleet.Fleet) bool {
		if len(fl.Nodes) != 3 {
			return false
		}
		for _, n := range fl.Nodes {
			want := fleet.Live
			if n.Name == "node-3" {
				want = fleet.Stale
				if n.State == fleet.Unreachable {
					want = fleet.Unreachable
				}
				if n.Snap == nil || !n.LastSeen.Before(stopped) || !strings.Contains(n.Reason, "target down") {
					return false
				}
			}
			if n.State != want {
				return false
			}
		}
		return true
	})
}

// startExporterStoppable is startExporter with a stop function: the
// exporter stops listening when it returns.
func startExporterStoppable(t *testing.T, src *sourceFlags, ef *exporterFlags) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runExporter(ctx, exporterRun{src: src, flags: ef, stderr: io.Discard, ready: func(a string) { addrc <- a }})
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exporter: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("exporter did not stop within 10s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case a := <-addrc:
		return a, stop
	case err := <-done:
		t.Fatalf("exporter stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("exporter did not listen within 10s")
	}
	return "", stop
}

// jsonDevices prints a fleet node's devices.
func jsonDevices(j fleet.JSONNode) string {
	var out []string
	for _, d := range j.Devices {
		out = append(out, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
	}
	return strings.Join(out, "; ")
}

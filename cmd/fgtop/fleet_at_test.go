package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/model"
	fleetui "github.com/fgtop/fgtop/ui/fleet"
)

// TestFleetAtPrometheus: two exporters on real scratch trees scraped by a
// real Prometheus while their kernels change and one of them stops;
// `fleet --at T` for moments before, between and after the changes says
// what each node's own `snapshot --json` said at T.
func TestFleetAtPrometheus(t *testing.T) { fleetAtScenario(t, false) }

// TestFleetAtVictoriaMetrics is TestFleetAtPrometheus with the fleet read
// from a real VictoriaMetrics that Prometheus remote-writes to: the
// long-term store answers `fleet --at` as Prometheus does.
func TestFleetAtVictoriaMetrics(t *testing.T) { fleetAtScenario(t, true) }

// atMoment is one moment of the scenario and each node's own snapshot
// then (nil: the node had no data then).
type atMoment struct {
	name  string
	at    time.Time
	snaps map[string]*model.Snapshot
}

func fleetAtScenario(t *testing.T, viaVictoria bool) {
	promtest.Prometheus(t)
	var vm *promtest.Victoria
	if viaVictoria {
		vm = promtest.StartVictoria(t)
	}
	before := time.Now().Add(-2 * time.Second)
	n1, n2 := newNode(t), newNode(t)
	populate(t, n1, "0.3", "0.25")
	k2 := n2.addKernel(t, agentA, "9999aaaa-1111-4222-8333-444455556666", gpu1, "0.5")
	addr1 := startExporter(t, &sourceFlags{config: n1.config, devices: n1.mock, mockEtcd: n1.etcd}, &exporterFlags{listen: "127.0.0.1:0", node: "node-1"})
	addr2, stop2 := startExporterStoppable(t, &sourceFlags{config: n2.config, devices: n2.mock, mockEtcd: n2.etcd}, &exporterFlags{listen: "127.0.0.1:0", node: "node-2"})
	scrapeUntil(t, addr1, okKernels(2))
	scrapeUntil(t, addr2, okKernels(1))
	var o promtest.Options
	if vm != nil {
		o.RemoteWrite = vm.WriteURL()
	}
	srv := promtest.StartWith(t, []promtest.Target{{Addr: addr1}, {Addr: addr2}}, o)
	store := srv.URL
	if vm != nil {
		store = vm.URL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	kernels := func(want map[string]int) {
		t.Helper()
		srv.WaitQuery(t, ctx, `fgtop_kernels{state="ok"}`, func(v pmodel.Vector) bool {
			got := map[string]int{}
			for _, s := range v {
				got[string(s.Metric["node"])] = int(s.Value)
			}
			for n, k := range want {
				if g, ok := got[n]; !ok || g != k {
					return false
				}
			}
			return true
		})
	}
	snapOf := func(n *node, name string) *model.Snapshot {
		t.Helper()
		doc := snapshotJSON(t, "--config", n.config, "--devices", n.mock, "--mock-etcd", n.etcd)
		doc.Node = name
		s, err := doc.Model()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// A moment is taken once Prometheus has scraped the state, and before
	// the next change: the scrape before the moment is of that state.
	kernels(map[string]int{"node-1": 2, "node-2": 1})
	m1 := atMoment{name: "first", at: time.Now(), snaps: map[string]*model.Snapshot{"node-1": snapOf(n1, "node-1"), "node-2": snapOf(n2, "node-2")}}
	// The trees change while scraped: a kernel more on node-1, node-2's
	// only kernel gone.
	n1.addKernel(t, agentB, "8888bbbb-1111-4222-8333-444455556666", gpu4, "0.75")
	if err := os.RemoveAll(k2); err != nil {
		t.Fatal(err)
	}
	kernels(map[string]int{"node-1": 3, "node-2": 0})
	m2 := atMoment{name: "changed", at: time.Now(), snaps: map[string]*model.Snapshot{"node-1": snapOf(n1, "node-1"), "node-2": snapOf(n2, "node-2")}}
	stop2()
	srv.WaitQuery(t, ctx, `count(fgtop_build_info)`, func(v pmodel.Vector) bool { return len(v) == 1 && v[0].Value == 1 })
	m3 := atMoment{name: "node-2 down", at: time.Now(), snaps: map[string]*model.Snapshot{"node-1": m2.snaps["node-1"], "node-2": m2.snaps["node-2"]}}
	// The store must hold m3's data (VictoriaMetrics shows data
	// -search.latencyOffset late, after remote_write's batching).
	waitStoreAt(t, ctx, store, `count(fgtop_build_info)`, m3.at, 1)

	for _, m := range []atMoment{m1, m2} {
		j, stderr, code := fleetAt(t, store, m.at)
		if code != exitOK {
			t.Fatalf("--at %s (%s): exit %d: %s", m.at, m.name, code, stderr)
		}
		for _, name := range []string{"node-1", "node-2"} {
			n := atNode(t, j, name)
			want := fleet.Summarize(m.snaps[name], fleet.Settings{})
			if n.State != fleet.Live || n.Error != "" {
				t.Errorf("--at %s: %s %s %q, want live", m.name, name, n.State, n.Error)
			}
			wantDevs := summaryDevices(want)
			if got := jsonDevices(n); got != wantDevs {
				t.Errorf("--at %s: %s devices\n got %s\nwant %s (its snapshot --json then)", m.name, name, got, wantDevs)
			}
			if n.Held == nil || !n.Held.Identical(want.Held) || n.Free == nil || !n.Free.Identical(want.Free) ||
				n.Largest == nil || !n.Largest.Identical(want.Largest) || n.Kernels == nil || *n.Kernels != len(m.snaps[name].Kernels()) {
				t.Errorf("--at %s: %s held %v free %v largest %v kernels %v; its snapshot: %s %s %s %d", m.name, name, n.Held, n.Free, n.Largest,
					n.Kernels, want.Held, want.Free, want.Largest, len(m.snaps[name].Kernels()))
			}
			seen, err := time.Parse(time.RFC3339Nano, n.LastSeen)
			if err != nil || seen.After(m.at) || m.at.Sub(seen) > 3*time.Second {
				t.Errorf("--at %s: %s last seen %s, want its scrape just before %s", m.name, name, n.LastSeen, m.at)
			}
		}
		// --fit at the moment: where the node's own figures then place it.
		for _, req := range []string{"cuda.shares=0.9", "cuda.shares=0.5"} {
			out, _, _ := runFleetCmd(t, "--prometheus", store, "--at", m.at.Format(time.RFC3339Nano), "--fit", req, "--json")
			var fr fleet.JSONFitReport
			if err := json.Unmarshal([]byte(out), &fr); err != nil {
				t.Fatalf("--fit %s --at %s: %v: %s", req, m.name, err, out)
			}
			r, _ := fleet.ParseRequest(req)
			var want []string
			for _, name := range []string{"node-1", "node-2"} {
				if fleet.FitRequest(m.snaps[name], r, fleet.Settings{}).OK {
					want = append(want, name)
				}
			}
			if !slices.Equal(fr.Fits, want) && !(len(fr.Fits) == 0 && len(want) == 0) {
				t.Errorf("--fit %s --at %s: fits %v, want %v (the snapshots then)", req, m.name, fr.Fits, want)
			}
		}
	}
	// The fleet console's :at reads the same moments, and :live comes back.
	for _, m := range []atMoment{m1, m2} {
		consoleAtCheck(t, store, m)
	}
	if got := m1.snaps["node-2"].Kernels(); len(got) != 1 {
		t.Fatalf("the scenario did not change: node-2 had %d kernels at first", len(got))
	}

	// After node-2 stopped: node-2 is stale with its last figures, its age
	// counted from the moment asked, not from now (which is later).
	j, stderr, code := fleetAt(t, store, m3.at)
	if code != exitProblem || !strings.Contains(stderr, "node-2: stale: target down") {
		t.Fatalf("--at %s: exit %d, want 1 (node-2 stale: its figures are its last): %s", m3.name, code, stderr)
	}
	n := atNode(t, j, "node-2")
	if n.State != fleet.Stale || !strings.Contains(n.Error, "target down") || !strings.Contains(n.Error, "before "+fleet.AtStamp(m3.at)) {
		t.Errorf("--at %s: node-2 %s %q, want stale, target down, last scraped before the moment", m3.name, n.State, n.Error)
	}
	if got, want := jsonDevices(n), summaryDevices(fleet.Summarize(m3.snaps["node-2"], fleet.Settings{})); got != want {
		t.Errorf("--at %s: node-2 devices %s, want its last figures %s", m3.name, got, want)
	}
	if n := atNode(t, j, "node-1"); n.State != fleet.Live {
		t.Errorf("--at %s: node-1 %s %q, want live", m3.name, n.State, n.Error)
	}
	// With --unreachable-after shorter than its silence then: no data at
	// that moment, without figures (neither free nor zero); exit 1.
	late := m3.at.Add(1500 * time.Millisecond)
	time.Sleep(time.Until(late) + 100*time.Millisecond) // a moment past, not to come
	waitStoreAt(t, ctx, store, `count(fgtop_build_info)`, late, 1)
	out, stderr, code := runFleetCmd(t, "--prometheus", store, "--at", late.Format(time.RFC3339Nano), "--stale-after", "500ms", "--unreachable-after", "1s", "--json")
	if code != exitProblem {
		t.Errorf("--at with node-2 silent: exit %d, want %d: %s", code, exitProblem, stderr)
	}
	j = decodeFleet(t, out)
	n = atNode(t, j, "node-2")
	if n.State != fleet.Unreachable || !strings.HasPrefix(n.Error, fleet.NoDataAt(late)) || n.Held != nil || n.Free != nil || len(n.Devices) != 0 {
		t.Errorf("node-2 silent at the moment: %+v, want unreachable, %q, no figures", n, fleet.NoDataAt(late))
	}
	if !strings.Contains(stderr, "node-2: unreachable: "+fleet.NoDataAt(late)) {
		t.Errorf("stderr does not say node-2 had no data: %q", stderr)
	}

	// Before the first scrape: both nodes are listed, with no data then.
	out, stderr, code = runFleetCmd(t, "--prometheus", store, "--at", before.Format(time.RFC3339Nano), "--json")
	if code != exitProblem {
		t.Errorf("--at before any scrape: exit %d, want %d: %s\n%s", code, exitProblem, stderr, out)
	}
	j = decodeFleet(t, out)
	for _, name := range []string{"node-1", "node-2"} {
		n := atNode(t, j, name)
		if n.State != fleet.Unreachable || n.Error != fleet.NoDataAt(before)+": first scraped after it" || n.Held != nil || n.Free != nil || n.Largest != nil {
			t.Errorf("--at before any scrape: %s %+v, want no data then", name, n)
		}
	}
	// The table says it too, never a free figure.
	out, _, _ = runFleetCmd(t, "--prometheus", store, "--at", before.Format(time.RFC3339Nano))
	if !strings.Contains(out, fleet.NoDataAt(before)) {
		t.Errorf("the table at a moment without data:\n%s", out)
	}
}

// fleetAt runs `fleet --prometheus URL --at AT --json`.
func fleetAt(t *testing.T, url string, at time.Time) (fleet.JSONFleet, string, int) {
	t.Helper()
	out, stderr, code := runFleetCmd(t, "--prometheus", url, "--at", at.Format(time.RFC3339Nano), "--json")
	return decodeFleet(t, out), stderr, code
}

func decodeFleet(t *testing.T, out string) fleet.JSONFleet {
	t.Helper()
	var j fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return j
}

func atNode(t *testing.T, j fleet.JSONFleet, name string) fleet.JSONNode {
	t.Helper()
	for _, n := range j.Nodes {
		if n.Node == name {
			return n
		}
	}
	t.Fatalf("%s is not listed: %+v", name, j)
	return fleet.JSONNode{}
}

// summaryDevices prints a summary's devices as jsonDevices does.
func summaryDevices(s fleet.Summary) string {
	j := fleet.JSONNode{}
	for _, d := range s.Devices {
		c, f := d.Capacity, d.Free
		j.Devices = append(j.Devices, fleet.JSONDevice{Device: string(d.Device), Slot: string(d.Slot), Held: d.Held, Capacity: &c, Free: &f})
	}
	return jsonDevices(j)
}

// waitStoreAt waits until query, evaluated at at, gives want on the
// store (Prometheus or VictoriaMetrics).
func waitStoreAt(t *testing.T, ctx context.Context, url, query string, at time.Time, want float64) {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		t.Fatal(err)
	}
	a := v1.NewAPI(c)
	var last pmodel.Value
	for {
		v, _, _, err := a.Query(ctx, query, at)
		last = v
		if vec, ok := v.(pmodel.Vector); err == nil && ok && len(vec) == 1 && float64(vec[0].Value) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s at %s on %s: %v, want %v", query, at, url, last, want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestFleetAtHosts: `fleet --hosts --at T` asks each real `serve --demo`
// node its own record over SSH: the two that record answer with what
// their state was at T (computed from the paused demo itself), exactly;
// the one that keeps no record says so, as does a moment before any
// record began; exit 1 then.
func TestFleetAtHosts(t *testing.T) {
	root := t.TempDir()
	before := time.Now().Add(-time.Second)
	nodes, id, kh := startFleetWith(t, 4, func(i int) string {
		switch i {
		case 2:
			return historyOff
		case 3:
			// node4 is pointed at node1's record (a shared mount, a
			// copied unit file): it must not answer as node1 from there.
			return filepath.Join(root, "history1")
		}
		return filepath.Join(root, fmt.Sprintf("history%d", i+1))
	})
	// Let the demo run, then hold it: the record's state at T is the
	// paused one once the engines have seen it.
	time.Sleep(1500 * time.Millisecond)
	want := map[string]string{}
	wantKernels := map[string]int{}
	snaps := map[string]*model.Snapshot{}
	for _, n := range nodes[:2] {
		n.node.Pause()
	}
	time.Sleep(1500 * time.Millisecond)
	at := time.Now()
	for _, n := range nodes[:2] {
		s, err := engine.Build(context.Background(), n.node.EngineOptions())
		if err != nil {
			t.Fatal(err)
		}
		s.Node = n.name
		doc, err := report.Marshal(report.FromSnapshot(s), false)
		if err != nil {
			t.Fatal(err)
		}
		want[n.name], wantKernels[n.name], snaps[n.name] = devicesOf(t, doc), len(s.Kernels()), s
	}
	// The recorder writes once a second.
	time.Sleep(1500 * time.Millisecond)
	args := []string{"--hosts", hostsOf(nodes), "--identity", id, "--known-hosts", kh, "--json", "--timeout", "15s"}
	out, stderr, code := runFleetCmd(t, append(args, "--at", at.Format(time.RFC3339Nano))...)
	if code != exitProblem {
		t.Errorf("exit %d, want %d (node3 keeps no record): %s", code, exitProblem, stderr)
	}
	j := decodeFleet(t, out)
	if len(j.Nodes) != 4 {
		t.Fatalf("%d nodes: %s", len(j.Nodes), out)
	}
	for i, n := range j.Nodes[:2] {
		if n.Node != nodes[i].name || n.State != fleet.Live || n.Error != "" {
			t.Errorf("node %d: %s %s %q, want %s live from its record", i, n.Node, n.State, n.Error, nodes[i].name)
			continue
		}
		if got := jsonDevices(n); got != want[n.Node] {
			t.Errorf("%s at %s from its record:\n got %s\nwant %s (the node then)", n.Node, at, got, want[n.Node])
		}
		if n.Kernels == nil || *n.Kernels != wantKernels[n.Node] {
			t.Errorf("%s: %v kernels from its record, %d then", n.Node, n.Kernels, wantKernels[n.Node])
		}
	}
	// A node with no figures then has no counts: null, not 0.
	if n := j.Nodes[2]; n.State != fleet.Unreachable || !strings.HasPrefix(n.Error, fleet.NoDataAt(at)) ||
		!strings.Contains(n.Error, "keeps no record") || n.Held != nil || len(n.Devices) != 0 || n.Kernels != nil || n.GPUs != nil || n.Issues != nil {
		t.Errorf("node3, no record: %+v", n)
	}
	if n := j.Nodes[3]; n.State != fleet.Unreachable || !strings.Contains(n.Error, "of node node1") || !strings.Contains(n.Error, "not of this node (node4)") || n.Held != nil {
		t.Errorf("node4 reading node1's record: %s %s %q", n.Node, n.State, n.Error)
	}

	// --fit at the moment: where each node's state then places it.
	for _, req := range []string{"cuda.shares=0.5", "cuda.shares=1.5"} {
		out, _, _ := runFleetCmd(t, append(args, "--at", at.Format(time.RFC3339Nano), "--fit", req)...)
		var fr fleet.JSONFitReport
		if err := json.Unmarshal([]byte(out), &fr); err != nil {
			t.Fatalf("--fit %s: %v: %s", req, err, out)
		}
		r, _ := fleet.ParseRequest(req)
		var wantFits []string
		for _, n := range nodes[:2] {
			if fleet.FitRequest(snaps[n.name], r, fleet.Settings{}).OK {
				wantFits = append(wantFits, n.name)
			}
		}
		if !slices.Equal(fr.Fits, wantFits) && len(fr.Fits)+len(wantFits) > 0 {
			t.Errorf("--hosts --at --fit %s: fits %v, want %v (the nodes then)", req, fr.Fits, wantFits)
		}
		if f := fr.Nodes[2].Fit; f == nil || !f.Unknown {
			t.Errorf("--fit %s: node3 without a record: %+v, want unknown", req, f)
		}
	}
	// A moment to come is refused.
	if _, errOut, code := runFleetCmd(t, append(args, "--at", time.Now().Add(time.Hour).Format(time.RFC3339))...); code != exitBadUsage || !strings.Contains(errOut, "in the future") {
		t.Errorf("--at an hour ahead: exit %d: %s", code, errOut)
	}

	// Before the records began: every node says its record lacks it.
	out, _, code = runFleetCmd(t, append(args, "--at", before.Format(time.RFC3339Nano))...)
	if code != exitProblem {
		t.Errorf("--at before the records: exit %d, want %d", code, exitProblem)
	}
	j = decodeFleet(t, out)
	for _, n := range j.Nodes[:2] {
		if n.State != fleet.Unreachable || !strings.Contains(n.Error, "record lacks") || !strings.Contains(n.Error, "before the record begins") || n.Held != nil {
			t.Errorf("%s before its record: %s %q", n.Node, n.State, n.Error)
		}
	}
}

// TestFleetHistoryHosts: `fleet history --hosts` over real `serve --demo`
// nodes that record: every row of each node's own `history --json` for
// the span comes back once, naming its node, the whole merged by time; a
// node that keeps no record and one that does not listen are listed, and
// the exit status is 1.
func TestFleetHistoryHosts(t *testing.T) {
	root := t.TempDir()
	// node4 is pointed at node1's record: it must not answer as node1.
	dirs := []string{filepath.Join(root, "h1"), filepath.Join(root, "h2"), historyOff, filepath.Join(root, "h1")}
	nodes, id, kh := startFleetWith(t, 4, func(i int) string { return dirs[i] })
	time.Sleep(1500 * time.Millisecond) // the records begin
	since := time.Now()
	time.Sleep(3 * time.Second) // the demo runs, its kernels come and go
	until := time.Now()
	time.Sleep(1500 * time.Millisecond) // the recorders write once a second
	// A GPU node1 holds shares of now (the demo's nodes are alike: the
	// others have it too).
	s, err := engine.Build(context.Background(), nodes[0].node.EngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for k, u := range s.Usage {
		if v, ok := u.Held[model.SlotCUDAShares]; ok && !v.IsZero() {
			held = append(held, string(k.ID))
		}
	}
	slices.Sort(held)
	var dev string
	if len(held) > 0 {
		dev = held[0]
	}
	if dev == "" {
		t.Fatal("the demo has no cuda.shares device")
	}
	span := []string{"--device", dev, "--since", since.Format(time.RFC3339Nano), "--until", until.Format(time.RFC3339Nano)}
	var want []string
	for i, n := range nodes[:2] {
		code, out, errOut := runFgtop(t, append([]string{"history", "--json", "--history", dirs[i]}, span...)...)
		if code != 0 {
			t.Fatalf("%s: history: exit %d: %s", n.name, code, errOut)
		}
		var doc struct {
			Intervals []fleet.HistoryInterval `json:"intervals"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, iv := range doc.Intervals {
			iv.Node = n.addr
			want = append(want, historyRow(iv, until))
		}
	}
	if len(want) == 0 {
		t.Fatalf("the demo held nothing on %s in %s..%s", dev, since, until)
	}
	hosts := hostsOf(nodes) + ",127.0.0.1:1"
	out, stderr, code := runFleetCmd(t, append([]string{"history", "--hosts", hosts, "--identity", id, "--known-hosts", kh, "--json"}, span...)...)
	if code != exitProblem {
		t.Errorf("exit %d, want %d (node3 keeps no record, :1 does not listen): %s", code, exitProblem, stderr)
	}
	var got fleet.FleetHistory
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var rows []string
	var last time.Time
	for _, iv := range got.Intervals {
		rows = append(rows, historyRow(iv, until))
		from, err := time.Parse(time.RFC3339Nano, iv.From)
		if err != nil || from.Before(last) {
			t.Errorf("row %s: not merged by time (after %s)", historyRow(iv, until), last)
		}
		last = from
	}
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Errorf("fleet history rows:\n%s\nwant (each node's own history):\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	probs := map[string]string{}
	for _, p := range got.Problems {
		probs[p.Node] = p.Error
	}
	if len(probs) != 3 || !strings.Contains(probs[nodes[2].addr], "keeps no record") || !strings.Contains(probs["127.0.0.1:1"], "not listening") ||
		!strings.Contains(probs[nodes[3].addr], "of node node1") || !strings.Contains(probs[nodes[3].addr], "not of this node (node4)") {
		t.Errorf("problems %v, want node3's missing record, node4 refusing node1's record and :1 not listening", probs)
	}
	// The table names the node on each row and lists the problems.
	out, _, _ = runFleetCmd(t, append([]string{"history", "--hosts", hosts, "--identity", id, "--known-hosts", kh}, span...)...)
	if !strings.Contains(out, nodes[0].addr) || !strings.Contains(out, "no answer: 127.0.0.1:1") {
		t.Errorf("table:\n%s", out)
	}

	// Asked from before the records began: the nodes answer, and the
	// stretch before each record is missing, not a node that did not
	// answer (it was listed as one).
	early := since.Add(-time.Hour).Format(time.RFC3339Nano)
	out, stderr, code = runFleetCmd(t, "history", "--hosts", hostsOf(nodes[:2]), "--identity", id, "--known-hosts", kh, "--json",
		"--device", dev, "--since", early, "--until", until.Format(time.RFC3339Nano))
	var pre fleet.FleetHistory
	if err := json.Unmarshal([]byte(out), &pre); err != nil {
		t.Fatalf("exit %d: %v: %s %s", code, err, out, stderr)
	}
	before := map[string]bool{}
	for _, m := range pre.Missing {
		if from, err := time.Parse(time.RFC3339Nano, m.From); err == nil && from.Equal(since.Add(-time.Hour)) && strings.HasPrefix(m.Why, "before the record begins") {
			before[m.Node] = true
		}
	}
	if code != exitProblem || len(pre.Problems) != 0 || !before[nodes[0].addr] || !before[nodes[1].addr] || len(pre.Intervals) < len(got.Intervals) {
		t.Errorf("from before the records: exit %d, problems %v, missing %v, %d rows: %s", code, pre.Problems, pre.Missing, len(pre.Intervals), stderr)
	}

	// A kernel of node1's (the nodes run other seeds): node2 is not a
	// node that did not answer, only one whose record does not know it
	// (exit 0, "not_found"); a kernel no node knows is bad usage (exit
	// 2), each node's words given.
	if len(got.Intervals) == 0 {
		t.Fatal("no rows to take a kernel from")
	}
	var kernel string
	for _, iv := range got.Intervals {
		if iv.Node == nodes[0].addr {
			kernel = iv.Kernel
			break
		}
	}
	if kernel == "" {
		t.Fatal("node1 held nothing")
	}
	two := hostsOf(nodes[:2])
	out, stderr, code = runFleetCmd(t, "history", "--hosts", two, "--identity", id, "--known-hosts", kh, "--json", "--kernel", kernel,
		"--since", since.Format(time.RFC3339Nano), "--until", until.Format(time.RFC3339Nano))
	var one fleet.FleetHistory
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("exit %d: %v: %s %s", code, err, out, stderr)
	}
	if code != exitOK || len(one.Problems) != 0 || len(one.NotFound) != 1 || one.NotFound[0].Node != nodes[1].addr ||
		!strings.Contains(one.NotFound[0].Error, "no kernel") || len(one.Intervals) == 0 {
		t.Errorf("a kernel of node1: exit %d, problems %v, not found %v, %d rows: %s", code, one.Problems, one.NotFound, len(one.Intervals), stderr)
	}
	_, stderr, code = runFleetCmd(t, "history", "--hosts", two, "--identity", id, "--known-hosts", kh, "--kernel", "0123abcd-dead")
	if code != exitBadUsage || !strings.Contains(stderr, "no node's record knows it: "+nodes[0].addr+": ") || !strings.Contains(stderr, nodes[1].addr+": ") {
		t.Errorf("a kernel no node knows: exit %d: %s", code, stderr)
	}

	// A prefix of two of node1's kernels is the asker's to lengthen, as
	// `history` says on one node (exit 2), not a node that did not answer.
	byFirst := map[string]string{}
	prefix := ""
	for _, k := range s.Kernels() {
		id := string(k.ID)
		if id == "" {
			continue
		}
		if o, ok := byFirst[id[:1]]; ok && o != id {
			prefix = id[:1]
			break
		}
		byFirst[id[:1]] = id
	}
	if prefix == "" {
		t.Fatal("no two kernels of node1 share a first character: no ambiguous prefix to ask")
	}
	_, stderr, code = runFleetCmd(t, "history", "--hosts", two, "--identity", id, "--known-hosts", kh, "--kernel", prefix)
	if code != exitBadUsage || !strings.Contains(stderr, nodes[0].addr+": ") || !strings.Contains(stderr, "is ambiguous") || strings.Contains(stderr, "did not answer") {
		t.Errorf("an ambiguous prefix: exit %d: %s", code, stderr)
	}
}

func historyRow(iv fleet.HistoryInterval, until time.Time) string {
	var am []string
	for k, v := range iv.Amounts {
		am = append(am, k+"="+v)
	}
	slices.Sort(am)
	to, open, gone := iv.To, iv.Open, iv.Gone
	// Where a holding goes on past the asked span, its end is what the
	// record knew when asked: the demo runs on between the node's own
	// history and the fleet's, so both are read as "past the span".
	if end, err := time.Parse(time.RFC3339Nano, iv.To); iv.Open || (err == nil && end.After(until)) {
		to, open, gone = "past the span", false, false
	}
	return fmt.Sprintf("%s %s %s %s %s..%s %v%v%v", iv.Node, iv.Device, iv.Kernel, strings.Join(am, ","), iv.From, to, iv.Since, open, gone)
}

// TestContribPrometheusConfig: contrib's Prometheus config and recording
// rules pass promtool's checks, and a real Prometheus evaluating those
// rules over a real exporter gives the node's totals its own snapshot
// has: held, capacity and free shares, kernels, accelerators.
func TestContribPrometheusConfig(t *testing.T) {
	promtool := promtest.Promtool(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "contrib", "prometheus-fgtop.yml")
	rules := filepath.Join(root, "contrib", "prometheus-fgtop-rules.yml")
	for _, args := range [][]string{{"check", "config", cfg}, {"check", "rules", rules}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), "remote_write:") {
		t.Errorf("%s has no remote_write (%v)", cfg, err)
	}

	n := newNode(t)
	k := populate(t, n, "0.3", "0.25", "0.6")
	addr := startExporter(t, &sourceFlags{config: n.config, devices: n.mock, mockEtcd: n.etcd}, &exporterFlags{listen: "127.0.0.1:0", node: "node-1"})
	scrapeUntil(t, addr, okKernels(k))
	srv := promtest.StartWith(t, []promtest.Target{{Addr: addr}}, promtest.Options{RuleFiles: []string{rules}})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	doc := snapshotJSON(t, "--config", n.config, "--devices", n.mock, "--mock-etcd", n.etcd)
	snap, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	sum := fleet.Summarize(snap, fleet.Settings{})
	accel := 0
	for _, d := range snap.Devices {
		if d.Name != "cpu" && d.Name != "mem" {
			accel++
		}
	}
	near := func(want model.Dec) func(pmodel.Vector) bool {
		return func(v pmodel.Vector) bool {
			return len(v) == 1 && math.Abs(float64(v[0].Value)-want.Float64()) < 1e-9
		}
	}
	slot := string(sum.Slot)
	srv.WaitQuery(t, ctx, `node_slot:fgtop_device_held_shares:sum{node="node-1",slot="`+slot+`"}`, near(sum.Held))
	srv.WaitQuery(t, ctx, `node_slot:fgtop_device_capacity_shares:sum{node="node-1",slot="`+slot+`"}`, near(sum.Capacity))
	srv.WaitQuery(t, ctx, `node_slot:fgtop_device_free_shares:sum{node="node-1",slot="`+slot+`"}`, near(sum.Free))
	srv.WaitQuery(t, ctx, `node_state:fgtop_kernels:sum{node="node-1",state="ok"}`, near(model.MustDec(strconv.Itoa(k))))
	srv.WaitQuery(t, ctx, `node:fgtop_devices:count{node="node-1"}`, near(model.MustDec(strconv.Itoa(accel))))
	srv.WaitQuery(t, ctx, `slot:fgtop_device_free_shares:sum{slot="`+slot+`"}`, near(sum.Free))
}

// consoleAtCheck types `:at TIME` into the fleet console wired as `fgtop
// fleet --prometheus` wires it, and checks that the table then shows each
// node as its own snapshot said at TIME; `:live` shows the live state again.
func consoleAtCheck(t *testing.T, store string, m atMoment) {
	t.Helper()
	f := &fleetFlags{prometheus: store, refresh: 2 * time.Second, timeout: 20 * time.Second, lookback: fleet.DefaultLookback,
		unreachable: fleet.DefaultUnreachableAfter}
	c, err := fleet.NewPromClient(f.promOptions(fleet.Settings{}))
	if err != nil {
		t.Fatal(err)
	}
	ui := fleetui.New(nil, fleetui.Options{ASCII: true, At: f.consoleAt(t.Context(), &fleet.Source{Prom: c}), Step: fleetui.DefaultStep})
	ui.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	live := &fleet.Fleet{Time: time.Now()}
	ui.Show(live)
	var cmd tea.Cmd
	for _, k := range ":at " + m.at.Format(time.RFC3339Nano) {
		_, cmd = ui.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	_, cmd = ui.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatalf("console :at %s (%s): no read", m.at, m.name)
	}
	ui.Update(cmd())
	if on, at := ui.InPast(); !on || !at.Equal(m.at) {
		t.Fatalf("console :at %s (%s): in the past %v at %v", m.at, m.name, on, at)
	}
	shown := ui.Shown()
	for _, name := range []string{"node-1", "node-2"} {
		n := shown.Node(name)
		want := fleet.Summarize(m.snaps[name], fleet.Settings{})
		if n == nil || n.State != fleet.Live || n.Snap == nil {
			t.Errorf("console :at %s: %s is %+v, want live with figures", m.name, name, n)
			continue
		}
		if !n.Sum.Held.Identical(want.Held) || !n.Sum.Free.Identical(want.Free) || !n.Sum.Largest.Identical(want.Largest) ||
			n.Sum.Kernels != len(m.snaps[name].Kernels()) {
			t.Errorf("console :at %s: %s held %s free %s largest %s kernels %d; its snapshot: %s %s %s %d", m.name, name,
				n.Sum.Held, n.Sum.Free, n.Sum.Largest, n.Sum.Kernels, want.Held, want.Free, want.Largest, len(m.snaps[name].Kernels()))
		}
	}
	if s := ansi.Strip(ui.View().Content); !strings.Contains(s, "PAST ") {
		t.Errorf("console :at %s: no PAST in the header:\n%s", m.name, s)
	}
	for _, k := range ":live" {
		ui.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	ui.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if on, _ := ui.InPast(); on || ui.Shown() != live {
		t.Errorf("console :live (%s): still in the past, or not the live state", m.name)
	}
}

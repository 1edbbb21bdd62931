package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/promtest"
	pmodel "github.com/prometheus/common/model"
)

// startExporter runs `fgtop exporter` in process on a loopback port and
// returns its address; it stops (and must stop cleanly) when the test ends.
func startExporter(t *testing.T, src *sourceFlags, ef *exporterFlags) string {
	t.Helper()
	addr, _ := startExporterStoppable(t, src, ef)
	return addr
}

func scrape(t *testing.T, addr string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v %s", err, resp.Status)
	}
	return b
}

// scrapeUntil scrapes until ok accepts the samples (the engine's first
// scan is published), within 10 s.
func scrapeUntil(t *testing.T, addr string, ok func([]promtest.Sample) bool) ([]byte, []promtest.Sample) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b := scrape(t, addr)
		ss, err := promtest.ParseText(b)
		if err != nil {
			t.Fatal(err)
		}
		if ok(ss) {
			return b, ss
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter never showed the node as wanted; last scrape:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// okKernels is a scrape condition: n kernels in state ok.
func okKernels(n int) func([]promtest.Sample) bool {
	return func(ss []promtest.Sample) bool {
		got := promtest.Select(ss, "fgtop_kernels", "state", "ok")
		return len(got) == 1 && got[0].Value == float64(n)
	}
}

// snapshotJSON runs `fgtop snapshot --json` (a separate process) with
// args and reads its document.
func snapshotJSON(t *testing.T, args ...string) *report.Snapshot {
	t.Helper()
	code, out, errOut := runFgtop(t, append([]string{"snapshot", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("snapshot --json: exit %d\n%s", code, errOut)
	}
	var r report.Snapshot
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("snapshot --json: %v\n%.500s", err, out)
	}
	return &r
}

// liveOnly drops from a live exporter's samples the issues only a live
// engine can have and a one-shot snapshot cannot: the watcher's (code
// watch) and the config follower's (a config error beyond the snapshot's
// own), which appear when the machine runs out of inotify instances
// (other test processes can hold all 128). Every other series is compared.
func liveOnly(t *testing.T, ss []promtest.Sample, snap *report.Snapshot) []promtest.Sample {
	t.Helper()
	want := map[string]int{}
	for _, i := range snap.Issues {
		want[i.Code+"/"+i.Severity]++
	}
	out := ss[:0:0]
	for _, s := range ss {
		key := s.Labels["code"] + "/" + s.Labels["severity"]
		if s.Name == "fgtop_issues" && (s.Labels["code"] == "watch" || s.Labels["code"] == "config") && s.Value > float64(want[key]) {
			t.Logf("the live engine has %s %s issue(s) the one-shot snapshot has not (inotify limits?): not compared", s.Text(), key)
			continue
		}
		out = append(out, s)
	}
	return out
}

// populate gives the two-agent node kernels, taking turns between the
// agents, each on one of its own GPUs (A owns gpu1 and gpu3, B gpu2 and
// gpu4).
func populate(t *testing.T, n *node, shares ...string) int {
	t.Helper()
	gpus := []string{gpu1, gpu2, gpu3, gpu4}
	for i, s := range shares {
		agent := agentA
		if i%2 == 1 {
			agent = agentB
		}
		n.addKernel(t, agent, fmt.Sprintf("%08x-1111-4222-8333-444455556666", i), gpus[i%len(gpus)], s)
	}
	return len(shares)
}

// TestExporterEqualsSnapshotJSON is the issue's check: on the same node,
// unchanged, every value `fgtop exporter` serves equals what `fgtop
// snapshot --json` prints (held, capacity, free, ratio, owners, per-agent
// amounts, kernels, issues, allocator settings), compared as decimals
// (promtest.Sample.Dec: no tolerance); and promtool check metrics finds
// nothing in the served text.
func TestExporterEqualsSnapshotJSON(t *testing.T) {
	n := newNode(t)
	k := populate(t, n, "0.3", "0.25", "0.5", "0.1", "0.7")
	// agent A's kernel on agent B's GPU: drift.
	n.addKernel(t, agentA, "77777777-1111-4222-8333-444455556666", gpu2, "0.2")
	k++
	src := &sourceFlags{config: n.config, devices: n.mock, mockEtcd: n.etcd}
	addr := startExporter(t, src, &exporterFlags{listen: "127.0.0.1:0"})
	body, ss := scrapeUntil(t, addr, okKernels(k))
	snap := snapshotJSON(t, "--config", n.config, "--devices", n.mock, "--mock-etcd", n.etcd)
	if diffs := promtest.CompareSnapshot(liveOnly(t, ss, snap), snap); len(diffs) > 0 {
		t.Fatalf("exporter and snapshot --json disagree:\n%s", strings.Join(diffs, "\n"))
	}
	if len(promtest.SelectUnits(ss, "fgtop_drift_held")) == 0 {
		t.Error("the node has a kernel on another agent's GPU, yet no fgtop_drift_held_*")
	}
	out, err := promtest.CheckMetrics(t, body)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("promtool check metrics on the exporter's output: %v\n%s", err, out)
	}
}

// TestExporterFollowsChanges: a resource.txt written after start shows in
// the next scrapes (the engine follows the files; the exporter only reads
// its latest snapshot).
func TestExporterFollowsChanges(t *testing.T) {
	n := newNode(t)
	populate(t, n, "0.3")
	addr := startExporter(t, &sourceFlags{config: n.config, devices: n.mock, mockEtcd: n.etcd}, &exporterFlags{listen: "127.0.0.1:0", node: "gpu-07"})
	scrapeUntil(t, addr, okKernels(1))
	n.addKernel(t, agentB, "99999999-1111-4222-8333-444455556666", gpu2, "0.45")
	_, ss := scrapeUntil(t, addr, okKernels(2))
	got := promtest.Select(ss, "fgtop_device_held_shares", "node", "gpu-07", "device", gpu2, "slot", "cuda.shares")
	if len(got) != 1 || got[0].Text() != "0.45" {
		t.Fatalf("held on %s after the write: %v, want 0.45", gpu2, got)
	}
}

// TestExporterDemo: --demo serves the embedded node under --node's name.
func TestExporterDemo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	addr := startExporter(t, &sourceFlags{}, &exporterFlags{listen: "127.0.0.1:0", node: "demo-a", demo: true, seed: 1})
	_, ss := scrapeUntil(t, addr, func(ss []promtest.Sample) bool {
		return len(promtest.SelectUnits(ss, "fgtop_device_capacity", "node", "demo-a")) > 0
	})
	if got := promtest.Select(ss, "fgtop_allocator_info", "node", "demo-a", "allocation_mode", "fractional"); len(got) != 1 {
		t.Fatalf("the demo node is fractional: %v", promtest.Select(ss, "fgtop_allocator_info"))
	}
}

// TestExporterFlagErrors: each usage error names its flag (exit 2).
func TestExporterFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no listen", []string{"exporter", "--demo"}, "--listen"},
		{"bad listen", []string{"exporter", "--demo", "--listen", "nowhere"}, "--listen"},
		{"no port", []string{"exporter", "--demo", "--listen", "127.0.0.1:"}, "--listen"},
		{"empty node", []string{"exporter", "--demo", "--listen", "127.0.0.1:0", "--node", ""}, "--node"},
		{"demo and config", []string{"exporter", "--demo", "--listen", "127.0.0.1:0", "--config", "agent.toml"}, "--config"},
		{"seed without demo", []string{"exporter", "--listen", "127.0.0.1:0", "--seed", "2"}, "--seed"},
		{"missing config", []string{"exporter", "--listen", "127.0.0.1:0", "--config", filepath.Join(t.TempDir(), "nope.toml")}, "--config"},
		{"serve metrics-listen", []string{"serve", "--demo", "--authorized-keys", "k", "--host-key", "h", "--metrics-listen", "x"}, "--metrics-listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runCLI(t, tc.args...)
			wantCode(t, code, exitBadUsage, out, tc.want)
		})
	}
}

// TestExporterAddressInUse: a --listen address already taken is a usage
// error naming the flag, not a hang.
func TestExporterAddressInUse(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	addr := startExporter(t, &sourceFlags{}, &exporterFlags{listen: "127.0.0.1:0", demo: true, seed: 1})
	code, out := runCLI(t, "exporter", "--demo", "--listen", addr)
	wantCode(t, code, exitBadUsage, out, "--listen "+addr)
}

// TestServeMetricsListen: serve --metrics-listen serves the exporter's
// endpoint from serve's own engine.
func TestServeMetricsListen(t *testing.T) {
	sf, _ := demoServeFlags(t)
	sf.metricsListen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, serveRun{src: &sourceFlags{}, console: &consoleFlags{ascii: true, theme: "dark"}, serve: sf,
			stderr: io.Discard, metricsReady: func(a string) { addrc <- a }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("no metrics address within 15s")
	}
	_, ss := scrapeUntil(t, addr, func(ss []promtest.Sample) bool {
		return len(promtest.SelectUnits(ss, "fgtop_device_capacity", "node", "fgtop-demo")) > 0
	})
	if len(promtest.Select(ss, "fgtop_build_info")) != 1 {
		t.Fatal("no fgtop_build_info")
	}
}

// TestPrometheusScrapesThreeExporters: a real Prometheus (Debian's, as a
// plain process on loopback) scrapes three exporters, each on its own node
// tree under its own --node name; what a query returns for each node
// equals that node's snapshot --json, value for value.
func TestPrometheusScrapesThreeExporters(t *testing.T) {
	promtest.Prometheus(t) // skip early, before building three nodes
	type member struct {
		name string
		n    *node
		k    int
		addr string
	}
	nodes := []*member{
		{name: "node-1"}, {name: "node-2"}, {name: "node-3"},
	}
	// PromQL sums floats: amounts whose sums floats hold exactly keep the
	// fleet-wide check below exact too.
	shares := [][]string{{"0.3", "0.25"}, {"0.5", "0.125", "0.75"}, {"1.0"}}
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	for _, m := range nodes {
		snap := snapshotJSON(t, "--config", m.n.config, "--devices", m.n.mock, "--mock-etcd", m.n.etcd)
		snap.Node = m.name // snapshot names the host; the exporter was told --node
		q := fmt.Sprintf(`{__name__=~"fgtop_.+", node=%q}`, m.name)
		v := srv.WaitQuery(t, ctx, q, func(v pmodel.Vector) bool {
			ok := promtest.Select(promtest.FromVector(v), "fgtop_kernels", "state", "ok")
			return len(ok) == 1 && ok[0].Value == float64(m.k)
		})
		ss := promtest.FromVector(v)
		if diffs := promtest.CompareSnapshot(liveOnly(t, ss, snap), snap); len(diffs) > 0 {
			t.Errorf("%s through Prometheus disagrees with its snapshot --json:\n%s", m.name, strings.Join(diffs, "\n"))
		}
		for _, s := range ss {
			if s.Labels["instance"] != m.addr {
				t.Fatalf("%s: series of instance %q, want %q only: %v", m.name, s.Labels["instance"], m.addr, s)
			}
		}
	}
	// One query over the fleet: the three nodes' held shares on gpu1.
	v := srv.WaitQuery(t, ctx, `sum by (node) (fgtop_device_held_shares{slot="cuda.shares"})`, func(v pmodel.Vector) bool { return len(v) == 3 })
	want := map[string]string{"node-1": "0.55", "node-2": "1.375", "node-3": "1"}
	for _, s := range promtest.FromVector(v) {
		if w := want[s.Labels["node"]]; s.Text() != w {
			t.Errorf("sum of cuda.shares held on %s: %s, want %s", s.Labels["node"], s.Text(), w)
		}
	}
}

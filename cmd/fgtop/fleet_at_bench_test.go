package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/metrics"
	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/internal/sshtest"
	sshserve "github.com/fgtop/fgtop/ui/ssh"
)

// TestFleetBenchAt100 measures issue 30's figures on the fake-node
// harness of TestFleetBenchPrometheus100: 100 real engines behind their
// own /metrics, scraped every second by a real Prometheus that
// remote-writes to a real VictoriaMetrics. It times `fleet --at` (the
// PromClient.At behind it: every query at one past moment, the nodes
// rebuilt and summarised) against both stores, counts the series one node
// exports (split into those per accelerator and the rest, to size 1,000
// nodes x 8 GPUs), and reads VictoriaMetrics' own size after the run.
// Runs only with FGTOP_FLEET_BENCH=1.
func TestFleetBenchAt100(t *testing.T) {
	if os.Getenv("FGTOP_FLEET_BENCH") != "1" {
		t.Skip("set FGTOP_FLEET_BENCH=1 to run the 100-node fleet --at benchmark")
	}
	promtest.Prometheus(t)
	vm := promtest.StartVictoria(t)
	n := 100
	if v, err := strconv.Atoi(os.Getenv("FGTOP_FLEET_BENCH_NODES")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := benchNodes(t, ctx, n, t.TempDir())
	var targets []promtest.Target
	for _, nd := range nodes {
		reg := metrics.Registry(metrics.New(metrics.Options{Latest: nd.eng.Latest, Node: nd.name}))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: metrics.Handler(reg), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		context.AfterFunc(ctx, func() { _ = hs.Close() })
		targets = append(targets, promtest.Target{Addr: ln.Addr().String()})
	}
	srv := promtest.StartWith(t, targets, promtest.Options{RemoteWrite: vm.WriteURL()})
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	srv.WaitUp(t, wctx)
	srv.WaitQuery(t, wctx, `count(fgtop_snapshot_sequence)`, func(v pmodel.Vector) bool { return len(v) == 1 && int(v[0].Value) == n })
	start := time.Now()
	time.Sleep(2 * time.Second)
	at := time.Now()
	time.Sleep(3 * time.Second) // past VictoriaMetrics' latency offset and remote_write's batching
	waitStoreAt(t, wctx, vm.URL, `count(fgtop_snapshot_sequence)`, at, float64(n))

	// Series of one node: those naming one of its accelerators, and the rest.
	body := httpGet(t, "http://"+targets[0].Addr+"/metrics")
	samples, err := promtest.ParseText(body)
	if err != nil {
		t.Fatal(err)
	}
	gpus, cores := map[string]bool{}, map[string]bool{}
	for _, s := range promtest.Select(samples, "fgtop_device_info") {
		switch s.Labels["plugin"] {
		case "cpu":
			cores[s.Labels["device"]] = true
		case "mem":
		default:
			gpus[s.Labels["device"]] = true
		}
	}
	perGPU, perCore, rest := 0, 0, 0
	for _, s := range samples {
		if !strings.HasPrefix(s.Name, "fgtop_") {
			continue
		}
		switch d := s.Labels["device"]; {
		case gpus[d]:
			perGPU++
		case cores[d] && s.Labels["slot"] == "cpu":
			perCore++
		default:
			rest++
		}
	}
	g, c := float64(perGPU)/float64(len(gpus)), float64(perCore)/float64(max(len(cores), 1))
	t.Logf("one node (%d accelerators, %d CPU cores, 3 kernels): %d fgtop series: %d per accelerator (%.1f each), %d per CPU core (%.1f each), %d others",
		len(gpus), len(cores), perGPU+perCore+rest, perGPU, g, perCore, c, rest)
	for _, nc := range []int{0, 64, 128} {
		per := float64(rest) + 8*g + float64(nc)*c
		t.Logf("1,000 nodes x 8 GPUs, %d CPU cores each: about %.0f series (%.0f per node)", nc, 1000*per, per)
	}

	for _, store := range []struct{ name, url string }{{"Prometheus", srv.URL}, {"VictoriaMetrics", vm.URL}} {
		c, err := fleet.NewPromClient(fleet.PromOptions{URL: store.url})
		if err != nil {
			t.Fatal(err)
		}
		var lat []time.Duration
		for range 20 {
			t0 := time.Now()
			fl, err := c.At(ctx, at, fleet.DefaultUnreachableAfter)
			if err != nil {
				t.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			live := 0
			for _, nd := range fl.Nodes {
				if nd.State == fleet.Live && nd.Snap != nil {
					live++
				}
			}
			if live != n {
				t.Fatalf("%s: %d live nodes at the moment, want %d", store.name, live, n)
			}
		}
		slices.Sort(lat)
		t.Logf("%s: fleet --at over %d nodes, 20 runs: p50 %s, max %s", store.name, n, lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		if store.name == "Prometheus" && lat[len(lat)/2] > 500*time.Millisecond {
			t.Errorf("fleet --at over Prometheus: p50 %s, over the issue's 500 ms", lat[len(lat)/2])
		}
	}

	// VictoriaMetrics' own account of what it holds after a minute of
	// ingest, its parts flushed and merged as they would be over a day.
	if d := time.Until(start.Add(time.Minute)); d > 0 {
		time.Sleep(d)
	}
	elapsed := time.Since(start)
	for _, p := range []string{"/internal/force_flush", "/internal/force_merge?partition_prefix=" + time.Now().UTC().Format("2006_01")} {
		httpGet(t, vm.URL+p)
	}
	time.Sleep(5 * time.Second)
	vmMetrics := string(httpGet(t, vm.URL+"/metrics"))
	var rows, bytes float64
	for _, line := range strings.Split(vmMetrics, "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, `vm_rows{type="storage/`) || strings.HasPrefix(name, `vm_rows{type="indexdb`):
			if strings.Contains(name, "storage/") {
				rows += v
			}
		case strings.HasPrefix(name, `vm_data_size_bytes{type=`):
			bytes += v
		}
	}
	t.Logf("VictoriaMetrics after %s of %d nodes at 1 s scrapes: %.0f rows, %.0f bytes on disk (%s)", elapsed.Round(time.Second), n, rows, bytes,
		fmt.Sprintf("%.2f bytes per row", bytes/max(rows, 1)))
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test's loopback fetch
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFleetBenchHistory100 measures `fleet history` and `fleet --hosts
// --at` fan-out over 100 nodes of the fake-node harness, each a real engine
// recording into its own history directory and served by its own SSH
// server on loopback (the serve code, with the record's answers wired as
// fgtop serve wires them). Runs only with FGTOP_FLEET_BENCH=1.
func TestFleetBenchHistory100(t *testing.T) {
	if os.Getenv("FGTOP_FLEET_BENCH") != "1" {
		t.Skip("set FGTOP_FLEET_BENCH=1 to run the 100-node fleet history benchmark")
	}
	n := 100
	if v, err := strconv.Atoi(os.Getenv("FGTOP_FLEET_BENCH_NODES")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	keys := sshtest.NewKeys(t)
	keys.Viewer.WritePrivate(t, filepath.Join(dir, "id"))
	authPath := filepath.Join(dir, "authorized_keys")
	sshtest.WriteAtomic(t, authPath, keys.AuthorizedKeys())
	var known strings.Builder
	var hosts []string
	nodes := benchNodes(t, ctx, n, dir)
	var stops []func()
	for i, nd := range nodes {
		hist := filepath.Join(dir, fmt.Sprintf("n%03d", i), "history")
		stops = append(stops, startRecording(ctx, nd.eng, hist, "", true, io.Discard))
		hk := filepath.Join(dir, fmt.Sprintf("n%03d", i), "host_key")
		srv, err := sshserve.New(sshserve.Config{Subscribe: nd.eng.Subscribe, AuthorizedKeys: authPath, HostKey: hk, MaxSessions: 4,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), KeysPoll: time.Hour,
			SnapshotAt: func(_ context.Context, at time.Time) ([]byte, error) { return fleet.RecordAt(hist, nil, at) },
			History: func(_ context.Context, q sshserve.HistoryQuery) ([]byte, error) {
				return sshserve.RecordHistory(hist, nil, q)
			}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = srv.Serve(ln) }()
		context.AfterFunc(ctx, func() { _ = srv.Close() })
		nd.addr = ln.Addr().String()
		hosts = append(hosts, nd.addr)
		known.WriteString(sshtest.KnownHosts(nd.addr, sshtest.HostKey(t, hk)))
	}
	defer func() {
		cancel()
		for _, s := range stops {
			s()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	since := time.Now()
	time.Sleep(2 * time.Second)
	at := time.Now()
	time.Sleep(1500 * time.Millisecond) // the recorders write once a second
	f := &fleetFlags{hosts: strings.Join(hosts, ","), identities: []string{filepath.Join(dir, "id")}, knownHosts: []string{filepath.Join(dir, "known_hosts")},
		timeout: 30 * time.Second, staleAfter: fleet.DefaultStaleAfter, unreachable: fleet.DefaultUnreachableAfter, heartbeat: 2 * time.Second,
		alloc: allocFlags{strategy: "evenly"}, noFollow: true}
	src, err := f.start(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Wait()
	q := fleet.HistoryQuery{Device: "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", Since: since, Until: at}
	var hl, al []time.Duration
	for range 10 {
		t0 := time.Now()
		fh, err := fleet.HistoryHosts(ctx, src.Hosts, src.SSHConfig, src.SSH, q)
		if err != nil {
			t.Fatal(err)
		}
		hl = append(hl, time.Since(t0))
		if fh.Incomplete() || len(fh.Intervals) != 3*n {
			t.Fatalf("fleet history: %d rows, want %d; problems %v missing %v", len(fh.Intervals), 3*n, fh.Problems, fh.Missing)
		}
		t0 = time.Now()
		fl := fleet.HostsAt(ctx, src.Hosts, src.SSHConfig, src.SSH, at)
		al = append(al, time.Since(t0))
		for _, nd := range fl.Nodes {
			if nd.State != fleet.Live {
				t.Fatalf("fleet --hosts --at: %s %s %s", nd.Addr, nd.State, nd.Reason)
			}
		}
	}
	slices.Sort(hl)
	slices.Sort(al)
	t.Logf("%d nodes over SSH, 10 runs: fleet history p50 %s, max %s; fleet --hosts --at p50 %s, max %s", n,
		hl[len(hl)/2].Round(time.Millisecond), hl[len(hl)-1].Round(time.Millisecond), al[len(al)/2].Round(time.Millisecond), al[len(al)-1].Round(time.Millisecond))
	if hl[len(hl)/2] > 3*time.Second {
		t.Errorf("fleet history over %d nodes: p50 %s, over the issue's 3 s", n, hl[len(hl)/2])
	}
}

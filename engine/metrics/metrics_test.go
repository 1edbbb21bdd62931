package metrics

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	gpu1 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	gpu2 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	gpu3 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	gpu4 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"
)

// fixtureFiles are the resource.txt samples kernels are made of.
var fixtureFiles = []string{"resource.cuda-shares-single.txt", "resource.cuda-shares-split.txt", "resource.cpu-only.txt"}

// tree writes n kernels per agent under one scratch root per agent, each a
// copy of a fixture resource.txt (taking turns), and returns the engine
// options that read it: the fixture's mock devices in fractional mode on a
// virtual 32-core, 256 GiB host.
func tree(t testing.TB, perAgent int, agents ...model.AgentID) engine.Options {
	t.Helper()
	dir := t.TempDir()
	fix := testfix.Dir(t, "backendai")
	var files [][]byte
	for _, f := range fixtureFiles {
		b, err := os.ReadFile(filepath.Join(fix, f))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	opts := engine.Options{Node: "node-under-test", NoProcs: true}
	for ai, a := range agents {
		root := filepath.Join(dir, string(a))
		for i := 0; i < perAgent; i++ {
			k := filepath.Join(root, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, ai), "config")
			if err := os.MkdirAll(k, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(k, "resource.txt"), files[(i+ai)%len(files)], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		opts.Roots = append(opts.Roots, scratch.Root{Path: root, Agent: a})
	}
	cpus := make([]int, 32)
	for i := range cpus {
		cpus[i] = i
	}
	src, err := inventory.Open(filepath.Join(fix, "mock-accelerator.toml"), inventory.OpenOptions{
		MockEtcdPath: filepath.Join(fix, "mock-accelerator.etcd.json"),
		Host:         inventory.HostOptions{CPUs: cpus, MemBytes: 256 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	opts.Inventory = src
	return opts
}

func build(t testing.TB, opts engine.Options) *model.Snapshot {
	t.Helper()
	s, err := engine.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exposition is one scrape of c in Prometheus's text format
// (promtest.Exposition).
func exposition(t testing.TB, c prometheus.Collector) []byte { return promtest.Exposition(t, c) }

func fixed(s *model.Snapshot) func() *model.Snapshot { return func() *model.Snapshot { return s } }

func samples(t testing.TB, expo []byte) []promtest.Sample {
	t.Helper()
	ss, err := promtest.ParseText(expo)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// partitioned gives agent a the first two GPUs and cores 0-15, agent b
// the other two and cores 16-31 (the fixture's two-agent split), so that
// kernels made of the same fixtures drift.
func partitioned(s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Agents = append([]model.Agent(nil), s.Agents...)
	cores := func(from, to int) []model.DeviceID {
		var out []model.DeviceID
		for i := from; i < to; i++ {
			out = append(out, model.DeviceID(fmt.Sprint(i)))
		}
		return out
	}
	c.Agents[0].Owns = map[model.DeviceName][]model.DeviceID{"cuda": {gpu1, gpu2}, "cpu": cores(0, 16)}
	c.Agents[0].Mem = model.NewDec(128<<30, 0)
	c.Agents[1].Owns = map[model.DeviceName][]model.DeviceID{"cuda": {gpu3, gpu4}, "cpu": cores(16, 32)}
	return &c
}

// TestCollectAgreesWithSnapshotJSON: every value the collector exports
// equals what `snapshot --json` (report.FromSnapshot) says of the same
// snapshot, compared as decimals.
func TestCollectAgreesWithSnapshotJSON(t *testing.T) {
	base := build(t, tree(t, 5, "agent-a", "agent-b"))
	for _, tc := range []struct {
		name string
		snap *model.Snapshot
	}{
		{"shared", base},
		{"partitioned", partitioned(base)},
		{"capacity unknown", capacityUnknown(base)},
		{"a held device the inventory lacks", unlistedGPU(t, base)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{Latest: fixed(tc.snap), Build: BuildInfo{Version: "v0.0.0-test"}})
			ss := samples(t, exposition(t, c))
			if diffs := promtest.CompareSnapshot(ss, report.FromSnapshot(tc.snap)); len(diffs) > 0 {
				t.Fatalf("exporter and snapshot --json disagree:\n%s", strings.Join(diffs, "\n"))
			}
			if n := len(promtest.SelectUnits(ss, "fgtop_device_held")); n == 0 {
				t.Fatal("no fgtop_device_held series")
			}
		})
	}
}

// unlistedGPU is s without a GPU its kernels hold: what is held there
// still counts, and gpu_alloc_map (alloc_map_ratio) has it.
func unlistedGPU(t *testing.T, s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Devices = nil
	dropped := false
	for _, d := range s.Devices {
		if u := s.Usage[d.Key()]; !dropped && d.Name == "cuda" && u != nil && u.Total().Sign() > 0 {
			dropped = true
			continue
		}
		c.Devices = append(c.Devices, d)
	}
	if !dropped {
		t.Fatal("no held GPU to leave out")
	}
	return &c
}

// capacityUnknown is s with its first GPU's capacity unknown (fractional
// plugin settings never read) and the plugin named.
func capacityUnknown(s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Devices = slices.Clone(s.Devices)
	for i := range c.Devices {
		if c.Devices[i].Name == "cuda" {
			c.Devices[i].Capacity, c.Devices[i].CapacityUnknown = model.Zero, true
			break
		}
	}
	c.Plugin = &model.PluginInfo{Kind: model.PluginCUDAFractional, Source: "flag", Settings: "etcd 127.0.0.1:2379"}
	return &c
}

// TestPluginAndUnknownCapacity: the plugin is exported with whether its
// settings can be read, and a device of unknown capacity has no capacity,
// free or over-capacity series (never a made-up number).
func TestPluginAndUnknownCapacity(t *testing.T) {
	snap := capacityUnknown(build(t, tree(t, 2, "agent-a")))
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	p := promtest.Select(ss, "fgtop_cuda_plugin_info", "kind", "fractional", "source", "flag", "settings_ok", "false")
	if len(p) != 1 {
		t.Fatalf("fgtop_cuda_plugin_info: %d series", len(p))
	}
	var id string
	for _, d := range snap.Devices {
		if d.CapacityUnknown {
			id = string(d.ID)
		}
	}
	for _, m := range []string{"fgtop_device_capacity", "fgtop_device_free", "fgtop_device_over_capacity"} {
		if n := len(promtest.SelectUnits(ss, m, "device", id)); n != 0 {
			t.Errorf("%s_* for a device of unknown capacity: %d series", m, n)
		}
	}
	if n := len(promtest.Select(ss, "fgtop_device_alloc_ratio", "device", id)); n != 0 {
		t.Errorf("fgtop_device_alloc_ratio for a device of unknown capacity: %d series", n)
	}
	if n := len(promtest.SelectUnits(ss, "fgtop_device_held", "device", id)); n == 0 {
		t.Error("no fgtop_device_held for the device: what is held is known")
	}
}

// TestCompareSnapshotCatchesDifferences: the comparison the agreement
// tests rely on reports a changed amount, a missing owner and a missing
// series.
func TestCompareSnapshotCatchesDifferences(t *testing.T) {
	snap := build(t, tree(t, 3, "agent-a"))
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	for _, tc := range []struct {
		name   string
		change func(*report.Snapshot)
		want   string
	}{
		{"held", func(r *report.Snapshot) { r.Devices[0].Held["cuda.shares"] = "0.51" }, "held cuda:" + gpu1},
		{"capacity", func(r *report.Snapshot) { c := model.MustDec("1.01"); r.Devices[1].Capacity = &c }, "capacity cuda:" + gpu2},
		{"kernels", func(r *report.Snapshot) { r.Agents[0].Kernels++ }, "kernels of agent-a"},
		{"owner", func(r *report.Snapshot) { r.Agents[0].Owns = map[string][]string{"cuda": {gpu3}} }, "owner_info cuda:" + gpu1},
		{"ratio", func(r *report.Snapshot) { r.AllocMapRatio[gpu4] = "0.7000" }, "alloc ratio cuda:" + gpu4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := report.FromSnapshot(snap)
			tc.change(r)
			diffs := promtest.CompareSnapshot(ss, r)
			if !strings.Contains(strings.Join(diffs, "\n"), tc.want) {
				t.Fatalf("a changed %s went unnoticed; differences:\n%s", tc.name, strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestDriftAndOwners: a kernel on a device its agent's partition does not
// give it is exported as drift, with the amount it holds there.
func TestDriftAndOwners(t *testing.T) {
	snap := partitioned(build(t, tree(t, 3, "agent-a", "agent-b")))
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	// agent-a's kernels: single (gpu4 0.50), split (gpu2, gpu3 0.60), cpu-only.
	// agent-b's: split, cpu-only, single. gpu4 and gpu3 are agent-b's.
	for _, tc := range []struct {
		agent, device, slot, want string
	}{
		{"agent-a", gpu4, "cuda.shares", "0.5"},
		{"agent-a", gpu3, "cuda.shares", "0.6"},
		{"agent-b", gpu2, "cuda.shares", "0.6"},
	} {
		got := promtest.Select(ss, promtest.Unit("fgtop_drift_held", tc.slot), "agent", tc.agent, "device", tc.device, "slot", tc.slot)
		if len(got) != 1 || !decIs(got[0], tc.want) {
			t.Errorf("drift of %s on %s: %v, want %s", tc.agent, tc.device, got, tc.want)
		}
	}
	if got := promtest.SelectUnits(ss, "fgtop_drift_held", "agent", "agent-b", "device", gpu4); len(got) != 0 {
		t.Errorf("agent-b owns %s, yet drift is exported: %v", gpu4, got)
	}
	if got := promtest.Select(ss, "fgtop_device_owner_info", "device", gpu1); len(got) != 1 || got[0].Labels["agent"] != "agent-a" {
		t.Errorf("owners of %s: %v, want agent-a alone", gpu1, got)
	}
	if got := promtest.Select(ss, "fgtop_device_owner_info", "plugin", "mem", "device", "root"); len(got) != 2 {
		t.Errorf("mem is not partitioned by device: both agents own it; got %v", got)
	}
	if got := promtest.Select(ss, "fgtop_agent_memory_share_bytes", "agent", "agent-a"); len(got) != 1 || got[0].Value != 128<<30 {
		t.Errorf("agent-a's mem share: %v", got)
	}
}

// TestAllocatorAndDeviceInfo: the settings a placement needs and the
// device facts, as the fleet reads them back.
func TestAllocatorAndDeviceInfo(t *testing.T) {
	snap := build(t, tree(t, 1, "agent-a"))
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	al := promtest.Select(ss, "fgtop_allocator_info")
	if len(al) != 1 || al[0].Labels["allocation_mode"] != "fractional" || al[0].Labels["quantum_size"] != "0.1" {
		t.Fatalf("fgtop_allocator_info: %v, want fractional with the etcd's quantum_size 0.1", al)
	}
	for i, d := range snap.Devices {
		got := promtest.Select(ss, "fgtop_device_info", "plugin", string(d.Name), "device", string(d.ID))
		if len(got) != 1 {
			t.Fatalf("fgtop_device_info of %s: %v", d.Key(), got)
		}
		l := got[0].Labels
		numa := ""
		if d.NUMANode >= 0 {
			numa = fmt.Sprint(d.NUMANode)
		}
		if l["position"] != fmt.Sprint(i) || l["slot"] != string(d.Slot) || l["numa_node"] != numa || l["slot_type"] != string(d.SlotType) {
			t.Errorf("fgtop_device_info of %s: %v; want position %d, slot %s, numa %q, type %s", d.Key(), l, i, d.Slot, numa, d.SlotType)
		}
	}
	if got := promtest.Select(ss, "fgtop_device_info", "device", gpu2); len(got) != 1 || got[0].Labels["numa_node"] != "1" || got[0].Labels["model"] != "NVIDIA A100-SXM4-40GB" {
		t.Errorf("gpu2 info: %v, want NUMA node 1 and the fixture's model", got)
	}
}

// TestTelemetryCarriesDCGMLabels: NVML readings carry dcgm-exporter's
// label names and base units; a reading that failed is absent, not 0.
func TestTelemetryCarriesDCGMLabels(t *testing.T) {
	tel := &model.Telemetry{
		UtilGPU: model.Some[uint32](42), MemUsed: model.Some[uint64](3 << 30), MemTotal: model.Some[uint64](40 << 30),
		TempC: model.Some[uint32](61), PowerMW: model.Some[uint32](251500), PowerCapMW: model.Some[uint32](400000),
		Processes: []model.Process{{PID: 7}, {PID: 8}},
	}
	snap := &model.Snapshot{Seq: 3, Time: time.Unix(1700000000, 0), Node: "gpu-07", Devices: []model.Device{{
		ID: "GPU-1234", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.One,
		Index: 2, Model: "NVIDIA H100 80GB HBM3", UUID: "1234", NUMANode: -1, Telemetry: tel,
	}}}
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	want := map[string]string{
		"fgtop_gpu_utilization_ratio":   "0.42",
		"fgtop_gpu_memory_used_bytes":   fmt.Sprint(3 << 30),
		"fgtop_gpu_memory_total_bytes":  fmt.Sprint(40 << 30),
		"fgtop_gpu_temperature_celsius": "61",
		"fgtop_gpu_power_watts":         "251.5",
		"fgtop_gpu_power_limit_watts":   "400",
		"fgtop_gpu_processes":           "2",
		"fgtop_gpu_lost":                "0",
	}
	for name, v := range want {
		got := promtest.Select(ss, name, "gpu", "2", "UUID", "GPU-1234", "model_name", "NVIDIA H100 80GB HBM3", "hostname", "gpu-07", "node", "gpu-07", "device", "GPU-1234")
		if len(got) != 1 || !decIs(got[0], v) {
			t.Errorf("%s: %v, want one series of %s with dcgm's labels", name, got, v)
		}
	}
	if got := promtest.Select(ss, "fgtop_gpu_memory_utilization_ratio"); len(got) != 0 {
		t.Errorf("memory utilization was not read, yet exported: %v", got)
	}
	if got := promtest.Select(ss, "fgtop_device_info", "numa_node", ""); len(got) != 1 {
		t.Errorf("an unknown NUMA node is an empty label: %v", got)
	}
}

// decIs compares a sample with a decimal exactly (promtest.Sample.Dec).
func decIs(s promtest.Sample, want string) bool {
	g, err := s.Dec()
	return err == nil && g.Cmp(model.MustDec(want)) == 0
}

// TestBeforeFirstSnapshot: before the engine publishes, a scrape says who
// is there and nothing else (no zeros that look like an empty node).
func TestBeforeFirstSnapshot(t *testing.T) {
	ss := samples(t, exposition(t, New(Options{Latest: fixed(nil), Node: "n1", Build: BuildInfo{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26.8"}})))
	if len(ss) != 1 || ss[0].Name != "fgtop_build_info" || ss[0].Labels["version"] != "v1.2.3" || ss[0].Labels["node"] != "n1" {
		t.Fatalf("before the first snapshot: %v, want fgtop_build_info alone", ss)
	}
}

// TestSnapshotAge: the age is the scrape clock minus the snapshot's time.
func TestSnapshotAge(t *testing.T) {
	at := time.Unix(1700000000, 0)
	snap := &model.Snapshot{Seq: 9, Time: at, Node: "n"}
	c := New(Options{Latest: fixed(snap), Now: func() time.Time { return at.Add(2500 * time.Millisecond) }})
	ss := samples(t, exposition(t, c))
	for name, want := range map[string]string{"fgtop_snapshot_age_seconds": "2.5", "fgtop_snapshot_sequence": "9", "fgtop_snapshot_timestamp_seconds": "1700000000"} {
		if got := promtest.Select(ss, name); len(got) != 1 || !decIs(got[0], want) {
			t.Errorf("%s: %v, want %s", name, got, want)
		}
	}
}

// TestPromtoolCheckMetrics: promtool, Prometheus's own linter, finds
// nothing in the exporter's real output (collector, process and Go
// collectors, through the HTTP handler), telemetry series included (their
// dcgm-style labels once failed the lint: modelName is camelCase).
func TestPromtoolCheckMetrics(t *testing.T) {
	snap := partitioned(build(t, tree(t, 4, "agent-a", "agent-b")))
	// Telemetry on the first GPU, as NVML (or the demo) gives it.
	snap.Devices = slices.Clone(snap.Devices)
	for i := range snap.Devices {
		if snap.Devices[i].Name == "cuda" {
			snap.Devices[i].Model, snap.Devices[i].UUID = "NVIDIA A100-SXM4-40GB", string(snap.Devices[i].ID)
			snap.Devices[i].Telemetry = &model.Telemetry{UtilGPU: model.Some[uint32](42), UtilMem: model.Some[uint32](7),
				MemUsed: model.Some[uint64](3 << 30), MemTotal: model.Some[uint64](40 << 30), TempC: model.Some[uint32](61),
				PowerMW: model.Some[uint32](251500), PowerCapMW: model.Some[uint32](400000), Processes: []model.Process{{PID: 7}}}
			break
		}
	}
	h := Handler(Registry(New(Options{Latest: fixed(snap), Build: BuildInfo{Version: "v0.0.0-test", GoVersion: "go1.26.8"}})))
	body := get(t, h, "/metrics")
	out, err := promtest.CheckMetrics(t, body)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestIdleKernels: the node's count of kernels holding but idle, and the
// setting it is counted with, come from the snapshot, one series each per
// node (never per kernel).
func TestIdleKernels(t *testing.T) {
	snap := &model.Snapshot{Seq: 1, Time: time.Unix(1700000000, 0), Node: "n", IdleKernels: 3, IdleAfter: 10 * time.Minute}
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap), Node: "n"})))
	for name, want := range map[string]string{"fgtop_idle_kernels": "3", "fgtop_idle_after_seconds": "600"} {
		if got := promtest.Select(ss, name); len(got) != 1 || !decIs(got[0], want) || len(got[0].Labels) != 1 {
			t.Errorf("%s: %v, want one series {node} = %s", name, got, want)
		}
	}
}

// TestHostileLabels: a snapshot with escape sequences in every string
// (as a node could hold them before they were escaped where they
// entered) is exposed with every label value escaped: `curl /metrics` on
// a terminal gets no raw ESC, BEL or C1, and the scrape is not refused.
func TestHostileLabels(t *testing.T) {
	snap := hostile.Snapshot(partitioned(build(t, tree(t, 2, "agent-a", "agent-b"))))
	h := Handler(Registry(New(Options{Latest: fixed(snap), Node: "n" + hostile.Payload, Build: BuildInfo{Version: "v0", GoVersion: "go1.26.8"}})))
	body := string(get(t, h, "/metrics"))
	if !strings.Contains(body, `fgtop_device_info{`) || !strings.Contains(body, `\\x1b]52;c;`) {
		t.Fatalf("the exposition lacks the devices or the escaped payload:\n%.2000s", body)
	}
	if f := hostile.Foreign(body); len(f) > 0 {
		t.Fatalf("raw bytes in the exposition: %v", f)
	}
}

// TestAllocRatioOfAnUnlistedGPU: a GPU the kernels hold that the
// inventory lacks is in snapshot --json's alloc_map_ratio (as in
// Backend.AI's gpu_alloc_map): the exporter gives the same ratio.
func TestAllocRatioOfAnUnlistedGPU(t *testing.T) {
	snap := unlistedGPU(t, build(t, tree(t, 5, "agent-a", "agent-b")))
	listed := map[model.DeviceID]bool{}
	for _, d := range snap.Devices {
		listed[d.ID] = true
	}
	doc := report.FromSnapshot(snap)
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	n := 0
	for id, want := range doc.AllocMapRatio {
		if listed[model.DeviceID(id)] {
			continue
		}
		n++
		got := promtest.Select(ss, "fgtop_device_alloc_ratio", "device", id)
		if len(got) != 1 {
			t.Errorf("alloc ratio of %s, not listed: %v, want %s (alloc_map_ratio)", id, got, want)
			continue
		}
		if v, err := got[0].Dec(); err != nil || v.Cmp(model.MustDec(fmt.Sprint(want))) != 0 {
			t.Errorf("alloc ratio of %s, not listed: %v (%v), want %v (alloc_map_ratio)", id, v, err, want)
		}
	}
	if n == 0 {
		t.Fatalf("alloc_map_ratio has no unlisted device: %v", doc.AllocMapRatio)
	}
}

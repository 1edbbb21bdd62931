package fleet

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
	pmodel "github.com/prometheus/common/model"
)

// promSample is one series of node's answer: v with the labels kv gives
// in pairs.
func promSample(node string, v float64, kv ...string) *pmodel.Sample {
	m := pmodel.Metric{"node": pmodel.LabelValue(node)}
	for i := 0; i+1 < len(kv); i += 2 {
		m[pmodel.LabelName(kv[i])] = pmodel.LabelValue(kv[i+1])
	}
	return &pmodel.Sample{Metric: m, Value: pmodel.SampleValue(v)}
}

// TestPromUnknownCapacity: a GPU the exporter lists without a capacity
// (its node never read the fractional settings) reads as unknown through
// Prometheus, as through SSH: held/?, not held against a capacity of 0.
func TestPromUnknownCapacity(t *testing.T) {
	res := make([]pmodel.Vector, len(promQueries))
	sample := func(v float64, kv ...string) *pmodel.Sample { return promSample("n1", v, kv...) }
	const qInfo, qCap, qHeld, qSeq = 0, 1, 2, 14
	if promQueries[qSeq] != "fgtop_snapshot_sequence" {
		t.Fatalf("query %d is %s: the test's indexes are stale", qSeq, promQueries[qSeq])
	}
	for i, id := range []string{"GPU-a", "GPU-b"} {
		res[qInfo] = append(res[qInfo], sample(1, "__name__", "fgtop_device_info", "device", id, "plugin", "cuda", "slot", "cuda.shares",
			"slot_type", "count", "position", string(rune('0'+i)), "index", string(rune('0'+i))))
		res[qHeld] = append(res[qHeld], sample(0.5, "__name__", "fgtop_device_held_shares", "device", id, "slot", "cuda.shares"))
	}
	res[qCap] = append(res[qCap], sample(3.98, "__name__", "fgtop_device_capacity_shares", "device", "GPU-b", "slot", "cuda.shares"))
	res[qSeq] = append(res[qSeq], sample(7, "__name__", "fgtop_snapshot_sequence"))
	nodes, err := buildPromNodes(res, map[string]time.Time{"n1": time.Now()}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Snap == nil || len(nodes[0].Snap.Devices) != 2 {
		t.Fatalf("nodes %+v", nodes)
	}
	a, b := nodes[0].Snap.Devices[0], nodes[0].Snap.Devices[1]
	if !a.CapacityUnknown || b.CapacityUnknown || b.Capacity.String() != "3.98" {
		t.Fatalf("GPU-a unknown %v; GPU-b unknown %v capacity %s: want GPU-a unknown, GPU-b 3.98", a.CapacityUnknown, b.CapacityUnknown, b.Capacity)
	}
	sum := Summarize(nodes[0].Snap, Settings{})
	if sum.Devices[0].CapacityText() != "?" || sum.Devices[0].Free.Sign() != 0 {
		t.Errorf("summary of GPU-a: capacity %s free %s, want ? and 0", sum.Devices[0].CapacityText(), sum.Devices[0].Free)
	}
}

// TestPromValuesNoNodeSends: a node whose exporter (or whoever can push to
// the store) sends a NaN capacity or a negative held amount is shown
// without figures, saying which value; the other nodes keep theirs, and a
// negative exponent (1.00 sent as 1 with exponent -2) is no such value.
func TestPromValuesNoNodeSends(t *testing.T) {
	res := make([]pmodel.Vector, len(promQueries))
	sample := promSample
	const qInfo, qCap, qHeld, qSeq, qCapExp = 0, 1, 2, 14, 15
	if promQueries[qCapExp] != "fgtop_device_capacity_exponent" {
		t.Fatalf("query %d is %s: the test's indexes are stale", qCapExp, promQueries[qCapExp])
	}
	for _, tc := range []struct {
		node      string
		capacity  float64
		held      float64
		badMetric string
	}{
		{"good", 1, 0.5, ""},
		{"nan", math.NaN(), 0.5, "fgtop_device_capacity_shares for device GPU-a, slot cuda.shares is NaN"},
		{"inf", 1, math.Inf(1), "fgtop_device_held_shares for device GPU-a, slot cuda.shares is Infinity"},
		{"negative", 1, -0.5, "fgtop_device_held_shares for device GPU-a, slot cuda.shares is -0.5 (negative)"},
	} {
		res[qInfo] = append(res[qInfo], sample(tc.node, 1, "__name__", "fgtop_device_info", "device", "GPU-a", "plugin", "cuda", "slot", "cuda.shares",
			"slot_type", "count", "position", "0", "index", "0"))
		res[qCap] = append(res[qCap], sample(tc.node, tc.capacity, "__name__", "fgtop_device_capacity_shares", "device", "GPU-a", "slot", "cuda.shares"))
		res[qCapExp] = append(res[qCapExp], sample(tc.node, -2, "__name__", "fgtop_device_capacity_exponent", "device", "GPU-a", "slot", "cuda.shares"))
		res[qHeld] = append(res[qHeld], sample(tc.node, tc.held, "__name__", "fgtop_device_held_shares", "device", "GPU-a", "slot", "cuda.shares"))
		res[qSeq] = append(res[qSeq], sample(tc.node, 3, "__name__", "fgtop_snapshot_sequence"))
	}
	now := time.Now()
	nodes, err := buildPromNodes(res, map[string]time.Time{"good": now, "nan": now, "inf": now, "negative": now}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]PromNode{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	if g := byName["good"]; g.Snap == nil || g.Conflict != "" || g.Sum.CapacityText() != "1.00" || g.Sum.Free.String() != "0.50" {
		t.Errorf("good node: conflict %q, capacity %s free %s", g.Conflict, g.Sum.CapacityText(), g.Sum.Free)
	}
	f := PromFleet(nodes, now, time.Minute)
	for _, name := range []string{"nan", "inf", "negative"} {
		n := byName[name]
		if n.Snap != nil || !strings.Contains(n.Conflict, "no figures of it are shown") {
			t.Errorf("%s: snapshot %v, conflict %q", name, n.Snap != nil, n.Conflict)
		}
		for _, fn := range f.Nodes {
			if fn.Name == name && (fn.State == Live || fn.Snap != nil) {
				t.Errorf("%s in the fleet: state %s, figures %v", name, fn.State, fn.Snap != nil)
			}
		}
	}
	for name, want := range map[string]string{"nan": "NaN", "inf": "Infinity", "negative": "-0.5 (negative)"} {
		if !strings.Contains(byName[name].Conflict, want) {
			t.Errorf("%s: %q lacks %q", name, byName[name].Conflict, want)
		}
	}
}

// TestPromAgentHeld: through Prometheus an agent's kernels hold what its
// per-device series say, so the manager's limit (its given amount less
// what they hold) refuses what SSH refuses: 1.2 on an agent given 2.0
// whose kernels hold 1.5. They were read as holding nothing, and --fit
// sent the request there.
func TestPromAgentHeld(t *testing.T) {
	res := make([]pmodel.Vector, len(promQueries))
	sample := func(v float64, kv ...string) *pmodel.Sample { return promSample("n1", v, kv...) }
	const qInfo, qCap, qHeld, qAgent, qAgentHeld, qSeq, qAgentGiven = 0, 1, 2, 5, 8, 14, 17
	if promQueries[qAgent] != "fgtop_agent_info" || !strings.Contains(promQueries[qAgentHeld], "fgtop_agent_device_held") || !strings.Contains(promQueries[qAgentGiven], "fgtop_agent_given") {
		t.Fatalf("queries %q: the test's indexes are stale", promQueries)
	}
	res[qInfo] = append(res[qInfo], sample(1, "__name__", "fgtop_device_info", "device", "GPU-a", "plugin", "cuda", "slot", "cuda.shares",
		"slot_type", "count", "position", "0", "index", "0"))
	res[qCap] = append(res[qCap], sample(4, "__name__", "fgtop_device_capacity_shares", "device", "GPU-a", "slot", "cuda.shares"))
	res[qHeld] = append(res[qHeld], sample(1.5, "__name__", "fgtop_device_held_shares", "device", "GPU-a", "slot", "cuda.shares"))
	res[qAgent] = append(res[qAgent], sample(1, "__name__", "fgtop_agent_info", "agent", "i-a", "position", "0"))
	res[qAgentHeld] = append(res[qAgentHeld],
		sample(1.0, "__name__", "fgtop_agent_device_held_shares", "agent", "i-a", "plugin", "cuda", "device", "GPU-a", "slot", "cuda.shares"),
		sample(0.5, "__name__", "fgtop_agent_device_held_shares", "agent", "i-a", "plugin", "cuda", "device", "GPU-b", "slot", "cuda.shares"))
	res[qAgentGiven] = append(res[qAgentGiven], sample(2, "__name__", "fgtop_agent_given_shares", "agent", "i-a", "slot", "cuda.shares"))
	res[qSeq] = append(res[qSeq], sample(3, "__name__", "fgtop_snapshot_sequence"))
	const qAgentKernels = 18
	if promQueries[qAgentKernels] != "fgtop_agent_kernels" {
		t.Fatalf("query %d is %s: the test's indexes are stale", qAgentKernels, promQueries[qAgentKernels])
	}
	res[qAgentKernels] = append(res[qAgentKernels], sample(2, "__name__", "fgtop_agent_kernels", "agent", "i-a"))
	nodes, err := buildPromNodes(res, map[string]time.Time{"n1": time.Now()}, Settings{})
	if err != nil || len(nodes) != 1 || nodes[0].Snap == nil || len(nodes[0].Snap.Agents) != 1 {
		t.Fatalf("nodes %+v, %v", nodes, err)
	}
	a := nodes[0].Snap.Agents[0]
	if got := a.Held[model.SlotCUDAShares]; got.String() != "1.5" || a.Kernels != 2 {
		t.Errorf("agent held %v in %d kernel(s), want cuda.shares 1.5 in 2", a.Held, a.Kernels)
	}
	req, _ := ParseRequest("cuda.shares=1.2")
	fit := FitRequest(nodes[0].Snap, req, Settings{})
	if fit.OK || !strings.Contains(fit.Reason, "its kernels hold 1.5") {
		t.Errorf("fit %+v: want the manager's refusal (0.5 free of 2)", fit)
	}
	req, _ = ParseRequest("cuda.shares=0.5")
	if fit := FitRequest(nodes[0].Snap, req, Settings{}); !fit.OK {
		t.Errorf("0.5 on 0.5 free: %+v", fit)
	}
}

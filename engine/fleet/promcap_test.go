package fleet

import (
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"
)

// TestPromUnknownCapacity: a GPU the exporter lists without a capacity
// (its node never read the fractional settings) reads as unknown through
// Prometheus, as through SSH: held/?, not held against a capacity of 0.
func TestPromUnknownCapacity(t *testing.T) {
	res := make([]pmodel.Vector, len(promQueries))
	sample := func(v float64, kv ...string) *pmodel.Sample {
		m := pmodel.Metric{"node": "n1"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[pmodel.LabelName(kv[i])] = pmodel.LabelValue(kv[i+1])
		}
		return &pmodel.Sample{Metric: m, Value: pmodel.SampleValue(v)}
	}
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

package promtest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// Sample is one series of an exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Text is the value as Prometheus's text format prints it (Go's
// strconv.FormatFloat 'g' -1: the shortest text that reads back as the
// same float64).
func (s Sample) Text() string { return strconv.FormatFloat(s.Value, 'g', -1, 64) }

// Dec reads the value as a decimal: exactly the decimal fgtop exported
// whenever that decimal has at most 15 significant digits (every share,
// count and byte size a node has), since the shortest round-trip text of
// its float64 is then the decimal itself.
func (s Sample) Dec() (model.Dec, error) { return model.ParseDec(s.Text()) }

// ParseText parses a text-format exposition into samples, sorted by name
// then labels.
func ParseText(exposition []byte) ([]Sample, error) {
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(exposition))
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	var out []Sample
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		for _, m := range fams[name].GetMetric() {
			s := Sample{Name: name, Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.Value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.Value = m.GetCounter().GetValue()
			case m.Untyped != nil:
				s.Value = m.GetUntyped().GetValue()
			default:
				continue // summaries and histograms: not fgtop's
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Select returns the samples of name whose labels include every pair of
// kv ("label", "value", ...).
func Select(samples []Sample, name string, kv ...string) []Sample {
	var out []Sample
next:
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if s.Labels[kv[i]] != kv[i+1] {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// CompareSnapshot checks an exposition's fgtop series against the
// snapshot --json document of the same node at the same moment, value by
// value and exactly (decimals compared as decimals, see Sample.Dec). It
// returns every difference, none when they agree.
func CompareSnapshot(samples []Sample, snap *report.Snapshot) []string {
	var diffs []string
	bad := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	node := snap.Node
	one := func(name string, kv ...string) (Sample, bool) {
		got := Select(samples, name, append([]string{"node", node}, kv...)...)
		if len(got) != 1 {
			bad("%s%v: %d series, want 1", name, kv, len(got))
			return Sample{}, false
		}
		return got[0], true
	}
	eqDec := func(what string, s Sample, want string) {
		w, err := model.ParseDec(want)
		if err != nil {
			bad("%s: want %q is not a decimal: %v", what, want, err)
			return
		}
		g, err := s.Dec()
		if err != nil || g.Cmp(w) != 0 {
			bad("%s = %s, snapshot --json says %s", what, s.Text(), want)
		}
	}
	eqInt := func(what string, s Sample, want int) {
		if s.Value != float64(want) {
			bad("%s = %s, snapshot --json says %d", what, s.Text(), want)
		}
	}
	// Seq is the publishing process's own count: a live exporter and a
	// one-shot snapshot of the same node differ there, and only there.
	for _, d := range snap.Devices {
		// Every slot held, and the capacity slot even when nothing is.
		held := maps.Clone(d.Held)
		if _, ok := held[d.Slot]; !ok {
			held[d.Slot] = "0"
		}
		for slot, v := range held {
			if s, ok := one(Unit("fgtop_device_held", slot), "device", d.ID, "slot", slot); ok {
				eqDec("held "+d.Key+" "+slot, s, v)
			}
		}
		if n := len(SelectUnits(samples, "fgtop_device_held", "node", node, "device", d.ID)); n != len(held) && !sharedID(snap, d.ID) {
			bad("fgtop_device_held of %s: %d series, snapshot --json holds %d slots", d.Key, n, len(held))
		}
		if d.Capacity == nil {
			// Unknown capacity: no capacity, free or over-capacity series.
			for _, m := range []string{"fgtop_device_capacity", "fgtop_device_free", "fgtop_device_over_capacity"} {
				if n := len(Select(samples, Unit(m, d.Slot), "node", node, "device", d.ID, "slot", d.Slot)); n > 0 {
					bad("%s of %s: %d series for a capacity snapshot --json does not know", m, d.Key, n)
				}
			}
		} else {
			if s, ok := one(Unit("fgtop_device_capacity", d.Slot), "device", d.ID, "slot", d.Slot); ok {
				eqDec("capacity "+d.Key, s, d.Capacity.String())
			}
			if s, ok := one(Unit("fgtop_device_free", d.Slot), "device", d.ID, "slot", d.Slot); ok {
				eqDec("free "+d.Key, s, d.Free.String())
			}
		}
		if s, ok := one("fgtop_device_kernels", "plugin", d.Plugin, "device", d.ID); ok {
			eqInt("kernels on "+d.Key, s, d.Kernels)
		}
		if d.Plugin == "cuda" && d.Capacity != nil {
			want, ok := snap.AllocMapRatio[d.ID]
			if !ok {
				want = "0" // upstream's map lists only devices kernels name
			}
			if s, ok := one("fgtop_device_alloc_ratio", "device", d.ID); ok {
				eqDec("alloc ratio "+d.Key, s, want)
			}
		}
		for _, a := range snap.Agents {
			owns := a.Owns == nil || slices.Contains(a.Owns[d.Plugin], d.ID) || (d.Plugin == "mem" && a.Owns[d.Plugin] == nil)
			got := len(Select(samples, "fgtop_device_owner_info", "node", node, "plugin", d.Plugin, "device", d.ID, "agent", a.ID))
			if owns != (got == 1) {
				bad("owner_info %s agent %s: %d series, snapshot --json says owns=%v", d.Key, a.ID, got, owns)
			}
		}
	}
	for _, a := range snap.Agents {
		if s, ok := one("fgtop_agent_kernels", "agent", a.ID); ok {
			eqInt("kernels of "+a.ID, s, a.Kernels)
		}
		for slot, v := range a.Held {
			if s, ok := one(Unit("fgtop_agent_held", slot), "agent", a.ID, "slot", slot); ok {
				eqDec("held by "+a.ID+" "+slot, s, v)
			}
		}
		if a.Mem != nil {
			if s, ok := one("fgtop_agent_memory_share_bytes", "agent", a.ID); ok {
				eqDec("mem share of "+a.ID, s, a.Mem.String())
			}
		}
	}
	// Per agent and device: the kernels' allocations summed.
	want := map[string]model.Dec{}
	for _, k := range snap.Kernels {
		for slot, devs := range k.Allocations {
			for id, v := range devs {
				d, err := model.ParseDec(v)
				if err != nil {
					bad("kernel %s: %s %s %q: %v", k.ID, slot, id, v, err)
					continue
				}
				key := k.Agent + "\x00" + slot + "\x00" + id
				want[key] = want[key].Add(d)
			}
		}
	}
	for key, v := range want {
		parts := strings.Split(key, "\x00")
		got := Select(samples, Unit("fgtop_agent_device_held", parts[1]), "node", node, "agent", parts[0], "slot", parts[1], "device", parts[2])
		switch {
		case v.IsZero() && len(got) == 0:
		case len(got) != 1:
			bad("fgtop_agent_device_held agent %q %s %s: %d series, want 1", parts[0], parts[1], parts[2], len(got))
		default:
			eqDec("held by "+parts[0]+" on "+parts[2]+" "+parts[1], got[0], v.String())
		}
	}
	states := map[string]int{}
	for _, k := range snap.Kernels {
		states[k.State]++
	}
	for _, st := range []string{"ok", "stale", "broken", "pending"} {
		if s, ok := one("fgtop_kernels", "state", st); ok {
			eqInt("kernels "+st, s, states[st])
		}
	}
	issues := map[[2]string]int{}
	for _, i := range snap.Issues {
		issues[[2]string{i.Code, i.Severity}]++
	}
	for k, n := range issues {
		if s, ok := one("fgtop_issues", "code", k[0], "severity", k[1]); ok {
			eqInt("issues "+k[0]+" "+k[1], s, n)
		}
	}
	if got := Select(samples, "fgtop_issues", "node", node); len(got) != len(issues) {
		var have []string
		for _, s := range got {
			have = append(have, s.Labels["code"]+"/"+s.Labels["severity"])
		}
		var want []string
		for _, i := range snap.Issues {
			want = append(want, i.Code+"/"+i.Severity+": "+i.Message)
		}
		bad("fgtop_issues: %d series %v, snapshot --json has %d (code, severity) pairs: %v", len(got), have, len(issues), want)
	}
	al := snap.Allocator
	if _, ok := one("fgtop_allocator_info", "allocation_mode", al.AllocationMode, "quantum_size", al.QuantumSize,
		"affinity_policy", al.AffinityPolicy, "allocation_order", strings.Join(al.AllocationOrder, ",")); !ok {
		bad("fgtop_allocator_info does not say %+v", al)
	}
	return diffs
}

// FromVector turns a query result into samples (the metric name from
// __name__; Prometheus's target labels, instance and job, stay), so that
// what a real Prometheus stored can be compared like a scrape.
func FromVector(v pmodel.Vector) []Sample {
	out := make([]Sample, 0, len(v))
	for _, s := range v {
		smp := Sample{Labels: map[string]string{}, Value: float64(s.Value)}
		for k, lv := range s.Metric {
			if k == pmodel.MetricNameLabel {
				smp.Name = string(lv)
				continue
			}
			smp.Labels[string(k)] = string(lv)
		}
		out = append(out, smp)
	}
	return out
}

// sharedID reports whether a device id is used by two plugins (cpu core
// "0" and a GPU "0"): held series of both then share the id.
func sharedID(snap *report.Snapshot, id string) bool {
	n := 0
	for _, d := range snap.Devices {
		if d.ID == id {
			n++
		}
	}
	return n > 1
}

// Unit is the name of the exporter's metric base for slot's unit:
// fgtop_device_held and cuda.shares give fgtop_device_held_shares (the
// amounts are split by unit, model.SlotName.Unit).
func Unit(base, slot string) string {
	return base + "_" + model.SlotName(slot).Unit()
}

// SelectUnits is Select over every unit's metric of base.
func SelectUnits(samples []Sample, base string, labels ...string) []Sample {
	var out []Sample
	for _, u := range []string{model.UnitShares, model.UnitDevices, model.UnitBytes} {
		out = append(out, Select(samples, base+"_"+u, labels...)...)
	}
	return out
}

// Exposition is one scrape of c in Prometheus's text format, through a
// pedantic registry (which also checks every metric against its Desc):
// what an exporter serving c answers.
func Exposition(t testing.TB, c prometheus.Collector) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

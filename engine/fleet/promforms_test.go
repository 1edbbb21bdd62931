package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/model"
	pmodel "github.com/prometheus/common/model"
)

// promThrough is s as the fleet reads it back through Prometheus: the
// exporter's exposition, each sample a float as Prometheus stores it,
// answered to promQueries as Prometheus would.
func promThrough(t *testing.T, s *model.Snapshot) PromNode {
	t.Helper()
	samples, err := promtest.ParseText([]byte(exporterText(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	res := make([]pmodel.Vector, len(promQueries))
	for i, q := range promQueries {
		for _, smp := range samples {
			match := smp.Name == q
			if base, ok := strings.CutPrefix(q, `{__name__=~"`); ok {
				base = strings.TrimSuffix(base, `_(shares|devices|bytes)"}`)
				for _, u := range []string{"shares", "devices", "bytes"} {
					match = match || smp.Name == base+"_"+u
				}
			}
			if !match {
				continue
			}
			m := pmodel.Metric{"__name__": pmodel.LabelValue(smp.Name)}
			for k, v := range smp.Labels {
				m[pmodel.LabelName(k)] = pmodel.LabelValue(v)
			}
			res[i] = append(res[i], &pmodel.Sample{Metric: m, Value: pmodel.SampleValue(smp.Value)})
		}
	}
	nodes, err := buildPromNodes(res, map[string]time.Time{s.Node: time.Now()}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Snap == nil {
		t.Fatalf("nodes %+v", nodes)
	}
	return nodes[0]
}

// TestPromReadsAsSSH: one node's amounts read the same over SSH and
// through Prometheus (floats there): each device's held/capacity/free in
// one form, the agents' holdings, what each agent is given, and the
// per-agent rows a node opened from Prometheus shows, as str(Decimal)
// prints them, never a float's form ("1" for "1.00", "2" for "2.0",
// "1.2884901888E+11" for 128849018880).
func TestPromReadsAsSSH(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		s := demoSnapshot(t, seed)
		pn := promThrough(t, s)
		ssh := Summarize(s, Settings{})
		if got, want := pn.Sum.String(), ssh.String(); got != want {
			t.Errorf("seed %d: summary through Prometheus\n%s\nover SSH\n%s", seed, got, want)
		}
		for _, d := range ssh.Devices {
			if d.CapacityUnknown {
				continue
			}
			e := d.Capacity.Exponent()
			if d.Held.Exponent() != e || d.Free.Exponent() != e {
				t.Errorf("seed %d: %s reads held %s capacity %s free %s: not one form", seed, d.Device, d.Held, d.Capacity, d.Free)
			}
		}
		// What each agent's kernels hold on each device, over SSH.
		byAgent := map[model.AgentID]map[model.SlotName]map[model.DeviceID]model.Dec{}
		for _, k := range s.Kernels() {
			if byAgent[k.Agent] == nil {
				byAgent[k.Agent] = map[model.SlotName]map[model.DeviceID]model.Dec{}
			}
			for slot, devs := range k.Alloc {
				if byAgent[k.Agent][slot] == nil {
					byAgent[k.Agent][slot] = map[model.DeviceID]model.Dec{}
				}
				for id, v := range devs {
					byAgent[k.Agent][slot][id] = byAgent[k.Agent][slot][id].Add(v)
				}
			}
		}
		for _, k := range pn.Snap.Kernels() {
			for slot, devs := range k.Alloc {
				for id, v := range devs {
					if want := byAgent[k.Agent][slot][id]; v.String() != want.String() {
						t.Errorf("seed %d: %s %s on %s reads %s, over SSH %s", seed, k.ID, slot, id, v, want)
					}
				}
			}
		}
		for i, a := range s.Agents {
			p := pn.Snap.Agents[i]
			for _, slot := range a.Held.Names() {
				if got, want := p.Held[slot].String(), a.Held[slot].String(); got != want {
					t.Errorf("seed %d: agent %s holds %s %s through Prometheus, %s over SSH", seed, a.ID, got, slot, want)
				}
			}
			for _, slot := range a.Given.Names() {
				if got, want := p.Given[slot].String(), a.Given[slot].String(); got != want {
					t.Errorf("seed %d: agent %s is given %s %s through Prometheus, %s over SSH", seed, a.ID, got, slot, want)
				}
			}
		}
	}
}

// TestOneForm: a device's held, capacity and free read in its capacity's
// form, or the finest where held needs more digits; never a digit lost.
func TestOneForm(t *testing.T) {
	for _, tc := range []struct{ held, capacity, h, c, f string }{
		{"1.00", "1", "1", "1", "0"},          // the tour's MIG slice over SSH
		{"0", "1.00", "0.00", "1.00", "1.00"}, // an idle GPU of shares
		{"0.3", "1.00", "0.30", "1.00", "0.70"},
		{"1.60", "1.00", "1.60", "1.00", "-0.60"},
		{"0.125", "1.00", "0.125", "1.000", "0.875"},
		{"0.5", "1", "0.5", "1.0", "0.5"},
		{"17179869184", "274877906944", "17179869184", "274877906944", "257698037760"},
	} {
		h, c, f := OneForm(model.MustDec(tc.held), model.MustDec(tc.capacity))
		if h.String() != tc.h || c.String() != tc.c || f.String() != tc.f {
			t.Errorf("OneForm(%s, %s) = %s/%s free %s, want %s/%s free %s", tc.held, tc.capacity, h, c, f, tc.h, tc.c, tc.f)
		}
	}
}

package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// TestOneUnitPerMetric: no metric mixes shares, whole devices and bytes:
// every series with a slot label sits in the metric of its slot's unit
// (a cuda.shares amount in ..._shares, mem in ..._bytes, cpu, cuda.device
// and MIG slots in ..._devices), and each of the three units is served.
func TestOneUnitPerMetric(t *testing.T) {
	snap := partitioned(build(t, tree(t, 3, "agent-a", "agent-b")))
	units := map[string]map[string]bool{}
	for _, s := range samples(t, exposition(t, New(Options{Latest: fixed(snap)}))) {
		slot, ok := s.Labels["slot"]
		if !ok || strings.HasSuffix(s.Name, "_exponent") || s.Name == "fgtop_device_info" {
			continue
		}
		u := model.SlotName(slot).Unit()
		if !strings.HasSuffix(s.Name, "_"+u) {
			t.Errorf("%s{slot=%q}: a %s amount outside a _%s metric", s.Name, slot, u, u)
		}
		if units[s.Name] == nil {
			units[s.Name] = map[string]bool{}
		}
		units[s.Name][u] = true
	}
	for name, us := range units {
		if len(us) != 1 {
			t.Errorf("%s carries %d units", name, len(us))
		}
	}
	for _, n := range []string{"fgtop_device_held_shares", "fgtop_device_capacity_devices", "fgtop_device_capacity_bytes", "fgtop_agent_held_bytes"} {
		if units[n] == nil {
			t.Errorf("%s not served", n)
		}
	}
}

// TestDashboardOneUnitPerAxis: every time series panel of the Grafana
// dashboard plots one unit: its queries' fgtop metrics all end in the same
// unit (or are ratios), and the panel's axis says which (unit set).
func TestDashboardOneUnitPerAxis(t *testing.T) {
	root, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "contrib", "grafana-fgtop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Panels []struct {
			Title       string `json:"title"`
			Type        string `json:"type"`
			FieldConfig struct {
				Defaults struct {
					Unit string `json:"unit"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	unitOf := func(name string) string {
		for _, suf := range []string{"_shares", "_devices", "_bytes", "_ratio", "_celsius", "_watts", "_seconds", "_kernels"} {
			if strings.HasSuffix(name, suf) {
				return suf
			}
		}
		return name
	}
	seen := 0
	for _, p := range doc.Panels {
		if p.Type != "timeseries" {
			continue
		}
		seen++
		units := map[string]bool{}
		for _, tg := range p.Targets {
			// What a join matches on (group_left's right side) is not
			// plotted.
			expr, _, _ := strings.Cut(tg.Expr, "group_left")
			for _, name := range seriesName.FindAllString(expr, -1) {
				if strings.HasPrefix(name, "fgtop_") && !strings.HasSuffix(name, "_info") {
					units[unitOf(name)] = true
				}
			}
		}
		if len(units) > 1 {
			t.Errorf("panel %q plots %d units on one axis: %v", p.Title, len(units), units)
		}
		if p.FieldConfig.Defaults.Unit == "" {
			t.Errorf("panel %q: no unit on its axis", p.Title)
		}
	}
	if seen < 5 {
		t.Fatalf("%d time series panels", seen)
	}
}

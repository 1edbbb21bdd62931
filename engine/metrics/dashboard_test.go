package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// dashboardQueries returns every PromQL expression of the Grafana
// dashboard in contrib/ (panel targets and template queries).
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	root, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "contrib", "grafana-fgtop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("contrib/grafana-fgtop.json is not valid JSON: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	if len(out) < 10 {
		t.Fatalf("only %d queries found in the dashboard", len(out))
	}
	return out
}

var seriesName = regexp.MustCompile(`\bfgtop_[a-z0-9_]+`)

// TestDashboardSeriesExist: every fgtop series the dashboard queries is in
// the exporter's output for a node that has all of them (drift, issues,
// NVML telemetry). dcgm-exporter's own series are not fgtop's to check.
func TestDashboardSeriesExist(t *testing.T) {
	snap := partitioned(build(t, tree(t, 3, "agent-a", "agent-b")))
	snap.Issues = append(slices.Clone(snap.Issues), model.Issue{Severity: model.SevWarning, Code: model.IssueWatch, Message: "test"})
	tel := &model.Telemetry{UtilGPU: model.Some[uint32](10), MemUsed: model.Some[uint64](1), MemTotal: model.Some[uint64](2),
		TempC: model.Some[uint32](40), PowerMW: model.Some[uint32](1000)}
	snap.Devices = append(slices.Clone(snap.Devices), model.Device{ID: "GPU-ab", Name: "cuda", Slot: model.SlotCUDAShares,
		SlotType: model.SlotTypeCount, Capacity: model.One, UUID: "ab", NUMANode: 0, Telemetry: tel})
	have := map[string]bool{}
	for _, s := range samples(t, exposition(t, New(Options{Latest: fixed(snap)}))) {
		have[s.Name] = true
	}
	used := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		for _, name := range seriesName.FindAllString(q, -1) {
			used[name] = true
			if !have[name] {
				t.Errorf("the dashboard queries %s, which the exporter does not serve (query %q)", name, q)
			}
		}
	}
	for _, want := range []string{"fgtop_device_held_shares", "fgtop_device_capacity_shares", "fgtop_device_held_devices", "fgtop_device_alloc_ratio", "fgtop_device_owner_info",
		"fgtop_agent_kernels", "fgtop_issues", "fgtop_drift_held_shares", "fgtop_agent_held_bytes"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}

// TestDashboardQueriesParse: promtool parses every query of the dashboard
// (as recording rules, with Grafana's variables filled in).
func TestDashboardQueriesParse(t *testing.T) {
	tool := promtest.Promtool(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboardQueries(t) {
		if strings.HasPrefix(q, "label_values(") {
			continue // a Grafana function, not PromQL
		}
		q = strings.ReplaceAll(q, "$node", ".+")
		qj, _ := json.Marshal(q)
		fmt.Fprintf(&b, "      - record: fgtop:dashboard_query_%d\n        expr: %s\n", i, qj)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, b.String())
	}
}

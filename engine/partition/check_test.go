package partition

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestCheckVerdict(t *testing.T) {
	slotBased := func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.slot-based.toml") }
	deviceBased := func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.device-based.toml") }
	oneAgent := func(t *testing.T) *agentconfig.Config {
		// [[agents]] with exactly one entry: neither loader takes it.
		return parseConfig(t, "[resource]\nallocation-mode = \"shared\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n")
	}
	overCap := model.Issue{Severity: model.SevError, Code: model.IssueOverCapacity, Message: "cuda:x held beyond its capacity"}
	note := model.Issue{Severity: model.SevWarning, Code: model.IssueDeviceSource, Message: "mock file has a problem"}
	parseErr := model.Issue{Severity: model.SevError, Code: model.IssueParse, File: "/scratches/k1/config/resource.txt", Line: 3, Message: "bad line"}
	denied := model.Issue{Severity: model.SevError, Code: model.IssuePermission, File: "/scratches/k2/config", Message: "permission denied"}
	timeShared := model.Issue{Severity: model.SevWarning, Code: model.IssueOverCapacity, Message: "2 CPU core(s) time-shared across agents"}
	// A kernel on a GPU its agent's plugin does not register (a
	// device_mask that leaves it out): the node's settings and its live
	// kernels disagree; where the device source is unavailable, a warning
	// that cannot be judged.
	unregistered := model.Issue{Severity: model.SevError, Code: model.IssueUnknownDevice, Message: "cuda:2 is held by kernels of i-b, whose CUDA plugin does not register it"}
	unjudged := model.Issue{Severity: model.SevWarning, Code: model.IssueUnknownDevice, Message: "1 kernel allocation(s) on cuda:2 (the device source is unavailable)"}
	cpuOnly := func(t *testing.T) *agentconfig.Config {
		// The slot-based fixture with its device amounts taken out: a
		// manual partition of cores and memory only.
		cfg := loadFixture(t, "agent.multi-agent.slot-based.toml")
		for _, a := range append([]*agentconfig.Allocation{cfg.GlobalAlloc}, allocsOf(cfg)...) {
			if a != nil {
				a.Slots, a.Devices = nil, nil
			}
		}
		return cfg
	}
	tests := []struct {
		name    string
		cfg     func(t *testing.T) *agentconfig.Config
		schema  Schema
		devices []model.Device
		kernels []*model.Kernel
		issues  []model.Issue
		source  string // the snapshot's Source.Kind
		unseen  int
		unread  int // UnreadFiles

		status                string
		class                 CheckClass
		failing, drift, notes int
		problems              bool // Problems listed
		node                  bool // NodeProblems
		startupChecked        bool
		accelUnchecked        bool
	}{
		{name: "main loads, node fits, nothing held", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			status: "ok", class: CheckOK, startupChecked: true},
		{name: "a device held beyond its capacity is drift", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{overCap}, status: "drift", class: CheckFinding, failing: 1, drift: 1, startupChecked: true},
		{name: "a warning that is not drift is a note", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{note}, status: "ok", class: CheckOK, notes: 1, startupChecked: true},
		{name: "drift wins over an unseen root", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{overCap}, unseen: 1, status: "drift", class: CheckFinding, failing: 1, drift: 1, startupChecked: true},
		{name: "an unseen scratch root leaves the live state unchecked", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			unseen: 2, status: "unchecked", class: CheckFinding, startupChecked: true},
		{name: "a kernel file that does not parse leaves the live state unchecked", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{parseErr, note}, unread: 1, status: "unchecked", class: CheckFinding, notes: 1, startupChecked: true},
		{name: "unreadable kernel files are named", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{parseErr, denied}, unread: 2, status: "unchecked", class: CheckFinding, startupChecked: true},
		{name: "drift wins over an unread kernel file", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{overCap, parseErr}, unread: 1, status: "drift", class: CheckFinding, failing: 1, drift: 1, startupChecked: true},
		{name: "a kernel on a device its plugin does not register is drift", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{unregistered}, status: "drift", class: CheckFinding, failing: 1, drift: 1, startupChecked: true},
		{name: "an unknown device the source cannot see is a note", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{unjudged}, status: "ok", class: CheckOK, notes: 1, startupChecked: true},
		{name: "cores time-shared across agents are a note, not drift", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{timeShared}, status: "ok", class: CheckOK, notes: 1, startupChecked: true},
		{name: "manual cores and memory only, no NVML: checked", cfg: cpuOnly, schema: SchemaMain, devices: hostDevices(32, nil, 256),
			source: "none", status: "ok", class: CheckOK, notes: 1, startupChecked: true},
		{name: "manual with unknown accelerators is unchecked", cfg: slotBased, schema: SchemaMain, devices: hostDevices(32, nil, 256),
			source: "none", status: "unchecked", class: CheckFinding, notes: 1, accelUnchecked: true},
		// 120G + 120G on a 236G host loads (within the 8G reserved:
		// backendai.md §5.1), but the agents may be sent more than the
		// host has: a note, as plan warns it, not drift.
		{name: "mem given beyond the host is a note", cfg: slotBased, schema: SchemaMain, devices: hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4}, 236),
			status: "ok", class: CheckOK, notes: 1, startupChecked: true},
		{name: "too few GPUs for the manual amounts: wont-start", cfg: slotBased, schema: SchemaMain, devices: hostDevices(32, []string{gpu1}, 256),
			status: "wont-start", class: CheckRefused, problems: true, node: true},
		{name: "device-based file under main is invalid", cfg: deviceBased, schema: SchemaMain, devices: fixtureDevices(),
			status: "invalid", class: CheckRefused, problems: true},
		{name: "device-based file under the draft is draft-only", cfg: deviceBased, schema: SchemaDraft, devices: fixtureDevices(),
			status: "draft-only", class: CheckOK, startupChecked: true},
		{name: "device-based file under the draft with drift", cfg: deviceBased, schema: SchemaDraft, devices: fixtureDevices(),
			kernels: []*model.Kernel{kernel("k1", agentA, gpu4, "0.50")},
			status:  "drift", class: CheckFinding, failing: 1, drift: 1, startupChecked: true},
		{name: "neither loader takes it: invalid under main", cfg: oneAgent, schema: SchemaMain, devices: fixtureDevices(),
			status: "invalid", class: CheckRefused, problems: true},
		{name: "neither loader takes it: invalid under the draft", cfg: oneAgent, schema: SchemaDraft, devices: fixtureDevices(),
			status: "invalid", class: CheckRefused, problems: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			snap := snapshot(tt.devices, tt.kernels...)
			snap.Issues = tt.issues
			snap.Source.Kind = tt.source
			res := Check(cfg, snap, tt.unseen, tt.schema)
			rep := res.Report
			if rep.Status != tt.status || res.Class != tt.class {
				t.Fatalf("status %q class %d, want %q class %d (problems %q, drift %v)", rep.Status, res.Class, tt.status, tt.class, rep.Problems, rep.Drift)
			}
			if (res.Reason == "") != (tt.class == CheckOK) {
				t.Errorf("reason %q for class %d", res.Reason, res.Class)
			}
			if res.Failing != tt.failing || len(rep.Drift) != tt.drift || len(rep.Notes) != tt.notes {
				t.Errorf("failing %d drift %d notes %d, want %d %d %d (%v / %v)", res.Failing, len(rep.Drift), len(rep.Notes), tt.failing, tt.drift, tt.notes, rep.Drift, rep.Notes)
			}
			if (len(rep.Problems) > 0) != tt.problems || res.NodeProblems != tt.node {
				t.Errorf("problems %q node %v, want problems %v node %v", rep.Problems, res.NodeProblems, tt.problems, tt.node)
			}
			if (tt.class == CheckRefused) != (res.Headline != "") || (tt.class == CheckRefused) != (rep.Partition == nil) {
				t.Errorf("headline %q partition %v for class %d", res.Headline, rep.Partition != nil, res.Class)
			}
			if rep.StartupChecked != tt.startupChecked || res.AccelUnchecked != tt.accelUnchecked {
				t.Errorf("startup checked %v accel unchecked %v, want %v %v", rep.StartupChecked, res.AccelUnchecked, tt.startupChecked, tt.accelUnchecked)
			}
			if rep.LiveChecked != (tt.unseen == 0 && tt.unread == 0) || rep.UnreadRoots != tt.unseen || len(rep.UnreadFiles) != tt.unread {
				t.Errorf("live checked %v unread roots %d files %v, want unseen %d unread %d", rep.LiveChecked, rep.UnreadRoots, rep.UnreadFiles, tt.unseen, tt.unread)
			}
			if tt.unread > 0 && tt.failing == 0 && !strings.Contains(res.Reason, parseErr.File+":3") {
				t.Errorf("reason %q does not name the unread file", res.Reason)
			}
			// check --json names its document as plan --json does; the
			// loader that judged is judged_by (it was "schema").
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"schema":"fgtop.check/v1","config":`; !strings.HasPrefix(string(b), want) ||
				!strings.Contains(string(b), `"judged_by":"`+string(tt.schema)+`"`) || rep.Config != cfg.Path {
				t.Errorf("check --json %s, want it to begin %s and judged_by %q", b, want, tt.schema)
			}
			if tt.accelUnchecked && !strings.Contains(res.Reason, "accelerator") {
				t.Errorf("reason %q does not name the accelerators", res.Reason)
			}
		})
	}
}

func allocsOf(cfg *agentconfig.Config) []*agentconfig.Allocation {
	var out []*agentconfig.Allocation
	for i := range cfg.Agents {
		out = append(out, cfg.Agents[i].Alloc)
	}
	return out
}

func TestParseSchema(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Schema
		err  bool
	}{
		{"", SchemaMain, false},
		{"main", SchemaMain, false},
		{"MAIN", SchemaMain, false},
		{"bep-1044", SchemaDraft, false},
		{"BEP1044", SchemaDraft, false},
		{"pr8463", SchemaDraft, false},
		{"draft", "", true},
	} {
		got, err := ParseSchema(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseSchema(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && err.Error() != `--schema "draft": want main (Backend.AI main's loader, the default) or bep-1044 (the unmerged draft, PR #8463)` {
			t.Errorf("words: %v", err)
		}
	}
}

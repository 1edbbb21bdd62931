package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestCheckWriteText(t *testing.T) {
	slotBased := func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.slot-based.toml") }
	deviceBased := func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.device-based.toml") }
	overCap := model.Issue{Severity: model.SevError, Code: model.IssueOverCapacity, Message: "cuda:x held beyond its capacity"}
	parseErr := model.Issue{Severity: model.SevError, Code: model.IssueParse, File: "/scratches/k1/config/resource.txt", Line: 3, Message: "bad line"}
	tests := []struct {
		name    string
		cfg     func(t *testing.T) *agentconfig.Config
		schema  Schema
		devices []model.Device
		issues  []model.Issue
		unseen  int
		// lines are lines the text must have; last is its last line.
		lines []string
		last  string
	}{
		{name: "ok names the node", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			last: "ok: Backend.AI main loads this file, the agent starts on this node (32 cores, 256g memory, 4 cuda), and the live state matches the config"},
		{name: "an unseen root is not ok", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(), unseen: 2,
			last: "Backend.AI main loads this file and the agent starts on this node, but the live state was not checked: 2 scratch root(s) missing or unreadable (see the warnings on stderr), so the kernels under them were not seen"},
		{name: "drift says what was only partly checked", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{overCap}, unseen: 1,
			lines: []string{"drift (1):", "  error over-capacity: cuda:x held beyond its capacity"},
			last:  "note: the live state was only partly checked: 1 scratch root(s) missing or unreadable (see the warnings on stderr)"},
		{name: "an unread file is listed", cfg: slotBased, schema: SchemaMain, devices: fixtureDevices(),
			issues: []model.Issue{parseErr},
			last:   "not ok: Backend.AI main loads this file and the agent starts on this node, but the live state was not fully read: 1 kernel file(s) could not be read or parsed (unread: above), so what those kernels hold is not known"},
		{name: "a refusal on this node names the node", cfg: slotBased, schema: SchemaMain, devices: hostDevices(32, []string{gpu1}, 256),
			lines: []string{"  (node: 32 cores, 256g memory, 1 cuda)"}},
		{name: "draft-only says main cannot load it", cfg: deviceBased, schema: SchemaDraft, devices: fixtureDevices(),
			last: "the live state matches the config, and the BEP-1044 draft (PR #8463) loads this file, but Backend.AI main cannot load it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			snap := snapshot(tt.devices)
			snap.HostMemBytes = 256 << 30
			snap.Issues = tt.issues
			res := Check(cfg, snap, tt.unseen, tt.schema)
			var b strings.Builder
			res.WriteText(&b)
			text := b.String()
			got := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			if tt.last != "" && got[len(got)-1] != tt.last {
				t.Errorf("last line\n%q\nwant\n%q\nin:\n%s", got[len(got)-1], tt.last, text)
			}
			for _, l := range tt.lines {
				if !containsLine(got, l) {
					t.Errorf("no line %q in:\n%s", l, text)
				}
			}
			if res.Class == CheckRefused {
				if !strings.HasPrefix(text, cfg.Path+": "+res.Headline) {
					t.Errorf("a refusal does not open with its headline:\n%s", text)
				}
			} else if !containsLine(got, cfg.Path+": "+string(cfg.Format)+", "+cfg.Mode+"; "+
				itoa(len(snap.Devices))+" device(s), 0 live kernel(s)") {
				t.Errorf("no summary line of the file in:\n%s", text)
			}
			if tt.schema == SchemaDraft && !strings.HasPrefix(text, cfg.Path+": "+agentconfig.DraftFormatWarning+". Judged by the unmerged BEP-1044 draft") {
				t.Errorf("a draft-only file does not open with main's refusal:\n%s", text)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func itoa(n int) string { return model.NewDec(int64(n), 0).String() }

func TestNodeSummary(t *testing.T) {
	mig := model.Device{ID: "MIG-1", Name: "cuda-mig", Slot: "cuda.mig-1g.10gb", SlotType: model.SlotTypeUnique, Capacity: model.One}
	tests := []struct {
		name string
		devs []model.Device
		mem  int64
		want string
	}{
		{"cores and memory only", hostDevices(8, nil, 64), 64 << 30, "8 cores, 64g memory"},
		{"each other kind counted once, in order", append(hostDevices(2, []string{gpu1, gpu2}, 1), mig), 1 << 30, "2 cores, 1g memory, 2 cuda, 1 cuda-mig"},
		{"nothing", nil, 0, "0 cores, 0 memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot(tt.devs)
			s.HostMemBytes = tt.mem
			if got := NodeSummary(s); got != tt.want {
				t.Errorf("NodeSummary = %q, want %q", got, tt.want)
			}
		})
	}
}

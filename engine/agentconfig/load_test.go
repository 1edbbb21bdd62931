package agentconfig

import (
	"errors"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func loadTestdata(t *testing.T, name string) *Config {
	t.Helper()
	c, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return c
}

func TestLoadFixtures(t *testing.T) {
	dev := loadTestdata(t, "agent.multi-agent.device-based.toml")
	if dev.Format != FormatDeviceBased || dev.AllocFormat != FormatDeviceBased || dev.FormatGuessed {
		t.Errorf("device-based fixture: format %s/%s guessed=%v", dev.Format, dev.AllocFormat, dev.FormatGuessed)
	}
	if dev.Mode != ModeManual || len(dev.Agents) != 2 {
		t.Fatalf("mode %s, %d agents", dev.Mode, len(dev.Agents))
	}
	a := dev.Agents[0]
	if a.ID != "i-gpu-node01-numa0" || !a.OwnAlloc || a.Alloc == nil {
		t.Fatalf("agent 0: %+v", a)
	}
	if len(a.Alloc.CPU) != 16 || a.Alloc.CPU[15] != "15" {
		t.Errorf("cpu = %v", a.Alloc.CPU)
	}
	if want := model.NewDec(120<<30, 0); !a.Alloc.Mem.Equal(want) {
		t.Errorf("mem = %s, want %s", a.Alloc.Mem, want)
	}
	if got := a.Alloc.Devices["cuda"]; !slices.Equal(got, []model.DeviceID{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"}) {
		t.Errorf("devices.cuda = %v", got)
	}
	if !dev.ReservedCPU.Equal(model.NewDec(2, 0)) || !dev.ReservedMem.Equal(model.NewDec(8<<30, 0)) {
		t.Errorf("reserved cpu %s mem %s", dev.ReservedCPU, dev.ReservedMem)
	}
	if want := "/var/lib/backend.ai/scratches"; dev.Agents[1].ScratchRoot != want {
		t.Errorf("scratch root %q", dev.Agents[1].ScratchRoot)
	}

	slot := loadTestdata(t, "agent.multi-agent.slot-based.toml")
	if slot.Format != FormatSlotBased || slot.AllocFormat != FormatSlotBased {
		t.Errorf("slot-based fixture: format %s/%s", slot.Format, slot.AllocFormat)
	}
	b := slot.Agents[1].Alloc
	if !b.HasCPU || !b.CPUCount.Equal(model.NewDec(15, 0)) || !b.Slots["cuda.shares"].Identical(model.MustDec("2.0")) {
		t.Errorf("slot-based agent b: %+v", b)
	}
}

func TestLoadSingleAgent(t *testing.T) {
	c, err := Parse("/etc/backend.ai/agent.toml", []byte(testfix.AgentTOML(`
[agent]
id = "i-single"
[container]
scratch-root = "scratches"
[resource]
allocation-mode = "manual"
[resource.allocations]
cpu = 8
mem = "64G"
devices = { "cuda.shares" = "1.5" }
`)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatSingle || c.AllocFormat != FormatSlotBased {
		t.Errorf("format %s/%s", c.Format, c.AllocFormat)
	}
	if c.Agents[0].ID != "i-single" || c.Agents[0].Alloc == nil || c.GlobalAlloc != c.Agents[0].Alloc {
		t.Errorf("agent %+v", c.Agents[0])
	}
	if c.Agents[0].ScratchRoot != "/etc/backend.ai/scratches" {
		t.Errorf("scratch root %s", c.Agents[0].ScratchRoot)
	}
}

// TestAgentIDNotAString: an [agent] id that is not a string is the
// loader's error, and the agent is not also said to have no id.
func TestAgentIDNotAString(t *testing.T) {
	for _, tc := range []struct{ id, problem, warning string }{
		{"id = 5", "agent.id: must be a string", ""},
		{"", "", "[agent] id is not set"},
		{`id = "i-a"`, "", ""},
	} {
		c, err := Parse("agent.toml", []byte(testfix.AgentTOML("[agent]\n"+tc.id+"\n")))
		var inv *InvalidError
		if err != nil && !errors.As(err, &inv) {
			t.Fatal(err)
		}
		var all string
		for _, p := range c.Problems {
			all += p.String() + "\n"
		}
		if (tc.problem == "") != !strings.Contains(all, "agent.id") || (tc.problem != "" && !strings.Contains(all, tc.problem)) {
			t.Errorf("%q: problems %q, want %q", tc.id, c.Problems, tc.problem)
		}
		warned := strings.Contains(strings.Join(c.Warnings, "\n"), "id is not set")
		if warned != (tc.warning != "") {
			t.Errorf("%q: warnings %q, want %q", tc.id, c.Warnings, tc.warning)
		}
	}
}

// TestLoadRules checks every load-time rule of domain/backendai.md §5 with
// the agent's wording where it has one.
func TestLoadRules(t *testing.T) {
	const two = `
[[agents]]
[agents.agent]
id = "a"
%s
[[agents]]
[agents.agent]
id = "b"
%s
`
	agents := func(mode, a, b string) string {
		return "[resource]\nallocation-mode = \"" + mode + "\"\n" + strings.Replace(strings.Replace(two, "%s", a, 1), "%s", b, 1)
	}
	okDev := "[agents.resource]\ncpu = [\"0\"]\nmem = \"1G\"\ndevices = { cuda = [\"g0\"] }"
	tests := []struct {
		name   string
		text   string
		want   []string // substrings of the problems, in order
		format Format
	}{
		{"valid device-based", agents("manual", okDev, strings.ReplaceAll(okDev, `"0"`, `"1"`)), nil, FormatDeviceBased},
		{"cpu as integer in device-based", agents("manual", okDev, "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { cuda = [\"g1\"] }"),
			[]string{draftRefusedLead, "line 15: agents[1].resource.cpu (agent \"b\"): Old integer format detected"}, FormatDeviceBased},
		{"dotted devices key", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { \"cuda.mem\" = [\"x\"] }"),
			[]string{draftRefusedLead, "line 17: agents[1].resource.devices.\"cuda.mem\" (agent \"b\"): Old slot-based format detected: key 'cuda.mem' contains '.'"}, FormatDeviceBased},
		{"unquoted dotted devices key", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda.mem = \"0.5\" }"),
			[]string{draftRefusedLead, "line 17: agents[1].resource.devices.cuda (agent \"b\"): must be a list of device IDs, not a table"}, FormatDeviceBased},
		{"decimal-looking device value", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = \"0.5\" }"),
			[]string{draftRefusedLead, "agents[1].resource.devices.cuda (agent \"b\"): Old slot-based format detected: \"0.5\" is an amount"}, FormatDeviceBased},
		{"numeric device value", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = 2 }"),
			[]string{draftRefusedLead, "agents[1].resource.devices.cuda (agent \"b\"): Old slot-based format detected: 2 is an amount"}, FormatDeviceBased},
		{"single id string accepted", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = \"g1\" }"), nil, FormatDeviceBased},
		{"cpu inside devices", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = [\"g1\"], cpu = [\"2\"] }"),
			[]string{draftRefusedLead, "agents[1].resource.devices.cpu (agent \"b\"): CPU cores go in cpu"}, FormatDeviceBased},
		{"empty cpu in manual", agents("manual", okDev, "[agents.resource]\ncpu = []\nmem = \"1G\"\ndevices = { cuda = [\"g1\"] }"),
			[]string{draftRefusedLead, "line 15: agents[1].resource.cpu (agent \"b\"): manual mode needs a non-empty cpu list"}, FormatDeviceBased},
		{"zero mem in manual", agents("manual", okDev, "[agents.resource]\ncpu = [\"1\"]\nmem = \"0\"\ndevices = { cuda = [\"g1\"] }"),
			[]string{draftRefusedLead, "agents[1].resource.mem (agent \"b\"): manual mode needs mem greater than 0"}, FormatDeviceBased},
		{"numbers become strings", agents("manual", okDev, "[agents.resource]\ncpu = [1, 2]\nmem = \"1G\""), nil, FormatDeviceBased},
		{"allocations outside manual", agents("auto-split", okDev, ""),
			[]string{draftRefusedLead, `line 7: agents[0].resource (agent "a"): allocation tables are only allowed in manual mode, and allocation-mode is "auto-split"`}, FormatDeviceBased},
		{"global allocations outside manual", "[resource]\nallocation-mode = \"shared\"\n[resource.allocations]\ncpu = 1\nmem = \"1G\"\n",
			[]string{`resource.allocations: allocation tables are only allowed in manual mode`}, FormatSlotBased},
		{"manual without tables", agents("manual", "", ""),
			[]string{`agents[0] (agent "a"): manual mode needs cpu and mem for every agent, and [agents.resource] for agent "a" is missing`}, FormatSlotBased},
		{"one [[agents]] entry", "[[agents]]\n[agents.agent]\nid = \"a\"\n", []string{"agents: has exactly one entry"}, FormatSlotBased},
		{"duplicate ids", strings.ReplaceAll(agents("shared", "", ""), `id = "b"`, `id = "a"`), []string{`duplicate agent id "a"`}, FormatSlotBased},
		{"bad mode", agents("split", "", ""), []string{`line 2: resource.allocation-mode: "split" is not one of "shared", "auto-split", "manual"`}, FormatSlotBased},
		{"bad affinity", "[resource]\naffinity-policy = \"packed\"\n", []string{`resource.affinity-policy: "packed" is not an affinity policy`}, FormatSlotBased},
		{"negative reserved", "[resource]\nreserved-cpu = -1\n", nil, FormatSlotBased},
		{"slot-based valid", agents("manual", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"1.0\" }", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = 1.5 }"), nil, FormatSlotBased},
		{"slot-based negative", agents("manual", "[agents.resource]\ncpu = -4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"-1\" }", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"1\" }"),
			[]string{"line 8: agents[0].resource.cpu (agent \"a\"): -4: a core count must not be negative"}, FormatSlotBased},
		{"slot-based different device keys", agents("manual", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"1\" }", "[agents.resource]\ncpu = 4\nmem = \"1G\""),
			[]string{`agents[1].resource.devices (agent "b"): every agent must list the same devices slots: agent "a" has cuda.shares, agent "b" has none`}, FormatSlotBased},
		{"slot-based missing mem", agents("manual", "[agents.resource]\ncpu = 4", "[agents.resource]\ncpu = 4\nmem = \"1G\""),
			[]string{"line 7: agents[0].resource (agent \"a\"): mem is missing, and the agent requires it"}, FormatSlotBased},
		{"slot-based unquoted slot", agents("manual", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { cuda.shares = \"1\" }", "[agents.resource]\ncpu = 4\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"1\" }"),
			[]string{`agents[0].resource.devices.cuda (agent "a"): must be a decimal amount such as "2.0", not a table (TOML reads the unquoted dotted key`}, FormatSlotBased},
		{"bad mem", agents("manual", "[agents.resource]\ncpu = [\"0\"]\nmem = \"lots\"", strings.ReplaceAll(okDev, `"0"`, `"1"`)),
			[]string{draftRefusedLead, `line 9: agents[0].resource.mem (agent "a"): "lots" is not a size`}, FormatDeviceBased},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("agent.toml", []byte(testfix.AgentTOML(tt.text)))
			if c == nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.AllocFormat != tt.format {
				t.Errorf("AllocFormat = %s, want %s", c.AllocFormat, tt.format)
			}
			var got []string
			for _, p := range c.Problems {
				got = append(got, p.String())
			}
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected problems: %v", err)
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InvalidError", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n  %s\nwant %d containing %q", strings.Join(got, "\n  "), len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{"[agents]\nx = 1\n", "agents = [1, 2]\n", "a = \n", "[a]\n[a]\n"} {
		c, err := Parse("agent.toml", []byte(text))
		if err == nil || c != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil config and an error", text, c, err)
		}
	}
}

// A file that is not TOML is said so in fgtop's words, at its line and
// column, with the fix: it passed the library's "toml: expected ']' to
// close table name" through.
func TestParseNotTOML(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[agent\nfoo=", "agent.toml:1:7: not valid TOML: expected ']' to close table name; Backend.AI's agent cannot load it either: fix line 1"},
		{"[agent]\nid = \n", "agent.toml:2:6: not valid TOML: "},
	} {
		_, err := Parse("agent.toml", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "toml: ") {
			t.Errorf("Parse(%q): %v, want %q", c.text, err, c.want)
		}
	}
}

func TestFormatGuessed(t *testing.T) {
	text := "[resource]\nallocation-mode = \"auto-split\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n"
	text = testfix.AgentTOML(text)
	c, err := Parse("agent.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// Main's form when the file does not say: the only one main loads.
	if c.AllocFormat != FormatSlotBased || !c.FormatGuessed || c.IsDraftFormat() {
		t.Errorf("default: %s guessed=%v draft=%v", c.AllocFormat, c.FormatGuessed, c.IsDraftFormat())
	}
	c, _ = ParseAssuming("agent.toml", []byte(text), FormatDeviceBased)
	if c.AllocFormat != FormatDeviceBased || !c.FormatGuessed || c.IsDraftFormat() {
		t.Errorf("assumed device-based: %s guessed=%v draft=%v", c.AllocFormat, c.FormatGuessed, c.IsDraftFormat())
	}
}

func TestInheritGlobalAllocations(t *testing.T) {
	c, err := Parse("agent.toml", []byte(testfix.AgentTOML(`
[resource]
allocation-mode = "manual"
[resource.allocations]
cpu = 2
mem = "2G"
devices = { "cuda.shares" = "1" }
[[agents]]
[agents.agent]
id = "a"
[[agents]]
[agents.agent]
id = "b"
[agents.resource]
cpu = 3
mem = "3G"
devices = { "cuda.shares" = "1" }
`)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agents[0].OwnAlloc || !c.Agents[0].Alloc.CPUCount.Equal(model.NewDec(2, 0)) {
		t.Errorf("agent a should inherit the global table: %+v", c.Agents[0])
	}
	if !c.Agents[1].OwnAlloc || !c.Agents[1].Alloc.CPUCount.Equal(model.NewDec(3, 0)) {
		t.Errorf("agent b has its own table: %+v", c.Agents[1])
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := loadTestdata(t, "agent.multi-agent.device-based.toml")
	d := c.Clone()
	d.Agents[0].Alloc.Devices["cuda"][0] = "changed"
	d.Agents[0].Alloc.CPU[0] = "changed"
	if c.Agents[0].Alloc.Devices["cuda"][0] == "changed" || c.Agents[0].Alloc.CPU[0] == "changed" {
		t.Error("Clone shares slices with the original")
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

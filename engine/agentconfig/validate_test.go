package agentconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// node returns cores CPU cores, the given GPUs (1 fGPU each) and mem GiB.
func node(cores int, gpus []string, memGiB int64) []model.Device {
	var out []model.Device
	for _, g := range gpus {
		out = append(out, model.Device{ID: model.DeviceID(g), Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.One})
	}
	for c := range cores {
		out = append(out, model.Device{ID: model.DeviceID(fmt.Sprint(c)), Name: "cpu", Slot: model.SlotCPU, Capacity: model.One})
	}
	out = append(out, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, Capacity: model.NewDec(memGiB<<30, 0)})
	return out
}

func TestValidate(t *testing.T) {
	twoAgents := func(mode, a, b string) string {
		return fmt.Sprintf("[resource]\nallocation-mode = %q\nreserved-cpu = 1\nreserved-mem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"agent-1\"\n[agents.resource]\n%s\n[[agents]]\n[agents.agent]\nid = \"agent-2\"\n[agents.resource]\n%s\n", mode, a, b)
	}
	gpus := []string{"cuda0", "cuda1", "cuda2", "cuda10"}
	devs := node(4, gpus, 16)
	tests := []struct {
		name    string
		text    string
		devices []model.Device
		want    []string
	}{
		{"valid", twoAgents("manual", `cpu = ["0", "1"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda0\"] }", `cpu = ["2"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda1\", \"cuda10\"] }"), devs, nil},
		{"unknown device id", twoAgents("manual", `cpu = ["0"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda99\"] }", `cpu = ["1"]`+"\nmem = \"4G\""), devs,
			[]string{"line 11: Agent agent-1: Unknown device ID 'cuda99' for 'cuda'. Available: cuda0, cuda1, cuda2, cuda10"}},
		{"unknown device name", twoAgents("manual", `cpu = ["0"]`+"\nmem = \"4G\"\ndevices = { tpu = [\"t0\"] }", `cpu = ["1"]`+"\nmem = \"4G\""), devs,
			[]string{"Agent agent-1: Unknown device 'tpu'. Available: cpu, cuda, mem"}},
		{"unknown core", twoAgents("manual", `cpu = ["0", "7"]`+"\nmem = \"4G\"", `cpu = ["1"]`+"\nmem = \"4G\""), devs,
			[]string{"Agent agent-1: Unknown device ID '7' for 'cpu'. Available: 0, 1, 2, 3"}},
		{"several unknown cores, one line", twoAgents("manual", `cpu = ["0", "7", "8"]`+"\nmem = \"4G\"", `cpu = ["1"]`+"\nmem = \"4G\""), devs,
			[]string{"Agent agent-1: Unknown device ID '7' for 'cpu'. Available: 0, 1, 2, 3 (also unknown: 8)"}},
		{"device twice", twoAgents("manual", `cpu = ["0"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda1\"] }", `cpu = ["1"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda1\"] }"), devs,
			[]string{"Device 'cuda:cuda1' assigned to multiple agents: agent-1, agent-2"}},
		{"core twice, no inventory", twoAgents("manual", `cpu = ["0", "1"]`+"\nmem = \"4G\"", `cpu = ["1"]`+"\nmem = \"4G\""), nil,
			[]string{"Device 'cpu:1' assigned to multiple agents: agent-1, agent-2"}},
		{"mem is shared, not exclusive", twoAgents("manual", `cpu = ["0"]`+"\nmem = \"40G\"", `cpu = ["1"]`+"\nmem = \"40G\""), devs, nil},
		{"not checked outside manual", "[resource]\nallocation-mode = \"auto-split\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n", devs, nil},
		{"reserved above total", "[resource]\nreserved-cpu = 8\n", devs, []string{"reserved-cpu (8) is larger than the node's total cpu (4)"}},
		{"slot-based missing slot", twoAgents("manual", "cpu = 1\nmem = \"4G\"", "cpu = 1\nmem = \"4G\""), devs,
			[]string{"Agent agent-1: slot 'cuda.shares' of a loaded plugin is missing from devices", "Agent agent-2: slot 'cuda.shares'"}},
		{"device twice in one agent", twoAgents("manual", `cpu = ["0", "0"]`+"\nmem = \"4G\"\ndevices = { cuda = [\"cuda1\", \"cuda1\"] }", `cpu = ["1"]`+"\nmem = \"4G\""), devs,
			[]string{"Agent agent-1: device 'cpu:0' is listed twice", "Agent agent-1: device 'cuda:cuda1' is listed twice"}},
		{"slot-based no cpu left", strings.Replace(twoAgents("manual", "cpu = 1\nmem = \"4G\"\ndevices = { \"cuda.shares\" = \"1\" }", "cpu = 1\nmem = \"4G\"\ndevices = { \"cuda.shares\" = \"1\" }"), "reserved-cpu = 1", "reserved-cpu = 4", 1), devs,
			[]string{"nothing of slot 'cpu' is left for the agents (total 4 minus reserved 4 is 0): in manual mode the agent stops at start-up (DivisionByZero)"}},
		{"slot-based over-allocated", twoAgents("manual", "cpu = 4\nmem = \"4G\"\ndevices = { \"cuda.shares\" = \"3\" }", "cpu = 3\nmem = \"4G\"\ndevices = { \"cuda.shares\" = \"2\" }"), devs,
			// Every sum printed adds up: 4 + 3 = 7 written, 3 + 2 = 5 counted.
			[]string{"Resource slot 'cpu' is over-allocated: with the other agents' amounts as they are, agent-1 can have at most 2 (it is given 4), agent-2 at most 1 (it is given 3); the agents are given 7 in total (agent-1 4 + agent-2 3); the agent counts each amount less the reservation of 1, at most the 3 available, which makes 3 + 2 = 5, more than the 3 available (total 4 minus reserved 1)",
				"Resource slot 'cuda.shares' is over-allocated: with the other agents' amounts as they are, agent-1 can have at most 2 (it is given 3), agent-2 at most 1 (it is given 2); the agents are given 5 in total (agent-1 3 + agent-2 2); the agent counts each amount less the reservation of 0, at most the 4 available, which makes 3 + 2 = 5, more than the 4 available (total 4 minus reserved 0)"}},
		// 10000000001 and 10000000003 bytes print as 9.31g each, and their
		// sum as 18.63g: printed in sizes the terms would not add up, so
		// every figure is said in bytes (never 16686018560 beside 15.54g);
		// the limits lead, as sizes rounded down.
		{"slot-based over-allocated, sizes that do not print exactly", twoAgents("manual", "cpu = 1\nmem = 10000000001\ndevices = { \"cuda.shares\" = \"1\" }", "cpu = 1\nmem = 10000000003\ndevices = { \"cuda.shares\" = \"1\" }"), devs,
			[]string{"Resource slot 'mem' is over-allocated: with the other agents' amounts as they are, agent-1 can have at most 7.68g (it is given 10000000001 bytes), agent-2 at most 7.68g (it is given 10000000003 bytes); the agents are given 20000000004 bytes in total (agent-1 10000000001 + agent-2 10000000003); the agent counts each amount less the reservation of 1073741824 bytes, at most the 16106127360 bytes available, which makes 8926258177 + 8926258179 = 17852516356 bytes, more than the 16106127360 bytes available (total 17179869184 bytes minus reserved 1073741824 bytes)"}},
		// One amount is a size exactly (120G), the other is not: the sums
		// stay in bytes, but beside each limit the amount given is said as
		// the limit is, where it can be exactly (check said "at most 8g (it
		// is given 128849018880 bytes)").
		{"slot-based over-allocated, one exact size", twoAgents("manual", "cpu = 1\nmem = \"120G\"\ndevices = { \"cuda.shares\" = \"1\" }", "cpu = 1\nmem = 10000000003\ndevices = { \"cuda.shares\" = \"1\" }"), devs,
			[]string{"Resource slot 'mem' is over-allocated: with the other agents' amounts as they are, agent-1 can have at most 7.68g (it is given 120g), agent-2 at most 1g (it is given 10000000003 bytes); the agents are given 138849018883 bytes in total (agent-1 128849018880 + agent-2 10000000003)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("agent.toml", []byte(testfix.AgentTOML(tt.text)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var got []string
			for _, p := range c.Validate(tt.devices) {
				got = append(got, p.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Validate:\n  %s\nwant %q", strings.Join(got, "\n  "), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestValidateAcceleratorsUnknown(t *testing.T) {
	c, err := Parse("agent.toml", []byte(testfix.AgentTOML("[resource]\nallocation-mode = \"manual\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\", \"9\"]\nmem = \"1G\"\ndevices = { cuda = [\"g0\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = [\"g0\"] }\n")))
	if err != nil {
		t.Fatal(err)
	}
	hostOnly := node(4, nil, 16)
	var got []string
	for _, p := range c.ValidateWith(hostOnly, ValidateOptions{AcceleratorsUnknown: true}) {
		got = append(got, p.Message)
	}
	want := []string{"Agent a: Unknown device ID '9' for 'cpu'. Available: 0, 1, 2, 3", "Device 'cuda:g0' assigned to multiple agents: a, b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(c.Validate(hostOnly)) != 4 {
		t.Errorf("without the option cuda is an unknown device: %v", c.Validate(hostOnly))
	}
}

// TestOverAllocatedLimitFits: the limit an over-allocation leads with is
// the fix: the first agent given exactly that much loads, a quantum more
// is still over-allocated. For memory the limit is a size rounded down,
// so it fits, and the next hundredth does not.
func TestOverAllocatedLimitFits(t *testing.T) {
	devs := node(4, []string{"cuda0", "cuda1", "cuda2", "cuda10"}, 16)
	conf := func(cpu, mem, shares string) string {
		return fmt.Sprintf("[resource]\nallocation-mode = \"manual\"\nreserved-cpu = 1\nreserved-mem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"agent-1\"\n[agents.resource]\ncpu = %s\nmem = %s\ndevices = { \"cuda.shares\" = %q }\n[[agents]]\n[agents.agent]\nid = \"agent-2\"\n[agents.resource]\ncpu = 2\nmem = 6000000001\ndevices = { \"cuda.shares\" = \"1.5\" }\n", cpu, mem, shares)
	}
	problems := func(text string) []string {
		t.Helper()
		c, err := Parse("agent.toml", []byte(testfix.AgentTOML(text)))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range c.Validate(devs) {
			out = append(out, p.String())
		}
		return out
	}
	got := problems(conf("4", `"12G"`, "3.5"))
	limit := regexp.MustCompile(`agent-1 can have at most (\S+) `)
	var cpu, mem, shares string
	for _, p := range got {
		m := limit.FindStringSubmatch(p)
		switch {
		case m == nil:
			t.Errorf("no limit first: %s", p)
		case strings.Contains(p, "slot 'cpu'"):
			cpu = m[1]
		case strings.Contains(p, "slot 'mem'"):
			mem = m[1]
		case strings.Contains(p, "slot 'cuda.shares'"):
			shares = m[1]
		}
	}
	if cpu != "3" || shares != "2.5" || mem == "" {
		t.Fatalf("limits cpu %q mem %q shares %q from %q", cpu, mem, shares, got)
	}
	if p := problems(conf(cpu, strconv.Quote(mem), shares)); len(p) != 0 {
		t.Errorf("at the limits (cpu %s, mem %s, shares %s): %q", cpu, mem, shares, p)
	}
	memBytes, err := model.ParseFiniteBinarySize(mem)
	if err != nil {
		t.Fatal(err)
	}
	more := memBytes.Add(model.NewDec(1<<30/100+1, 0))
	if p := problems(conf("4", more.String(), "2.6")); len(p) != 3 {
		t.Errorf("a step past each limit: %q", p)
	}
}

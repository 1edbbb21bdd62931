package partition

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestParseChange(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   Change
		// err is a part of the error's words; "" for none.
		err  string
		want func(Request) bool
	}{
		{name: "nothing", want: Request.Empty},
		{name: "mode", in: Change{Mode: "manual"}, want: func(r Request) bool { return r.Mode == "manual" }},
		{name: "bad mode", in: Change{Mode: "split"}, err: `--mode "split": want shared, auto-split or manual`},
		{name: "bad format", in: Change{Format: "toml"}, err: `--format "toml": want slot-based`},
		{name: "format typo", in: Change{Format: "devicebased"}, err: `--format "devicebased": did you mean device-based? want slot-based`},
		{name: "move", in: Change{Moves: []string{"cuda:G1=a"}}, want: func(r Request) bool {
			return len(r.Moves) == 1 && r.Moves[0].Device == "cuda:G1" && r.Moves[0].Agent == "a"
		}},
		{name: "move without agent", in: Change{Moves: []string{"cuda:G1="}}, err: `--move "cuda:G1=": want DEVICE=AGENT`},
		// The last "=" splits: an agent id may hold one.
		{name: "cpu of an agent with =", in: Change{CPU: []string{"x=1=0-7,16"}}, want: func(r Request) bool {
			return len(r.CPU) == 1 && r.CPU[0].Agent == "x=1" && r.CPU[0].Spec == "0-7,16"
		}},
		{name: "cpu without =", in: Change{CPU: []string{"a"}}, err: `--cpu "a": want AGENT=0-7,16`},
		{name: "cpu not cores", in: Change{CPU: []string{"a=lots"}}, err: `--cpu "a=lots": "lots" is not a list of cores`},
		{name: "mem", in: Change{Mem: []string{"a=64G"}}, want: func(r Request) bool {
			return len(r.Mem) == 1 && r.Mem[0].Text == "64G" && r.Mem[0].Bytes.Sign() > 0
		}},
		{name: "mem not a size", in: Change{Mem: []string{"a=lots"}}, err: `--mem "a=lots": `},
		{name: "mem zero", in: Change{Mem: []string{"a=0"}}, err: `--mem "a=0": 0 is not above zero: write the agent's memory, e.g. a=64G`},
		{name: "slot", in: Change{Slots: []string{"a=cuda.shares=1.5"}}, want: func(r Request) bool {
			return len(r.Slots) == 1 && r.Slots[0].Amount.String() == "1.5"
		}},
		{name: "slot bad", in: Change{Slots: []string{"a=cuda.shares"}}, err: `--slot "a=cuda.shares": want AGENT=SLOT=AMOUNT`},
		{name: "mem given twice", in: Change{Mem: []string{"a=64G"}, Slots: []string{"a=mem=32G"}},
			err: "--slot a=mem=32G: a's mem is given twice (--mem a=64G, then --slot a=mem=32G): give it once"},
		{name: "cpu given twice", in: Change{CPU: []string{"a=4", "a=8"}}, err: "--cpu a=8: a's cpu is given twice (--cpu a=4, then --cpu a=8)"},
		{name: "from missing", in: Change{From: "/nonexistent/draft.toml"}, err: "--from: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := ParseChange(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(req) {
				t.Fatalf("request %+v", req)
			}
		})
	}
}

func TestCoreListSyntax(t *testing.T) {
	for spec, want := range map[string]bool{
		"0-7,16": true, "15": true, " 1 , 2-3": true,
		"": false, "a": false, "1-": false, "-1": false, "1,,2": false, "1234567890": false,
	} {
		if got := coreListSyntax(spec); got != want {
			t.Errorf("coreListSyntax(%q) = %v, want %v", spec, got, want)
		}
	}
}

func TestPartitionNamedAgentIDs(t *testing.T) {
	for _, tt := range []struct {
		name string
		ids  []model.AgentID
		want []model.AgentID
	}{
		{"none", nil, nil},
		{"named", []model.AgentID{"a", "b"}, []model.AgentID{"a", "b"}},
		{"one made up at every start", []model.AgentID{"a", "agents[1]"}, nil},
		{"the single agent's default", []model.AgentID{"agent"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Partition{}
			for _, id := range tt.ids {
				p.Agents = append(p.Agents, AgentPart{ID: id})
			}
			if got := p.NamedAgentIDs(); !slices.Equal(got, tt.want) {
				t.Errorf("%v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanChange(t *testing.T) {
	const a = "i-gpu-node01-a"
	scanFailed := errors.New("scan the node: boom")
	for _, tt := range []struct {
		name string
		in   Change
		// node fails to be read when set.
		node error
		// err is a part of the error's words, change whether it is a
		// ChangeError; reads how often the node was read.
		err    string
		change bool
		reads  int
	}{
		{name: "planned", in: Change{Slots: []string{a + "=cuda.shares=1.5"}}, reads: 1},
		{name: "bad syntax without slots reads no node", in: Change{Mode: "split"}, err: `--mode "split"`, change: true},
		{name: "a typo of a slot whose amount does not read", in: Change{Slots: []string{a + "=memory=64G"}}, err: "--slot " + a + "=memory=64G: ", change: true, reads: 1},
		{name: "an amount that does not read of a known slot", in: Change{Slots: []string{a + "=cuda.shares=lots"}}, err: `--slot "` + a + `=cuda.shares=lots": `, change: true, reads: 1},
		{name: "the node unread: the syntax is said", in: Change{Slots: []string{a + "=memory=64G"}}, node: scanFailed, err: `--slot "` + a + `=memory=64G": `, change: true, reads: 1},
		{name: "the node's error stands", in: Change{Mode: "manual"}, node: scanFailed, err: "scan the node: boom", reads: 1},
		{name: "Propose refuses a slot the node lacks", in: Change{Slots: []string{a + "=cuda.shres=1"}}, err: "did you mean cuda.shares?", change: true, reads: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			p, err := PlanChange(tt.in, func() (*agentconfig.Config, *model.Snapshot, []string, error) {
				reads++
				if tt.node != nil {
					return nil, nil, nil, tt.node
				}
				return loadFixture(t, "agent.multi-agent.slot-based.toml"), snapshot(fixtureDevices()), nil, nil
			})
			if reads != tt.reads {
				t.Errorf("the node read %d time(s), want %d", reads, tt.reads)
			}
			if tt.err == "" {
				if err != nil || p == nil {
					t.Fatalf("plan %v (%v)", p, err)
				}
				return
			}
			var ce *ChangeError
			if err == nil || !strings.Contains(err.Error(), tt.err) || errors.As(err, &ce) != tt.change {
				t.Fatalf("error %v (a change error: %v), want %q (%v)", err, errors.As(err, &ce), tt.err, tt.change)
			}
		})
	}
}

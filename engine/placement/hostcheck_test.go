package placement

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// TestHostDoubts checks which host slots a simulation on a live tree
// doubts: only those its requests ask for and no virtual host replaced,
// each with what in the tree's kernels or its config's manual partition
// cannot be on this machine.
func TestHostDoubts(t *testing.T) {
	// twoAgentNode: 8 cores, 64 GiB; k-a1 holds cores 0-1 and 8 GiB.
	foreign := func(s *model.Snapshot) {
		ks := s.Kernels()
		ks = append(ks, &model.Kernel{ID: "k-far", Agent: "a2", State: model.KernelOK, Alloc: model.Allocations{
			"cpu": {"130": dec("1"), "9": dec("1"), "64": dec("1"), "12": dec("1"), "100": dec("1")},
			"mem": {"root": model.NewDec(100*gib, 0)},
		}})
		s.SetKernels(ks)
	}
	manual := func(mode string, allocs ...*agentconfig.Allocation) *agentconfig.Config {
		cfg := &agentconfig.Config{Mode: mode}
		for i, a := range allocs {
			cfg.Agents = append(cfg.Agents, agentconfig.AgentConfig{ID: model.AgentID(fmt.Sprint("a", i+1)), IDSet: true, Alloc: a})
		}
		return cfg
	}
	cores := func(ids ...model.DeviceID) *agentconfig.Allocation {
		return &agentconfig.Allocation{HasCPU: true, CPU: ids}
	}
	counts := func(n int64, memGiB int64) *agentconfig.Allocation {
		return &agentconfig.Allocation{HasCPU: true, CPUCount: model.NewDec(n, 0), HasMem: true, Mem: model.NewDec(memGiB*gib, 0)}
	}
	present := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	tests := []struct {
		name     string
		steps    []string
		tree     func(*model.Snapshot)
		cfg      *agentconfig.Config
		none     bool
		cpu, mem bool // --cpus, --mem given
		want     []string
	}{
		{name: "an accelerator request doubts nothing", steps: []string{"cuda.shares=0.5"}, tree: foreign},
		{name: "cpu asked on a tree that fits", steps: []string{"cuda.shares=0.5,cpu=2"},
			want: []string{"cpu (8 cores)  | "}},
		{name: "mem asked in a later step", steps: []string{"cuda.shares=0.5", "free=1", "mem=4g"},
			want: []string{"mem (64 GiB)  | "}},
		{name: "a zero amount asks for nothing", steps: []string{"cuda.shares=0.5,cpu=0,mem=0"}},
		{name: "cores this machine lacks; cores it may have; an agent's memory", steps: []string{"cpu=1,mem=1g"}, tree: foreign,
			want: []string{"cpu (8 cores) the kernels hold cores 64, 100, 130, which this machine (13 CPUs in all) does not have | the kernels hold cores 9, 12, offline here or outside this process's CPU mask",
				"mem (64 GiB)  | the kernels of a2 hold 100 GiB"}},
		{name: "machine's CPUs unknown: nothing proven", steps: []string{"cpu=1"}, tree: foreign, none: true,
			want: []string{"cpu (8 cores)  | the kernels hold cores 9, 12, 64, 100 and 1 more, offline here or outside this process's CPU mask"}},
		{name: "a config's cores this machine lacks, and the kernels'", steps: []string{"cpu=1"}, tree: foreign,
			cfg:  manual(agentconfig.ModeManual, cores("0", "1", "2", "3"), cores("4", "41", "40", "10", "0-1")),
			want: []string{"cpu (8 cores) the kernels hold cores 64, 100, 130 and the config gives its agents cores 40, 41, which this machine (13 CPUs in all) does not have | the kernels hold cores 9, 12 and the config gives its agents core 10, offline here or outside this process's CPU mask"}},
		{name: "a config's counts beyond this machine are not evidence", steps: []string{"cpu=1,mem=1g"},
			cfg:  manual(agentconfig.ModeManual, counts(6, 40), counts(6, 40)),
			want: []string{"cpu (8 cores)  | ", "mem (64 GiB)  | "}},
		{name: "agents together holding more memory than the machine", steps: []string{"mem=1g"}, tree: func(s *model.Snapshot) {
			ks := s.Kernels()
			for _, a := range []model.AgentID{"a1", "a2"} {
				ks = append(ks, &model.Kernel{ID: model.KernelID("k-big-" + a), Agent: a, State: model.KernelOK, Alloc: model.Allocations{
					"mem": {"root": model.NewDec(40*gib, 0)}}})
			}
			s.SetKernels(ks)
		}, want: []string{"mem (64 GiB)  | "}},
		{name: "tables outside manual mode are not a partition", steps: []string{"cpu=1,mem=1g"},
			cfg:  manual(agentconfig.ModeAutoSplit, counts(6, 40), cores("41")),
			want: []string{"cpu (8 cores)  | ", "mem (64 GiB)  | "}},
		{name: "a virtual host is not doubted", steps: []string{"cpu=1,mem=1g"}, tree: foreign, cpu: true, mem: true},
		{name: "only the slot not given", steps: []string{"cpu=1,mem=1g"}, tree: foreign, cpu: true,
			want: []string{"mem (64 GiB)  | the kernels of a2 hold 100 GiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := twoAgentNode()
			if tt.tree != nil {
				tt.tree(snap)
			}
			var got []string
			p := present
			if tt.none {
				p = nil
			}
			for _, d := range HostDoubts(snap, tt.cfg, steps(t, tt.steps...), p, tt.cpu, tt.mem) {
				got = append(got, fmt.Sprintf("%s (%s) %s | %s", d.Slot, d.Here, d.Contradiction, d.Evidence))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("doubts\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

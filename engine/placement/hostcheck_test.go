package placement

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestHostDoubts checks which host slots a simulation on a live tree
// doubts: only those its requests ask for and no virtual host replaced,
// each with what in the tree's kernels cannot be on this machine.
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
	tests := []struct {
		name     string
		steps    []string
		tree     func(*model.Snapshot)
		cpu, mem bool // --cpus, --mem given
		want     []string
	}{
		{name: "an accelerator request doubts nothing", steps: []string{"cuda.shares=0.5"}, tree: foreign},
		{name: "cpu asked on a tree that fits", steps: []string{"cuda.shares=0.5,cpu=2"},
			want: []string{"cpu (8 cores) "}},
		{name: "mem asked in a later step", steps: []string{"cuda.shares=0.5", "free=1", "mem=4g"},
			want: []string{"mem (64 GiB) "}},
		{name: "a zero amount asks for nothing", steps: []string{"cuda.shares=0.5,cpu=0,mem=0"}},
		{name: "cores this machine lacks", steps: []string{"cpu=1,mem=1g"}, tree: foreign,
			want: []string{"cpu (8 cores) the kernels hold cores 9, 12, 64, 100 and 1 more, which this machine (8 cores) lacks",
				"mem (64 GiB) the kernels hold 108 GiB of memory, more than this machine's 64 GiB"}},
		{name: "a virtual host is not doubted", steps: []string{"cpu=1,mem=1g"}, tree: foreign, cpu: true, mem: true},
		{name: "only the slot not given", steps: []string{"cpu=1,mem=1g"}, tree: foreign, cpu: true,
			want: []string{"mem (64 GiB) the kernels hold 108 GiB of memory, more than this machine's 64 GiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := twoAgentNode()
			if tt.tree != nil {
				tt.tree(snap)
			}
			var got []string
			for _, d := range HostDoubts(snap, steps(t, tt.steps...), tt.cpu, tt.mem) {
				got = append(got, fmt.Sprintf("%s (%s) %s", d.Slot, d.Here, d.Contradiction))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("doubts\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

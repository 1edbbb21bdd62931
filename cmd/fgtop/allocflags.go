package main

import (
	"strings"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

// allocFlags are the allocator settings of `simulate` and `fleet`: how
// Backend.AI's allocators are run where the node does not say.
type allocFlags struct {
	strategy string
	affinity string
	quantum  string
	noFrag   bool
	order    string
}

// register adds the flags; maps, quantumFrom and configFrom word where
// their defaults come from in this command.
func (f *allocFlags) register(cmd *cobra.Command, maps, quantumFrom, configFrom string) {
	fl := cmd.Flags()
	fl.StringVar(&f.strategy, "strategy", "evenly", "allocation strategy of "+maps+": evenly or fill")
	fl.StringVar(&f.affinity, "affinity", "", "affinity policy: interleaved or prefer-single-node (default: "+configFrom+", else interleaved)")
	fl.StringVar(&f.quantum, "quantum", "", "quantum_size of fractional maps (default: "+quantumFrom+", else 0.01)")
	fl.BoolVar(&f.noFrag, "no-fragmentation", false, "disallow fractional resource fragmentation (allow_fractional_resource_fragmentation = false)")
	fl.StringVar(&f.order, "allocation-order", "", "comma-separated device plugins (default: "+configFrom+", else cuda,rocm,tpu,cpu,mem)")
}

// settings reads the allocator flags; defaults that depend on the source
// are filled in later.
func (f *allocFlags) settings() (placement.Settings, error) {
	var s placement.Settings
	var err error
	if s.Strategy, err = alloc.ParseStrategy(f.strategy); err != nil {
		return s, usageErr("--strategy %q: want evenly or fill", f.strategy)
	}
	if f.affinity != "" {
		if s.Policy, err = alloc.ParseAffinityPolicy(strings.ReplaceAll(f.affinity, "-", "_")); err != nil {
			return s, usageErr("--affinity %q: want interleaved or prefer-single-node", f.affinity)
		}
	}
	switch strings.ToLower(strings.TrimSpace(f.quantum)) {
	case "null", "none":
		// A corpus case's quantum_size of a discrete map, passed as is.
		f.quantum = ""
	}
	if f.quantum != "" {
		q, err := model.ParseDec(f.quantum)
		if err != nil || !q.IsFinite() || q.Sign() <= 0 {
			return s, usageErr("--quantum %q: want a decimal > 0 such as 0.01", f.quantum)
		}
		s.Quantum = q
	}
	s.ForbidFragmentation = f.noFrag
	if f.order != "" {
		s.Order = []model.DeviceName{}
		for _, n := range strings.Split(f.order, ",") {
			if n = strings.TrimSpace(n); n != "" {
				s.Order = append(s.Order, model.DeviceName(n))
			}
		}
	}
	return s, nil
}

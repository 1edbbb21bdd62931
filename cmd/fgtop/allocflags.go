package main

import (
	"strings"

	"github.com/fgtop/fgtop/engine/placement"
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
	fl.StringVar(&f.quantum, "quantum", "", "quantum_size of fractional maps (default: "+quantumFrom+")")
	fl.BoolVar(&f.noFrag, "no-fragmentation", false, "disallow fractional resource fragmentation (allow_fractional_resource_fragmentation = false)")
	fl.StringVar(&f.order, "allocation-order", "", "comma-separated device plugins (default: "+configFrom+", else cuda,rocm,tpu,cpu,mem)")
}

// settings reads the allocator flags (placement.ParseSettings); defaults
// that depend on the source are filled in later.
func (f *allocFlags) settings() (placement.Settings, error) {
	switch strings.ToLower(strings.TrimSpace(f.quantum)) {
	case "null", "none":
		// A corpus case's quantum_size of a discrete map, passed as is:
		// no quantum given.
		f.quantum = ""
	}
	s, err := placement.ParseSettings(placement.SettingsText{Strategy: f.strategy, Affinity: f.affinity,
		Quantum: f.quantum, NoFragmentation: f.noFrag, Order: f.order})
	if err != nil {
		return s, usageErr("%w", err)
	}
	return s, nil
}

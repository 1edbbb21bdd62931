package engine

import (
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// ScanOptions are the options of a one-shot scan of the node cfg
// describes, as the partition commands (check, plan, apply) take it: its
// path and mode, its agents with their scratch roots, the agents whose id
// Backend.AI makes up (their kernels' records name that id), and the
// scratch roots. The caller adds the node name, the device source and any
// override of the roots.
func ScanOptions(cfg *agentconfig.Config) Options {
	opts := Options{ConfigPath: cfg.Path, Mode: cfg.Mode}
	for _, a := range cfg.Agents {
		opts.Agents = append(opts.Agents, model.Agent{ID: a.ID, ScratchRoot: a.ScratchRoot})
		if !a.IDSet {
			opts.MadeUpIDs = append(opts.MadeUpIDs, a.ID)
		}
	}
	for _, r := range cfg.ScratchRoots() {
		opts.Roots = append(opts.Roots, scratch.Root{Path: r.Path, Agent: r.Agent})
	}
	// A partition command shows no agent health: no network wait.
	opts.NoHealth = true
	return opts
}

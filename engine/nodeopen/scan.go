package nodeopen

import (
	"context"
	"fmt"
	"os"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Scan takes one snapshot of the node cfg describes (check, plan, apply
// and rollback judge against it), with s's scratch roots in place of the
// config's when given and its device source. The roots that cannot be
// read or do not exist are returned, each said on s.Warn: the kernels
// under them are unseen, so what the snapshot says they hold is not the
// node's truth. A --scratch-root AGENT=DIR whose AGENT cfg does not have
// is an *InputError (CheckRootAgents). The device source is closed before
// Scan returns.
func Scan(ctx context.Context, s Settings, cfg *agentconfig.Config) (*model.Snapshot, Unseen, error) {
	opts := engine.ScanOptions(cfg)
	opts.Node, _ = os.Hostname()
	if len(s.ScratchRoots) > 0 {
		parsed, err := ParseRoots(s.ScratchRoots)
		if err != nil {
			return nil, Unseen{}, err
		}
		// As Open does: a typo in AGENT made a new agent of DIR's
		// kernels, leaving the agent that runs them none to be judged by.
		if err := CheckRootAgents(s.ScratchRoots, parsed, opts.Agents, cfg.Path); err != nil {
			return nil, Unseen{}, err
		}
		OwnBareRoots(s.ScratchRoots, parsed, opts.Roots, opts.Agents)
		opts.Roots = parsed
		opts.RootsOverridden = true
	}
	unseen := WarnRoots(s.Warn, &opts)
	inv, err := OpenInventory(s, ConfigPluginsOf(cfg), RootPaths(opts.Roots))
	if err != nil {
		return nil, unseen, err
	}
	opts.Inventory = inv
	defer CloseSources(opts, s.Warn)
	snap, err := engine.Build(ctx, opts)
	if err != nil {
		return nil, unseen, fmt.Errorf("scan the node: %w", err)
	}
	return snap, unseen, nil
}

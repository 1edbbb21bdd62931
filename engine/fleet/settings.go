package fleet

import (
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// nodeSettings is base with the node's own allocator settings (its
// snapshot's Allocator: the quantum of its fractional maps, its agent.toml's
// affinity-policy and allocation-order) where the fleet's flags left them
// unset, which is what `fgtop simulate` takes from the same node's files.
func nodeSettings(s *model.Snapshot, fleet Settings) placement.Settings {
	base := fleet.Settings
	a := s.Allocator
	if base.Quantum.IsZero() && a.Fractional && !a.Quantum.IsZero() {
		base.Quantum = a.Quantum
	}
	if !fleet.PolicySet && a.AffinityPolicy != "" {
		if p, err := alloc.ParseAffinityPolicy(a.AffinityPolicy); err == nil {
			base.Policy = p
		}
	}
	if base.Order == nil && len(a.AllocationOrder) > 0 {
		base.Order = append([]model.DeviceName(nil), a.AllocationOrder...)
	}
	return base
}

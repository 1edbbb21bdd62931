package fleet

import (
	"fmt"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/partition"
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

// QuantumKnown is nil unless req asks for a shares slot of a node whose
// fractional maps have a quantum no one gave (the node could not read its
// plugin settings, fleet's --quantum not set): rounded by a default that
// may not be the node's, where it would land is not known.
func QuantumKnown(s *model.Snapshot, req alloc.Request, fleet Settings) error {
	if !s.Allocator.QuantumUnknown() || !fleet.Quantum.IsZero() {
		return nil
	}
	for _, a := range req {
		if a.Slot.MajorType() == "shares" && a.Amount.Sign() > 0 {
			return fmt.Errorf("where %s lands is not known: the quantum_size of the node's fractional maps is unknown (its CUDA plugin settings were not read, or their quantum_size is not a positive decimal)", a.Slot)
		}
	}
	return nil
}

// ModeKnown is nil unless req asks for a slot whose allocation mode the
// node only guessed (partition.Guessed): the mock plugin's settings were
// not read from its agents' etcd, so whether its GPUs are registered as
// cuda.device or cuda.shares, and with what capacities, is not known,
// nor where req lands. Against the guess a request of shares is "a slot
// the node lacks" and one of whole GPUs is refused for a made-up 0 free.
func ModeKnown(s *model.Snapshot, req alloc.Request) error {
	for _, a := range req {
		if a.Amount.Sign() > 0 && partition.Guessed(s.Source, a.Slot) {
			return fmt.Errorf("where %s lands is not known: the mock plugin's settings in etcd were not read, so its mode and its GPUs' capacities are a guess; %s", a.Slot, partition.MockSettingsHint)
		}
	}
	return nil
}

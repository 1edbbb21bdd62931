package model

// Allocator is how the node's agents allocate: what a placement preview
// needs besides the devices and what is held on them, so that one can run
// away from the node (fgtop fleet --fit, from Prometheus or a stream).
type Allocator struct {
	// Fractional is set in fGPU fractional mode: the accelerator plugin's
	// maps are FractionAllocMaps (slot "<name>.shares").
	Fractional bool
	// Quantum is the fractional maps' quantum_size; zero in discrete mode
	// or when the source does not say.
	Quantum Dec
	// AffinityPolicy is agent.toml's [resource] affinity-policy
	// ("INTERLEAVED", "PREFER_SINGLE_NODE"); "" without a config.
	AffinityPolicy string
	// AllocationOrder is agent.toml's [resource] allocation-order; nil
	// without a config.
	AllocationOrder []DeviceName
}

// QuantumUnknown is true when the maps are fractional and the source could
// not say their quantum_size (the plugin settings were not read, or theirs
// is not a positive decimal): where a share lands depends on it, and no
// default is the node's.
func (a Allocator) QuantumUnknown() bool {
	return a.Fractional && a.Quantum.Sign() <= 0
}

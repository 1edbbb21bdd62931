// Package alloc re-implements Backend.AI's device allocators exactly as the
// agent runs them (src/ai/backend/agent/alloc_map.py, affinity_map.py and
// resources.py::allocate at lablup/backend.ai c0032c47): FractionAllocMap and
// DiscretePropertyAllocMap with the FILL and EVENLY strategies, NUMA-affinity
// device ordering (INTERLEAVED and PREFER_SINGLE_NODE), quantum post-rounding,
// the fractional fragmentation guard, exclusive and unique slot checks, and
// the multi-device-type orchestration with rollback.
//
// fgtop uses it for the placement preview ("where would cuda.shares=1.2 land
// right now?") and to drive the demo agent, so the goal is parity, not
// improvement: every decimal is computed with Python's decimal semantics
// (model.Dec, apd in the hot loop) and every result prints exactly as
// Python's str(Decimal) would ("0.60", "0.80", "0"). The parity test replays
// the corpus recorded from Backend.AI's own code
// (testdata/fixtures/alloc-cases.json, copied from ../shared/fixtures).
//
// # Use
//
// Build one Map per device plugin (NewFractionMap for cuda.shares,
// NewDiscreteMap for cpu, mem, cuda.device and MIG slots), load the live
// kernels' allocations with Map.Apply, clone the maps (CloneAll) for a
// preview, and call Allocate with the agent's allocation order. Free
// releases a kernel. Errors are *Error values whose Kind is the Python
// exception class name.
//
// A map derives its free capacities, whole units and priority orders from
// its allocations once per state (they are dropped whenever the map
// changes) and shares them with its clones; Warm a live map before
// cloning it for many previews, so that a preview on 64 cores neither
// re-sorts nor recomputes them.
//
// # Where Backend.AI misbehaves, so does this package
//
//   - EVENLY can over-commit a device (give it more than its capacity) when
//     the affinity ordering or mixed capacities break the allocator's
//     assumption that the device list is sorted by free capacity. The result
//     is returned as Backend.AI would store it; fgtop flags devices held
//     beyond their capacity elsewhere (the partition drift checks), never
//     here.
//   - A sub-hundredth request that arrives when every device is full makes
//     Backend.AI crash with IndexError. Allocate returns an *Error whose Kind
//     is "IndexError" at that point, leaving the map unchanged, as the agent
//     does.
//
// # Where fgtop differs on purpose
//
//   - A map's Allocate restores the map on any error, and the orchestrating
//     Allocate restores every map on any error; Backend.AI restores only on
//     a ResourceError, so after a crash in a later device type the agent
//     keeps the earlier types' allocations (a leak fgtop does not copy).
//   - A NaN or infinite amount is refused up front as InvalidOperation.
//   - Free and Apply refuse devices the map does not have.
//
// # What the corpus does not pin down (best reading of the code)
//
//   - For a later device type, the primary NUMA sets are taken in ascending
//     node order (unknown node last), then ordered like first-type clusters
//     (least allocated first, then larger first). Python iterates a set of
//     node numbers there.
//   - The fragmentation guard takes the capacity of the first device in
//     priority order; the corpus cannot tell it from the first device of
//     the map.
//   - The unique-slot check runs before allocation for both strategies of
//     both map classes.
//
// Results keep Python's dict insertion order (Allocation is an ordered
// slice), because the order in which the allocator visited devices is what
// the agent writes to resource.txt and what the next device type's affinity
// hint is built from.
package alloc

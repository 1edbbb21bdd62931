// Package placement answers "where would this request land?": on a
// simulated node (a sequence of allocations and frees, which is what
// `fgtop simulate` runs) and on the live state of a node (which agent could
// take a request right now, where, and what capacity is stranded).
//
// Everything here goes through engine/alloc, fgtop's exact re-implementation
// of Backend.AI's allocators, so a placement is the one the agent would
// make. A Node is one agent's view: an alloc map per device plugin (cuda,
// cpu, mem, ...) over the devices its partition owns, with its kernels'
// live allocations loaded into them, allocated in the agent's
// allocation-order with its affinity policy.
//
// A Simulation (simulation.go) is what `fgtop simulate` sets up from its
// flags; setup.go decides what the command's reads mean (a device
// source's issues and settings, the agent config's defaults, a live
// node's partitions and --agent, a corpus case's overrides and check),
// requests.go reads its requests, casecheck.go runs corpus cases and
// words their check, and Document and WriteTable are the command's output;
// engine/simulate reads the command's inputs in its order, so the command
// only parses flags and prints.
//
// # Map construction (what the agent's plugins do)
//
//   - An accelerator plugin whose devices carry a "<name>.shares" slot gets a
//     FractionAllocMap (Settings.Quantum, default 0.01); any other
//     accelerator a DiscretePropertyAllocMap. Both use Settings.Strategy.
//     Their exclusive slot types are the mock CUDA plugin's set,
//     {"<name>.device:*-mig", "<name>.device", "<name>.shares"}.
//   - cpu is a DiscretePropertyAllocMap, EVENLY; mem a
//     DiscretePropertyAllocMap, FILL (the intrinsic plugins), unless
//     Settings.PluginStrategy says otherwise.
//   - Unique slots (MIG slices) live in their plugin's map, as in the mock
//     plugin.
//
// # The alloc map
//
// AllocMap reports what Backend.AI's scan_gpu_alloc_map (and
// `fgtop snapshot --alloc-map`) reports: per device id, the devices that at
// least one live allocation names, for the slots cuda.shares and
// cuda.device (Settings.AllocMapSlots can add more). The value is the alloc
// map's cumulative allocation of the device, exactly as Backend.AI's
// alloc_map.allocations holds it (its state_after in the parity corpus):
// after quantum post-rounding that can print with another exponent than
// the plain sum of the kernels' shares ("4.850" where the sum prints
// "4.85"). A device that no live allocation names is absent, including one
// whose every kernel was freed (its cumulative value is then exactly zero).
package placement

// Package demo runs the embedded demo node: mock devices and simulated
// Backend.AI agents that write real resource.txt files under temporary
// scratch roots, so fgtop's real watcher and engine have a live node to
// follow on any machine.
//
// # The node
//
// Everything is embedded (assets/) and written into a temporary directory
// that Close removes:
//
//   - agent.toml: two agents in BEP-1044's device-based layout, manual mode.
//     i-demo-numa0 owns cores 0-15, 120 GiB and two GPUs on NUMA node 0;
//     i-demo-numa1 owns cores 16-31, 120 GiB, two GPUs on node 1 and every
//     slice of the MIG-enabled GPU. Each agent's [agents.container]
//     scratch-root points into the temporary directory.
//   - mock-accelerator.toml and mock-accelerator.etcd.json: Backend.AI's
//     mock accelerator plugin with five A100-SXM4-40GB, four in fractional
//     mode (1.00 fGPU each: unit_mem 40g, unit_proc 108, quantum 0.1) and
//     one with MIG enabled, listed as its slices 3g.20gb, 2g.10gb and two
//     1g.5gb (slots cuda.device:20g-mig, :10g-mig, :5g-mig).
//   - host/: a fake /sys and /proc giving 32 cores on two NUMA nodes and
//     256 GiB, whatever machine runs the demo.
//   - scratches/<agent>/: one scratch root per agent.
//
// # The simulation
//
// A simulated manager sends kernels (fractional shares 0.1-1.5, whole GPUs,
// MIG slices, CPU-only; 1-8 cores, 2-64 GiB) to the agent with the most room
// in its eyes; the agent allocates them with engine/alloc over its own
// partition exactly as Backend.AI's agent would (FractionAllocMap EVENLY for
// cuda with the mock's quantum, DiscretePropertyAllocMap EVENLY for cpu and
// FILL for mem, allocation order cuda, cpu, mem, INTERLEAVED NUMA affinity
// passed from one device type to the next). A kernel then goes through what
// the docker agent does on disk: its scratch directory (config/, work/)
// first, resource.txt a moment later (SCRATCH_SIZE, MOUNTS with its own
// config and work paths, SLOTS, UNIFIED_DEVICES, *_SHARES, the mock plugin's
// CUDA_* lines), resource_base.txt, then the CID line appended last; after
// seconds to a minute it is terminated, its allocation released and its
// directory removed. Arrivals are steered so that 50-80 % of the fGPU
// shares are held most of the time.
//
// Once its container exists (the CID line), a kernel also gets its
// recovery.json (owner user and project from a population of 14 users in 4
// projects, its own session, a session type and an image) and its GPU
// processes: none for about one GPU kernel in five (it holds the GPU and
// does not use it), else one or two per device, busy or at 0 %, some of
// which finish their work early and leave the GPU held but idle. Each
// process has a /proc/<pid> entry in the fake host tree (stat with its
// start time, cgroup naming the kernel's container as docker's systemd
// driver on cgroup v2 writes it), and the node's device source lists the
// processes the way NVML does, named through that /proc by the same code
// that names real ones; they end when the kernel terminates. Two GPU
// processes are not Backend.AI's: a display server on the host and a
// container run by hand.
//
// Two rare, realistic events show what fgtop is for:
//
//   - A slow write: resource.txt reaches the disk in two pieces, half a
//     second to two seconds apart (about 4 % of kernels). fgtop shows the
//     torn file as an issue, then converges.
//   - A hung container: the manager stops waiting for a terminating kernel
//     and counts its resources as free while the agent still holds them
//     (about 4 % of terminations). A kernel sent into that gap fails in
//     the agent's allocator (ActFail, typically InsufficientResource); the
//     demo logs it and writes nothing, as the agent would.
//
// # Determinism
//
// Decisions happen on steps of virtual time (Step, 100 ms); wall time only
// paces them (Options.Speed). The same Options.Seed gives the same kernel
// ids, requests, placements and file contents (paths aside), however fast
// the steps are run. Start first simulates Options.WarmUp at full speed so
// the node is busy when it is first seen.
package demo

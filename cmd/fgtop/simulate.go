package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/nodeopen"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/simulate"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

const simulateLong = `Run allocation requests through Backend.AI's allocators (re-implemented exactly) and
show where each one lands.

Requests run in order on an empty node, or on the live state of --config /
--scratch-root (every kernel's allocation loaded into the alloc maps first).

Devices (--devices):
  mock-accelerator.toml   the mock plugin's devices, with --mock-etcd settings (fractional
                          mode: a cuda.shares FractionAllocMap with the etcd quantum_size,
                          default 0.1; discrete: a cuda.device map; MIG slices as unique slots)
  devices.json            a device list in the parity corpus's shape, for any capacities:
                          [{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0",
                            "numa_node": 0}, ...]   (numa_node may be null; an optional
                          "slot_type": count|bytes|unique). A *.shares slot makes a
                          FractionAllocMap (quantum 0.01 unless --quantum), any other a
                          DiscretePropertyAllocMap. The file may list cpu cores too.
  auto | nvml             the GPUs of this node, as the CUDA plugin registers them (--cuda-plugin,
                          --plugin-config, --fgpu-capacity; on a live tree, its agents' etcd);
                          fractional maps take the settings' quantum_size, and a simulation
                          without one that can be read is refused unless --quantum gives it
CPU cores and memory are added only when --cpus / --mem describe a virtual host, or when a
request names cpu or mem (then they are this machine's), so a simulation of accelerator
slots never depends on the machine running it. --cpu-numa K spreads the --cpus cores
over K NUMA nodes in equal blocks. On a live tree (--config / --scratch-root), which does
not list the host, a request naming cpu or mem without --cpus / --mem is answered with this
machine's cores and memory and says so on stderr, with what makes that doubtful (cores this
process does not see, an agent's kernels holding more memory than the machine has); it is
refused (exit 2, naming the flag) only when the tree's kernels hold, or the config's manual
partition gives its agents, core ids this machine does not have at all: the tree is another
node's. (Agents of one node may together hold more memory, and cores, than the host.)

Allocator settings: --strategy applies to the maps of the device source (the accelerator,
or every plugin of a devices.json); host cpu is EVENLY and mem FILL, as on the agent.
--affinity and --allocation-order default to the agent config's (else INTERLEAVED and
cuda,rocm,tpu,cpu,mem); fragmentation is allowed unless --no-fragmentation.

Requests (--request, repeatable, run in order):
  cuda.shares=1.2,cpu=2,mem=4g   an allocation request (kernel k1, k2, ... in order; a
                                 failed request still uses up its number)
  {"cuda.shares": "1.2"}          the same as a JSON object (the parity corpus's form)
  free=N  (or free=kN)           release the allocation of the N-th allocation request
                                 (N counts allocation requests only, so free=2 frees k2)
A failing step is reported (error kind, message) and the next one runs.
Amounts: Backend.AI drops a slot of 0 or less from a request. A negative amount would
thus "succeed" with nothing allocated, so fgtop refuses it (exit 2), as it does an empty
request, an amount too large for Backend.AI's 28-digit decimals, and a size that is not a
whole number of bytes (mem=0.3k is 307.2 bytes: plan's --mem refuses it too) or an amount
finer than the 0.001 the manager keeps of a request (cuda.shares=0.3333). A 0 beside other slots
is normal (Backend.AI's requests carry one for every unused slot); a request of zeros only
runs, with a warning that it allocates nothing.

On a live node (--config / --scratch-root), --agent ID runs that agent's allocator over its
own partition and its own kernels only, as the agent does: Backend.AI's agents do not see
each other's kernels, so a placement may put a device over its capacity across all agents.
Every allocation is therefore also judged against what every agent's kernels hold: per
touched device, "devices_after" gives held_now (all agents), adds, device_total_after and
capacity, and "overcommit": true marks a result above capacity (the table says OVERCOMMIT,
in red on a terminal). Without --agent on a node of several agents, the table places each
request on the whole node as one allocator (what is physically free), which Backend.AI
does not run, and each request is also placed on each agent's own allocator ("agents" in
the JSON; one line per agent under the table, on its live kernels: the steps before are
not counted there, as they went to no agent in particular); where every agent that would
take it puts a device over its capacity, the step is marked overcommit too ("overcommit":
true, OVERCOMMIT on its row), whatever the whole node's allocator says. With --agent on a
slot-based partition (Backend.AI main's form), a request is first judged as the manager
judges it: the agent reports what it is given less what its kernels hold (the earlier
steps' included), and the manager never sends it more; such a request is refused in the
manager's words ("error": "ManagerRefused") and counts as not placed (exit 1), as in the
fleet's fit.

Corpus cases (--case FILE): one case or a list in alloc-cases.json's format; its devices,
settings and operations are used (flags given explicitly override the settings). --check
compares every operation with the recorded result (exit 1 on a difference).

Output: a table, or with --json (fgtop.simulate/v1; several --case cases: fgtop.simulate-cases/v1):
  {"schema": "fgtop.simulate/v1", "settings": {...},
   "placements": [{"step": 1, "request": "<as given>", "kernel": "k1",
                   "allocations": {slot: {device: "amount"}}}
               | {"step": 2, "request": ..., "kernel": "k2", "error": "InsufficientResource",
                   "message": ...}
               | {"step": 3, "request": "free=1", "kernel": "k1", "free": 1,
                   "released": {slot: {device: "amount"}}}   (or "error" + "message")],
   "alloc_map": {device: "cumulative amount"},
   "state": {slot: {device: "cumulative amount"}}}
alloc_map is the absolute map, as "fgtop snapshot --alloc-map=absolute" and snapshot --json's
alloc_map give it, not the per-device ratio agents report since 2026-09 (snapshot
--alloc-map; 0.90 of a 4.00 GPU is 0.2250 there): Backend.AI's scan_gpu_alloc_map,
cuda.shares + cuda.device (for a devices.json of another plugin, its slots): the devices
some live allocation names, each with the alloc map's cumulative value (Backend.AI's
alloc_map.allocations, after quantum rounding); a device whose allocations were all freed
is absent. "state" is the whole cumulative map of every plugin, every device, untouched
ones "0". --trace adds each step's "state_after". Decimals are strings in Python's
str(Decimal) form.

A slot the node does not register (a typo such as cuda.shres) is refused before anything
runs, naming the node's slots and the closest one ("did you mean cuda.shares?").

Exit status: 0 when every request was placed and every free freed; 1 when a request could
not be placed or a free failed (freeing what was freed already; the table or JSON says why,
and the other steps still run) or --check found a difference; 2 on bad usage or bad input (an unknown slot, a negative amount, a request for
cpu on a tree of another node without --cpus). Without
--agent on a node of several agents, a request is placed when one of the agents' own
allocators takes it ("an_agent_takes" in the JSON), whatever the whole node's one
allocator says.`

// simulateFlags are fgtop simulate's flags.
type simulateFlags struct {
	src      sourceFlags
	agent    string
	caseFile string
	caseID   string
	check    bool
	allocFlags
	cpus     int
	cpuNUMA  int
	mem      string
	requests []string
	asJSON   bool
	trace    bool
	compact  bool
	changed  func(string) bool
	stdout   io.Writer
	stderr   io.Writer
}

func newSimulateCmd() *cobra.Command {
	f := &simulateFlags{}
	cmd := &cobra.Command{
		Use:   "simulate --devices FILE --request SLOTS [--request ...] [--json]",
		Short: "Placement preview: run allocation requests through Backend.AI's allocators",
		Long:  simulateLong,
		Example: `  fgtop simulate --devices mock-accelerator.toml --mock-etcd mock-accelerator.etcd.json \
      --request cuda.shares=0.2 --request cuda.shares=1.2 --request free=1
  fgtop simulate --devices devices.json --quantum 0.01 --no-fragmentation --request cuda.shares=0.5 --json
  fgtop simulate --case alloc-cases.json --check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.changed = cmd.Flags().Changed
			switch {
			case f.src.hostCPUs != "" && f.src.hostMem != "":
				return usageErr("simulate does not take --host-cpus/--host-mem: use --cpus N and --mem SIZE")
			case f.src.hostCPUs != "":
				return usageErr("simulate does not take --host-cpus: use --cpus N (cores 0..N-1)")
			case f.src.hostMem != "":
				return usageErr("simulate does not take --host-mem: use --mem SIZE (e.g. 256g)")
			}
			f.stdout, f.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return f.run(cmd.Context())
		},
	}
	f.src.register(cmd)
	fl := cmd.Flags()
	// simulate has its own --cpus and --mem-like requests; the host
	// override of the other commands would only be ignored here.
	_ = fl.MarkHidden("host-cpus")
	_ = fl.MarkHidden("host-mem")
	fl.Lookup("devices").Usage = "device source: a mock-accelerator.toml, a devices.json list, auto or nvml"
	fl.StringArrayVar(&f.requests, "request", nil, "an allocation request (cuda.shares=1.2,cpu=2,mem=4g) or free=N; repeatable, run in order")
	f.allocFlags.register(cmd, "the device source's maps", "the mock's etcd setting, else 0.01", "the agent config's")
	fl.IntVar(&f.cpus, "cpus", 0, "simulate a host with this many CPU cores (ids 0..N-1) instead of this machine's")
	fl.IntVar(&f.cpuNUMA, "cpu-numa", 0, "with --cpus: spread the cores over this many NUMA nodes, in equal blocks (default: all on node 0)")
	fl.StringVar(&f.mem, "mem", "", "simulate a host with this much memory (binary size, e.g. 256g) instead of this machine's")
	fl.StringVar(&f.agent, "agent", "", "with --config/--scratch-root: simulate on this agent's partition and kernels (default: the whole node)")
	fl.StringVar(&f.caseFile, "case", "", "run case(s) in alloc-cases.json's format instead of --devices/--request")
	fl.StringVar(&f.caseID, "case-id", "", "with --case: run only the case with this id")
	fl.BoolVar(&f.check, "check", false, "with --case: compare with the recorded results; exit 1 on a difference")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON instead of a table")
	fl.BoolVar(&f.trace, "trace", false, "with --json: add the whole state after every step")
	fl.BoolVar(&f.compact, "compact", false, "with --json: one-line JSON")
	return cmd
}

func (f *simulateFlags) run(ctx context.Context) error {
	for _, name := range []string{"trace", "compact"} {
		if f.changed(name) && !f.asJSON {
			return usageErr("--%s needs --json", name)
		}
	}
	if f.caseFile != "" {
		return f.runCases()
	}
	for _, name := range []string{"case-id", "check"} {
		if f.changed(name) {
			return usageErr("--%s needs --case", name)
		}
	}
	if len(f.requests) == 0 {
		return usageErr("simulate needs at least one --request (e.g. --request cuda.shares=0.5), or --case FILE")
	}
	n, err := f.node()
	if err != nil {
		return simErr(err)
	}
	var set *simulate.Setup
	if n.Live {
		set, err = f.liveNode(ctx, n)
	} else {
		set, err = n.EmptyNode(ctx, f.openAccelerators)
	}
	if err != nil {
		return simErr(err)
	}
	out, err := n.Place(set, f.trace)
	if err != nil {
		return simErr(err)
	}
	if f.asJSON {
		err = f.writeJSON(set.Sim.Document(out.Result, ""))
	} else {
		err = set.Sim.WriteTable(f.stdout, out.Result, "", f.red)
	}
	if err := written(err); err != nil {
		return err
	}
	if err := out.Err(); err != nil {
		return &exitError{code: exitProblem, err: err}
	}
	return nil
}

// simErr gives the simulation's bad usage and bad input exit status 2,
// and words an agent config that does not load as every command does; any
// other error stays as it is.
func simErr(err error) error {
	var ue *simulate.UsageError
	var ce *simulate.ConfigError
	switch {
	case errors.As(err, &ue):
		return usageErr("%s", ue.Msg)
	case errors.As(err, &ce):
		return configErr(ce.Path, false, ce.Err)
	}
	return err
}

// node reads the flags that describe the node the requests run on.
func (f *simulateFlags) node() (*simulate.Node, error) {
	host, err := simulate.ParseHost(f.cpus, f.cpuNUMA, f.mem)
	if err != nil {
		return nil, err
	}
	settings, err := f.settings()
	if err != nil {
		return nil, err
	}
	n := &simulate.Node{Devices: f.src.devices, MockEtcd: f.src.mockEtcd, Config: f.src.config,
		Live: f.src.config != "" || len(f.src.scratchRoot) > 0, Agent: f.agent, AgentGiven: f.changed("agent"),
		Host: host, Requests: f.requests, Settings: settings,
		QuantumSet: f.quantum != "", PolicySet: f.affinity != "", OrderSet: f.order != "", Warn: sayOn(f.stderr)}
	return n, n.CheckSource()
}

// liveNode sets the simulation up on the live state of --config/
// --scratch-root.
func (f *simulateFlags) liveNode(ctx context.Context, n *simulate.Node) (*simulate.Setup, error) {
	opts, err := f.src.options()
	if err != nil {
		return nil, err
	}
	defer closeSource(opts)
	return n.LiveNode(ctx, opts, func(s *model.Snapshot) { reportProblems(f.stderr, s) })
}

// openAccelerators opens --devices without the host's CPU cores and memory
// for a mock file (they are added separately, only when wanted).
func (f *simulateFlags) openAccelerators() (inventory.Source, error) {
	if err := f.src.checkMockEtcd(); err != nil {
		return nil, err
	}
	switch f.src.devices {
	case "", "auto", "nvml":
		if err := f.src.checkPluginFlags(); err != nil {
			return nil, err
		}
		src, err := inventory.Open(f.src.devices, inventory.OpenOptions{})
		if err != nil {
			return nil, f.src.deviceErr(err)
		}
		// The GPUs as the CUDA plugin registers them: --cuda-plugin,
		// --plugin-config and --fgpu-capacity say how, with no agent
		// config to read etcd's settings from.
		return nodeopen.WrapPlugin(src, f.src.plugin.parsed, nodeopen.ConfigPlugins{}, nil), nil
	}
	if _, err := os.Stat(f.src.devices); errors.Is(err, fs.ErrNotExist) {
		if w := cliwords.MissingFile(err); w != "" {
			return nil, usageErr("--devices %s: %s; want auto, nvml, a mock-accelerator.toml or a devices.json", f.src.devices, w)
		}
		return nil, usageErr("--devices %s: want auto, nvml, a mock-accelerator.toml or a devices.json: %v", f.src.devices, err)
	}
	src, err := inventory.NewMock(f.src.devices, f.src.mockEtcd, nil)
	if err != nil {
		return nil, f.src.deviceErr(err)
	}
	return src, nil
}

// runCases runs --case FILE.
func (f *simulateFlags) runCases() error {
	for _, name := range []string{"request", "devices", "mock-etcd", "config", "scratch-root", "agent", "cpus", "cpu-numa", "mem", "allocation-order"} {
		if f.changed(name) {
			return usageErr("--case takes its devices and operations from the file; drop --%s", name)
		}
	}
	outs, err := simulate.RunCases(f.caseFile, f.caseID, func() (placement.CaseOverrides, error) {
		s, err := f.settings()
		return simulate.Overrides(s, f.noFrag, f.changed), err
	}, f.trace || f.check)
	if err != nil {
		return simErr(err)
	}
	switch {
	case f.check:
		return f.reportCheck(outs)
	case f.asJSON:
		return f.writeJSON(placement.RunsDocument(outs))
	}
	return placement.WriteRunTables(f.stdout, outs, f.red)
}

// reportCheck prints the comparison of every case with its recorded
// results; a difference is exit status 1.
func (f *simulateFlags) reportCheck(runs []placement.CaseRun) error {
	chk := placement.CheckCases(runs)
	if f.asJSON {
		if err := written(f.writeJSON(chk.Document())); err != nil {
			return err
		}
	} else {
		chk.WriteText(f.stdout)
	}
	if chk.Mismatched > 0 {
		return &exitError{code: exitProblem, err: fmt.Errorf("%d operation(s) differ from the recorded results", chk.Mismatched)}
	}
	return nil
}

// red paints OVERCOMMIT red where stdout is a terminal.
func (f *simulateFlags) red(s string) string { return paintRed(f.stdout, s) }

func (f *simulateFlags) writeJSON(v any) error {
	b, err := report.Marshal(v, !f.compact)
	if err != nil {
		return fmt.Errorf("simulate: encoding JSON: %w", err)
	}
	_, err = f.stdout.Write(b)
	return err
}

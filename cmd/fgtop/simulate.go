package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
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
request and an amount too large for Backend.AI's 28-digit decimals. A 0 beside other slots
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

Output: a table, or with --json:
  {"settings": {...},
   "placements": [{"step": 1, "request": "<as given>", "kernel": "k1",
                   "allocations": {slot: {device: "amount"}}}
               | {"step": 2, "request": ..., "kernel": "k2", "error": "InsufficientResource",
                   "message": ...}
               | {"step": 3, "request": "free=1", "kernel": "k1", "free": 1,
                   "released": {slot: {device: "amount"}}}   (or "error" + "message")],
   "alloc_map": {device: "cumulative amount"},
   "state": {slot: {device: "cumulative amount"}}}
alloc_map means what "fgtop snapshot --alloc-map" means (Backend.AI's scan_gpu_alloc_map:
cuda.shares + cuda.device; for a devices.json of another plugin, its slots): the devices
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
	// live and liveCfg are the snapshot and the config of --config/
	// --scratch-root (nil on an empty node, or without --config): whether
	// the node's cores and memory are this machine's is judged once the
	// requests are read.
	live    *model.Snapshot
	liveCfg *agentconfig.Config
	changed func(string) bool
	stdout  io.Writer
	stderr  io.Writer
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
	f.allocFlags.register(cmd, "the device source's maps", "the mock's etcd setting", "the agent config's")
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
	sim, err := f.setup(ctx)
	if err != nil {
		return err
	}
	// cpu and mem join the maps only when a request asks for them; every
	// node has both, so a typo of either is told apart from them.
	known := append([]model.SlotName{model.SlotCPU, model.SlotMem}, sim.Slots...)
	steps, nothing, err := placement.ParseSteps(f.requests, sim.Types, known)
	for _, r := range nothing {
		fmt.Fprintf(f.stderr, "fgtop: --request %q asks for nothing: Backend.AI drops amounts of 0, so this step allocates nothing\n", r)
	}
	if err != nil {
		return usageErr("--request %v", err)
	}
	if err := placement.ValidateSteps(steps); err != nil {
		return usageErr("--request: %v", err)
	}
	if f.live != nil {
		if err := f.judgeHost(placement.HostDoubts(f.live, f.liveCfg, steps, presentCPUs(), f.cpus > 0, f.mem != "")); err != nil {
			return err
		}
	}
	res, err := placement.Run(sim.Node, steps, placement.RunOptions{Trace: f.trace, Live: sim.Live, Manager: sim.Manager})
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if r := placement.BadAmount(res); r != nil {
		return usageErr("--request %q: %s", r.Step.Text, placement.ErrMessage(r.Err))
	}
	if err := f.render(sim, res, ""); err != nil {
		return err
	}
	failed, frees := sim.Unplaced(res), placement.FailedFrees(res)
	switch {
	case failed > 0:
		// A script asking "does it fit?" reads the exit status.
		return &exitError{code: exitProblem, err: fmt.Errorf("%d of %d request(s) could not be placed", failed, placement.CountRequests(res.Steps))}
	case frees > 0:
		// The help promises 0 only when every step, frees included, did
		// what it says.
		return &exitError{code: exitProblem, err: fmt.Errorf("%d free(s) failed (see the steps above)", frees)}
	}
	return nil
}

// setup builds the node the requests run on: its devices, settings and,
// with --config/--scratch-root, its live allocations.
func (f *simulateFlags) setup(ctx context.Context) (*placement.Simulation, error) {
	if f.cpuNUMA != 0 && f.cpus == 0 {
		return nil, usageErr("--cpu-numa needs --cpus")
	}
	if f.cpus < 0 || f.cpuNUMA < 0 {
		return nil, usageErr("--cpus and --cpu-numa must not be negative")
	}
	if f.cpus > maxSimCPUs {
		return nil, usageErr("--cpus %d: at most %d cores (the largest hosts today have a few hundred; each core is a device of the simulation)", f.cpus, maxSimCPUs)
	}
	if f.cpuNUMA > max(f.cpus, 1) {
		return nil, usageErr("--cpu-numa %d: more NUMA nodes than the %d cores of --cpus", f.cpuNUMA, f.cpus)
	}
	var memBytes model.Dec
	if f.mem != "" {
		v, err := model.ParseFiniteBinarySize(f.mem)
		if err != nil || v.Sign() <= 0 {
			return nil, usageErr("--mem %q: want a positive binary size such as 256g", f.mem)
		}
		memBytes = v
	}
	settings, err := f.settings()
	if err != nil {
		return nil, err
	}
	sim := &placement.Simulation{Types: model.DefaultSlotTypes(), Source: f.src.devices}
	live := f.src.config != "" || len(f.src.scratchRoot) > 0
	if live {
		if placement.IsDeviceList(f.src.devices) {
			return nil, usageErr("--devices %s: a device list is for simulations on an empty node; with --config/--scratch-root use auto, nvml or a mock-accelerator.toml", f.src.devices)
		}
		return f.liveNode(ctx, settings, memBytes, sim)
	}
	if f.changed("agent") {
		return nil, usageErr("--agent needs --config or --scratch-root")
	}

	var devs []model.Device
	if placement.IsDeviceList(f.src.devices) {
		devs, err = f.deviceList(&settings, sim)
	} else {
		devs, err = f.sourceDevices(ctx, &settings, sim)
	}
	if err != nil {
		return nil, err
	}
	devs, err = placement.EmptyNode(devs, placement.Host{CPUs: f.cpus, CPUNUMA: f.cpuNUMA, Mem: memBytes, Requests: f.requests,
		Read: func() []model.Device { return inventory.NewHost(inventory.HostOptions{}).Read().Devices }})
	var listed *placement.HostListedError
	if errors.As(err, &listed) {
		return nil, usageErr("--devices %s lists %s devices already; drop --cpus/--mem", f.src.devices, listed.Name)
	}
	if len(devs) == 0 {
		return nil, usageErr("--devices %s: no devices to simulate on", f.src.devices)
	}
	sim.SetDevices(devs, settings)
	return sim, nil
}

// deviceList reads --devices as a device list: every plugin it lists
// follows --strategy, and alloc_map covers its slots.
func (f *simulateFlags) deviceList(settings *placement.Settings, sim *placement.Simulation) ([]model.Device, error) {
	if f.src.mockEtcd != "" {
		return nil, usageErr("--mock-etcd %s: the mock plugin's settings apply only to a mock-accelerator.toml, not to the device list --devices %s", f.src.mockEtcd, f.src.devices)
	}
	data, err := safefile.ReadFile(f.src.devices, inventory.MaxMockFileSize)
	if err != nil {
		return nil, usageErr("--devices: %v", err)
	}
	devs, err := placement.ParseDeviceSpecs(data)
	if err != nil {
		return nil, usageErr("--devices %s: %v", f.src.devices, err)
	}
	sim.TakeDeviceList(settings, devs)
	return devs, nil
}

// sourceDevices reads the accelerators of --devices (a mock file, auto or
// nvml), without the host's cores and memory.
func (f *simulateFlags) sourceDevices(ctx context.Context, settings *placement.Settings, sim *placement.Simulation) ([]model.Device, error) {
	src, err := f.openAccelerators()
	if err != nil {
		return nil, err
	}
	inv, err := src.Poll(ctx)
	if cerr := src.Close(); cerr != nil {
		fmt.Fprintln(f.stderr, "fgtop: close device source:", cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: device inventory: %w", err)
	}
	// An issue that comes from the --mock-etcd file is that flag's: a
	// bad allocation_mode there leaves no devices, and "--devices: no
	// devices" would blame the wrong file.
	acc := placement.AcceleratorsOf(inv, f.src.mockEtcd)
	qerr := sim.TakeInventory(settings, inv, f.src.devices, f.quantum != "")
	for _, iss := range acc.Warnings {
		f.warnSource(iss)
	}
	if acc.EtcdFatal != nil {
		return nil, usageErr("--mock-etcd %s: %s", acc.EtcdFatal.File, acc.EtcdFatal.Message)
	}
	if qerr != nil && len(acc.Devices) > 0 {
		return nil, quantumErr(qerr)
	}
	return acc.Devices, nil
}

// quantumErr is simulate's refusal to place shares on fractional maps of
// an unknown quantum: FractionAllocMap's 0.01 or the mock's 0.1 would
// round them as the node's allocator may not.
func quantumErr(err error) error {
	return usageErr("simulate: %v: give it with --quantum, or the plugin settings with --plugin-config", err)
}

// warnSource prints a device source's issue, naming --mock-etcd for that
// file's.
func (f *simulateFlags) warnSource(iss placement.SourceIssue) {
	if iss.Etcd {
		fmt.Fprintf(f.stderr, "fgtop: --mock-etcd %s: %s\n", iss.File, iss.Message)
		return
	}
	fmt.Fprintf(f.stderr, "fgtop: %s\n", iss.Message)
}

// liveNode builds the node from the live state of --config/--scratch-root:
// the snapshot's devices (cores and memory replaced by --cpus/--mem), its
// kernels' allocations loaded, restricted to --agent's partition.
func (f *simulateFlags) liveNode(ctx context.Context, settings placement.Settings, memBytes model.Dec, sim *placement.Simulation) (*placement.Simulation, error) {
	opts, err := f.src.options()
	if err != nil {
		return nil, err
	}
	defer closeSource(opts)
	opts.NoHealth = true // a simulation needs the allocations, not the agents' health
	snap, err := engine.Build(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("simulate: reading the live state: %w", err)
	}
	if snap.Source.Kind == inventory.KindMock && snap.Source.Health == inventory.HealthDegraded {
		// The mock's settings in its agents' etcd were not read: a
		// placement on the defaults' guess may be wrong, so none.
		for _, iss := range snap.Issues {
			if iss.Code == model.IssueDeviceSource && iss.Severity == model.SevWarning {
				why, _, _ := strings.Cut(iss.Message, ": fgtop assumes")
				return nil, usageErr("simulate: %s: a placement on the plugin's defaults may be wrong; give the settings with --mock-etcd FILE", why)
			}
		}
		return nil, usageErr("simulate: the mock plugin's settings were not read: give them with --mock-etcd FILE")
	}
	reportProblems(f.stderr, snap)
	f.live = snap
	inv, err := opts.Inventory.Poll(ctx)
	if err != nil {
		return nil, fmt.Errorf("simulate: device inventory: %w", err)
	}
	cfg, err := f.configSettings(&settings)
	if err != nil {
		return nil, err
	}
	f.liveCfg = cfg
	if err := sim.TakeInventory(&settings, inv, f.src.devices, f.quantum != ""); err != nil {
		return nil, quantumErr(err)
	}
	agent := model.AgentID(f.agent)
	if f.agent != "" && len(snap.Agents) > 0 {
		// The agent by its id or a unique prefix, as every name.
		ids := make([]string, len(snap.Agents))
		for i, a := range snap.Agents {
			ids[i] = string(a.ID)
		}
		id, err := names.ID(f.agent, ids, "agent", "this node")
		if err != nil {
			return nil, usageErr("--agent %s: %v", f.agent, err)
		}
		agent = model.AgentID(id)
	}
	host := f.cpus > 0 || f.mem != "" || asksHost(f.requests)
	if !host {
		// The help's promise: a simulation of accelerator slots never
		// depends on the machine running it. The tree does not list the
		// host; the engine filled in this machine's cores and memory
		// (2 cores and -28g free beside another node's kernels).
		s := *snap
		s.Devices = slices.DeleteFunc(slices.Clone(snap.Devices), func(d model.Device) bool { return d.Name == "cpu" || d.Name == "mem" })
		snap = &s
	}
	skipped, err := sim.SetLiveNode(snap, placement.Live{CPUs: f.cpus, CPUNUMA: f.cpuNUMA, Mem: memBytes, Config: cfg, Agent: agent}, settings)
	var unknownCap *placement.CapacityUnknownError
	var unknownAgent *placement.UnknownAgentError
	switch {
	case errors.As(err, &unknownCap):
		return nil, usageErr("simulate: the capacity of %s is unknown (%s): give it with --fgpu-capacity or the settings with --plugin-config", unknownCap.Device, report.CapacityWhy(snap))
	case errors.As(err, &unknownAgent):
		return nil, usageErr("--agent %s: no such agent (have %s)", f.agent, unknownAgent.HaveText())
	case err != nil:
		return nil, err
	}
	if !host {
		// Not simulated: the kernels' cores and memory are not "skipped".
		skipped = slices.DeleteFunc(skipped, func(k placement.KernelSkip) bool {
			n := k.Slot.DeviceName()
			return n == "cpu" || n == "mem"
		})
	}
	for _, l := range placement.SkipLines(skipped) {
		fmt.Fprintf(f.stderr, "fgtop: %s\n", l)
	}
	return sim, nil
}

// asksHost: some request names cpu or mem (a step that does not parse is
// reported later, with the slot types known).
func asksHost(requests []string) bool {
	for _, r := range requests {
		st, err := placement.ParseStep(r, nil)
		if err != nil {
			continue
		}
		for _, e := range st.Request {
			if n := e.Slot.DeviceName(); n == "cpu" || n == "mem" {
				return true
			}
		}
	}
	return false
}

// judgeHost refuses a request for cpu on a tree that cannot be this
// machine's (its kernels or its config's partition name cores the machine
// does not have), whose cores and memory stand for the node's unless
// --cpus/--mem give them; otherwise it says, one line a slot, whose
// capacity the answer uses and what makes it doubtful.
func (f *simulateFlags) judgeHost(ds []placement.HostDoubt) error {
	flag := func(d placement.HostDoubt) string {
		if d.Slot == model.SlotMem {
			return "--mem SIZE"
		}
		return "--cpus N (and --cpu-numa K)"
	}
	for _, d := range ds {
		if d.Contradiction != "" {
			return usageErr("simulate: a request asks for %s, and the tree of --config/--scratch-root is another node's: %s; give that node's %s with %s",
				d.Slot, d.Contradiction, d.Slot, flag(d))
		}
	}
	for _, d := range ds {
		line := fmt.Sprintf("fgtop: %s: this machine's %s stand for the node's (another node's: %s)", d.Slot, d.Here, flag(d))
		if d.Evidence != "" {
			line += "; " + d.Evidence
		}
		fmt.Fprintln(f.stderr, line)
	}
	return nil
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
		return f.src.wrapPlugin(src, pluginContext{}, nil)
	}
	if _, err := os.Stat(f.src.devices); errors.Is(err, fs.ErrNotExist) {
		if w := missingFile(err); w != "" {
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

// configSettings takes affinity-policy and allocation-order from the agent
// config where no flag set them; it returns the config (nil without
// --config).
func (f *simulateFlags) configSettings(s *placement.Settings) (*agentconfig.Config, error) {
	if f.src.config == "" {
		return nil, nil
	}
	cfg, err := agentconfig.Load(f.src.config)
	if err != nil {
		return nil, configErr(f.src.config, false, err)
	}
	placement.ConfigDefaults(s, cfg, f.affinity != "", f.order != "")
	return cfg, nil
}

// maxSimCPUs bounds --cpus: far above any real host, and small enough that
// the simulated node (one device per core) stays a fraction of a second
// and a few MiB.
const maxSimCPUs = 4096

// runCases runs --case FILE.
func (f *simulateFlags) runCases() error {
	for _, name := range []string{"request", "devices", "mock-etcd", "config", "scratch-root", "agent", "cpus", "cpu-numa", "mem", "allocation-order"} {
		if f.changed(name) {
			return usageErr("--case takes its devices and operations from the file; drop --%s", name)
		}
	}
	data, err := safefile.ReadFile(f.caseFile, inventory.MaxMockFileSize)
	if err != nil {
		return usageErr("--case: %v", err)
	}
	cases, err := placement.ParseCases(data)
	if err != nil {
		return usageErr("--case %s: %v", f.caseFile, err)
	}
	if f.caseID != "" {
		i := slices.IndexFunc(cases, func(c placement.Case) bool { return c.ID == f.caseID })
		if i < 0 {
			return usageErr("--case-id %s: no such case in %s", f.caseID, f.caseFile)
		}
		cases = cases[i : i+1]
	}
	if len(cases) == 0 {
		return usageErr("--case %s: no cases", f.caseFile)
	}
	flagSettings, err := f.settings()
	if err != nil {
		return err
	}
	var o placement.CaseOverrides
	if f.changed("strategy") {
		o.Strategy = &flagSettings.Strategy
	}
	if f.changed("affinity") {
		o.Policy = &flagSettings.Policy
	}
	if f.changed("quantum") {
		o.Quantum = flagSettings.Quantum
	}
	if f.changed("no-fragmentation") {
		o.ForbidFragmentation = &f.noFrag
	}
	outs, err := placement.RunCases(cases, o, f.trace || f.check)
	var bad *placement.BadCaseError
	switch {
	case errors.As(err, &bad):
		return usageErr("--case %s: %v", f.caseFile, bad.Err)
	case err != nil:
		return fmt.Errorf("simulate: %w", err)
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
		if err := f.writeJSON(chk.Document()); err != nil {
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

// render prints a simulation's result.
func (f *simulateFlags) render(sim *placement.Simulation, res *placement.Result, caseID string) error {
	if f.asJSON {
		return f.writeJSON(sim.Document(res, caseID))
	}
	return sim.WriteTable(f.stdout, res, caseID, f.red)
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

// presentCPUs is every CPU this machine has, nil when /sys does not say
// (a simulation's host check then proves nothing from core ids).
func presentCPUs() []int {
	cpus, err := inventory.PresentCPUs("")
	if err != nil {
		return nil
	}
	return cpus
}

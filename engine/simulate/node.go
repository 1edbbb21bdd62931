package simulate

import (
	"context"
	"errors"
	"fmt"
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
)

// Node describes the node a simulation runs on, as simulate's flags give
// it.
type Node struct {
	// Devices and MockEtcd are --devices and --mock-etcd.
	Devices, MockEtcd string
	// Config is --config ("" without it); Live says that --config or
	// --scratch-root was given, so that the node is the tree's live state.
	Config string
	Live   bool
	// Agent is --agent, AgentGiven whether it was given at all.
	Agent      string
	AgentGiven bool
	Host       Host
	// Requests are the --request texts, whose slots say whether the
	// host's cores and memory take part.
	Requests []string
	// Settings are the allocator flags' settings; QuantumSet, PolicySet
	// and OrderSet say which flags gave theirs, so that the device source
	// or the agent config fills in the others.
	Settings                        placement.Settings
	QuantumSet, PolicySet, OrderSet bool
	// Warn says a line on stderr (without fgtop's prefix); required.
	Warn func(line string)
}

// CheckSource refuses a --devices that cannot go with the rest of n: a
// device list on a live tree, --agent on an empty node, --mock-etcd
// beside a device list.
func (n *Node) CheckSource() error {
	list := placement.IsDeviceList(n.Devices)
	switch {
	case n.Live && list:
		return usage("--devices %s: a device list is for simulations on an empty node; with --config/--scratch-root use auto, nvml or a mock-accelerator.toml", n.Devices)
	case n.Live:
		return nil
	case n.AgentGiven:
		return usage("--agent needs --config or --scratch-root")
	case list && n.MockEtcd != "":
		return usage("--mock-etcd %s: the mock plugin's settings apply only to a mock-accelerator.toml, not to the device list --devices %s", n.MockEtcd, n.Devices)
	}
	return nil
}

// EmptyNode sets the simulation up on an empty node: the devices of a
// device list, or the accelerators of the source open opens (called only
// for one that is not a list; its errors come back as they are), with the
// host's cores and memory added as placement.EmptyNode says. n has
// passed CheckSource.
func (n *Node) EmptyNode(ctx context.Context, open func() (inventory.Source, error)) (*Setup, error) {
	sim := &placement.Simulation{Types: model.DefaultSlotTypes(), Source: n.Devices}
	settings := n.Settings
	var devs []model.Device
	var err error
	if placement.IsDeviceList(n.Devices) {
		devs, err = n.deviceList(&settings, sim)
	} else {
		devs, err = n.sourceDevices(ctx, open, &settings, sim)
	}
	if err != nil {
		return nil, err
	}
	devs, err = placement.EmptyNode(devs, placement.Host{CPUs: n.Host.CPUs, CPUNUMA: n.Host.CPUNUMA, Mem: n.Host.Mem, Requests: n.Requests,
		Read: func() []model.Device { return inventory.NewHost(inventory.HostOptions{}).Read().Devices }})
	var listed *placement.HostListedError
	if errors.As(err, &listed) {
		return nil, usage("--devices %s lists %s devices already; drop --cpus/--mem", n.Devices, listed.Name)
	}
	if len(devs) == 0 {
		return nil, usage("--devices %s: no devices to simulate on", n.Devices)
	}
	sim.SetDevices(devs, settings)
	if err := n.checkOrder(sim); err != nil {
		return nil, err
	}
	return &Setup{Sim: sim}, nil
}

// checkOrder refuses an --allocation-order naming a device plugin that
// neither the simulated node has nor Backend.AI's default order lists:
// a typo ("cpux") left every request of that plugin unplaced, exit 1, as
// if the node could not take it. The error lists the names it takes.
func (n *Node) checkOrder(sim *placement.Simulation) error {
	if !n.OrderSet {
		return nil
	}
	var known []string
	for _, d := range placement.DefaultOrder {
		known = append(known, string(d))
	}
	for _, p := range sim.Node.Plugins() {
		if !slices.Contains(known, string(p.Name)) {
			known = append(known, string(p.Name))
		}
	}
	for _, d := range n.Settings.Order {
		if !slices.Contains(known, string(d)) {
			return usage("--allocation-order: unknown device plugin %q%s; want a comma-separated list of %s",
				string(d), model.DidYouMean(string(d), known), strings.Join(known, ", "))
		}
	}
	return nil
}

// deviceList reads --devices as a device list: every plugin it lists
// follows --strategy, and alloc_map covers its slots.
func (n *Node) deviceList(settings *placement.Settings, sim *placement.Simulation) ([]model.Device, error) {
	data, err := safefile.ReadFile(n.Devices, inventory.MaxMockFileSize)
	if err != nil {
		return nil, usage("--devices: %v", err)
	}
	devs, err := placement.ParseDeviceSpecs(data)
	if err != nil {
		return nil, usage("--devices %s: %v", n.Devices, err)
	}
	sim.TakeDeviceList(settings, devs)
	return devs, nil
}

// sourceDevices reads the accelerators of --devices (a mock file, auto or
// nvml), without the host's cores and memory.
func (n *Node) sourceDevices(ctx context.Context, open func() (inventory.Source, error), settings *placement.Settings, sim *placement.Simulation) ([]model.Device, error) {
	src, err := open()
	if err != nil {
		return nil, err
	}
	inv, err := src.Poll(ctx)
	if cerr := src.Close(); cerr != nil {
		n.Warn(fmt.Sprint("close device source: ", cerr))
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: device inventory: %w", err)
	}
	// An issue that comes from the --mock-etcd file is that flag's: a
	// bad allocation_mode there leaves no devices, and "--devices: no
	// devices" would blame the wrong file.
	acc := placement.AcceleratorsOf(inv, n.MockEtcd)
	qerr := sim.TakeInventory(settings, inv, n.Devices, n.QuantumSet)
	for _, iss := range acc.Warnings {
		if iss.Etcd {
			n.Warn(fmt.Sprintf("--mock-etcd %s: %s", iss.File, iss.Message))
		} else {
			n.Warn(iss.Message)
		}
	}
	if acc.EtcdFatal != nil {
		return nil, usage("--mock-etcd %s: %s", acc.EtcdFatal.File, acc.EtcdFatal.Message)
	}
	if qerr != nil && len(acc.Devices) > 0 {
		return nil, quantumErr(qerr)
	}
	return acc.Devices, nil
}

// readLive reads the live state of the tree opts describes, as every
// command does but for the agents' health, which a simulation does not
// need. A mock device source whose settings in its agents' etcd were not
// read is refused: a placement on the defaults' guess may be wrong.
func readLive(ctx context.Context, opts engine.Options) (*model.Snapshot, error) {
	opts.NoHealth = true
	snap, err := engine.Build(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("simulate: reading the live state: %w", err)
	}
	if err := mockUnread(snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// mockUnread refuses a snapshot of the mock plugin whose settings were
// not read (its source degraded), naming why where an issue says.
func mockUnread(snap *model.Snapshot) error {
	if snap.Source.Kind != inventory.KindMock || snap.Source.Health != inventory.HealthDegraded {
		return nil
	}
	for _, iss := range snap.Issues {
		if iss.Code == model.IssueDeviceSource && iss.Severity == model.SevWarning {
			why, _, _ := strings.Cut(iss.Message, ": fgtop assumes")
			return usage("simulate: %s: a placement on the plugin's defaults may be wrong; give the settings with --mock-etcd FILE", why)
		}
	}
	return usage("simulate: the mock plugin's settings were not read: give them with --mock-etcd FILE")
}

// ConfigError is an agent config (Path, --config) that LiveNode could not
// load; the command words it as every command words its config's errors.
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

func (e *ConfigError) Unwrap() error { return e.Err }

// Setup is a simulation set up on its node.
type Setup struct {
	Sim *placement.Simulation
	// Snap is a live node's state as read (nil on an empty node), Config
	// its agent config (nil without --config): Place judges the host from
	// them.
	Snap   *model.Snapshot
	Config *agentconfig.Config
}

// LiveNode sets the simulation up on the live state of the tree opts
// describes (the command's resolution of --config/--scratch-root, its
// device source open; problems says the snapshot's problems, as the
// command says every snapshot's): the snapshot's devices (cores and
// memory replaced by the virtual host's, or dropped where no request
// names them), its kernels' allocations loaded, restricted to n.Agent's
// partition (its id or a unique prefix). The kernels it could not load
// are warned about.
func (n *Node) LiveNode(ctx context.Context, opts engine.Options, problems func(*model.Snapshot)) (*Setup, error) {
	snap, err := readLive(ctx, opts)
	if err != nil {
		return nil, err
	}
	problems(snap)
	settings := n.Settings
	sim := &placement.Simulation{Types: model.DefaultSlotTypes(), Source: n.Devices}
	inv, err := opts.Inventory.Poll(ctx)
	if err != nil {
		return nil, fmt.Errorf("simulate: device inventory: %w", err)
	}
	var cfg *agentconfig.Config
	if n.Config != "" {
		if cfg, err = agentconfig.Load(n.Config); err != nil {
			return nil, &ConfigError{Path: n.Config, Err: err}
		}
		placement.ConfigDefaults(&settings, cfg, n.PolicySet, n.OrderSet)
	}
	if err := sim.TakeInventory(&settings, inv, n.Devices, n.QuantumSet); err != nil {
		return nil, quantumErr(err)
	}
	agent, err := n.agentID(snap)
	if err != nil {
		return nil, err
	}
	set := &Setup{Sim: sim, Snap: snap, Config: cfg}
	host := n.Host.CPUs > 0 || n.Host.MemGiven || asksHost(n.Requests)
	if !host {
		// The help's promise: a simulation of accelerator slots never
		// depends on the machine running it. The tree does not list the
		// host; the engine filled in this machine's cores and memory
		// (2 cores and -28g free beside another node's kernels).
		s := *snap
		s.Devices = slices.DeleteFunc(slices.Clone(snap.Devices), func(d model.Device) bool { return d.Name == "cpu" || d.Name == "mem" })
		snap = &s
	}
	skipped, err := sim.SetLiveNode(snap, placement.Live{CPUs: n.Host.CPUs, CPUNUMA: n.Host.CPUNUMA, Mem: n.Host.Mem, Config: cfg, Agent: agent}, settings)
	var unknownCap *placement.CapacityUnknownError
	var unknownAgent *placement.UnknownAgentError
	switch {
	case errors.As(err, &unknownCap):
		return nil, usage("simulate: the capacity of %s is unknown (%s): give it with --fgpu-capacity or the settings with --plugin-config", unknownCap.Device, report.CapacityWhy(snap))
	case errors.As(err, &unknownAgent):
		return nil, usage("--agent %s: no such agent (have %s)", n.Agent, unknownAgent.HaveText())
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
	if err := n.checkOrder(sim); err != nil {
		return nil, err
	}
	for _, l := range placement.SkipLines(skipped) {
		n.Warn(l)
	}
	return set, nil
}

// agentID is the agent --agent names, by its id or a unique prefix as
// every name; "" for the whole node. On a node that lists no agents the
// id stays as given, for SetLiveNode to refuse.
func (n *Node) agentID(snap *model.Snapshot) (model.AgentID, error) {
	if n.Agent == "" || len(snap.Agents) == 0 {
		return model.AgentID(n.Agent), nil
	}
	ids := make([]string, len(snap.Agents))
	for i, a := range snap.Agents {
		ids[i] = string(a.ID)
	}
	id, err := names.ID(n.Agent, ids, "agent", "this node")
	if err != nil {
		return "", usage("--agent %s: %v", n.Agent, err)
	}
	return model.AgentID(id), nil
}

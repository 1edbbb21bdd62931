package placement

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// The set-up of a Simulation from what a command has read: a device
// source's inventory, an agent config, a live snapshot, a corpus case.
// Reading those is the command's; deciding what they mean is here.

// ConfigDefaults takes [resource] affinity-policy and allocation-order from
// the agent config cfg into s, each only where the command's own flag did
// not set it (policySet, orderSet). An affinity-policy that does not parse
// leaves s's.
func ConfigDefaults(s *Settings, cfg *agentconfig.Config, policySet, orderSet bool) {
	if !policySet && cfg.AffinityPolicy != "" {
		if p, err := alloc.ParseAffinityPolicy(cfg.AffinityPolicy); err == nil {
			s.Policy = p
		}
	}
	if !orderSet && len(cfg.AllocationOrder) > 0 {
		s.Order = nil
		for _, n := range cfg.AllocationOrder {
			s.Order = append(s.Order, model.DeviceName(n))
		}
	}
}

// ErrQuantumUnknown is TakeInventory's answer for fractional maps whose
// quantum_size the source could not read, with no flag to give it: the
// allocator's own default would place shares where the node's does not.
var ErrQuantumUnknown = errors.New("the quantum_size of the fractional maps is unknown (the CUDA plugin settings were not read, or their quantum_size is not a positive decimal)")

// TakeInventory takes from a device source's inventory the quantum (in
// fractional mode, unless quantumSet says a flag gave one), the slot types
// the node registers, and the source's name (source, or the inventory's
// own detail when it has one). It is ErrQuantumUnknown, with the rest
// taken, where the quantum is needed and neither gives it.
func (sim *Simulation) TakeInventory(s *Settings, inv *inventory.Inventory, source string, quantumSet bool) error {
	var err error
	switch {
	case quantumSet || !inv.Fractional:
	case inv.Quantum.Sign() > 0:
		s.Quantum = inv.Quantum
	default:
		err = ErrQuantumUnknown
	}
	for k, v := range inv.SlotTypes {
		sim.Types[k] = v
	}
	sim.Source = source
	if inv.Source.Detail != "" {
		sim.Source = inv.Source.Detail
	}
	return err
}

// SourceIssue is a device source's issue worth a warning; Etcd marks one
// that comes from the mock plugin's etcd settings file rather than from
// the device source itself.
type SourceIssue struct {
	model.Issue
	Etcd bool
}

// Accelerators is what a simulation on an empty node takes from a device
// source's inventory.
type Accelerators struct {
	// Devices are the accelerators, without telemetry and without the
	// host's cores and memory (EmptyNode adds those only when wanted).
	Devices []model.Device
	// Warnings are the issues to warn about, in order.
	Warnings []SourceIssue
	// EtcdFatal is the etcd settings file's error when it left no devices
	// (a bad allocation_mode): that file is the bad input, not the device
	// source. With devices left, the error is the last of Warnings.
	EtcdFatal *model.Issue
}

// AcceleratorsOf sorts inv's issues (those of etcdFile, the mock plugin's
// etcd settings, are that file's: empty when there is none) and keeps its
// accelerators.
func AcceleratorsOf(inv *inventory.Inventory, etcdFile string) Accelerators {
	var out Accelerators
	var etcdErr *model.Issue
	for i, iss := range inv.Issues {
		if iss.Severity < model.SevWarning {
			continue
		}
		if etcdFile != "" && iss.File == etcdFile {
			if iss.Severity >= model.SevError && etcdErr == nil {
				etcdErr = &inv.Issues[i]
				continue
			}
			out.Warnings = append(out.Warnings, SourceIssue{Issue: iss, Etcd: true})
			continue
		}
		out.Warnings = append(out.Warnings, SourceIssue{Issue: iss})
	}
	for _, d := range inv.Devices {
		if d.Name == "cpu" || d.Name == "mem" {
			continue
		}
		d.Telemetry = nil
		out.Devices = append(out.Devices, d)
	}
	if etcdErr != nil {
		if len(out.Devices) == 0 {
			out.EtcdFatal = etcdErr
		} else {
			out.Warnings = append(out.Warnings, SourceIssue{Issue: *etcdErr, Etcd: true})
		}
	}
	return out
}

// Live describes how a simulation runs on a live node.
type Live struct {
	// CPUs, CPUNUMA and Mem replace the host's cores and memory with a
	// virtual host's (zero: the node's own), as ReplaceHost does.
	CPUs, CPUNUMA int
	Mem           model.Dec
	// Config is the agent config the partitions come from; nil without
	// one (the snapshot's agents are taken as they are).
	Config *agentconfig.Config
	// Agent is the agent whose allocator runs the requests; empty: the
	// whole node's.
	Agent model.AgentID
}

// CapacityUnknownError is SetLiveNode's answer when a device's capacity is
// unknown: a placement against a made-up capacity would be a made-up
// answer.
type CapacityUnknownError struct{ Device model.DeviceKey }

func (e *CapacityUnknownError) Error() string {
	return fmt.Sprintf("the capacity of %s is unknown", e.Device)
}

// UnknownAgentError is SetLiveNode's answer when Live.Agent is not one of
// the node's agents (Have).
type UnknownAgentError struct {
	Agent model.AgentID
	Have  []model.AgentID
}

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("no such agent %s", e.Agent)
}

// HaveText lists the node's agents for an error ("a, b"), "none" when it
// has none.
func (e *UnknownAgentError) HaveText() string {
	if len(e.Have) == 0 {
		return "none"
	}
	ids := make([]string, len(e.Have))
	for i, a := range e.Have {
		ids[i] = string(a)
	}
	return strings.Join(ids, ", ")
}

// SetLiveNode sets the simulation up on the live node of snap: its devices
// with the host replaced as l says, each agent's partition as the agent
// computes it on those devices (with a config), and l.Agent's allocator
// (or the whole node's) with its kernels' allocations loaded. snap is not
// changed. It returns the kernels it could not load.
func (sim *Simulation) SetLiveNode(snap *model.Snapshot, l Live, settings Settings) ([]KernelSkip, error) {
	for _, d := range snap.Devices {
		if d.CapacityUnknown {
			return nil, &CapacityUnknownError{Device: d.Key()}
		}
	}
	s := *snap
	s.Devices = ReplaceHost(snap.Devices, l.CPUs, l.CPUNUMA, l.Mem)
	if l.Config != nil {
		// The devices it owns and its mem share, --cpus/--mem included.
		s.Agents = slices.Clone(snap.Agents)
		partition.Effective(l.Config, partition.InventoryOf(&s)).Fill(s.Agents)
	}
	var agent *model.Agent
	if l.Agent != "" {
		for i := range s.Agents {
			if s.Agents[i].ID == l.Agent {
				agent = &s.Agents[i]
			}
		}
		if agent == nil {
			e := &UnknownAgentError{Agent: l.Agent}
			for _, a := range s.Agents {
				e.Have = append(e.Have, a.ID)
			}
			return nil, e
		}
	}
	return sim.SetLive(&s, agent, settings), nil
}

// CaseOverrides are settings given explicitly (a command's flags) that
// replace a corpus case's own; nil or zero fields leave the case's.
type CaseOverrides struct {
	Strategy            *alloc.Strategy
	Policy              *alloc.AffinityPolicy
	Quantum             model.Dec
	ForbidFragmentation *bool
}

// apply puts o over s: a strategy replaces every plugin's.
func (o CaseOverrides) apply(s *Settings) {
	if o.Strategy != nil {
		s.Strategy = *o.Strategy
		for n := range s.PluginStrategy {
			s.PluginStrategy[n] = s.Strategy
		}
	}
	if o.Policy != nil {
		s.Policy = *o.Policy
	}
	if !o.Quantum.IsZero() {
		s.Quantum = o.Quantum
	}
	if o.ForbidFragmentation != nil {
		s.ForbidFragmentation = *o.ForbidFragmentation
	}
}

// Prepare builds the case's node, with o over its settings, and its
// steps, checked. An error is the case's bad input.
func (c *Case) Prepare(o CaseOverrides) (*Node, []Step, error) {
	devs, s, steps, err := c.Setup()
	if err != nil {
		return nil, nil, err
	}
	o.apply(&s)
	if err := ValidateSteps(steps); err != nil {
		return nil, nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	return NewNode(devs, s), steps, nil
}

// CaseRun is one corpus case and its simulation's result.
type CaseRun struct {
	Case   *Case
	Sim    *Simulation
	Result *Result
}

// CaseMismatch is one difference between a case's run and its recorded
// result.
type CaseMismatch struct {
	Case string
	Mismatch
}

// CasesCheck is the comparison of case runs with their recorded results.
type CasesCheck struct {
	Cases, Operations int
	// Mismatched counts the operations with at least one mismatch.
	Mismatched int
	Mismatches []CaseMismatch
}

// CheckCases compares every run with its case's recorded results.
func CheckCases(runs []CaseRun) CasesCheck {
	out := CasesCheck{Cases: len(runs)}
	for _, r := range runs {
		out.Operations += len(r.Result.Steps)
		seen := map[int]bool{}
		for _, m := range r.Case.Check(r.Result) {
			if !seen[m.Step] {
				seen[m.Step] = true
				out.Mismatched++
			}
			out.Mismatches = append(out.Mismatches, CaseMismatch{Case: r.Case.ID, Mismatch: m})
		}
	}
	return out
}

// TakeDeviceList sets s and sim up for a device list (a devices.json):
// every plugin it lists follows s.Strategy, alloc_map covers its slots,
// and its slot types are the node's.
func (sim *Simulation) TakeDeviceList(s *Settings, devs []model.Device) {
	s.PluginStrategy = map[model.DeviceName]alloc.Strategy{}
	s.AllocMapSlots = AllocMapSlots(devs)
	for _, d := range devs {
		s.PluginStrategy[d.Name] = s.Strategy
		sim.Types[d.Slot] = d.SlotType
	}
}

// Unplaced counts the allocation requests of res that were not placed
// (frees are not requests): what a script asking "does it fit?" reads.
func (sim *Simulation) Unplaced(res *Result) int {
	n := 0
	for i, placed := range sim.Placed(res) {
		if !placed && !res.Steps[i].Step.IsFree() {
			n++
		}
	}
	return n
}

// FailedFrees counts the free steps of res that failed (an allocation
// already freed).
func FailedFrees(res *Result) int {
	n := 0
	for i := range res.Steps {
		if res.Steps[i].Step.IsFree() && res.Steps[i].ErrKind != "" {
			n++
		}
	}
	return n
}

// BadAmount is the first step of res that failed for an amount beyond
// Backend.AI's decimal precision (NaN and infinities are refused when
// parsed): bad input rather than a placement answer. Nil when none did.
func BadAmount(res *Result) *StepResult {
	for i := range res.Steps {
		if res.Steps[i].ErrKind == alloc.KindInvalidOperation {
			return &res.Steps[i]
		}
	}
	return nil
}

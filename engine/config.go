package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// ConfigView is what the engine takes from an agent.toml: the mode, the
// agents and their scratch roots, the problems of the file, and the hook
// that computes the partition for a set of devices.
type ConfigView struct {
	Path   string
	Mode   string
	Agents []model.Agent
	Roots  []scratch.Root
	// Issues are the file's problems and warnings.
	Issues []model.Issue
	// MadeUpIDs are the agents the file gives no id: Backend.AI makes up
	// "agent-<uuid4>" for them at every start, so their kernels' records
	// name an id the file does not know.
	MadeUpIDs []model.AgentID
	// DraftFormat: the file is in the BEP-1044 device-based form, which
	// Backend.AI main cannot load (Snapshot.DraftFormat).
	DraftFormat bool
	// Hash is the hex SHA-256 of the bytes read (Snapshot.ConfigHash).
	Hash string
	// AffinityPolicy and AllocationOrder are the file's [resource]
	// settings (Snapshot.Allocator).
	AffinityPolicy  string
	AllocationOrder []model.DeviceName
	// Partition computes the agents' partitions and the partition-level
	// drift for a device set (Options.Partition).
	Partition func(inv *inventory.Inventory) ([]model.Agent, []model.Issue)
	// Etcd is the file's [etcd]: where the agents read their plugin
	// settings.
	Etcd agentconfig.Etcd
	// AllowComputePlugins ([agent] allow-compute-plugins; AllowSet false
	// when unset) and BlockComputePlugins choose which plugins load.
	AllowComputePlugins []string
	AllowSet            bool
	BlockComputePlugins []string
	// EtcdAgents are the agent ids whose node scope in etcd the agents
	// read: the ids the file sets (an [[agents]] entry without one runs
	// under [agent] id when that is set). Agents with a made-up id have
	// no node scope fgtop can know.
	EtcdAgents []model.AgentID
}

// LoadConfigView reads an agent.toml for watching. A file that breaks the
// partition rules is still watched (its kernels are real), with every
// problem as an issue; a file that cannot be read or is not TOML at all is
// an error.
func LoadConfigView(path string) (*ConfigView, error) {
	// agentconfig.Load, not a read of our own: it is the one place that
	// decides how agent.toml is opened and how large it may be.
	return configViewOf(agentconfig.Load(path))
}

// ParseConfigView is LoadConfigView on bytes already read.
func ParseConfigView(path string, raw []byte) (*ConfigView, error) {
	return configViewOf(agentconfig.Parse(path, raw))
}

func configViewOf(c *agentconfig.Config, err error) (*ConfigView, error) {
	var inv *agentconfig.InvalidError
	var issues []model.Issue
	switch {
	case err == nil:
	case c != nil && errors.As(err, &inv):
		for _, p := range inv.Problems {
			issues = append(issues, model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: c.Path, Line: p.Line, Agent: p.Agent, Message: p.Message})
		}
	default:
		return nil, err
	}
	v := &ConfigView{Path: c.Path, Mode: c.Mode, Issues: issues, DraftFormat: c.IsDraftFormat(), Hash: c.Hash, AffinityPolicy: c.AffinityPolicy}
	for _, n := range c.AllocationOrder {
		v.AllocationOrder = append(v.AllocationOrder, model.DeviceName(n))
	}
	for _, a := range c.Agents {
		v.Agents = append(v.Agents, model.Agent{ID: a.ID, ScratchRoot: a.ScratchRoot, ServiceAddr: a.ServiceAddr})
		if !a.IDSet {
			v.MadeUpIDs = append(v.MadeUpIDs, a.ID)
		}
	}
	for _, r := range c.ScratchRoots() {
		v.Roots = append(v.Roots, scratch.Root{Path: r.Path, Agent: r.Agent})
	}
	for _, w := range c.Warnings {
		v.Issues = append(v.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssueConfig, File: c.Path, Message: w})
	}
	v.Partition = partitionHook(c, v.Agents)
	v.Etcd = c.Etcd
	v.AllowComputePlugins, v.AllowSet, v.BlockComputePlugins = c.AllowComputePlugins, c.AllowComputePlugins != nil, c.BlockComputePlugins
	v.EtcdAgents = c.EtcdAgentIDs()
	return v, nil
}

// Apply sets the options' config fields from the view: the engine starts
// with it and follows the file from there (FollowConfig).
func (v *ConfigView) Apply(o *Options) {
	o.ConfigPath, o.Mode, o.DraftFormat, o.ConfigHash = v.Path, v.Mode, v.DraftFormat, v.Hash
	o.AffinityPolicy, o.AllocationOrder = v.AffinityPolicy, slices.Clone(v.AllocationOrder)
	o.Agents = slices.Clone(v.Agents)
	o.ConfigIssues = slices.Clone(v.Issues)
	o.Partition = v.Partition
	o.MadeUpIDs = slices.Clone(v.MadeUpIDs)
	o.PluginInputs = v.PluginInputs()
	o.FollowConfig = true
}

// PluginInputs is what of an agent.toml the plugins' settings and choice
// are read from once, when the device source starts (engine/nodeopen): the
// etcd the settings are in, the compute-plugin lists and the agent ids
// whose node scope is read. Set is false when nothing was read.
type PluginInputs struct {
	Set                   bool
	Etcd, Lists, AgentIDs string
}

// PluginInputs is v's PluginInputs.
func (v *ConfigView) PluginInputs() PluginInputs {
	e := v.Etcd
	return PluginInputs{Set: true,
		Etcd:     fmt.Sprintf("%q %q %q %q", e.Addrs, e.Namespace, e.User, e.Password),
		Lists:    fmt.Sprintf("%v %q %q", v.AllowSet, v.AllowComputePlugins, v.BlockComputePlugins),
		AgentIDs: fmt.Sprintf("%q", v.EtcdAgents)}
}

// pluginInputsChanged notes a config whose [etcd], compute-plugin lists or
// agent ids differ from the ones the device source read at start: it reads
// them once, so following them needs a restart of fgtop (as the agents
// need one to follow them).
func (s *state) pluginInputsChanged(v *ConfigView) {
	const key = "cfgplugins"
	delete(s.srcIssues, key)
	if !s.pluginInputs.Set {
		return
	}
	now := v.PluginInputs()
	var what []string
	if now.Etcd != s.pluginInputs.Etcd {
		what = append(what, "[etcd]")
	}
	if now.Lists != s.pluginInputs.Lists {
		what = append(what, "compute-plugin lists")
	}
	if now.AgentIDs != s.pluginInputs.AgentIDs {
		what = append(what, "the agent ids")
	}
	if len(what) > 0 {
		s.srcIssues[key] = model.Issue{Severity: model.SevWarning, Code: model.IssueConfig, File: v.Path,
			// The change and the remedy first: the console cuts an issue
			// to one line.
			Message: fmt.Sprintf("agent.toml's %s changed; restart fgtop to follow: it reads the plugins' settings and choice ([etcd], [agent] allow/block-compute-plugins, agent ids) once, at start, and shows them as the file said then", strings.Join(what, " and "))}
	}
}

// partitionHook computes the agents' effective partitions for each new
// device set, and the drift that depends only on the partition.
func partitionHook(cfg *agentconfig.Config, agents []model.Agent) func(*inventory.Inventory) ([]model.Agent, []model.Issue) {
	return func(inv *inventory.Inventory) ([]model.Agent, []model.Issue) {
		// As partition.InventoryOf judges a snapshot, so that the console
		// and check agree on what is not judged.
		pinv := partition.Inventory{Devices: inv.Devices, HostMem: model.NewDec(inv.HostMemBytes, 0), Source: inv.Source, Plugin: inv.Plugin,
			AcceleratorsUnknown: partition.AcceleratorsUnknown(inv.Source, inv.Devices, inv.Plugin)}
		p := partition.Effective(cfg, pinv)
		out := slices.Clone(agents)
		p.Fill(out)
		var issues []model.Issue
		for _, pr := range cfg.ValidateWith(inv.Devices, pinv.ValidateOptions()) {
			issues = append(issues, model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: cfg.Path, Line: pr.Line, Agent: pr.Agent, Message: pr.Message})
		}
		// Only the partition-level drift: kernels are checked live.
		issues = append(issues, partition.Drift(p, &model.Snapshot{Devices: inv.Devices, HostMemBytes: inv.HostMemBytes})...)
		return out, issues
	}
}

// setConfigIssues replaces the issues that come from the agent.toml itself.
func (s *state) setConfigIssues(issues []model.Issue) {
	for k := range s.srcIssues {
		if len(k) > 4 && k[:4] == "cfg:" {
			delete(s.srcIssues, k)
		}
	}
	for i, iss := range issues {
		s.srcIssues[fmt.Sprintf("cfg:%d", i)] = iss
	}
	s.issuesDirty = true
}

// configFailed shows that the agent.toml on disk cannot be used (the last
// good one stays in force), or clears that (err nil).
func (s *state) configFailed(path string, err error) {
	const key = "cfgreload"
	if err == nil {
		if _, ok := s.srcIssues[key]; ok {
			delete(s.srcIssues, key)
			s.issuesDirty = true
		}
		return
	}
	s.configHash = model.ConfigUnusable
	s.srcIssues[key] = model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: path,
		Message: configUnusable(path, err)}
	s.issuesDirty = true
}

// configUnusable words why the agent.toml on disk cannot be used now. A
// file that is gone or unreadable gets fgtop's words and the way back (the
// loader's own error would be an lstat or open error); a file that reads
// but does not load already names its line and passes through.
func configUnusable(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("agent.toml %s is gone (removed or renamed, or its directory): still showing the partition last read; put it back, or start fgtop with --config naming where it is now", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("agent.toml %s can no longer be read (permission denied): still showing the partition last read; give fgtop's user read access again, or run fgtop as root or as the user the agent runs as", path)
	}
	return fmt.Sprintf("agent.toml changed on disk and cannot be used (%v); still showing the partition last read", err)
}

// setConfig installs a new reading of the agent.toml: mode, agents, their
// partitions and the config's issues, then re-attributes and re-checks
// every kernel. Roots cannot change while the watcher runs: a changed set
// of scratch roots is shown as an issue.
func (s *state) setConfig(v *ConfigView) {
	s.mode, s.draftFmt, s.configHash = v.Mode, v.DraftFormat, v.Hash
	s.affinity, s.order = v.AffinityPolicy, slices.Clone(v.AllocationOrder)
	s.configured = true
	s.setConfigIssues(v.Issues)
	s.configFailed(v.Path, nil)
	s.partition = v.Partition

	if s.rootsFromConfig {
		// A watched root the config still names is the agent's it names
		// now: an agent renamed in agent.toml keeps its root, and its
		// kernels go with it (they stayed on the old id, an agent the
		// file no longer has, with its held figures).
		roots := slices.Clone(s.roots)
		for i := range roots {
			for _, r := range v.Roots {
				if samePath(r.Path, roots[i].Path) {
					roots[i].Agent = r.Agent
					break
				}
			}
		}
		s.roots = roots
	}
	// Agents: the config's, in its order, then any root's agent it lacks.
	agents := slices.Clone(v.Agents)
	have := map[model.AgentID]bool{}
	for _, a := range agents {
		have[a.ID] = true
	}
	for _, r := range s.roots {
		if !have[r.Agent] {
			have[r.Agent] = true
			agents = append(agents, model.Agent{ID: r.Agent, ScratchRoot: r.Path})
		}
	}
	s.rootAgents = rootAgentsOf(s.roots, v.Agents)
	s.madeUp = idSet(v.MadeUpIDs)
	s.rootsChanged(v)
	s.pluginInputsChanged(v)

	// Move kernels whose agent changes off their old agent while its
	// account still exists, then rebuild every agent's account.
	type move struct {
		ks *kstate
		at attribution
	}
	moves := make([]move, 0, len(s.kernels))
	for id, ks := range s.kernels {
		at := s.attribute(id, ks.root, ks.pub.Path, ks.rec, ks.recErr, ks.pending)
		if at.agent != ks.pub.Agent {
			s.apply(ks.pub.Agent, id, ks.contrib, -1)
		}
		moves = append(moves, move{ks, at})
	}
	s.agents, s.agentIdx = nil, map[model.AgentID]int{}
	for _, a := range agents {
		s.addAgent(a)
	}
	for _, m := range moves {
		ks, id := m.ks, m.ks.pub.ID
		putIssues(s, s.attrIssues, id, m.at.issues)
		if m.at.agent != ks.pub.Agent || m.at.by != ks.pub.AgentBy {
			k := *ks.pub
			moved := k.Agent != m.at.agent
			k.Agent, k.AgentBy = m.at.agent, m.at.by
			ks.pub = &k
			s.putKernel(ks.pub)
			if moved {
				s.apply(k.Agent, id, ks.contrib, +1)
				s.agentKernels(k.Agent, +1)
				continue
			}
		}
		s.agentAdd(ks.pub.Agent, ks.contrib)
		s.agentKernels(ks.pub.Agent, +1)
	}
	if s.inv != nil && s.partition != nil {
		s.applyPartition(s.inv)
	}
	for id, ks := range s.kernels {
		s.checkKernel(id, ks)
	}
	s.issuesDirty = true
}

// agentAdd adds a kernel's allocation to its agent's account only.
func (s *state) agentAdd(agent model.AgentID, al model.Allocations) {
	i, ok := s.agentIdx[agent]
	if !ok {
		return
	}
	ag := s.agents[i]
	for slot, devs := range al {
		for _, amt := range devs {
			sum, exact := ag.held[slot].AddExact(amt)
			ag.held[slot] = sum
			ag.exps.add(slot, amt)
			if !exact {
				s.markLossy(slot)
			}
		}
	}
}

// rootsChanged notes a config whose scratch roots differ from the ones
// being watched: following new roots needs a restart of fgtop.
func (s *state) rootsChanged(v *ConfigView) {
	const key = "cfgroots"
	watched := map[string]bool{}
	for _, r := range s.roots {
		watched[r.Path] = true
	}
	var added []string
	for _, r := range v.Roots {
		if !watched[r.Path] {
			added = append(added, r.Path)
		}
	}
	delete(s.srcIssues, key)
	if len(added) > 0 && s.rootsFromConfig {
		s.srcIssues[key] = model.Issue{Severity: model.SevWarning, Code: model.IssueConfig, File: v.Path,
			Message: fmt.Sprintf("agent.toml now names scratch root(s) %v that fgtop does not watch; restart fgtop to follow them", added)}
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

// sourceFlags are the data-source flags every command that looks at a node
// shares (DESIGN.md's command-line contract).
type sourceFlags struct {
	config      string
	scratchRoot []string
	devices     string
	mockEtcd    string
	hostCPUs    string
	hostMem     string
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "agent.toml (default: Backend.AI's usual places)")
	fl.StringArrayVar(&f.scratchRoot, "scratch-root", nil, "scratch root to watch, as DIR or AGENT=DIR (repeatable; overrides the config)")
	fl.StringVar(&f.devices, "devices", "auto", "device source: auto, nvml, or a mock-accelerator.toml path")
	fl.StringVar(&f.mockEtcd, "mock-etcd", "", "the mock plugin's etcd settings as JSON (allocation_mode, unit_mem, ...)")
	fl.StringVar(&f.hostCPUs, "host-cpus", "", "use these CPU cores instead of this host's, e.g. 0-63 (to check a config written for another node)")
	fl.StringVar(&f.hostMem, "host-mem", "", "use this much memory instead of this host's, e.g. 512g (to check a config written for another node)")
}

// openInventory opens the --devices source, with the host's cores and
// memory replaced by --host-cpus and --host-mem when given.
func (f *sourceFlags) openInventory() (inventory.Source, error) {
	var host inventory.HostOptions
	if f.hostCPUs != "" {
		cpus, err := inventory.ParseCPUList(f.hostCPUs)
		if err != nil {
			return nil, usageErr("--host-cpus %q: %v (want a list such as 0-63 or 0-7,16)", f.hostCPUs, err)
		}
		if len(cpus) == 0 {
			return nil, usageErr("--host-cpus %q: the list is empty", f.hostCPUs)
		}
		host.CPUs = cpus
	}
	if f.hostMem != "" {
		b, err := model.ParseFiniteBinarySize(f.hostMem)
		if err != nil {
			return nil, usageErr("--host-mem %q: %v (want a size such as 512g)", f.hostMem, err)
		}
		n, err := b.Int64()
		if err != nil || n <= 0 {
			return nil, usageErr("--host-mem %q: want a positive size such as 512g", f.hostMem)
		}
		host.MemBytes = n
	}
	if err := f.checkMockEtcd(); err != nil {
		return nil, err
	}
	src, err := inventory.Open(f.devices, inventory.OpenOptions{MockEtcdPath: f.mockEtcd, Host: host})
	if err != nil {
		return nil, f.deviceErr(err)
	}
	return src, nil
}

// options resolves the flags into engine options: which roots, which
// agents, which device source. The returned source must be closed.
func (f *sourceFlags) options() (engine.Options, error) {
	opts := engine.Options{}
	opts.Node, _ = os.Hostname()
	var cfg *agentconfig.Config
	switch {
	case f.config != "":
		c, problems, err := loadConfig(f.config)
		if err != nil {
			return opts, usageErr("--config: %v", err)
		}
		cfg = c
		opts.Issues = append(opts.Issues, problems...)
	case len(f.scratchRoot) == 0:
		path, err := agentconfig.Find()
		if err != nil {
			return opts, usageErr("%v\npoint fgtop at it with --config FILE, or at the kernels with --scratch-root DIR; or try `fgtop demo`", err)
		}
		c, problems, err := loadConfig(path)
		if err != nil {
			return opts, usageErr("%v\n(fgtop found this agent.toml where Backend.AI looks for one; name another with --config FILE)", err)
		}
		cfg = c
		opts.Issues = append(opts.Issues, problems...)
	}
	if cfg != nil {
		opts.ConfigPath, opts.Mode, opts.DraftFormat = cfg.Path, cfg.Mode, cfg.IsDraftFormat()
		if cfg.IsDraftFormat() {
			opts.Issues = append(opts.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssueConfig, File: cfg.Path, Message: agentconfig.DraftFormatWarning})
		}
		for _, a := range cfg.Agents {
			opts.Agents = append(opts.Agents, model.Agent{ID: a.ID, ScratchRoot: a.ScratchRoot})
		}
		for _, r := range cfg.ScratchRoots() {
			opts.Roots = append(opts.Roots, scratch.Root{Path: r.Path, Agent: r.Agent})
		}
		for _, w := range cfg.Warnings {
			opts.Issues = append(opts.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssueConfig, File: cfg.Path, Message: w})
		}
		opts.Partition = partitionHook(cfg, opts.Agents)
	}
	if len(f.scratchRoot) > 0 {
		roots, err := parseRoots(f.scratchRoot)
		if err != nil {
			return opts, err
		}
		opts.Roots = roots
		if cfg == nil {
			opts.Agents = nil
		}
	}
	src, err := f.openInventory()
	if err != nil {
		return opts, err
	}
	opts.Inventory = src
	return opts, nil
}

// checkMockEtcd refuses --mock-etcd where no mock file is read.
func (f *sourceFlags) checkMockEtcd() error {
	switch f.devices {
	case "", "auto", "nvml":
		if f.mockEtcd != "" {
			return usageErr("--mock-etcd %s: the mock plugin's settings apply only with --devices PATH-to-mock-accelerator.toml, not --devices %s", f.mockEtcd, f.devices)
		}
	}
	return nil
}

// deviceErr names the flag a device-source error comes from: the settings
// file of --mock-etcd, or --devices.
func (f *sourceFlags) deviceErr(err error) error {
	var se *inventory.MockSettingsError
	if errors.As(err, &se) {
		return usageErr("--mock-etcd: %v", se.Err)
	}
	return usageErr("--devices %s: %v", f.devices, err)
}

// loadConfig reads an agent.toml for watching. A file that breaks the
// partition rules is still watched (its kernels are real), with every
// problem shown as an issue; a file that is not TOML at all is bad input
// (the error names the file; the caller says where the path came from).
func loadConfig(path string) (*agentconfig.Config, []model.Issue, error) {
	c, err := agentconfig.Load(path)
	var inv *agentconfig.InvalidError
	switch {
	case err == nil:
		return c, nil, nil
	case c != nil && errors.As(err, &inv):
		var out []model.Issue
		for _, p := range inv.Problems {
			out = append(out, model.Issue{Severity: model.SevError, Code: model.IssueConfig, File: path, Line: p.Line, Agent: p.Agent, Message: p.Message})
		}
		return c, out, nil
	default:
		return nil, nil, err
	}
}

// partitionHook computes the agents' effective partitions for each new
// device set, and the drift that depends only on the partition.
func partitionHook(cfg *agentconfig.Config, agents []model.Agent) func(*inventory.Inventory) ([]model.Agent, []model.Issue) {
	return func(inv *inventory.Inventory) ([]model.Agent, []model.Issue) {
		pinv := partition.Inventory{Devices: inv.Devices, HostMem: model.NewDec(inv.HostMemBytes, 0), Source: inv.Source,
			AcceleratorsUnknown: inv.Source.Kind == inventory.KindNone || inv.Source.Health == inventory.HealthUnavailable}
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

// parseRoots reads --scratch-root values: "AGENT=DIR" names the agent;
// a bare DIR takes its agent id from the directory's base name.
func parseRoots(vals []string) ([]scratch.Root, error) {
	var out []scratch.Root
	seen := map[string]bool{}
	for _, v := range vals {
		agent, dir, ok := strings.Cut(v, "=")
		if !ok {
			dir, agent = v, filepath.Base(filepath.Clean(v))
		}
		if dir == "" || agent == "" {
			return nil, usageErr("--scratch-root %q: want DIR or AGENT=DIR", v)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, usageErr("--scratch-root %q: %v", v, err)
		}
		if seen[abs] {
			return nil, usageErr("--scratch-root %s given twice", abs)
		}
		seen[abs] = true
		out = append(out, scratch.Root{Path: abs, Agent: model.AgentID(agent)})
	}
	return out, nil
}

func closeSource(opts engine.Options) {
	if opts.Inventory != nil {
		if err := opts.Inventory.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "fgtop: close device source:", err)
		}
	}
}

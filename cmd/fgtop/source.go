package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	idleAfter   time.Duration
	plugin      pluginFlags
	// live: the command follows the node (registerLive).
	live bool
	// liveFlags are the flags registerLive added to, so that the demo
	// can tell a --idle-after given from its default.
	liveFlags *pflag.FlagSet
	// oneShot: the command reports once (snapshot without --follow), so a
	// root it cannot see is refused rather than followed: the report
	// would be missing that root's kernels with nothing to say so but a
	// warning.
	oneShot bool
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "agent.toml (default: Backend.AI's usual places)")
	fl.StringArrayVar(&f.scratchRoot, "scratch-root", nil, "scratch root to watch, as DIR or AGENT=DIR (repeatable; overrides the config, whose agents AGENT must name)")
	fl.StringVar(&f.devices, "devices", "auto", "device source: auto, nvml, or a mock-accelerator.toml path")
	fl.StringVar(&f.mockEtcd, "mock-etcd", "", "a JSON file of the mock plugin's etcd settings (allocation_mode, unit_mem, ...); without it they are read from agent.toml's [etcd] (config/plugins/accelerator/mock/), as the agent reads them")
	fl.StringVar(&f.hostCPUs, "host-cpus", "", "use these CPU cores instead of this host's, e.g. 0-63 (to check a config written for another node)")
	fl.StringVar(&f.hostMem, "host-mem", "", "use this much memory instead of this host's, e.g. 512g (to check a config written for another node)")
	f.plugin.register(fl)
}

// registerLive adds the flags of commands that follow the node live
// (console, watch, snapshot, serve, exporter): --idle-after.
func (f *sourceFlags) registerLive(cmd *cobra.Command) {
	f.live = true
	f.liveFlags = cmd.Flags()
	registerIdleAfter(cmd.Flags(), &f.idleAfter, engine.DefaultIdleAfter)
}

// registerLiveDemo is registerLive for a command that also serves the
// demo node (--demo), whose --idle-after default is the demo's.
func (f *sourceFlags) registerLiveDemo(cmd *cobra.Command) {
	f.registerLive(cmd)
	fl := cmd.Flags().Lookup("idle-after")
	fl.Usage += fmt.Sprintf("; with --demo %s unless given", demoIdleAfter)
}

// demoIdleAfterOption is --idle-after for the embedded demo node: the
// demo command's default (its kernels live minutes, not hours) unless the
// flag was given.
func (f *sourceFlags) demoIdleAfterOption() (time.Duration, error) {
	if f.liveFlags == nil || !f.liveFlags.Changed("idle-after") {
		return demoIdleAfter, nil
	}
	return idleAfterOption(f.idleAfter)
}

// registerIdleAfter adds --idle-after: how long a kernel holds a GPU at 0 %
// before it is marked holding but idle.
func registerIdleAfter(fl *pflag.FlagSet, v *time.Duration, def time.Duration) {
	fl.DurationVar(v, "idle-after", def, "mark a kernel \"holding but idle\" after this long at 0 % GPU utilisation (0: never)")
}

// idleAfterOption turns --idle-after into engine.Options.IdleAfter.
func idleAfterOption(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, usageErr("--idle-after %v: want a duration of 0 (never) or more, such as 10m", d)
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// openInventory opens the --devices source, with the host's cores and
// memory replaced by --host-cpus and --host-mem when given, and NVML's
// GPUs registered as the node's CUDA plugin does (pc: what agent.toml
// says about the plugins; roots: the scratch roots, for the kernels'
// evidence).
func (f *sourceFlags) openInventory(pc pluginContext, roots []string) (inventory.Source, error) {
	if err := f.checkPluginFlags(); err != nil {
		return nil, err
	}
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
	oo := inventory.OpenOptions{MockEtcdPath: f.mockEtcd, Host: host}
	if f.mockEtcd == "" {
		s, err := mockSettingsOfEtcd(f.devices, pc)
		if err != nil {
			return nil, err
		}
		oo.MockSettings = s
	}
	src, err := inventory.Open(f.devices, oo)
	if err != nil {
		return nil, f.deviceErr(err)
	}
	if ms, ok := src.(*inventory.MockSource); ok && f.live && oo.MockSettings != nil {
		// A console, serve or exporter started while etcd was down
		// reads again until it can, as the CUDA plugin's reader does.
		devices := f.devices
		ms.RetryUnread(mockRetry, func(ctx context.Context) *inventory.MockSettings {
			s, err := mockSettingsOfEtcdCtx(ctx, devices, pc)
			if err != nil {
				return nil
			}
			return s
		})
	}
	wrapped, err := f.wrapPlugin(src, pc, roots)
	if err != nil {
		_ = src.Close()
		return nil, err
	}
	return wrapped, nil
}

// rootPaths are the roots' directories.
func rootPaths(roots []scratch.Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// options resolves the flags into engine options: which roots, which
// agents, which device source. The returned source must be closed.
func (f *sourceFlags) options() (engine.Options, error) {
	opts := engine.Options{}
	opts.Node, _ = os.Hostname()
	if f.live {
		idle, err := idleAfterOption(f.idleAfter)
		if err != nil {
			return opts, err
		}
		opts.IdleAfter = idle
	}
	var pc pluginContext
	path, found := f.config, false
	if path == "" && len(f.scratchRoot) == 0 {
		p, err := agentconfig.Find()
		if err != nil {
			return opts, usageErr("%v\npoint fgtop at it with --config FILE, or at the kernels with --scratch-root DIR; or try `fgtop demo`", err)
		}
		path, found = p, true
	}
	if path != "" {
		v, err := engine.LoadConfigView(path)
		if err != nil {
			return opts, configErr(path, found, err)
		}
		v.Apply(&opts)
		opts.Roots = v.Roots
		pc = pluginContextOfView(v)
	}
	if len(f.scratchRoot) > 0 {
		roots, err := parseRoots(f.scratchRoot)
		if err != nil {
			return opts, err
		}
		opts.Roots = roots
		opts.RootsOverridden = true
		if path == "" {
			opts.Agents = nil
		} else if err := rootsNameConfigAgents(f.scratchRoot, roots, opts.Agents, path); err != nil {
			return opts, err
		}
	}
	if f.oneShot {
		if err := refuseBlindRoots(opts.Roots, opts.RootsOverridden); err != nil {
			return opts, err
		}
	}
	warnRoots(untrusted.NewWriter(os.Stderr), &opts)
	src, err := f.openInventory(pc, rootPaths(opts.Roots))
	if err != nil {
		return opts, err
	}
	opts.Inventory = src
	return opts, nil
}

// mockRetry is how often a live command reads the mock plugin's settings
// again while they could not be read.
const mockRetry = 10 * time.Second

// mockSettingsOfEtcd is the mock plugin's settings as its agents read
// them from the etcd agent.toml names (plugin.ReadMockSettings), for a
// --devices that is a mock-accelerator.toml given no --mock-etcd: nil for
// another source, one that does not exist (said at once by its open, not
// after etcd's timeout) or no etcd. A value the plugin refuses is bad
// usage. Live commands read them again while they could not be read
// (MockSource.RetryUnread).
func mockSettingsOfEtcd(devices string, pc pluginContext) (*inventory.MockSettings, error) {
	return mockSettingsOfEtcdCtx(context.Background(), devices, pc)
}

// mockSettingsOfEtcdCtx is mockSettingsOfEtcd under ctx.
func mockSettingsOfEtcdCtx(ctx context.Context, devices string, pc pluginContext) (*inventory.MockSettings, error) {
	switch devices {
	case "", "auto", "nvml":
		return nil, nil
	}
	if pc.etcd == nil || len(pc.etcd.Addrs) == 0 {
		return nil, nil
	}
	if _, err := os.Stat(devices); err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*etcdTimeout)
	defer cancel()
	s, err := plugin.ReadMockSettings(ctx, plugin.EtcdOptions{Endpoints: pc.etcd.Addrs, Namespace: pc.etcd.Namespace,
		User: pc.etcd.User, Password: pc.etcd.Password, Agents: pc.agents, Timeout: etcdTimeout})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return s, nil
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
		if w := missingFile(se.Err); w != "" {
			return usageErr("--mock-etcd %s: %s", f.mockEtcd, w)
		}
		return usageErr("--mock-etcd: %v", se.Err)
	}
	if w := missingFile(err); w != "" {
		return usageErr("--devices %s: %s; want auto, nvml or the path of a mock-accelerator.toml", f.devices, w)
	}
	return usageErr("--devices %s: %v", f.devices, err)
}

// warnRoots says on w which scratch roots do not exist or are not
// directories (scratch.UnseenRoots): a mistyped --scratch-root would
// otherwise show an empty node, with the reason only in the JSON's issues.
// It returns them sorted: the roots that leave fgtop blind, which plan and
// apply refuse to go ahead without, and the config's roots that do not
// exist yet, which check only says it could not check.
func warnRoots(w io.Writer, opts *engine.Options) (roots unseenRoots) {
	for _, u := range scratch.UnseenRoots(opts.Roots, opts.RootsOverridden) {
		// The engine reports it too (an issue, in the console's header),
		// and follows the root should it appear.
		fmt.Fprintf(w, "fgtop: warning: %s\n", u.Message)
		if u.Blind {
			roots.blind = append(roots.blind, u.Message)
		} else {
			roots.absent = append(roots.absent, u.Message)
		}
	}
	return roots
}

// refuseBlindRoots is a one-shot report's check of its roots: a root named
// with --scratch-root that does not exist, or any root that cannot be read
// as a directory, would leave its kernels out of an answer that looks
// whole. A root of agent.toml's that does not exist yet holds no kernels
// (the agent creates it) and is only warned about.
func refuseBlindRoots(roots []scratch.Root, named bool) error {
	var blind []string
	for _, u := range scratch.UnseenRoots(roots, named) {
		if u.Blind {
			blind = append(blind, untrusted.Text(u.Message))
		}
	}
	if len(blind) == 0 {
		return nil
	}
	return usageErr("%s\na one-shot report would leave out the kernels under it: check the path and its permissions (the console and snapshot --follow keep watching for it)", strings.Join(blind, "\n"))
}

// unseenRoots are warnRoots' findings: blind, the roots that leave fgtop
// blind to kernels that may be there; absent, config roots that do not
// exist (yet).
type unseenRoots struct {
	blind, absent []string
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

// rootsNameConfigAgents refuses a --scratch-root AGENT=DIR whose AGENT
// the config does not have: a typo quietly made a new agent of the
// kernels under DIR, taken from the agent that runs them. A bare DIR is
// named for its directory and attributed as the agent does (recovery.json
// first), so it is not checked.
func rootsNameConfigAgents(vals []string, roots []scratch.Root, agents []model.Agent, config string) error {
	var ids []string
	for _, a := range agents {
		ids = append(ids, string(a.ID))
	}
	for i, v := range vals {
		if !strings.Contains(v, "=") || slices.Contains(ids, string(roots[i].Agent)) {
			continue
		}
		return usageErr("--scratch-root %s: %s names no agent %q; its agents are %s", v, config, roots[i].Agent, strings.Join(ids, ", "))
	}
	return nil
}

func closeSource(opts engine.Options) {
	if opts.Inventory != nil {
		if err := opts.Inventory.Close(); err != nil {
			fmt.Fprintln(untrusted.NewWriter(os.Stderr), "fgtop: close device source:", err)
		}
	}
}

// servedNode is the node a long-running command (exporter, serve) puts an
// engine on: the embedded demo node, or this node's own sources.
type servedNode struct {
	opts engine.Options
	// demo is the running demo node; nil for a real node.
	demo *demo.Node
}

// openServedNode starts the demo node (useDemo, with seed) or builds the
// engine options from the shared source flags, and names the node name
// when it is not empty. The caller closes the result when done.
func openServedNode(ctx context.Context, useDemo bool, seed int64, src *sourceFlags, name string) (*servedNode, error) {
	n := &servedNode{}
	if useDemo {
		idle, err := src.demoIdleAfterOption()
		if err != nil {
			return nil, err
		}
		node, err := demo.Start(ctx, demo.Options{Seed: seed, Speed: 1})
		if err != nil {
			return nil, err
		}
		n.demo, n.opts = node, node.EngineOptions()
		n.opts.IdleAfter = idle
	} else {
		opts, err := src.options()
		if err != nil {
			return nil, err
		}
		n.opts = opts
	}
	if name != "" {
		n.opts.Node = name
	}
	return n, nil
}

// close stops the demo node, or closes the device source (whose error is
// only reported: the command's own result matters more).
func (n *servedNode) close() error {
	if n.demo != nil {
		return n.demo.Close()
	}
	closeSource(n.opts)
	return nil
}

// closeInto runs close and keeps its error in *err unless *err already
// holds one: `defer closeInto(&err, x.Close)` reports a failed close
// without hiding the error that ended the command.
func closeInto(err *error, close func() error) {
	if cerr := close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

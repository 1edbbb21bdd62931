package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/nodeopen"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/untrusted"
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

// registerIdleAfter adds --idle-after: how long a kernel holds a GPU at 0 %
// before it is marked holding but idle.
func registerIdleAfter(fl *pflag.FlagSet, v *time.Duration, def time.Duration) {
	fl.DurationVar(v, "idle-after", def, "mark a kernel \"holding but idle\" after this long at 0 % GPU utilisation (0: never)")
}

// idleAfterOption turns --idle-after into engine.Options.IdleAfter
// (nodeopen.IdleAfter).
func idleAfterOption(d time.Duration) (time.Duration, error) {
	idle, err := nodeopen.IdleAfter(d)
	if err != nil {
		return 0, usageErr("%v", err)
	}
	return idle, nil
}

// settings are the flags' values, as nodeopen reads them.
func (f *sourceFlags) settings() nodeopen.Settings {
	return nodeopen.Settings{Config: f.config, ScratchRoots: f.scratchRoot, Devices: f.devices, MockEtcd: f.mockEtcd,
		HostCPUs: f.hostCPUs, HostMem: f.hostMem, Plugin: f.plugin.settings(),
		Live: f.live, IdleAfter: f.idleAfter, OneShot: f.oneShot, Warn: sayOn(untrusted.NewWriter(os.Stderr))}
}

// sourceErr words nodeopen's errors: a config that cannot be read
// (configErr), a device source that cannot be opened (deviceErr), other
// bad input as it says; all are usage errors (exit 2). nil and other
// errors pass through.
func (f *sourceFlags) sourceErr(err error) error {
	var ce *nodeopen.ConfigError
	var de *nodeopen.DeviceError
	var ie *nodeopen.InputError
	switch {
	case errors.As(err, &ce):
		return configErr(ce.Path, ce.Found, ce.Err)
	case errors.As(err, &de):
		return f.deviceErr(de.Err)
	case errors.As(err, &ie):
		// %w: rollback tells a flag's bad value from a node it cannot scan.
		return usageErr("%w", err)
	}
	return err
}

// options resolves the flags into engine options (nodeopen.Open). The
// returned source must be closed.
func (f *sourceFlags) options() (engine.Options, error) {
	opts, err := nodeopen.Open(f.settings())
	return opts, f.sourceErr(err)
}

// checkMockEtcd refuses --mock-etcd where no mock file is read.
func (f *sourceFlags) checkMockEtcd() error {
	return f.sourceErr(nodeopen.CheckMockEtcd(f.devices, f.mockEtcd))
}

// deviceErr names the flag a device-source error comes from: the settings
// file of --mock-etcd, or --devices.
func (f *sourceFlags) deviceErr(err error) error {
	var se *inventory.MockSettingsError
	if errors.As(err, &se) {
		if w := cliwords.MissingFile(se.Err); w != "" {
			return usageErr("--mock-etcd %s: %s", f.mockEtcd, w)
		}
		return usageErr("--mock-etcd: %v", se.Err)
	}
	if w := cliwords.MissingFile(err); w != "" {
		return usageErr("--devices %s: %s; want auto, nvml or the path of a mock-accelerator.toml", f.devices, w)
	}
	return usageErr("--devices %s: %v", f.devices, err)
}

// closeSource closes the device source, saying its error on stderr
// (nodeopen.CloseSources).
func closeSource(opts engine.Options) {
	nodeopen.CloseSources(opts, sayOn(untrusted.NewWriter(os.Stderr)))
}

// openServedNode starts the demo node (useDemo, with seed) or builds the
// engine options from the shared source flags (nodeopen.OpenServed), and
// names the node name when it is not empty. The caller closes the result
// (closeServed) when done.
func openServedNode(ctx context.Context, useDemo bool, seed int64, src *sourceFlags, name string) (*nodeopen.Served, error) {
	n, err := nodeopen.OpenServed(ctx, nodeopen.ServedOptions{Demo: useDemo, Seed: seed, Name: name, Sources: src.settings(),
		IdleAfterGiven: src.liveFlags != nil && src.liveFlags.Changed("idle-after")})
	if err != nil {
		return nil, src.sourceErr(err)
	}
	return n, nil
}

// closeServed stops the demo node, or closes the device source, whose
// error is only said on stderr: the command's own result matters more.
func closeServed(n *nodeopen.Served) func() error {
	return func() error { return n.Close(sayOn(untrusted.NewWriter(os.Stderr))) }
}

// closeInto runs close and keeps its error in *err unless *err already
// holds one: `defer closeInto(&err, x.Close)` reports a failed close
// without hiding the error that ended the command.
func closeInto(err *error, close func() error) {
	if cerr := close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

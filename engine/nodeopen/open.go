// Package nodeopen opens a node's sources from the values of the source
// flags every command that looks at a node shares (DESIGN.md's
// command-line contract): the agent config, the scratch roots, the device
// source with the host's cores and memory overridden, and NVML's GPUs
// registered as the node's CUDA plugin does. cmd/fgtop parses the flags
// into Settings and prints; which file is read and which source opened is
// decided here, testable without the binary.
//
// Errors that are the caller's mistake are an *InputError, said in the
// flags' words (the settings are the flags' values); a config that cannot
// be read is a *ConfigError and a device source that cannot be opened a
// *DeviceError, whose words the command chooses.
package nodeopen

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/demo"
)

// Settings are the source flags' values.
type Settings struct {
	// Config is --config: the agent.toml; empty, with no ScratchRoots,
	// to find it where Backend.AI looks.
	Config string
	// ScratchRoots are --scratch-root's values, DIR or AGENT=DIR.
	ScratchRoots []string
	// Devices is --devices: auto, nvml or a mock-accelerator.toml path.
	Devices string
	// MockEtcd is --mock-etcd: a JSON file of the mock plugin's settings.
	MockEtcd string
	// HostCPUs and HostMem are --host-cpus and --host-mem.
	HostCPUs, HostMem string
	// Plugin are the CUDA plugin flags.
	Plugin PluginSettings
	// Live: the command follows the node; IdleAfter is then its
	// --idle-after, and a mock's settings that could not be read from
	// etcd are read again until they can.
	Live      bool
	IdleAfter time.Duration
	// OneShot: the command reports once, so a root it cannot see is
	// refused rather than followed (RefuseBlind).
	OneShot bool
	// Warn says a line on stderr, without fgtop's prefix: which scratch
	// roots cannot be seen (WarnRoots). nil says nothing.
	Warn func(line string)
}

// InputError is a setting a node cannot be opened with: the caller's
// mistake, in the flags' words.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr is an *InputError of the formatted words.
func inputErr(format string, a ...any) error {
	return &InputError{Err: fmt.Errorf(format, a...)}
}

// ConfigError is an agent.toml that could not be loaded: Path, found
// where Backend.AI looks (Found) or named with --config.
type ConfigError struct {
	Path  string
	Found bool
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("agent config %s: %v", e.Path, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// DeviceError is a device source (Settings.Devices, or the --mock-etcd
// file it reads) that could not be opened.
type DeviceError struct{ Err error }

func (e *DeviceError) Error() string { return e.Err.Error() }
func (e *DeviceError) Unwrap() error { return e.Err }

// IdleAfter turns --idle-after into engine.Options.IdleAfter: 0 (never)
// is the engine's -1; a negative duration is an *InputError.
func IdleAfter(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, inputErr("--idle-after %v: want a duration of 0 (never) or more, such as 10m", d)
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// Open resolves s into engine options: which roots, which agents, which
// device source. The options' Inventory must be closed.
func Open(s Settings) (engine.Options, error) {
	opts := engine.Options{}
	opts.Node, _ = os.Hostname()
	if s.Live {
		idle, err := IdleAfter(s.IdleAfter)
		if err != nil {
			return opts, err
		}
		opts.IdleAfter = idle
	}
	var pc ConfigPlugins
	path, found := s.Config, false
	if path == "" && len(s.ScratchRoots) == 0 {
		p, err := agentconfig.Find()
		if err != nil {
			return opts, inputErr("%v\npoint fgtop at it with --config FILE, or at the kernels with --scratch-root DIR; or try `fgtop demo`", err)
		}
		path, found = p, true
	}
	if path != "" {
		v, err := engine.LoadConfigView(path)
		if err != nil {
			return opts, &ConfigError{Path: path, Found: found, Err: err}
		}
		v.Apply(&opts)
		opts.Roots = v.Roots
		pc = ConfigPluginsOfView(v)
	}
	if len(s.ScratchRoots) > 0 {
		roots, err := ParseRoots(s.ScratchRoots)
		if err != nil {
			return opts, err
		}
		if path != "" {
			OwnBareRoots(s.ScratchRoots, roots, opts.Roots, opts.Agents)
		}
		opts.Roots = roots
		opts.RootsOverridden = true
		if path == "" {
			opts.Agents = nil
		} else if err := CheckRootAgents(s.ScratchRoots, roots, opts.Agents, path); err != nil {
			return opts, err
		}
	}
	if s.OneShot {
		if err := RefuseBlind(opts.Roots, opts.RootsOverridden); err != nil {
			return opts, err
		}
	}
	WarnRoots(s.Warn, &opts)
	src, err := OpenInventory(s, pc, RootPaths(opts.Roots))
	if err != nil {
		return opts, err
	}
	opts.Inventory = src
	return opts, nil
}

// ServedOptions say which node a long-running command serves.
type ServedOptions struct {
	// Demo serves the embedded demo node of Seed, whose kernels are
	// marked idle after demo.DefaultIdleAfter unless IdleAfterGiven
	// (then Sources.IdleAfter); otherwise the node of Sources.
	Demo           bool
	Seed           int64
	IdleAfterGiven bool
	Sources        Settings
	// Name, when not empty, names the node.
	Name string
}

// Served is the node a long-running command (exporter, serve, snapshot)
// puts an engine on: the embedded demo node, or this node's own sources.
type Served struct {
	Options engine.Options
	// Demo is the running demo node; nil for a real node.
	Demo *demo.Node
}

// Close stops the demo node, or closes the device source (CloseSources).
func (n *Served) Close(warn func(line string)) error {
	if n.Demo != nil {
		return n.Demo.Close()
	}
	CloseSources(n.Options, warn)
	return nil
}

// CloseSources closes opts' device source; its error is only said, as a
// line on warn (nil: nowhere), as the command's own result matters more.
func CloseSources(opts engine.Options, warn func(line string)) {
	if opts.Inventory == nil {
		return
	}
	if err := opts.Inventory.Close(); err != nil && warn != nil {
		warn("close device source: " + err.Error())
	}
}

// OpenServed starts the demo node or opens the node's sources (Open).
// The caller closes the demo node, or the options' Inventory.
func OpenServed(ctx context.Context, o ServedOptions) (*Served, error) {
	n := &Served{}
	if o.Demo {
		idle := demo.DefaultIdleAfter
		if o.IdleAfterGiven {
			var err error
			if idle, err = IdleAfter(o.Sources.IdleAfter); err != nil {
				return nil, err
			}
		}
		node, err := demo.Start(ctx, demo.Options{Seed: o.Seed, Speed: 1})
		if err != nil {
			// As it is: the command prints demo.Start's own words.
			return nil, err
		}
		n.Demo, n.Options = node, node.EngineOptions()
		n.Options.IdleAfter = idle
	} else {
		opts, err := Open(o.Sources)
		if err != nil {
			return nil, err
		}
		n.Options = opts
	}
	if o.Name != "" {
		n.Options.Node = o.Name
	}
	return n, nil
}

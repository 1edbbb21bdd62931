package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
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
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "agent.toml (default: Backend.AI's usual places)")
	fl.StringArrayVar(&f.scratchRoot, "scratch-root", nil, "scratch root to watch, as DIR or AGENT=DIR (repeatable; overrides the config)")
	fl.StringVar(&f.devices, "devices", "auto", "device source: auto, nvml, or a mock-accelerator.toml path")
	fl.StringVar(&f.mockEtcd, "mock-etcd", "", "the mock plugin's etcd settings as JSON (allocation_mode, unit_mem, ...)")
}

// options resolves the flags into engine options: which roots, which
// agents, which device source. The returned source must be closed.
func (f *sourceFlags) options() (engine.Options, error) {
	opts := engine.Options{}
	opts.Node, _ = os.Hostname()
	path := f.config
	if path == "" && len(f.scratchRoot) == 0 {
		p, err := agentconfig.Find()
		if err != nil {
			return opts, usageErr("%v\npoint fgtop at it with --config FILE, or at the kernels with --scratch-root DIR; or try `fgtop demo`", err)
		}
		path = p
	}
	if path != "" {
		v, err := engine.LoadConfigView(path)
		if err != nil {
			return opts, usageErr("%v", err)
		}
		v.Apply(&opts)
		opts.Roots = v.Roots
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
		}
	}
	warnRoots(os.Stderr, &opts)
	src, err := inventory.Open(f.devices, inventory.OpenOptions{MockEtcdPath: f.mockEtcd})
	if err != nil {
		return opts, usageErr("--devices %s: %v", f.devices, err)
	}
	opts.Inventory = src
	return opts, nil
}

// warnRoots says on w which scratch roots do not exist or are not
// directories: a mistyped --scratch-root would otherwise show an empty
// node, with the reason only in the JSON's issues.
func warnRoots(w io.Writer, opts *engine.Options) {
	for _, r := range opts.Roots {
		fi, err := os.Stat(r.Path)
		var msg string
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			msg = fmt.Sprintf("scratch root %s (agent %s) does not exist", r.Path, r.Agent)
		case err != nil:
			msg = fmt.Sprintf("scratch root %s (agent %s): %v", r.Path, r.Agent, err)
		case !fi.IsDir():
			msg = fmt.Sprintf("scratch root %s (agent %s) is not a directory", r.Path, r.Agent)
		default:
			continue
		}
		// The engine reports it too (an issue, in the console's header),
		// and follows the root should it appear.
		fmt.Fprintf(w, "fgtop: warning: %s\n", msg)
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

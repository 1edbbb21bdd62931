package nodeopen

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// PluginSettings are the flags choosing and configuring the CUDA plugin
// NVML's GPUs are registered as (engine/plugin).
type PluginSettings struct {
	// CUDAPlugin is --cuda-plugin: open, fractional or empty (decided).
	CUDAPlugin string
	// Config is --plugin-config: a JSON or TOML file of the plugin's
	// settings, read instead of etcd.
	Config string
	// FGPUCapacity is --fgpu-capacity: cuda.shares per GPU.
	FGPUCapacity string
}

// Plugin is PluginSettings parsed (ParsePlugin).
type Plugin struct {
	Kind string
	// File is Config's settings; FilePath, the file.
	File       *plugin.Settings
	FilePath   string
	Capacities plugin.Capacities
}

// EtcdTimeout bounds one read of the plugins' settings from etcd;
// StartWait, how long a command waits for etcd's first answer before it
// shows the node.
const (
	EtcdTimeout = 1500 * time.Millisecond
	StartWait   = EtcdTimeout + 500*time.Millisecond
)

// nvmlDevices says devices (--devices) reads NVML's GPUs, the only ones
// the CUDA plugin registers; a path is a mock-accelerator.toml.
func nvmlDevices(devices string) bool {
	switch devices {
	case "", "auto", "nvml":
		return true
	}
	return false
}

// ParsePlugin parses p whatever the device source (bad input is an
// error even where no GPU is read), and refuses the plugin flags where
// devices reads no NVML GPUs. Its errors are *InputError.
func ParsePlugin(p PluginSettings, devices string) (Plugin, error) {
	var out Plugin
	kind, err := plugin.ParseKind(p.CUDAPlugin)
	if err != nil {
		return out, inputErr("--cuda-plugin %v", err)
	}
	out.Kind = kind
	if p.FGPUCapacity != "" {
		c, err := plugin.ParseCapacities(p.FGPUCapacity)
		if err != nil {
			return out, inputErr("--fgpu-capacity %v", err)
		}
		out.Capacities = c
	}
	if p.Config != "" {
		b, err := safefile.ReadFile(p.Config, plugin.MaxSettingsBytes)
		if errors.Is(err, fs.ErrNotExist) {
			// As --devices and --mock-etcd say it, not as open(2) does.
			return out, inputErr("--plugin-config %s: no such file (looked for %s)", p.Config, absPath(p.Config))
		} else if err != nil {
			return out, inputErr("--plugin-config: %v", err)
		}
		st, err := plugin.ParseFile(p.Config, b)
		if err != nil {
			return out, inputErr("--plugin-config: %v", err)
		}
		out.File, out.FilePath = st, p.Config
	}
	if nvmlDevices(devices) {
		return out, nil
	}
	for name, v := range map[string]string{"--cuda-plugin": p.CUDAPlugin, "--plugin-config": p.Config, "--fgpu-capacity": p.FGPUCapacity} {
		if v != "" {
			return out, inputErr("%s applies to NVML's GPUs (--devices auto or nvml), not to --devices %s: the mock plugin's settings are --mock-etcd", name, devices)
		}
	}
	return out, nil
}

// ConfigPlugins is what an agent.toml says about the plugins: where
// their settings are in etcd, which load, and the agents that read them.
type ConfigPlugins struct {
	Etcd     *agentconfig.Etcd
	Allow    []string
	AllowSet bool
	Block    []string
	Agents   []model.AgentID
}

// ConfigPluginsOfView is what v says about the plugins.
func ConfigPluginsOfView(v *engine.ConfigView) ConfigPlugins {
	e := v.Etcd
	return ConfigPlugins{Etcd: &e, Allow: v.AllowComputePlugins, AllowSet: v.AllowSet, Block: v.BlockComputePlugins, Agents: v.EtcdAgents}
}

// ConfigPluginsOf is what c says about the plugins (its agents:
// Config.EtcdAgentIDs).
func ConfigPluginsOf(c *agentconfig.Config) ConfigPlugins {
	e := c.Etcd
	return ConfigPlugins{Etcd: &e, Allow: c.AllowComputePlugins, AllowSet: c.AllowComputePlugins != nil, Block: c.BlockComputePlugins,
		Agents: c.EtcdAgentIDs()}
}

// etcdOptions are the plugins' etcd of pc, read as its agents read it.
func (pc ConfigPlugins) etcdOptions() plugin.EtcdOptions {
	return plugin.EtcdOptions{Endpoints: pc.Etcd.Addrs, Namespace: pc.Etcd.Namespace, User: pc.Etcd.User, Password: pc.Etcd.Password,
		Agents: pc.Agents, Timeout: EtcdTimeout}
}

// hasEtcd says pc names an etcd to read.
func (pc ConfigPlugins) hasEtcd() bool { return pc.Etcd != nil && len(pc.Etcd.Addrs) > 0 }

// WrapPlugin registers an NVML source's GPUs as the node's CUDA plugin
// does (p: the flags, pc: the config, roots: the scratch roots, whose
// kernels are the last evidence of which plugin runs), and starts it.
// Mock and demo sources are returned as they are.
func WrapPlugin(inner inventory.Source, p Plugin, pc ConfigPlugins, roots []string) inventory.Source {
	if !inventory.IsNVML(inner) {
		// A mock or demo node is the mock plugin's; a node without NVML
		// registers no GPU, and its etcd is not worth a wait.
		return inner
	}
	opts := plugin.Options{Inputs: plugin.Inputs{Flag: p.Kind, Allow: pc.Allow, AllowSet: pc.AllowSet, Block: pc.Block}, Capacities: p.Capacities}
	switch {
	case p.File != nil:
		opts.File, opts.FilePath = p.File, p.FilePath
	case pc.hasEtcd():
		opts.Etcd = pc.etcdOptions()
	case pc.Etcd != nil && pc.Etcd.AddrErr != nil:
		opts.EtcdUnread = pc.Etcd.AddrErr.Error()
	}
	if p.Kind == "" {
		// The kernels' own lines are the last rule; read them only when
		// no flag decides, and again now and then while they decide.
		opts.Inputs.Evidence = plugin.ScanEvidence(roots)
		opts.EvidenceRoots = roots
	}
	src := plugin.NewSource(inner, opts)
	src.Start(StartWait)
	return src
}

// absPath is path made absolute for a message, or path where it cannot be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

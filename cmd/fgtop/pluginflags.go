package main

import (
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/pflag"
)

// pluginFlags choose and configure the CUDA plugin NVML's GPUs are
// registered as (engine/plugin).
type pluginFlags struct {
	cudaPlugin   string
	pluginConfig string
	fgpuCapacity string

	// Parsed by checkPluginFlags, whatever the device source: bad input
	// is an error even where no GPU is read.
	kind       string
	file       *plugin.Settings
	capacities plugin.Capacities
}

// fgpuCapacityHelp says the fractional capacity rule is assumed.
const fgpuCapacityHelp = "cuda.shares per GPU: N for all, or DEVICE=N,... (DEVICE: GPU-<uuid>, bare UUID or index). " +
	"Without it fgtop assumes the open-source mock plugin's rule, min(memory/unit_mem, SMs/unit_proc) rounded down to 0.01: " +
	"the fractional plugin is closed source"

func (f *pluginFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.cudaPlugin, "cuda-plugin", "", "the CUDA plugin the agents run: open (cuda_open: ids 0,1,..., cuda.device) or fractional (fGPU: GPU-<uuid>, cuda.shares); default: decided from agent.toml, the plugin settings and the kernels")
	fl.StringVar(&f.pluginConfig, "plugin-config", "", "the CUDA plugin settings as JSON or TOML, {\"cuda\": {\"allocation_mode\": ..., \"unit_mem\": ..., \"device_mask\": ...}}, instead of reading them from etcd")
	fl.StringVar(&f.fgpuCapacity, "fgpu-capacity", "", fgpuCapacityHelp)
}

// pluginContext is what the agent.toml says about the plugins.
type pluginContext struct {
	etcd     *agentconfig.Etcd
	allow    []string
	allowSet bool
	block    []string
	agents   []model.AgentID
	roots    []string
}

func pluginContextOfView(v *engine.ConfigView) pluginContext {
	e := v.Etcd
	return pluginContext{etcd: &e, allow: v.AllowComputePlugins, allowSet: v.AllowSet, block: v.BlockComputePlugins, agents: v.EtcdAgents}
}

func pluginContextOfConfig(c *agentconfig.Config) pluginContext {
	e := c.Etcd
	pc := pluginContext{etcd: &e, allow: c.AllowComputePlugins, allowSet: c.AllowComputePlugins != nil, block: c.BlockComputePlugins}
	seen := map[model.AgentID]bool{}
	for _, a := range c.Agents {
		id := a.ID
		if !a.IDSet {
			id = a.InheritedID
		}
		if id != "" && !seen[id] {
			seen[id] = true
			pc.agents = append(pc.agents, id)
		}
	}
	return pc
}

// pluginStartWait bounds how long a command waits for etcd's first answer
// before it shows the node: the read itself gives up after etcdTimeout.
const (
	etcdTimeout     = 1500 * time.Millisecond
	pluginStartWait = etcdTimeout + 500*time.Millisecond
)

// checkPluginFlags refuses the plugin flags where no NVML GPUs are read.
func (f *sourceFlags) checkPluginFlags() error {
	p := &f.plugin
	kind, err := plugin.ParseKind(p.cudaPlugin)
	if err != nil {
		return usageErr("--cuda-plugin %v", err)
	}
	p.kind = kind
	if p.fgpuCapacity != "" {
		c, err := plugin.ParseCapacities(p.fgpuCapacity)
		if err != nil {
			return usageErr("--fgpu-capacity %v", err)
		}
		p.capacities = c
	}
	if p.pluginConfig != "" {
		b, err := safefile.ReadFile(p.pluginConfig, plugin.MaxSettingsBytes)
		if err != nil {
			return usageErr("--plugin-config: %v", err)
		}
		st, err := plugin.ParseFile(p.pluginConfig, b)
		if err != nil {
			return usageErr("--plugin-config: %v", err)
		}
		p.file = st
	}
	switch f.devices {
	case "", "auto", "nvml":
		return nil
	}
	for name, v := range map[string]string{"--cuda-plugin": p.cudaPlugin, "--plugin-config": p.pluginConfig, "--fgpu-capacity": p.fgpuCapacity} {
		if v != "" {
			return usageErr("%s applies to NVML's GPUs (--devices auto or nvml), not to --devices %s: the mock plugin's settings are --mock-etcd", name, f.devices)
		}
	}
	return nil
}

// wrapPlugin registers an NVML source's GPUs as the node's CUDA plugin
// does. Mock and demo sources are returned as they are.
func (f *sourceFlags) wrapPlugin(inner inventory.Source, pc pluginContext, roots []string) (inventory.Source, error) {
	// checkPluginFlags ran in openInventory.
	if !inventory.IsNVML(inner) {
		// A mock or demo node is the mock plugin's; a node without NVML
		// registers no GPU, and its etcd is not worth a wait.
		return inner, nil
	}
	p := &f.plugin
	kind := p.kind
	opts := plugin.Options{Inputs: plugin.Inputs{Flag: kind, Allow: pc.allow, AllowSet: pc.allowSet, Block: pc.block}, Capacities: p.capacities}
	switch {
	case p.file != nil:
		opts.File, opts.FilePath = p.file, p.pluginConfig
	case pc.etcd != nil && len(pc.etcd.Addrs) > 0:
		opts.Etcd = plugin.EtcdOptions{Endpoints: pc.etcd.Addrs, Namespace: pc.etcd.Namespace, User: pc.etcd.User, Password: pc.etcd.Password,
			Agents: pc.agents, Timeout: etcdTimeout}
	}
	if kind == "" {
		// The kernels' own lines are the last rule; read them only when
		// no flag decides, and again now and then while they decide.
		opts.Inputs.Evidence = plugin.ScanEvidence(roots)
		opts.EvidenceRoots = roots
	}
	src := plugin.NewSource(inner, opts)
	src.Start(pluginStartWait)
	return src, nil
}

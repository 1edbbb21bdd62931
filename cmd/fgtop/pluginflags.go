package main

import (
	"github.com/fgtop/fgtop/engine/nodeopen"
	"github.com/spf13/pflag"
)

// pluginFlags choose and configure the CUDA plugin NVML's GPUs are
// registered as (engine/plugin).
type pluginFlags struct {
	cudaPlugin   string
	pluginConfig string
	fgpuCapacity string

	// parsed is set by checkPluginFlags, whatever the device source: bad
	// input is an error even where no GPU is read.
	parsed nodeopen.Plugin
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

// settings are the plugin flags' values.
func (f *pluginFlags) settings() nodeopen.PluginSettings {
	return nodeopen.PluginSettings{CUDAPlugin: f.cudaPlugin, Config: f.pluginConfig, FGPUCapacity: f.fgpuCapacity}
}

// checkPluginFlags parses the plugin flags and refuses them where no
// NVML GPUs are read (nodeopen.ParsePlugin).
func (f *sourceFlags) checkPluginFlags() error {
	p, err := nodeopen.ParsePlugin(f.plugin.settings(), f.devices)
	if err != nil {
		return f.sourceErr(err)
	}
	f.plugin.parsed = p
	return nil
}

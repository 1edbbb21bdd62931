package model

import "strings"

// CUDA plugin kinds fgtop mirrors (PluginInfo.Kind).
const (
	// PluginCUDAOpen is Backend.AI's open-source cuda_open plugin: GPUs
	// "0", "1", … in slot cuda.device, capacity 1.
	PluginCUDAOpen = "open"
	// PluginCUDAFractional is the fGPU plugin: GPUs "GPU-<uuid>" in slot
	// cuda.shares.
	PluginCUDAFractional = "fractional"
)

// PluginInfo says which CUDA plugin the node's agents are taken to run, by
// which rule, and where its settings come from.
type PluginInfo struct {
	// Kind is PluginCUDAOpen or PluginCUDAFractional.
	Kind string `json:"kind"`
	// Source is the rule that decided Kind: "flag" (--cuda-plugin),
	// "agent-config" ([agent] allow/block-compute-plugins),
	// "plugin-settings" (allocation_mode), "scratch" (the kernels'
	// resource.txt) or "default" (nothing said).
	Source string `json:"source"`
	// Detail says what the rule saw, in an operator's words.
	Detail string `json:"detail,omitempty"`
	// Settings says where the plugin settings come from: "etcd ADDR",
	// "file PATH" or "none".
	Settings string `json:"settings"`
	// SettingsOK is false while the settings cannot be read now (etcd
	// unreachable); the last known ones are kept.
	SettingsOK bool `json:"settings_ok"`
	// SettingsDiffer: the agents' settings (node scopes in etcd) differ in
	// what they register (fractional units, the quantum, the mode), so
	// each agent's devices are its own and the ones shown are the first
	// agent's: amounts given per agent cannot be judged against them.
	SettingsDiffer bool `json:"settings_differ,omitempty"`
}

// CapacityWhy is why the fractional capacities of a node with plugin info p
// (nil: none) can be unknown, as far as p tells: settings read but unusable
// (a bad unit_mem, a GPU whose size NVML does not give) are not "not
// read", and the plugin-settings warning says which.
func (p *PluginInfo) CapacityWhy() string {
	switch {
	case p != nil && strings.HasPrefix(p.Settings, "etcd ") && !p.SettingsOK:
		return "the CUDA plugin settings were never read from " + p.Settings
	case p != nil && p.SettingsOK && p.Settings != "" && p.Settings != "none":
		return "the CUDA plugin settings from " + p.Settings + " do not give it (see the plugin-settings warning)"
	}
	return "the CUDA plugin settings were not read"
}

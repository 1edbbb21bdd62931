package model

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
}

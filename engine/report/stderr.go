package report

import (
	"sort"
	"strings"

	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// Problems are what a one-shot report says beside its document (fgtop
// writes them to stderr): first the device flags that match no device
// (model.IssueFlagUnmatched), then the kernels' files: "skipped PROBLEM"
// for a file that is not counted (broken, or stale: its last good reading
// is not current), the problem alone for one counted with a warning.
// Kernels come in the snapshot's order.
func Problems(s *model.Snapshot) []string {
	var out []string
	// A flag the operator typed that reaches no device comes first: its
	// figure is in no bar, and the JSON's issues are easy to miss.
	for _, i := range s.Issues {
		if i.Code == model.IssueFlagUnmatched {
			out = append(out, i.String())
		}
	}
	for _, k := range s.Kernels() {
		switch {
		case k.Problem == nil:
		case k.State == model.KernelBroken || k.State == model.KernelStale:
			out = append(out, "skipped "+k.Problem.String())
		case k.State == model.KernelOK:
			out = append(out, k.Problem.String())
		}
	}
	return out
}

// RatioLeftOut names the GPUs that kernels hold shares on but that the
// ratio alloc map (FormAllocRatio) leaves out, their capacity being
// unknown, and what to do: a map without them reads as if nothing were
// held there. It is "" when the map leaves nothing out.
func RatioLeftOut(s *model.Snapshot) string {
	var ids []string
	for k, u := range s.Usage {
		if k.Name == "cuda" && len(u.Held) > 0 && s.AllocRatioUnknown(k.ID) {
			ids = append(ids, string(k.ID))
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	if partition.Guessed(s.Source, model.SlotCUDAShares) {
		// Not the CUDA plugin: its flags would not help.
		return "--alloc-map leaves out " + strings.Join(ids, ", ") + ", which kernels hold: the capacity is unknown (the mock plugin's settings were not read from the agent's etcd, so its mode is a guess); " +
			partition.MockSettingsHint + ", or use --alloc-map=absolute"
	}
	return "--alloc-map leaves out " + strings.Join(ids, ", ") + ", which kernels hold: the capacity is unknown (" + CapacityWhy(s) +
		"); give it with --fgpu-capacity, the settings with --plugin-config, or use --alloc-map=absolute"
}

// CapacityWhy is why a snapshot's fractional capacities can be unknown:
// model.PluginInfo.CapacityWhy of its plugin.
func CapacityWhy(s *model.Snapshot) string { return s.Plugin.CapacityWhy() }

package console

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestPluginShown: the header names the CUDA plugin and the rule that
// chose it and says when etcd cannot be read; a GPU whose capacity is
// unknown shows "held/?" with no bar and no made-up capacity; its detail
// says how it is registered.
func TestPluginShown(t *testing.T) {
	snap := fake.Node(fake.Options{})
	snap.Plugin = &model.PluginInfo{Kind: model.PluginCUDAFractional, Source: "plugin-settings", Detail: "allocation_mode = fractional",
		Settings: "etcd 127.0.0.1:2379", SettingsOK: false}
	devs := append([]model.Device(nil), snap.Devices...)
	devs[0].Capacity, devs[0].CapacityUnknown = model.Zero, true
	snap.Devices = devs
	snap.Issues = append([]model.Issue{{Severity: model.SevError, Code: model.IssuePluginSettings,
		Message: "cannot read the CUDA plugin settings from etcd at 127.0.0.1:2379 (no answer): the last settings read are kept"}}, snap.Issues...)
	a := testApp(t, 140, 40, snap, Options{})
	out := screen(a)
	for _, want := range []string{"fGPU (plugin-settings)", "etcd unreachable", "cannot read the CUDA plugin settings from etcd at 127.0.0.1:2379", "capacity unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "/?") {
		t.Errorf("no held/? figure:\n%s", out)
	}
	press(a, enter)
	out = screen(a)
	if !strings.Contains(out, "registered as") || !strings.Contains(out, "plugin-settings") {
		t.Errorf("device detail lacks the plugin:\n%s", out)
	}
	// Its gpu_alloc_map ratio cannot be told: no amount over a capacity of 1.
	if u := snap.Usage[devs[0].Key()]; u == nil || len(u.Held) == 0 {
		t.Fatal("the fake node's first GPU holds nothing: the ratio line is not shown")
	}
	if !strings.Contains(out, "etcd unreachable, no settings ever read: capacity unknown") {
		t.Errorf("the detail does not say why the capacity is unknown:\n%s", out)
	}
	if !strings.Contains(out, "? (capacity unknown)") {
		t.Errorf("the detail's alloc-map ratio is not unknown:\n%s", out)
	}
}

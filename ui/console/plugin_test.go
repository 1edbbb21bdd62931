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
		Message: "etcd at 127.0.0.1:2379: cannot read the CUDA plugin settings (no answer): the last settings read are kept"}}, snap.Issues...)
	a := testApp(t, 140, 40, snap, Options{})
	out := screen(a)
	for _, want := range []string{"fGPU (plugin-settings)", "etcd unreachable", "etcd at 127.0.0.1:2379: cannot read the CUDA plugin settings", "capacity unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "/?") {
		t.Errorf("no held/? figure:\n%s", out)
	}
	typeKeys(a, "g") // the first GPU, whose capacity is unknown (the cursor starts on the fullest)
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

// TestPluginShownNarrow: on an 80-column terminal with etcd unreachable the
// header still says which plugin the GPUs are registered as and by which
// rule, and names etcd and its address, in its first two lines.
func TestPluginShownNarrow(t *testing.T) {
	snap := fake.Node(fake.Options{})
	snap.Plugin = &model.PluginInfo{Kind: model.PluginCUDAFractional, Source: "scratch", Detail: "1 kernel(s) hold cuda.shares",
		Settings: "etcd 192.168.100.200:2379", SettingsOK: false}
	snap.Issues = append([]model.Issue{{Severity: model.SevError, Code: model.IssuePluginSettings,
		Message: "etcd at 192.168.100.200:2379: cannot read the CUDA plugin settings (no answer within 1.5s): none were ever read, so fractional capacities are unknown"}}, snap.Issues...)
	for _, w := range []int{80, 100, 200} {
		a := testApp(t, w, 24, snap, Options{})
		lines := strings.SplitN(screen(a), "\n", 3)
		if len(lines) < 3 {
			t.Fatalf("%d columns: screen too short", w)
		}
		head := lines[0] + "\n" + lines[1]
		for _, want := range []string{"fGPU (scratch)", "etcd at 192.168.100.200:2379"} {
			if !strings.Contains(head, want) {
				t.Errorf("%d columns: the header lacks %q:\n%s", w, want, head)
			}
		}
	}
}

// TestEtcdErrorShortAtEighty: at 80 columns the header's second line cut
// the plugin settings' etcd error at "cannot read the CUDA plugin~",
// before it said whether etcd was unreachable or refused its user.
func TestEtcdErrorShortAtEighty(t *testing.T) {
	for _, c := range []struct{ why, want string }{
		{"no answer within 1.5s", "etcd at 192.168.100.200:2379 unreachable"},
		{"etcd refused the user and password of agent.toml's [etcd] (etcdserver: authentication failed, invalid user ID or password)",
			"etcd at 192.168.100.200:2379 refused [etcd] user/password"},
		{"etcd asks for a user and password, and agent.toml's [etcd] sets no user (etcdserver: user name is empty)",
			"etcd at 192.168.100.200:2379 wants a user: [etcd] sets none"},
	} {
		snap := fake.Node(fake.Options{})
		snap.Plugin = &model.PluginInfo{Kind: model.PluginCUDAFractional, Source: "scratch", Settings: "etcd 192.168.100.200:2379"}
		snap.Issues = append([]model.Issue{{Severity: model.SevError, Code: model.IssuePluginSettings,
			Message: "etcd at 192.168.100.200:2379: cannot read the CUDA plugin settings (" + c.why + "): none were ever read, so fractional capacities are unknown"}}, snap.Issues...)
		a := testApp(t, 80, 24, snap, Options{})
		lines := strings.SplitN(screen(a), "\n", 3)
		if len(lines) < 3 || !strings.Contains(lines[1], c.want) {
			t.Errorf("%s: the header's second line lacks %q:\n%s", c.why, c.want, strings.Join(lines[:min(2, len(lines))], "\n"))
		}
	}
}

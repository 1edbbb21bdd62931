package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestProblems(t *testing.T) {
	warn := &model.Issue{Severity: model.SevWarning, Code: model.IssueParse, File: "/s/k2/config/resource.txt", Line: 4, Message: "unknown line kept"}
	bad := &model.Issue{Severity: model.SevError, Code: model.IssueParse, File: "/s/k3/config/resource.txt", Message: "no SLOTS"}
	torn := &model.Issue{Severity: model.SevError, Code: model.IssueParse, File: "/s/k4/config/resource.txt", Message: "torn"}
	s := &model.Snapshot{}
	s.SetKernels([]*model.Kernel{
		{ID: "k1", State: model.KernelOK},
		{ID: "k2", State: model.KernelOK, Problem: warn},
		{ID: "k3", State: model.KernelBroken, Problem: bad},
		{ID: "k4", State: model.KernelStale, Problem: torn},
	})
	want := []string{
		"warning parse-error: /s/k2/config/resource.txt:4: unknown line kept",
		"skipped error parse-error: /s/k3/config/resource.txt: no SLOTS",
		"skipped error parse-error: /s/k4/config/resource.txt: torn",
	}
	if got := Problems(s); !slices.Equal(got, want) {
		t.Errorf("Problems =\n%q\nwant\n%q", got, want)
	}
	if got := Problems(&model.Snapshot{}); got != nil {
		t.Errorf("no kernels: %q", got)
	}
	// A device flag that reaches no device is said first; other node
	// issues stay in the document only.
	s.Issues = []model.Issue{
		{Severity: model.SevWarning, Code: model.IssuePluginSettings, Message: "cuda.shares capacity unknown"},
		{Severity: model.SevWarning, Code: model.IssueFlagUnmatched, Message: "--fgpu-capacity names 9"},
	}
	if got := Problems(s); len(got) != 4 || got[0] != "warning flag-unmatched: --fgpu-capacity names 9" || !slices.Equal(got[1:], want) {
		t.Errorf("with a flag that matches nothing: %q", got)
	}
}

func TestRatioLeftOut(t *testing.T) {
	gpu := func(id model.DeviceID, unknown bool) model.Device {
		d := model.Device{ID: id, Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, CapacityUnknown: unknown}
		if !unknown {
			d.Capacity = model.One
		}
		return d
	}
	held := func(ids ...model.DeviceID) map[model.DeviceKey]*model.DeviceUsage {
		u := map[model.DeviceKey]*model.DeviceUsage{}
		for _, id := range ids {
			k := model.DeviceKey{Name: "cuda", ID: id}
			u[k] = &model.DeviceUsage{Key: k, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}}
		}
		return u
	}
	devs := []model.Device{gpu("g2", true), gpu("g1", true), gpu("g3", false), gpu("g4", true)}
	tests := []struct {
		name   string
		usage  map[model.DeviceKey]*model.DeviceUsage
		plugin *model.PluginInfo
		want   string // "" or what the line must contain
	}{
		{name: "nothing held", usage: held()},
		{name: "held only where the capacity is known", usage: held("g3")},
		{name: "held where unknown, sorted, not the unheld one", usage: held("g2", "g1", "g3"),
			want: "--alloc-map leaves out g1, g2, which kernels hold: the capacity is unknown (the CUDA plugin settings were not read); give it with --fgpu-capacity"},
		{name: "etcd never read names etcd", usage: held("g1"), plugin: &model.PluginInfo{Settings: "etcd 127.0.0.1:2379"},
			want: "(the CUDA plugin settings were never read from etcd 127.0.0.1:2379)"},
		{name: "etcd read now is not blamed", usage: held("g1"), plugin: &model.PluginInfo{Settings: "etcd 127.0.0.1:2379", SettingsOK: true},
			want: "(the CUDA plugin settings from etcd 127.0.0.1:2379 do not give it (see the plugin-settings warning))"},
		{name: "no settings source", usage: held("g1"), plugin: &model.PluginInfo{Settings: "none"},
			want: "(the CUDA plugin settings were not read)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &model.Snapshot{Devices: devs, Usage: tt.usage, Plugin: tt.plugin}
			got := RatioLeftOut(s)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("RatioLeftOut = %q, want %q", got, tt.want)
			}
		})
	}
}

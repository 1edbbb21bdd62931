package plugin

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// TestSettingsDifferByRegistration: SettingsDiffer says whether the
// agents' settings register the GPUs otherwise than the ones shown, not
// whether their keys are spelled alike.
func TestSettingsDifferByRegistration(t *testing.T) {
	const u1, u2 = "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000"
	frac := func(kv map[string]string) map[string]string {
		kv["allocation_mode"] = "fractional"
		return kv
	}
	for _, tc := range []struct {
		name   string
		a, b   map[string]string
		flag   string
		differ bool
	}{
		{"alike", map[string]string{}, map[string]string{}, "", false},
		// The mock and fgtop both take an unset allocation_mode as
		// discrete here (no evidence, no flag): cuda_open on both.
		{"unset mode against discrete", map[string]string{}, map[string]string{"allocation_mode": "discrete"}, "", false},
		{"mode unset against fractional", map[string]string{}, map[string]string{"allocation_mode": "fractional"}, "", true},
		{"modes differ under --cuda-plugin", map[string]string{}, map[string]string{"allocation_mode": "fractional"}, model.PluginCUDAOpen, false},
		{"masks alone", map[string]string{"device_mask": u1}, map[string]string{"device_mask": u2}, "", false},
		// cuda_open reads no unit, but the masks are then not merged: the
		// GPUs shown are the first agent's, not the second's.
		{"masks and a unit under cuda_open", map[string]string{"device_mask": u1}, map[string]string{"device_mask": u2, "unit_proc": "4"}, "", true},
		{"a unit alone under cuda_open", map[string]string{}, map[string]string{"unit_proc": "4"}, "", false},
		{"unit_mem spelled otherwise", frac(map[string]string{"unit_mem": "20g"}), frac(map[string]string{"unit_mem": "20480m"}), "", false},
		{"unit_mem differs", frac(map[string]string{"unit_mem": "20g"}), frac(map[string]string{"unit_mem": "80g"}), "", true},
		{"quantum spelled otherwise", frac(map[string]string{"quantum_size": "0.1"}), frac(map[string]string{"quantum_size": "0.10"}), "", false},
		{"quantum differs", frac(map[string]string{}), frac(map[string]string{"quantum_size": "0.25"}), "", true},
		{"quantum unreadable on one", frac(map[string]string{}), frac(map[string]string{"quantum_size": "banana"}), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
				SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
				Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
			opts := Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a", "i-b"}}}
			opts.Inputs.Flag = tc.flag
			src := NewSource(inner, opts)
			defer src.Close()
			src.take(EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": Parse(tc.a), "i-b": Parse(tc.b)}})
			inv, err := src.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if inv.Plugin == nil || inv.Plugin.SettingsDiffer != tc.differ {
				t.Errorf("plugin %+v: want SettingsDiffer %v", inv.Plugin, tc.differ)
			}
		})
	}
}

// TestSettingsMovedWhileWatched: the plugins read their settings only at
// an agent's start, so a device_mask (or, for fractional GPUs, units or
// quantum) changed in etcd while fgtop watches is said: an agent started
// before then still registers the GPUs as before. A change the plugin does
// not read is not, and settings put back say nothing again.
func TestSettingsMovedWhileWatched(t *testing.T) {
	const u1 = "aaaaaaaa-0000-0000-0000-000000000000"
	frac := func(kv map[string]string) map[string]string {
		kv["allocation_mode"] = "fractional"
		return kv
	}
	for _, tc := range []struct {
		name        string
		first, then map[string]string
		want        string // "" : no issue
	}{
		{"a mask put", map[string]string{}, map[string]string{"device_mask": u1}, "while fgtop watched (device_mask)"},
		{"a unit cuda_open does not read", map[string]string{}, map[string]string{"unit_proc": "4"}, ""},
		{"fractional units", frac(map[string]string{"unit_mem": "20g"}), frac(map[string]string{"unit_mem": "80g"}), "(unit_mem, unit_proc or quantum_size)"},
		{"the same units spelled otherwise", frac(map[string]string{"unit_mem": "20g"}), frac(map[string]string{"unit_mem": "20480m"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
				SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
				Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
			src := NewSource(inner, Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a"}}})
			defer src.Close()
			said := func(kv map[string]string) string {
				t.Helper()
				src.take(EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": Parse(kv)}})
				inv, err := src.Poll(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, iss := range inv.Issues {
					if strings.Contains(iss.Message, "while fgtop watched") {
						return iss.Message
					}
				}
				return ""
			}
			if m := said(tc.first); m != "" {
				t.Fatalf("the first reading: %q", m)
			}
			m := said(tc.then)
			if (tc.want == "") != (m == "") || !strings.Contains(m, tc.want) {
				t.Fatalf("after the change: %q, want %q", m, tc.want)
			}
			if m := said(tc.first); m != "" {
				t.Errorf("settings put back: %q", m)
			}
		})
	}
}

// TestSettingsMovedKeptWhileEtcdDown: the warning that the settings changed
// while fgtop watched stays while etcd is down. The last settings read (the
// changed ones) are kept and shown, and agents started before the change
// still register the old ones: seen in the console, where the warning left
// the issues pane when etcd stopped and came back with etcd.
func TestSettingsMovedKeptWhileEtcdDown(t *testing.T) {
	inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
		SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
		Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
	src := NewSource(inner, Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a"}}})
	defer src.Close()
	said := func(r EtcdReading) (moved, down bool) {
		t.Helper()
		src.take(r)
		inv, err := src.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, iss := range inv.Issues {
			moved = moved || strings.Contains(iss.Message, "while fgtop watched")
			down = down || strings.Contains(iss.Message, "cannot read the CUDA plugin settings")
		}
		return moved, down
	}
	kv := func(mem string) EtcdReading {
		return EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": mem})}}
	}
	if moved, _ := said(kv("10g")); moved {
		t.Fatal("the first reading said the settings moved")
	}
	if moved, _ := said(kv("20g")); !moved {
		t.Fatal("a change of unit_mem was not said")
	}
	if moved, down := said(EtcdReading{Err: errors.New("connection refused")}); !down || !moved {
		t.Fatalf("etcd down after the change: etcd error said %v, change still said %v; want both", down, moved)
	}
	if moved, _ := said(kv("10g")); moved {
		t.Error("settings put back after etcd came back: the change is still said")
	}
}

// TestSettingsMovedSaysWhenFirst: the console shows an issue cut to one line
// (the footer's "new issue: " and the issues pane's "WRN plugin-settings: "
// leave about 50 columns at 80), so the change and its time lead the
// message. Seen at 80x24: the footer read "new issue: the CUDA plugin's
// unit_mem, unit_proc or quantum_si~" (neither "changed" nor when) and the
// issues pane "device_mask in etcd changed at 08:24:3~".
func TestSettingsMovedSaysWhenFirst(t *testing.T) {
	for _, tc := range []struct{ first, then map[string]string }{
		{map[string]string{}, map[string]string{"device_mask": "aaaaaaaa-0000-0000-0000-000000000000"}},
		{map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, map[string]string{"allocation_mode": "fractional", "unit_mem": "10g"}},
	} {
		inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
			SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
			Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
		src := NewSource(inner, Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a"}}})
		var msg string
		for _, kv := range []map[string]string{tc.first, tc.then} {
			src.take(EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": Parse(kv)}})
			inv, err := src.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, iss := range inv.Issues {
				if strings.Contains(iss.Message, "while fgtop watched") {
					msg = iss.Message
				}
			}
		}
		src.Close()
		lead := msg
		if len(lead) > 50 {
			lead = lead[:50]
		}
		if !regexp.MustCompile(`changed in etcd at \d\d:\d\d:\d\d`).MatchString(lead) {
			t.Errorf("the first 50 columns %q do not say what changed and when (message %q)", lead, msg)
		}
	}
}

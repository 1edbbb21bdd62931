package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

func TestFormatTelemetry(t *testing.T) {
	th := DefaultThresholds()
	full := &model.Telemetry{
		UtilGPU: model.Some(uint32(97)), MemUsed: model.Some(uint64(38 << 30)), MemTotal: model.Some(uint64(40 << 30)),
		TempC: model.Some(uint32(81)), PowerMW: model.Some(uint32(362_400)), PowerCapMW: model.Some(uint32(400_000)),
	}
	zero := &model.Telemetry{
		UtilGPU: model.Some(uint32(0)), MemUsed: model.Some(uint64(0)), MemTotal: model.Some(uint64(40 << 30)),
		TempC: model.Some(uint32(0)), PowerMW: model.Some(uint32(0)),
	}
	tests := []struct {
		name                  string
		tel                   *model.Telemetry
		util, mem, temp, powr reading
	}{
		{"no telemetry at all", nil, naReading, naReading, naReading, naReading},
		{"every reading invalid", &model.Telemetry{}, naReading, naReading, naReading, naReading},
		{"valid zeros are zeros, not N/A", zero, reading{"0%", lvlOK}, reading{"0.0/40.0G", lvlOK},
			reading{"0°C", lvlOK}, reading{"0W", lvlPlain}},
		{"thresholds", full, reading{"97%", lvlCrit}, reading{"38.0/40.0G", lvlCrit},
			reading{"81°C", lvlWarn}, reading{"362W", lvlWarn}},
		{"lost GPU", &model.Telemetry{Lost: true, UtilGPU: model.Some(uint32(5))}, reading{"LOST", lvlCrit},
			reading{"LOST", lvlCrit}, reading{"LOST", lvlCrit}, reading{"LOST", lvlCrit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := formatTelemetry(tt.tel, th, "°C")
			for _, p := range []struct {
				what      string
				got, want reading
			}{{"util", c.util, tt.util}, {"mem", c.mem, tt.mem}, {"temp", c.temp, tt.temp}, {"power", c.power, tt.powr}} {
				if p.got != p.want {
					t.Errorf("%s = %+v, want %+v", p.what, p.got, p.want)
				}
			}
		})
	}
}

func TestThresholdLevels(t *testing.T) {
	th := Threshold{Warn: 75, Crit: 90}
	tests := []struct {
		v    float64
		want level
	}{{0, lvlOK}, {74.9, lvlOK}, {75, lvlWarn}, {89, lvlWarn}, {90, lvlCrit}, {100, lvlCrit}}
	for _, tt := range tests {
		if got := th.level(tt.v); got != tt.want {
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
		got := fmtAge(tt.d)
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
		name string
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
		t.Run(tt.name, func(t *testing.T) {
			got := uniqueAbbrev(tt.ids, "…")
			if tt.name == "nvidia uuids differ in front" {
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
		if got := compressIDs(tt.in); got != tt.want {
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
		got := agentShortNames(ags)
		for i, id := range tt.ids {
			if got[id] != tt.want[i] {
				t.Errorf("%v: short(%s) = %q, want %q", tt.ids, id, got[id], tt.want[i])
			}
		}
	}
}

package buildinfo

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/fgtop/fgtop", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "GOOS", Value: "linux"},
			{Key: "GOARCH", Value: "arm64"},
			{Key: "-tags", Value: "netgo"},
			{Key: "vcs.revision", Value: "f3753c6705093f899931495afa7847f03ac4c586"},
			{Key: "vcs.time", Value: "2026-11-25T02:52:24Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		ok, nvml bool
		want     []string // lines of the text form, in order
		json     map[string]any
	}{
		{"stamped release", stamped, true, false,
			[]string{"fgtop v1.4.0 (github.com/fgtop/fgtop)",
				"commit:  f3753c6705093f899931495afa7847f03ac4c586 (2026-11-25T02:52:24Z), with uncommitted changes",
				"go:      go1.26.8 linux/arm64",
				"cgo:     off, NVML support not compiled in",
				"tags:    netgo"},
			map[string]any{"version": "v1.4.0", "vcs_revision": "f3753c6705093f899931495afa7847f03ac4c586",
				"vcs_time": "2026-11-25T02:52:24Z", "vcs_modified": true, "cgo": false, "nvml": false, "arch": "arm64", "build_tags": "netgo"}},
		{"no vcs stamp", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fgtop/fgtop", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}}, true, true,
			[]string{"fgtop (devel)", "commit:  unknown", "cgo:     on, NVML support compiled in"},
			map[string]any{"version": "(devel)", "vcs_revision": nil, "vcs_time": nil, "vcs_modified": nil, "cgo": true, "nvml": true}},
		{"no build info", nil, false, true,
			[]string{"fgtop (devel) (github.com/fgtop/fgtop)", "commit:  unknown", "go:      " + runtime.Version()},
			map[string]any{"go": runtime.Version(), "nvml": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := From(tt.bi, tt.ok, tt.nvml)
			text := b.Text()
			rest := text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("text lacks %q (in order):\n%s", w, text)
				}
				rest = rest[i+len(w):]
			}
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.json {
				if gv, ok := got[k]; !ok || gv != v {
					t.Errorf("json %s = %v (present %v), want %v\n%s", k, gv, ok, v, raw)
				}
			}
		})
	}
}

func TestJSONAndDate(t *testing.T) {
	stamp := "2026-11-25T02:52:24Z"
	short := "2026"
	tests := []struct {
		name string
		time *string
		date string
	}{
		{"stamped", &stamp, "2026-11-25"},
		{"no stamp", nil, ""},
		{"short stamp", &short, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Info{Version: "v1", Time: tt.time}
			if got := b.Date(); got != tt.date {
				t.Errorf("Date() = %q, want %q", got, tt.date)
			}
			js, err := b.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(js), "}\n") || !strings.Contains(string(js), "\n  \"version\": \"v1\"") {
				t.Errorf("JSON() = %s", js)
			}
			var back Info
			if err := json.Unmarshal(js, &back); err != nil || back.Text() != b.Text() {
				t.Errorf("JSON round trip: %v\n%s", err, js)
			}
		})
	}
}

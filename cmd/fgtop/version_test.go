package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfoFrom(t *testing.T) {
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
			b := buildInfoFrom(tt.bi, tt.ok, tt.nvml)
			text := b.text()
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

// TestVersionCommands runs the three spellings and checks they agree with
// each other and with the running binary.
func TestVersionCommands(t *testing.T) {
	code, long := runCLI(t, "--version")
	wantCode(t, code, exitOK, long, "fgtop ", "go:      "+runtime.Version())
	code, cmd := runCLI(t, "version")
	wantCode(t, code, exitOK, cmd)
	if long != cmd {
		t.Errorf("fgtop --version and fgtop version differ:\n%s\n---\n%s", long, cmd)
	}
	code, js := runCLI(t, "version", "--json")
	wantCode(t, code, exitOK, js)
	var doc buildInfo
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("version --json: %v\n%s", err, js)
	}
	if doc.Go != runtime.Version() || doc.Module == "" || doc.Version == "" {
		t.Errorf("version --json = %+v", doc)
	}
	if doc.text() != cmd {
		t.Errorf("the JSON and the text disagree:\n%s\n---\n%s", doc.text(), cmd)
	}
	code, out := runCLI(t, "version", "extra")
	wantCode(t, code, exitBadUsage, out)
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// pythonText is what must never reach an operator: Python's exception
// classes and messages, which fgtop keeps only as parity data (the "error"
// kind of simulate --json).
var pythonText = []string{"<class", "ValueError", "KeyError", "InvalidOperation", "IndexError", "DivisionByZero",
	"is not in list", "Unconvertible value", "Traceback", "decimal."}

// TestErrorsInOwnWords runs the command line with bad input: each case has
// the exit code, words the message must hold (the flag and the value it is
// about), and none of Python's exception text.
func TestErrorsInOwnWords(t *testing.T) {
	fx := testfix.Dir(t, "backendai")
	mock := filepath.Join(fx, "mock-accelerator.toml")
	etcd := filepath.Join(fx, "mock-accelerator.etcd.json")
	dir := t.TempDir()
	badJSON := writeFile(t, dir, "bad.json", "{bad")
	badTOML := writeFile(t, dir, "bad.toml", "x = [")
	badMode := writeFile(t, dir, "mode.json", `{"allocation_mode": "bogus"}`)
	// The agent.toml Backend.AI's search finds first.
	t.Setenv("BACKEND_CONFIG_FILE", badTOML)
	list := writeFile(t, dir, "devices.json", `[{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}]`)
	sim := func(requests ...string) []string {
		args := []string{"simulate", "--devices", mock, "--mock-etcd", etcd}
		for _, r := range requests {
			args = append(args, "--request", r)
		}
		return args
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		// Negative and zero amounts: Backend.AI drops them, fgtop refuses.
		{"negative shares", sim("cuda.shares=-1"), exitBadUsage, []string{`--request "cuda.shares=-1"`, "negative"}},
		{"negative memory", sim("cuda.shares=0.5,mem=-1g"), exitBadUsage, []string{`--request "cuda.shares=0.5,mem=-1g"`, "mem=-1073741824: a negative amount"}},
		// Zeros only: it runs, allocates nothing, and says so.
		{"zero shares", sim("cuda.shares=0"), exitOK, []string{`fgtop: --request "cuda.shares=0" asks for nothing`, "nothing (empty request)"}},
		{"zeros only, JSON form", sim(`{"cuda.shares": "0", "cuda.device": "0"}`), exitOK, []string{"asks for nothing"}},
		{"empty request", sim(""), exitBadUsage, []string{`--request ""`, "empty request"}},
		{"negative in JSON form", sim(`{"cuda.shares": "-0.5"}`), exitBadUsage, []string{"--request", "negative"}},
		// Amounts Backend.AI's decimals cannot carry.
		{"huge finite shares", sim("cuda.shares=1e30"), exitBadUsage, []string{`--request "cuda.shares=1e30"`, "too large", "28 significant digits"}},
		{"huge integer shares", sim("cuda.shares=99999999999999999999999999999"), exitBadUsage, []string{"--request", "too large"}},
		{"memory with an exponent", sim("mem=1e400"), exitBadUsage, []string{`--request "mem=1e400"`, "whole number of bytes"}},
		{"memory with a bad unit", sim("mem=4x"), exitBadUsage, []string{`--request "mem=4x"`, "binary unit"}},
		{"a fraction of a byte", sim("mem=0.3k"), exitBadUsage, []string{`--request "mem=0.3k"`, "0.3k is not a whole number of bytes (307.2)"}},
		// One rule with plan and the editor (model.CheckAmount).
		{"1e999 shares", sim("cuda.shares=1e999"), exitBadUsage, []string{`--request "cuda.shares=1e999"`, "too large", "28 significant digits"}},
		{"1E-30 shares", sim("cuda.shares=1E-30"), exitBadUsage, []string{`--request "cuda.shares=1E-30"`, "below 0.001"}},
		{"NaN", sim("cuda.shares=NaN"), exitBadUsage, []string{`--request "cuda.shares=NaN"`, "not a finite amount"}},
		// A slot the node does not register is a typo until shown
		// otherwise: refused, naming the node's slots.
		{"slot the node lacks", sim("foo=1"), exitBadUsage, []string{`--request "foo=1": unknown slot "foo" (the node's slots: cpu, cuda.shares, mem)`}},
		// A request that parses is judged against cpu and mem too: every
		// node has them (memory=4g listed only cuda.shares, no mem).
		{"mem spelled out", sim("cuda.shares=0.5,memory=4g"), exitBadUsage, []string{`unknown slot "memory": did you mean mem? (the node's slots: cpu, cuda.shares, mem)`}},
		{"plugin without devices", sim("rocm.device=1"), exitBadUsage, []string{`unknown slot "rocm.device"`}},
		{"typo'd slot", sim("cuda.shres=0.5"), exitBadUsage, []string{`unknown slot "cuda.shres": did you mean cuda.shares?`}},
		// The name is the mistake, not the size a count slot cannot read.
		{"typo'd bytes slot", sim("cpu=2,mme=4g"), exitBadUsage, []string{`--request "cpu=2,mme=4g"`, `unknown slot "mme": did you mean mem?`}},
		// Each error names the flag its file came from.
		{"missing mock-etcd file", []string{"simulate", "--devices", mock, "--mock-etcd", filepath.Join(dir, "nope.json"), "--request", "cuda.shares=1"},
			exitBadUsage, []string{"--mock-etcd", "nope.json"}},
		{"bad mock-etcd JSON", []string{"simulate", "--devices", mock, "--mock-etcd", badJSON, "--request", "cuda.shares=1"},
			exitBadUsage, []string{"--mock-etcd", "bad.json"}},
		{"bad mock-etcd JSON, snapshot", []string{"snapshot", "--scratch-root", dir, "--devices", mock, "--mock-etcd", badJSON},
			exitBadUsage, []string{"--mock-etcd", "bad.json"}},
		{"bad allocation_mode in mock-etcd", []string{"simulate", "--devices", mock, "--mock-etcd", badMode, "--request", "cuda.shares=1"},
			exitBadUsage, []string{"--mock-etcd " + badMode, `allocation_mode "bogus"`}},
		{"mock-etcd without a mock file", []string{"snapshot", "--scratch-root", dir, "--devices", "auto", "--mock-etcd", etcd},
			exitBadUsage, []string{"--mock-etcd " + etcd, "not --devices auto"}},
		{"mock-etcd with a device list", []string{"simulate", "--devices", list, "--mock-etcd", etcd, "--request", "cuda.shares=1"},
			exitBadUsage, []string{"--mock-etcd " + etcd, "device list"}},
		{"bad --cuda-plugin", []string{"snapshot", "--scratch-root", dir, "--cuda-plugin", "enterprise"},
			exitBadUsage, []string{"--cuda-plugin", `"enterprise"`, "open", "fractional"}},
		{"--cuda-plugin with a mock file", []string{"snapshot", "--scratch-root", dir, "--devices", mock, "--cuda-plugin", "open"},
			exitBadUsage, []string{"--cuda-plugin applies to NVML", "--mock-etcd"}},
		{"bad --plugin-config", []string{"snapshot", "--scratch-root", dir, "--plugin-config", badJSON},
			exitBadUsage, []string{"--plugin-config", "bad.json"}},
		{"--plugin-config without cuda", []string{"snapshot", "--scratch-root", dir, "--plugin-config", badMode},
			exitBadUsage, []string{"--plugin-config", `no "cuda" table`}},
		{"bad --fgpu-capacity", []string{"snapshot", "--scratch-root", dir, "--fgpu-capacity", "GPU-a=1.234"},
			exitBadUsage, []string{"--fgpu-capacity", "two decimal places"}},
		{"bad mock file still --devices", []string{"simulate", "--devices", badJSON + ".toml", "--request", "cuda.shares=1"},
			exitBadUsage, []string{"--devices " + badJSON + ".toml"}},
		{"missing --config", []string{"snapshot", "--config", filepath.Join(dir, "nope.toml")}, exitBadUsage, []string{"no agent config at", "nope.toml", "given with --config"}},
		{"--config not TOML", []string{"snapshot", "--config", badTOML}, exitBadUsage, []string{"--config:", "bad.toml"}},
		{"--config not TOML, simulate", []string{"simulate", "--config", badTOML, "--devices", mock, "--request", "cuda.shares=1"}, exitBadUsage, []string{"--config:", "bad.toml"}},
		{"found agent.toml not TOML", []string{"snapshot"}, exitBadUsage, []string{"bad.toml", "name another with --config"}},
		{"bad --mem", []string{"simulate", "--devices", list, "--mem", "-5g", "--request", "cuda.shares=1"},
			exitBadUsage, []string{`--mem "-5g"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, tt.args...)
			wantCode(t, code, tt.code, out, tt.want...)
			for _, p := range pythonText {
				if strings.Contains(out, p) {
					t.Errorf("output shows Python's %q:\n%s", p, out)
				}
			}
			// The message starts with the flag, not with another one.
			if flag, _, _ := strings.Cut(tt.want[0], " "); tt.code == exitBadUsage && strings.HasPrefix(flag, "--") &&
				!strings.Contains(out, "fgtop: "+flag) {
				t.Errorf("the message does not start with %s:\n%s", flag, out)
			}
		})
	}
}

// TestSimulateJSONKeepsKinds: the JSON form keeps Backend.AI's exception
// class as the parity datum, with the message beside it; a request that
// cannot be placed makes the exit status 1 (the JSON is still printed).
func TestSimulateJSONKeepsKinds(t *testing.T) {
	fx := testfix.Dir(t, "backendai")
	out, errOut, code := runSim(t, "simulate", "--devices", filepath.Join(fx, "mock-accelerator.toml"),
		"--mock-etcd", filepath.Join(fx, "mock-accelerator.etcd.json"), "--json", "--request", "cuda.shares=9", "--request", "cuda.shares=0.05")
	if code != exitProblem || !strings.Contains(errOut, "2 of 2 request(s) could not be placed") {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	var doc struct {
		Placements []struct{ Error, Message string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []struct{ kind, msg string }{{"InsufficientResource", "allocating 9 out of 4.00"}, {"NotMultipleOfQuantum", "not a multiple of the quantum"}}
	if len(doc.Placements) != len(want) {
		t.Fatalf("%d placements, want %d:\n%s", len(doc.Placements), len(want), out)
	}
	for i, w := range want {
		p := doc.Placements[i]
		if p.Error != w.kind || !strings.Contains(p.Message, w.msg) {
			t.Errorf("step %d: error %q message %q, want kind %s and %q", i+1, p.Error, p.Message, w.kind, w.msg)
		}
	}
}

// TestSimulateZeroBesideASlot: a 0 next to a real amount is how Backend.AI's
// own requests look; it runs quietly and allocates the rest.
func TestSimulateZeroBesideASlot(t *testing.T) {
	fx := testfix.Dir(t, "backendai")
	out, errOut, code := runSim(t, "simulate", "--devices", filepath.Join(fx, "mock-accelerator.toml"),
		"--mock-etcd", filepath.Join(fx, "mock-accelerator.etcd.json"), "--request", `{"cuda.device": "0", "cuda.shares": "0.5"}`)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "cuda.shares ") || strings.Contains(out, "nothing") || strings.Contains(out, "✗") {
		t.Errorf("the request did not allocate its shares:\n%s", out)
	}
}

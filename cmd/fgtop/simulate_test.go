package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// runSim runs `fgtop <args>` in-process and returns stdout, stderr and the
// exit status main would return.
func runSim(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	code := exitOK
	if err != nil {
		code = exitBadUsage
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		fmt.Fprintln(&errb, "fgtop:", err)
	}
	return out.String(), errb.String(), code
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// simDoc is the --json document, decoded keeping the key order of the
// amount maps.
type simDoc struct {
	Placements []struct {
		Step        int                       `json:"step"`
		Request     string                    `json:"request"`
		Kernel      string                    `json:"kernel"`
		Free        int                       `json:"free"`
		Allocations *placement.OrderedAmounts `json:"allocations"`
		Released    *placement.OrderedAmounts `json:"released"`
		Error       string                    `json:"error"`
		Message     string                    `json:"message"`
		StateAfter  *placement.OrderedAmounts `json:"state_after"`
	} `json:"placements"`
	AllocMap orderedStrings           `json:"alloc_map"`
	State    placement.OrderedAmounts `json:"state"`
}

// orderedStrings is a flat {key: "value"} object in key order.
type orderedStrings [][2]string

func (o *orderedStrings) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		v, err := dec.Token()
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%v: not a string", k)
		}
		*o = append(*o, [2]string{k.(string), s})
	}
	_, err := dec.Token()
	return err
}

func decodeDoc(t *testing.T, out string) simDoc {
	t.Helper()
	var d simDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("decoding the --json output: %v\n%s", err, out)
	}
	return d
}

// seedMock writes the seed node as a mock-accelerator.toml: two GPUs on
// NUMA nodes 0 and 1, with etcd settings that make each 1.00 share.
func seedMock(t *testing.T) (toml, etcd string) {
	t.Helper()
	dir := t.TempDir()
	toml = writeFile(t, dir, "mock-accelerator.toml", `slot_name = "cuda"
device_plugin_name = "CUDADevice"
devices = [
  { mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", model_name = "NVIDIA A100-SXM4-40GB", numa_node = 0, subproc_count = 108, memory_size = "40G", is_mig_device = false },
  { mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02", model_name = "NVIDIA A100-SXM4-40GB", numa_node = 1, subproc_count = 108, memory_size = "40G", is_mig_device = false },
]
[attributes]
[formats.shares]
display_unit = "fGPU"
display_icon = "gpu1"
human_readable_name = "fGPU"
description = "CUDA-capable GPU (fractional)"
number_format = { binary = false, round_length = 2 }
`)
	etcd = writeFile(t, dir, "mock-accelerator.etcd.json",
		`{"config": {"plugins": {"accelerator": {"mock": {"allocation_mode": "fractional", "unit_mem": "40g", "unit_proc": "108", "quantum_size": "0.01"}}}}}`)
	return toml, etcd
}

const (
	seedA = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	seedB = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
)

// TestSimulateSeed is the seed scenario through the command line: two
// devices on NUMA nodes 0 and 1, 1.00 share each, EVENLY, INTERLEAVED:
// 0.2 lands on the second device, 1.2 splits 0.60/0.60, and the final map
// is {first: 0.60, second: 0.80}; with the mock file and with a device list.
func TestSimulateSeed(t *testing.T) {
	toml, etcd := seedMock(t)
	list := writeFile(t, t.TempDir(), "devices.json", fmt.Sprintf(`[
 {"id": %q, "slot_name": "cuda.shares", "capacity": "1.00", "numa_node": 0},
 {"id": %q, "slot_name": "cuda.shares", "capacity": "1.00", "numa_node": 1}]`, seedA, seedB))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mock", []string{"--devices", toml, "--mock-etcd", etcd}},
		{"mock-explicit-flags", []string{"--devices", toml, "--mock-etcd", etcd, "--strategy", "evenly", "--affinity", "interleaved"}},
		{"device-list", []string{"--devices", list}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"simulate"}, tc.args...)
			args = append(args, "--request", "cuda.shares=0.2", "--request", "cuda.shares=1.2", "--json")
			out, errOut, code := runSim(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			d := decodeDoc(t, out)
			if len(d.Placements) != 2 {
				t.Fatalf("%d placements, want 2", len(d.Placements))
			}
			if got := d.Placements[0].Allocations.Alloc.String(); got != "{cuda.shares: {"+seedB+": 0.20}}" {
				t.Errorf("0.2 landed as %s, want all on the second device", got)
			}
			if got := d.Placements[1].Allocations.Alloc; !placement.SameEntries(got, amounts("cuda.shares", seedA, "0.60", seedB, "0.60")) {
				t.Errorf("1.2 landed as %s, want 0.60/0.60", got)
			}
			want := orderedStrings{{seedA, "0.60"}, {seedB, "0.80"}}
			if fmt.Sprint(d.AllocMap) != fmt.Sprint(want) {
				t.Errorf("alloc_map %v, want %v", d.AllocMap, want)
			}
			if d.Placements[0].Request != "cuda.shares=0.2" || d.Placements[1].Kernel != "k2" {
				t.Errorf("request echo / kernel name: %+v", d.Placements)
			}
		})
	}

	// The table says the same.
	out, errOut, code := runSim(t, "simulate", "--devices", toml, "--mock-etcd", etcd,
		"--request", "cuda.shares=0.2", "--request", "cuda.shares=1.2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Devices named as the console names them (GPU1), the full id in the
	// device table's ID column; the alloc map keeps Backend.AI's ids.
	for _, want := range []string{
		"k1      cuda.shares GPU1=0.20",
		"cuda.shares GPU0=0.60 GPU1=0.60",
		"GPU0    cuda.shares  0     1.00      0.60       0.40  " + seedA,
		"alloc_map: {" + seedA + ": 0.60, " + seedB + ": 0.80}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, seedA+"=") || strings.Contains(out, seedB+"=") {
		t.Errorf("a placement names a GPU by its full id:\n%s", out)
	}
}

func amounts(slot string, kv ...string) alloc.Allocation {
	ss := alloc.SlotShares{Slot: model.SlotName(slot)}
	for i := 0; i+1 < len(kv); i += 2 {
		ss.Shares = append(ss.Shares, alloc.Share{Device: model.DeviceID(kv[i]), Amount: model.MustDec(kv[i+1])})
	}
	return alloc.Allocation{ss}
}

// corpusCase is the part of an alloc-cases.json case the test reads itself
// (independently of placement.Case).
type corpusCase struct {
	ID             string            `json:"id"`
	MapClass       string            `json:"map_class"`
	Strategy       string            `json:"strategy"`
	QuantumSize    *string           `json:"quantum_size"`
	AffinityPolicy string            `json:"affinity_policy"`
	AllowFrag      *bool             `json:"allow_resource_fragmentation"`
	Devices        []json.RawMessage `json:"devices"`
	Operations     []struct {
		Op       string          `json:"op"`
		Kernel   string          `json:"kernel"`
		Request  json.RawMessage `json:"request"`
		Expected struct {
			OK         bool                     `json:"ok"`
			Allocation placement.OrderedAmounts `json:"allocation"`
			StateAfter placement.OrderedAmounts `json:"state_after"`
			Error      string                   `json:"error"`
		} `json:"expected"`
	} `json:"operations"`
}

// requestText turns a corpus request object into --request text, keeping
// the key order and the decimals exactly as written.
func requestText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var kv orderedStrings
	if err := json.Unmarshal(raw, &kv); err != nil {
		t.Fatalf("request %s: %v", raw, err)
	}
	parts := make([]string, len(kv))
	for i, e := range kv {
		parts[i] = e[0] + "=" + e[1]
	}
	return strings.Join(parts, ",")
}

// TestSimulateCorpusThroughCLI runs every case of alloc-cases.json through
// `fgtop simulate` with flags only, as a script would: the case's devices
// as a --devices list, its settings as --strategy/--affinity/--quantum/
// --no-fragmentation, each allocate as --request and each free of kN as
// --request free=N. It compares every allocation (entries, exact decimal
// strings), every error kind, every state_after (--trace, exact and in
// order), and the final alloc_map with the last state_after restricted to
// the devices that hold something.
func TestSimulateCorpusThroughCLI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testfix.Dir(t), "alloc-cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var ops, passed, casesOK int
	for _, c := range cases {
		devs, err := json.Marshal(c.Devices)
		if err != nil {
			t.Fatal(err)
		}
		list := writeFile(t, dir, c.ID+".json", string(devs))
		args := []string{"simulate", "--devices", list, "--json", "--trace",
			"--strategy", strings.ToLower(c.Strategy),
			"--affinity", strings.ToLower(strings.ReplaceAll(c.AffinityPolicy, "_", "-"))}
		if c.QuantumSize != nil {
			args = append(args, "--quantum", *c.QuantumSize)
		}
		if c.AllowFrag != nil && !*c.AllowFrag {
			args = append(args, "--no-fragmentation")
		}
		kernelNo := map[string]int{}
		allocs := 0
		for _, op := range c.Operations {
			if op.Op == "allocate" {
				allocs++
				kernelNo[op.Kernel] = allocs
				args = append(args, "--request", requestText(t, op.Request))
			} else {
				args = append(args, "--request", fmt.Sprintf("free=%d", kernelNo[op.Kernel]))
			}
		}
		out, errOut, code := runSim(t, args...)
		if code != exitOK && code != exitProblem {
			t.Errorf("%s: exit %d: %s", c.ID, code, errOut)
			continue
		}
		d := decodeDoc(t, out)
		failed := false
		for _, p := range d.Placements {
			failed = failed || (p.Error != "" && p.Free == 0)
		}
		if failed != (code == exitProblem) {
			t.Errorf("%s: exit %d, but a request failed = %v (exit 1 exactly when one cannot be placed)", c.ID, code, failed)
		}
		if len(d.Placements) != len(c.Operations) {
			t.Errorf("%s: %d placements for %d operations", c.ID, len(d.Placements), len(c.Operations))
			continue
		}
		caseOK := true
		for i, op := range c.Operations {
			ops++
			p := d.Placements[i]
			exp := op.Expected
			var bad []string
			switch {
			case op.Op == "free":
				if p.Error != "" || p.Released == nil {
					bad = append(bad, fmt.Sprintf("free failed: %s %s", p.Error, p.Message))
				}
			case exp.OK && p.Error != "":
				bad = append(bad, fmt.Sprintf("error %s (%s), want success", p.Error, p.Message))
			case exp.OK && (p.Allocations == nil || !placement.SameEntries(p.Allocations.Alloc, exp.Allocation.Alloc)):
				bad = append(bad, fmt.Sprintf("allocations %v, want %s", p.Allocations, exp.Allocation.Alloc))
			case !exp.OK && p.Error != exp.Error:
				bad = append(bad, fmt.Sprintf("error %q, want %s", p.Error, exp.Error))
			}
			if p.StateAfter == nil || p.StateAfter.Alloc.String() != exp.StateAfter.Alloc.String() {
				bad = append(bad, fmt.Sprintf("state_after %v, want %s", p.StateAfter, exp.StateAfter.Alloc))
			}
			if len(bad) > 0 {
				caseOK = false
				t.Errorf("%s op #%d (%s): %s", c.ID, i+1, p.Request, strings.Join(bad, "; "))
			} else {
				passed++
			}
		}
		// The final alloc_map is the last state_after, devices holding
		// nothing left out (no device is freed to zero while a live
		// kernel still names it in this corpus).
		var want orderedStrings
		if n := len(c.Operations); n > 0 {
			for _, s := range c.Operations[n-1].Expected.StateAfter.Alloc {
				for _, sh := range s.Shares {
					if !sh.Amount.IsZero() {
						want = append(want, [2]string{string(sh.Device), sh.Amount.String()})
					}
				}
			}
		}
		if fmt.Sprint(d.AllocMap) != fmt.Sprint(want) {
			caseOK = false
			t.Errorf("%s: alloc_map %v, want %v", c.ID, d.AllocMap, want)
		}
		if got := d.State.Alloc.String(); len(c.Operations) > 0 && got != c.Operations[len(c.Operations)-1].Expected.StateAfter.Alloc.String() {
			caseOK = false
			t.Errorf("%s: state %s", c.ID, got)
		}
		if caseOK {
			casesOK++
		}
	}
	t.Logf("alloc-cases.json through `fgtop simulate` (flags): %d/%d cases, %d/%d operations pass", casesOK, len(cases), passed, ops)
	if passed != ops || casesOK != len(cases) {
		t.Errorf("%d operations and %d cases fail", ops-passed, len(cases)-casesOK)
	}
}

// TestSimulateCaseCheck runs the whole corpus with --case --check, and a
// case whose recorded result was tampered with.
func TestSimulateCaseCheck(t *testing.T) {
	corpus := filepath.Join(testfix.Dir(t), "alloc-cases.json")
	out, errOut, code := runSim(t, "simulate", "--case", corpus, "--check")
	if code != 0 || !strings.Contains(out, "all match") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	t.Log(strings.TrimSpace(out))

	out, _, code = runSim(t, "simulate", "--case", corpus, "--case-id", "seed-doc", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	d := decodeDoc(t, out)
	if fmt.Sprint(d.AllocMap) != fmt.Sprint(orderedStrings{{seedA, "0.60"}, {seedB, "0.80"}}) {
		t.Errorf("seed-doc alloc_map %v", d.AllocMap)
	}

	data, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(cases[0]), `"0.80"`, `"0.81"`, 1)
	path := writeFile(t, t.TempDir(), "bad.json", bad)
	out, _, code = runSim(t, "simulate", "--case", path, "--check")
	if code != exitProblem || !strings.Contains(out, "1 differ") {
		t.Errorf("tampered case: exit %d\n%s", code, out)
	}
}

// TestSimulateSteps covers free steps, failing requests and the exit
// status for bad usage.
func TestSimulateSteps(t *testing.T) {
	list := writeFile(t, t.TempDir(), "devices.json", fmt.Sprintf(`[
 {"id": %q, "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0},
 {"id": %q, "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": null}]`, seedA, seedB))
	type step struct{ err, kernel string }
	for _, tc := range []struct {
		name     string
		requests []string
		flags    []string
		code     int
		steps    []step
		allocMap string
	}{
		{name: "free releases", requests: []string{"cuda.shares=0.5", "cuda.shares=0.3", "free=1"},
			steps: []step{{"", "k1"}, {"", "k2"}, {"", "k1"}}, allocMap: "[[" + seedB + " 0.30]]"},
		{name: "free kN form", requests: []string{"cuda.shares=0.5", "free=k1"},
			steps: []step{{"", "k1"}, {"", "k1"}}, allocMap: "[]"},
		{name: "failed request then its free", requests: []string{"cuda.shares=3", "free=1", "cuda.shares=1"}, code: exitProblem,
			steps: []step{{"InsufficientResource", "k1"}, {"NotAllocated", "k1"}, {"", "k2"}}, allocMap: "[[" + seedB + " 1.00]]"},
		// A free that fails is a step that did not do what it says: a
		// script reads 1, as for a request not placed.
		{name: "double free", requests: []string{"cuda.shares=1", "free=1", "free=1"}, code: exitProblem,
			steps: []step{{"", "k1"}, {"", "k1"}, {"AlreadyFreed", "k1"}}, allocMap: "[]"},
		{name: "fragmented", flags: []string{"--no-fragmentation"}, requests: []string{"cuda.shares=0.6", "cuda.shares=0.6", "cuda.shares=0.6"}, code: exitProblem,
			steps: []step{{"", "k1"}, {"", "k2"}, {"FractionalResourceFragmented", "k3"}}},
		{name: "below quantum", flags: []string{"--quantum", "0.25"}, requests: []string{"cuda.shares=0.1"}, code: exitProblem,
			steps: []step{{"NotMultipleOfQuantum", "k1"}}, allocMap: "[]"},
		{name: "quantum null is unset", flags: []string{"--quantum", "null"}, requests: []string{"cuda.shares=0.015"},
			steps: []step{{"", "k1"}}, allocMap: "[[" + seedB + " 0.02]]"},
		{name: "JSON request", requests: []string{`{"cuda.shares": "0.5"}`, "free=k1"},
			steps: []step{{"", "k1"}, {"", "k1"}}, allocMap: "[]"},
		{name: "zero request", requests: []string{"cuda.shares=0"}, steps: []step{{"", "k1"}}, allocMap: "[]"},
		{name: "unknown slot", requests: []string{"rocm.shares=1"}, code: exitBadUsage},
		{name: "typo'd slot", requests: []string{"cuda.shres=0.5"}, code: exitBadUsage},
		{name: "free of a later request", requests: []string{"free=1", "cuda.shares=1"}, code: exitBadUsage},
		{name: "free=0", requests: []string{"cuda.shares=1", "free=0"}, code: exitBadUsage},
		{name: "bad request", requests: []string{"cuda.shares"}, code: exitBadUsage},
		{name: "bad decimal", requests: []string{"cuda.shares=abc"}, code: exitBadUsage},
		{name: "NaN", requests: []string{"cuda.shares=NaN"}, code: exitBadUsage},
		{name: "slot twice", requests: []string{"cuda.shares=1,cuda.shares=2"}, code: exitBadUsage},
		{name: "bad strategy", flags: []string{"--strategy", "packed"}, requests: []string{"cuda.shares=1"}, code: exitBadUsage},
		{name: "bad affinity", flags: []string{"--affinity", "packed"}, requests: []string{"cuda.shares=1"}, code: exitBadUsage},
		{name: "bad quantum", flags: []string{"--quantum", "0"}, requests: []string{"cuda.shares=1"}, code: exitBadUsage},
		{name: "no request", code: exitBadUsage},
		{name: "check without case", flags: []string{"--check"}, requests: []string{"cuda.shares=1"}, code: exitBadUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"simulate", "--devices", list, "--json"}, tc.flags...)
			for _, r := range tc.requests {
				args = append(args, "--request", r)
			}
			out, errOut, code := runSim(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			if code != 0 && errOut == "" {
				t.Error("no message on stderr")
			}
			if code != 0 && code != exitProblem {
				return
			}
			d := decodeDoc(t, out)
			if len(d.Placements) != len(tc.steps) {
				t.Fatalf("%d placements, want %d", len(d.Placements), len(tc.steps))
			}
			for i, s := range tc.steps {
				p := d.Placements[i]
				if p.Error != s.err || p.Kernel != s.kernel || p.Request != tc.requests[i] {
					t.Errorf("step %d: %+v, want error %q kernel %s", i+1, p, s.err, s.kernel)
				}
				if p.Error != "" && p.Message == "" {
					t.Errorf("step %d: error without a message", i+1)
				}
			}
			if tc.allocMap != "" && fmt.Sprint(d.AllocMap) != tc.allocMap && !(tc.allocMap == "[]" && len(d.AllocMap) == 0) {
				t.Errorf("alloc_map %v, want %s", d.AllocMap, tc.allocMap)
			}
		})
	}
}

// TestSimulateVirtualHost places a request over GPUs, CPU cores and memory
// of a described host: the cores follow the GPUs' NUMA node, and nothing
// depends on the machine running the test.
func TestSimulateVirtualHost(t *testing.T) {
	toml, etcd := seedMock(t)
	base := []string{"simulate", "--devices", toml, "--mock-etcd", etcd, "--cpus", "8", "--cpu-numa", "2", "--mem", "64g", "--json"}
	out, errOut, code := runSim(t, append(base, "--request", "cuda.shares=0.5,cpu=2,mem=4g", "--request", "cpu=6", "--request", "cpu=1")...)
	if code != exitProblem { // cpu=6 does not fit beside the first request's 2
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodeDoc(t, out)
	got := d.Placements[0].Allocations.Alloc
	// 0.5 fits on one device: best fit from the tail of the interleaved
	// order (A on node 0, B on node 1) is B, so the cores come from node 1
	// (cores 4-7), EVENLY; mem is FILL on "root".
	want := alloc.Allocation{
		{Slot: "cuda.shares", Shares: []alloc.Share{{Device: seedB, Amount: model.MustDec("0.50")}}},
		{Slot: "cpu", Shares: []alloc.Share{{Device: "4", Amount: model.One}, {Device: "5", Amount: model.One}}},
		{Slot: "mem", Shares: []alloc.Share{{Device: "root", Amount: model.MustDec("4294967296")}}},
	}
	if !placement.SameEntries(got, want) {
		t.Errorf("placement %s, want %s", got, want)
	}
	if d.Placements[1].Error != "" || d.Placements[2].Error != "InsufficientResource" {
		t.Errorf("cpu=6 then cpu=1 on 8 cores: %+v", d.Placements[1:])
	}
	// Only cuda devices count in alloc_map.
	if fmt.Sprint(d.AllocMap) != fmt.Sprint(orderedStrings{{seedB, "0.50"}}) {
		t.Errorf("alloc_map %v", d.AllocMap)
	}

	// A cuda-only simulation has no cpu or mem maps at all.
	out, _, code = runSim(t, "simulate", "--devices", toml, "--mock-etcd", etcd, "--request", "cuda.shares=1", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	if d := decodeDoc(t, out); len(d.State.Alloc) != 1 || d.State.Alloc[0].Slot != "cuda.shares" {
		t.Errorf("state of a cuda-only simulation: %s", d.State.Alloc)
	}

	for _, bad := range [][]string{
		{"--cpu-numa", "2"},
		{"--mem", "lots"},
		{"--cpus", "-1"},
		{"--cpus", "4097"},
		{"--cpus", "10000000"},
		{"--cpus", "4", "--cpu-numa", "5"},
	} {
		args := append([]string{"simulate", "--devices", toml, "--request", "cpu=1"}, bad...)
		start := time.Now()
		if _, _, code := runSim(t, args...); code != exitBadUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
		// Refused before anything is built (it once took 58 s and 12 GB).
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: refused after %v", bad, d)
		}
	}
	// The bound itself is allowed.
	args := append(slices.Clone(base[:len(base)-1]), "--request", "cpu=1")
	args[slices.Index(args, "--cpus")+1] = "4096"
	if _, out, code := runSim(t, args...); code != 0 {
		t.Errorf("--cpus 4096: exit %d\n%s", code, out)
	}
}

// TestSimulateDiscreteMock runs the mock in discrete mode (no etcd
// settings): whole GPUs as cuda.device, counted in alloc_map.
func TestSimulateDiscreteMock(t *testing.T) {
	toml, _ := seedMock(t)
	out, errOut, code := runSim(t, "simulate", "--devices", toml, "--request", "cuda.device=1", "--request", "cuda.device=2", "--json")
	if code != exitProblem { // the second request cannot be placed
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodeDoc(t, out)
	if d.Placements[0].Error != "" || d.Placements[1].Error != "InsufficientResource" {
		t.Fatalf("placements: %+v", d.Placements)
	}
	if len(d.AllocMap) != 1 || d.AllocMap[0][1] != "1" {
		t.Errorf("alloc_map %v", d.AllocMap)
	}
}

// TestSimulateLiveState loads a scratch root's kernels into the maps
// before the requests run.
func TestSimulateLiveState(t *testing.T) {
	fx := testfix.Dir(t)
	toml := filepath.Join(fx, "backendai", "mock-accelerator.toml")
	etcd := filepath.Join(fx, "backendai", "mock-accelerator.etcd.json")
	split, err := os.ReadFile(filepath.Join(fx, "backendai", "resource.cuda-shares-split.txt"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeFile(t, root, "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63/config/resource.txt", string(split))
	out, errOut, code := runSim(t, "simulate", "--devices", toml, "--mock-etcd", etcd,
		"--scratch-root", "agent-1="+root, "--cpus", "32", "--cpu-numa", "2", "--mem", "256g",
		"--request", "cuda.shares=0.5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodeDoc(t, out)
	// The live kernel holds 0.60 on 2d02 and 2d03; they stay in alloc_map.
	want := orderedStrings{{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d02", "0.60"}, {"c59395cd-ac91-4cd3-a1b0-3d2568aa2d03", "0.60"}}
	p := d.Placements[0]
	if p.Error != "" {
		t.Fatalf("placement failed: %s", p.Message)
	}
	dev := p.Allocations.Alloc[0].Shares[0].Device
	if dev == "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02" || dev == "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03" {
		t.Errorf("0.5 landed on %s, which has only 0.40 free", dev)
	}
	got := map[string]string{}
	for _, kv := range d.AllocMap {
		got[kv[0]] = kv[1]
	}
	for _, kv := range want {
		if got[kv[0]] != kv[1] {
			t.Errorf("alloc_map %v lacks %v", d.AllocMap, kv)
		}
	}
	if got[string(dev)] != "0.50" || len(got) != 3 {
		t.Errorf("alloc_map %v", d.AllocMap)
	}
	if !strings.Contains(out, `"live_kernels": 1`) {
		t.Errorf("settings do not report the live kernel:\n%s", out)
	}

	// With the two-agent device-based config, --agent restricts the maps
	// to that agent's partition: the kernel (in agent numa0's root) holds
	// 2d02 and cores 20-23, which belong to numa1, so they are not loaded.
	cfg := filepath.Join(fx, "backendai", "agent.multi-agent.device-based.toml")
	empty := t.TempDir()
	for _, tc := range []struct {
		agent, want, skipped string
	}{
		{"i-gpu-node01-numa0", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", "0.60 on cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"},
		{"i-gpu-node01-numa1", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04", ""},
	} {
		out, errOut, code := runSim(t, "simulate", "--config", cfg, "--devices", toml, "--mock-etcd", etcd,
			"--scratch-root", "i-gpu-node01-numa0="+root, "--scratch-root", "i-gpu-node01-numa1="+empty,
			"--cpus", "32", "--cpu-numa", "2", "--mem", "256g", "--agent", tc.agent,
			"--request", "cuda.shares=0.5,cpu=2,mem=121g", "--request", "cuda.shares=0.5", "--json")
		if code != exitProblem { // mem=121g is beyond the agent's share
			t.Fatalf("%s: exit %d: %s", tc.agent, code, errOut)
		}
		d := decodeDoc(t, out)
		if d.Placements[0].Error != "InsufficientResource" {
			t.Errorf("%s: mem=121g beyond the agent's 120G share: %+v", tc.agent, d.Placements[0])
		}
		p := d.Placements[1]
		if p.Error != "" || p.Allocations.Alloc[0].Shares[0].Device != model.DeviceID(tc.want) {
			t.Errorf("%s: 0.5 landed as %+v, want on %s", tc.agent, p, tc.want)
		}
		for _, st := range d.State.Alloc {
			if st.Slot == "cpu" && len(st.Shares) != 16 {
				t.Errorf("%s: %d cores, want the partition's 16", tc.agent, len(st.Shares))
			}
		}
		if (tc.skipped == "") != !strings.Contains(errOut, "not loaded") || !strings.Contains(errOut, tc.skipped) {
			t.Errorf("%s: stderr %q, want %q", tc.agent, errOut, tc.skipped)
		}
	}
	if _, _, code := runSim(t, "simulate", "--config", cfg, "--devices", toml, "--scratch-root", "x="+root,
		"--agent", "nobody", "--request", "cuda.device=1"); code != exitBadUsage {
		t.Errorf("unknown --agent: exit %d, want 2", code)
	}

	// A device list is for empty nodes only.
	list := writeFile(t, t.TempDir(), "d.json", `[{"id": "0", "slot_name": "cuda.shares", "capacity": "1", "numa_node": 0}]`)
	if _, _, code := runSim(t, "simulate", "--devices", list, "--scratch-root", root, "--request", "cuda.shares=1"); code != exitBadUsage {
		t.Errorf("device list with --scratch-root: exit %d, want 2", code)
	}
}

// TestSimulateHostFlagsNameTheirOwn: simulate's host is given with --cpus
// and --mem; --host-cpus and --host-mem (the other commands') are refused
// naming the flag that takes the place of the one given. --host-mem was
// told to use --cpus.
func TestSimulateHostFlagsNameTheirOwn(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--host-cpus", "0-63"}, "simulate does not take --host-cpus: use --cpus N"},
		{[]string{"--host-mem", "512g"}, "simulate does not take --host-mem: use --mem SIZE"},
		{[]string{"--host-cpus", "0-63", "--host-mem", "512g"}, "use --cpus N and --mem SIZE"},
	} {
		code, out := runCLI(t, append([]string{"simulate", "--request", "cpu=1"}, c.args...)...)
		wantCode(t, code, exitBadUsage, out, c.want)
	}
}

// TestSimulateHelpSaysWhichAllocMap: simulate's alloc_map is the absolute
// map; its help said it meant what snapshot --alloc-map means, which
// since 2026-09 prints the per-device ratio (0.2250 where simulate says
// 0.90 of a 4.00 GPU), so the two seemed to disagree on one node.
func TestSimulateHelpSaysWhichAllocMap(t *testing.T) {
	code, out := runCLIQuiet(t, "simulate", "--help")
	if code != exitOK || !strings.Contains(out, `"fgtop snapshot --alloc-map=absolute"`) || strings.Contains(out, `means what "fgtop snapshot --alloc-map" means`) {
		t.Errorf("exit %d; simulate --help does not say its alloc_map is snapshot --alloc-map=absolute's:\n%s", code, out)
	}
}

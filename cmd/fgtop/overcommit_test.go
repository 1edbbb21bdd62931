package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// driftedNode is the two-agent node after GPU0 (…2d01) moved from numa0
// to numa1 while a kernel of numa0 still holds 0.90 of it: numa1's
// allocator owns it now and does not see that kernel.
func driftedNode(t *testing.T) *node {
	t.Helper()
	n := newNode(t)
	n.addKernel(t, agentA, "0b7e4c2a-1f3d-4a5b-9c8e-7d6f5e4a3b21", gpu1, "0.90")
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu1+"="+agentB, "--yes", "--force")...)
	wantCode(t, code, exitOK, out)
	return n
}

// TestSimulateOvercommit: a request that numa1's allocator places only by
// putting GPU0 over its capacity (numa0's kernel holds 0.90 of it) is
// placed, as Backend.AI would, and marked: overcommit true, GPU0's
// device_total_after above its capacity, in the JSON and the table.
func TestSimulateOvercommit(t *testing.T) {
	n := driftedNode(t)
	base := n.args("simulate", "--agent", agentB, "--cpus", "4", "--mem", "64g", "--request", "cuda.shares=2.9")
	code, out := runCLI(t, append(base, "--json")...)
	wantCode(t, code, exitOK, out, `"overcommit": true`)
	var doc struct {
		Placements []struct {
			Overcommit   bool `json:"overcommit"`
			DevicesAfter []struct {
				Device     string `json:"device"`
				HeldNow    string `json:"held_now"`
				TotalAfter string `json:"device_total_after"`
				Capacity   string `json:"capacity"`
				Overcommit bool   `json:"overcommit"`
			} `json:"devices_after"`
		} `json:"placements"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range doc.Placements[0].DevicesAfter {
		if d.Device == gpu1 {
			found = true
			if !d.Overcommit || d.HeldNow != "0.90" || d.Capacity != "1.00" {
				t.Errorf("GPU0 after: %+v", d)
			}
		} else if d.Overcommit {
			t.Errorf("%s marked overcommitted: %+v", d.Device, d)
		}
	}
	if !found {
		t.Errorf("the placement does not touch GPU0: %s", out)
	}
	code, out = runCLI(t, base...)
	// The live table names devices as the console does; the id stays in
	// the table's ID column and in --json.
	wantCode(t, code, exitOK, out, "! OVERCOMMIT", "OVERCOMMIT: GPU0 would hold", gpu1)

	// Without --agent, each agent's own allocator is shown: numa1 takes
	// it by overcommitting, numa0 (1.1 free on its one GPU left) does not.
	code, out = runCLI(t, n.args("simulate", "--cpus", "4", "--mem", "64g", "--request", "cuda.shares=2.9")...)
	if code != exitOK && code != exitProblem {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"agent " + agentB + "'s own allocator", "OVERCOMMIT across all agents", "agent " + agentA + "'s own allocator (its kernels only) would not take it"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestFleetFitOvercommit: the fleet's fit on the drifted node's snapshot
// marks the overcommit, its largest fit never exceeds what is physically
// free, and no agent's free amount in a reason exceeds the node's free.
func TestFleetFitOvercommit(t *testing.T) {
	n := driftedNode(t)
	code, stdout, _ := runFgtop(t, n.args("snapshot", "--json", "--compact")...)
	if code != 0 {
		t.Fatalf("snapshot exit %d", code)
	}
	rs, _, err := report.ParseLine([]byte(strings.TrimSpace(stdout)))
	if err != nil || rs == nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	snap, err := rs.Model()
	if err != nil {
		t.Fatal(err)
	}
	req, err := fleet.ParseRequest("cuda.shares=2.9")
	if err != nil {
		t.Fatal(err)
	}
	fit := fleet.FitRequest(snap, req, fleet.Settings{})
	if !fit.OK || !fit.Overcommit {
		t.Fatalf("fit %+v: want a placement marked overcommit", fit)
	}
	sum := fleet.Summarize(snap, fleet.Settings{})
	if sum.Free.Less(sum.Largest) {
		t.Errorf("largest fit %s above the %s physically free", sum.Largest, sum.Free)
	}
	// 4.00 capacity, 0.90 held: 3.10 free; numa1 alone must not claim more.
	j := fleet.FitJSON(&fleet.Fleet{Nodes: []fleet.Node{{Addr: "n", Name: "n", State: fleet.Live, Snap: snap, Sum: sum}}}, req, fleet.Settings{})
	if f := j.Nodes[0].Fit; !f.Overcommit || len(f.Devices) == 0 || len(j.Overcommits) != 1 || len(j.Fits) != 1 {
		t.Errorf("JSON fit %+v (fits %v, overcommits %v)", f, j.Fits, j.Overcommits)
	}
	// The device is named as `fgtop simulate` names it (the test above).
	var b strings.Builder
	fleet.WriteFit(&b, j, func(s string) string { return s })
	if !strings.Contains(b.String(), "fits on 1 node(s), 1 of them only by overcommitting a device") || !strings.Contains(b.String(), "OVERCOMMIT: GPU0 would hold") {
		t.Errorf("fleet --fit text:\n%s", b.String())
	}
	big, _ := fleet.ParseRequest("cuda.shares=3.5")
	if f := fleet.FitRequest(snap, big, fleet.Settings{}); f.OK || strings.Contains(f.Reason, "3.00 free") || strings.Contains(f.Reason, "4.00 free") {
		t.Errorf("3.5: %+v (an agent's free above the node's 3.10)", f)
	}
}

// addSlotKernel puts a kernel of agent holding 0.90 cuda.shares of GPU1
// under the scratch root of slotNode's config (the fixture's
// single-device resource.txt, its amount changed).
func addSlotKernel(t *testing.T, config, agent string) {
	t.Helper()
	root := filepath.Join(filepath.Dir(config), "scratches")
	kernel := "0b7e4c2a-1f3d-4a5b-9c8e-7d6f5e4a3b21"
	res := string(readFixture(t, "resource.cuda-shares-single.txt"))
	res = strings.ReplaceAll(res, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04", gpu1)
	res = strings.ReplaceAll(res, "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", kernel)
	res = strings.Replace(res, `"cuda.shares":"0.5"`, `"cuda.shares":"0.90"`, 1)
	res = strings.Replace(res, ":0.50\n", ":0.90\n", 1)
	dir := filepath.Join(root, kernel, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resource.txt"), []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
	addRecord(t, filepath.Join(root, kernel), agent)
}

// TestSlotBasedDriftOvercommit: main's slot-based form, after an apply
// moved cuda.shares from agent a (2.0 -> 0.8) to b (2.0 -> 3.2) while a
// kernel of a still holds 0.90 of GPU0. The manager no longer sends a a
// 3.2 request (0.8 given, 0.90 held); b's allocator, which does not see
// a's kernel, takes it, and it needs GPU0: only by overcommitting it.
// simulate --agent b and the fleet's fit both say so.
func TestSlotBasedDriftOvercommit(t *testing.T) {
	config, args := slotNode(t)
	text, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	addSlotKernel(t, config, "i-gpu-node01-a")
	code, out := runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=0.8", "--slot", "i-gpu-node01-b=cuda.shares=3.2", "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "verified")
	if after, _ := os.ReadFile(config); string(after) == string(text) {
		t.Fatal("nothing applied")
	}

	fix := testfix.Dir(t, "backendai")
	sim := func(extra ...string) []string {
		return append([]string{"simulate", "--config", config, "--devices", filepath.Join(fix, "mock-accelerator.toml"),
			"--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"), "--cpus", "64", "--mem", "512g"}, extra...)
	}
	code, out = runCLI(t, sim("--agent", "i-gpu-node01-b", "--request", "cuda.shares=3.2", "--json")...)
	wantCode(t, code, exitOK, out, `"overcommit": true`, `"device": "`+gpu1+`"`, `"held_now": "0.90"`)
	// --agent applies the manager's rule before the agent's allocator: a
	// is given 0.8 and its kernel holds 0.90, so the manager sends it
	// nothing (its allocator, over every device, would place it); b's
	// second step counts what its first took.
	code, out = runCLI(t, sim("--agent", "i-gpu-node01-a", "--request", "cuda.shares=0.5", "--json")...)
	wantCode(t, code, exitProblem, out, `"error": "ManagerRefused"`,
		"the manager would not send it there: the agent reports 0 cuda.shares free (given 0.8, its kernels hold 0.90), 0.5 requested")
	code, out = runCLI(t, sim("--agent", "i-gpu-node01-b", "--request", "cuda.shares=3.2", "--request", "cuda.shares=0.1")...)
	wantCode(t, code, exitProblem, out, "ManagerRefused", "the agent reports 0.00 cuda.shares free (given 3.2, its kernels hold 3.20), 0.1 requested")
	code, out = runCLI(t, sim("--agent", "i-gpu-node01-b", "--request", "cuda.shares=3.2", "--request", "free=1", "--request", "cuda.shares=0.1")...)
	wantCode(t, code, exitOK, out)
	code, out = runCLI(t, sim("--request", "cuda.shares=3.2")...)
	if code != exitOK && code != exitProblem {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"agent i-gpu-node01-a's own allocator (its kernels only) would not take it: the manager would not send it there: the agent reports 0 cuda.shares free (given 0.8, its kernels hold 0.90), 3.2 requested",
		"agent i-gpu-node01-b's own allocator (its kernels only) would take it", "OVERCOMMIT across all agents"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate without --agent lacks %q:\n%s", want, out)
		}
	}

	code, stdout, _ := runFgtop(t, args("snapshot", "--json", "--compact")...)
	if code != 0 {
		t.Fatalf("snapshot exit %d", code)
	}
	rs, _, err := report.ParseLine([]byte(strings.TrimSpace(stdout)))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := rs.Model()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := fleet.ParseRequest("cuda.shares=3.2")
	fit := fleet.FitRequest(snap, req, fleet.Settings{})
	if !fit.OK || fit.Agent != "i-gpu-node01-b" || !fit.Overcommit {
		t.Errorf("fleet fit: %+v; want agent b, marked overcommit", fit)
	}
	// The fleet's largest fit follows --fit: agent b places 3.2, so it
	// counts, marked; the largest that overcommits nothing stays within
	// what is physically free.
	sum := fleet.Summarize(snap, fleet.Settings{})
	if sum.Largest.Less(model.MustDec("3.2")) || !sum.LargestOvercommits {
		t.Errorf("largest fit %s (overcommits %v); want at least the 3.2 --fit places, marked", sum.Largest, sum.LargestOvercommits)
	}
	if sum.Free.Less(sum.LargestClear) {
		t.Errorf("largest clear fit %s above the %s physically free", sum.LargestClear, sum.Free)
	}
}

// TestSimulateNoAgentOvercommit: without --agent on a node of several
// agents, the table's row is the whole node as one allocator, which
// Backend.AI does not run: on the drifted node it places 2.9 on devices of
// both agents, overcommitting none. Every agent that would take it can
// only by overcommitting GPU0, so the step says so: "overcommit": true in
// the JSON, OVERCOMMIT on the row.
func TestSimulateNoAgentOvercommit(t *testing.T) {
	n := driftedNode(t)
	base := n.args("simulate", "--cpus", "4", "--mem", "64g", "--request", "cuda.shares=2.9")
	code, out := runCLI(t, append(base, "--json")...)
	if code != exitOK && code != exitProblem {
		t.Fatalf("exit %d: %s", code, out)
	}
	var doc struct {
		Placements []struct {
			Overcommit *bool `json:"overcommit"`
			Agents     []struct {
				Agent      string `json:"agent"`
				Fits       bool   `json:"fits"`
				Overcommit bool   `json:"overcommit"`
			} `json:"agents"`
		} `json:"placements"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Placements[0]
	takers := 0
	for _, a := range p.Agents {
		if a.Fits {
			takers++
			if !a.Overcommit {
				t.Fatalf("agent %s takes it without overcommitting: the node is not the one this test needs: %s", a.Agent, out)
			}
		}
	}
	if takers == 0 {
		t.Fatalf("no agent takes it: %s", out)
	}
	if p.Overcommit == nil || !*p.Overcommit {
		t.Errorf("the step is not marked overcommit although every agent that takes it overcommits:\n%s", out)
	}
	code, out = runCLI(t, base...)
	if code != exitOK && code != exitProblem {
		t.Fatalf("exit %d: %s", code, out)
	}
	rows := 0
	for _, ln := range strings.Split(out, "\n") {
		if strings.HasPrefix(ln, "1 ") && strings.Contains(ln, "cuda.shares=2.9") {
			rows++
			if !strings.Contains(ln, "OVERCOMMIT") {
				t.Errorf("the step's row does not say OVERCOMMIT: %q\n%s", ln, out)
			}
		}
	}
	if rows == 0 {
		t.Errorf("no row for step 1 (cuda.shares=2.9) in the table:\n%s", out)
	}
}

// TestPrintFitMemory: fleet --fit's text says memory as a size, in the
// request and the placement, as it was asked (the JSON keeps bytes).
func TestPrintFitMemory(t *testing.T) {
	j := fleet.JSONFitReport{Request: "cuda.shares=1.2,cpu=4,mem=34359738368", Fits: []string{"n"},
		Nodes: []fleet.JSONNode{{Node: "n", Fit: &fleet.JSONFit{Fits: true, Agent: "a",
			Placement: map[string]map[string]string{"mem": {"root": "34359738368"}, "cpu": {"4": "1"}}}}}}
	var b strings.Builder
	fleet.WriteFit(&b, j, func(s string) string { return s })
	out := b.String()
	for _, want := range []string{"request cuda.shares=1.2,cpu=4,mem=32g fits", "32g mem on root", "1 cpu on 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "34359738368") {
		t.Errorf("memory in bytes:\n%s", out)
	}
}

// TestCrossAgentCoreOvercommitIsAWarning: on main's slot-based node every
// agent allocates CPU cores over all of them, not seeing the others'
// kernels, so two agents' kernels pinned to one core are the form's
// ordinary state (the cores are time-shared; nothing fails): a warning
// that names both agents, one for all such cores. Two agents' kernels over a GPU's capacity stay
// an error (its memory is overbooked).
func TestCrossAgentCoreOvercommitIsAWarning(t *testing.T) {
	config, args := slotNode(t)
	root := filepath.Join(filepath.Dir(config), "scratches")
	add := func(agent, kernel, shares string) {
		res := string(readFixture(t, "resource.cuda-shares-single.txt"))
		res = strings.ReplaceAll(res, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04", gpu1)
		res = strings.ReplaceAll(res, "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", kernel)
		res = strings.Replace(res, `"cuda.shares":"0.5"`, `"cuda.shares":"`+shares+`"`, 1)
		res = strings.Replace(res, ":0.50\n", ":"+shares+"\n", 1)
		res = strings.Replace(res, "CPU_SHARES=16:1,17:1,18:1,19:1", "CPU_SHARES=0:1", 1)
		res = strings.Replace(res, `"cpu":"4"`, `"cpu":"1"`, 1)
		dir := filepath.Join(root, kernel, "config")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "resource.txt"), []byte(res), 0o644); err != nil {
			t.Fatal(err)
		}
		addRecord(t, filepath.Join(root, kernel), agent)
	}
	add("i-gpu-node01-a", "0b7e4c2a-1f3d-4a5b-9c8e-7d6f5e4a3b21", "0.60")
	add("i-gpu-node01-b", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "0.60")
	code, out := runCLI(t, args("check")...)
	wantCode(t, code, exitProblem, out,
		// One node-level warning for every time-shared core, not one per core.
		"warning over-capacity: 1 CPU core(s) time-shared across agents, each held beyond its capacity by several agents' kernels together (each agent within it): cpu:0 2 of 1 (agents i-gpu-node01-a, i-gpu-node01-b: each agent's allocator sees only its own kernels)",
		"error over-capacity: cuda:"+gpu1+" is held beyond its capacity: 1.20 of 1.00 (i-gpu-node01-a 0.60 + i-gpu-node01-b 0.60")
	if strings.Contains(out, "error over-capacity: cpu:0") {
		t.Errorf("a core two agents share is an error:\n%s", out)
	}
}

// TestSimulateAgentLinesSayTheirState: each agent's line is its allocator
// on the live kernels; from the second step on it says that the steps
// above are not counted (no agent's maps hold them), not a placement that
// ignores them silently.
func TestSimulateAgentLinesSayTheirState(t *testing.T) {
	n := driftedNode(t)
	code, out := runCLI(t, n.args("simulate", "--cpus", "4", "--mem", "64g", "--request", "cuda.shares=0.5", "--request", "cuda.shares=0.5")...)
	if code != exitOK && code != exitProblem {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"step 1: agent " + agentB + "'s own allocator (its kernels only)", "step 2: agent " + agentB + "'s own allocator (its live kernels only, not the steps above)"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// TestSimulateNoAgentTakesIt: without --agent on a node of several
// agents, a request the whole node's one allocator places across both
// agents' GPUs (3.0 of 4 free shares) but no agent would take (each owns
// two GPUs, 2.0) cannot be placed by Backend.AI: the step says so and
// simulate exits 1. A request an agent takes exits 0.
func TestSimulateNoAgentTakesIt(t *testing.T) {
	n := newNode(t)
	base := n.args("simulate", "--cpus", "4", "--mem", "64g")
	code, out := runCLI(t, append(base, "--request", "cuda.shares=3.0")...)
	wantCode(t, code, exitProblem, out, "no agent would take it", "1 of 1 request(s) could not be placed")
	code, out = runCLI(t, append(base, "--request", "cuda.shares=3.0", "--json")...)
	wantCode(t, code, exitProblem, out, `"an_agent_takes": false`)
	code, out = runCLI(t, append(base, "--request", "cuda.shares=1.5", "--json")...)
	wantCode(t, code, exitOK, out, `"an_agent_takes": true`)
	// Each agent's preview sees only the live kernels, so it takes every
	// 1.5 on its own; the third does not fit on the node after the first
	// two (4.5 shares on 4.00), and that is a request not placed.
	code, out = runCLI(t, append(base, "--request", "cuda.shares=1.5", "--request", "cuda.shares=1.5", "--request", "cuda.shares=1.5")...)
	wantCode(t, code, exitProblem, out, "1 of 3 request(s) could not be placed")
}

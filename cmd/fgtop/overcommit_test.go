package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/report"
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
	wantCode(t, code, exitOK, out, "! OVERCOMMIT", "OVERCOMMIT: "+gpu1+" would hold")

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
	j := fleet.FitJSON(&fleet.Fleet{Nodes: []fleet.Node{{Addr: "n", Name: "n", State: fleet.Live, Snap: snap}}}, req, fleet.Settings{})
	if f := j.Nodes[0].Fit; !f.Overcommit || len(f.Devices) == 0 || len(j.Overcommits) != 1 || len(j.Fits) != 1 {
		t.Errorf("JSON fit %+v (fits %v, overcommits %v)", f, j.Fits, j.Overcommits)
	}
	var b strings.Builder
	printFit(&b, j)
	if !strings.Contains(b.String(), "fits on 1 node(s), 1 of them only by overcommitting a device") || !strings.Contains(b.String(), "OVERCOMMIT: "+gpu1+" would hold") {
		t.Errorf("fleet --fit text:\n%s", b.String())
	}
	big, _ := fleet.ParseRequest("cuda.shares=3.5")
	if f := fleet.FitRequest(snap, big, fleet.Settings{}); f.OK || strings.Contains(f.Reason, "3.00 free") || strings.Contains(f.Reason, "4.00 free") {
		t.Errorf("3.5: %+v (an agent's free above the node's 3.10)", f)
	}
}

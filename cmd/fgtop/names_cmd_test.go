package main

import (
	"bytes"
	"strings"
	"testing"
)

// Issue 28: the names the console shows work in plan --move and simulate
// --agent as in history; a name that names nothing, or several, exits 2
// listing what the node has.
func TestNamesInPlanAndSimulate(t *testing.T) {
	n := newNode(t)
	// plan --move by the console's label: the plan of cuda:<id>.
	_, byKey := runCLI(t, n.args("plan", "--move", "cuda:"+gpu3+"="+agentB)...)
	code, byLabel := runCLI(t, n.args("plan", "--move", "GPU2="+agentB)...)
	wantCode(t, code, exitOK, byLabel)
	if byLabel != byKey {
		t.Errorf("plan --move GPU2 differs from --move cuda:%s:\n%s\n---\n%s", gpu3, byLabel, byKey)
	}
	code, out := runCLI(t, n.args("plan", "--move", "GPU9="+agentB)...)
	wantCode(t, code, exitBadUsage, out, "Unknown device 'GPU9': no device on this node has that ID or name", "cuda:"+gpu3+" (GPU2)")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("plan wrote the file")
	}
	// PLUGIN:ID with an id none of the node's GPUs has: refused by the
	// same resolver, listing the devices (it was written into the draft
	// as typed and refused by agent.toml's validation).
	code, out = runCLI(t, n.args("plan", "--move", "cuda:nosuch="+agentB)...)
	wantCode(t, code, exitBadUsage, out, "Unknown device 'cuda:nosuch': no device on this node has that ID or name", "cuda:"+gpu1+" (GPU0)", "cuda:"+gpu3+" (GPU2)")
	if strings.Contains(out, "nosuch for 'cuda'") || strings.Contains(out, "Agent "+agentB+": Unknown") {
		t.Errorf("the draft's validation refused it, not the resolver:\n%s", out)
	}
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("plan wrote the file")
	}

	sim := func(agent string) []string {
		return n.args("simulate", "--agent", agent, "--cpus", "4", "--mem", "64g", "--request", "cuda.shares=0.5")
	}
	code, out = runCLI(t, sim(agentB)...)
	wantCode(t, code, exitOK, out)
	code, out = runCLI(t, sim("i-gpu-node01")...)
	wantCode(t, code, exitBadUsage, out, `agent "i-gpu-node01" is ambiguous: it names `+agentA+", "+agentB)
	code, out = runCLI(t, sim("nosuch")...)
	wantCode(t, code, exitBadUsage, out, `no agent "nosuch" in this node, which knows `+agentA+", "+agentB)
}

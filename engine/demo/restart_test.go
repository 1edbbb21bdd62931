package demo

import (
	"os"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// TestDemoRestartAfterApply: after an apply (the console's editor does the
// same through the desk) changes one agent's cuda.shares, that agent, and
// only it, is "restart pending" in the engine's snapshots, while the
// simulated agent still reports its old amount to the manager; Restart
// restarts it alone, its live kernels are loaded back into its new maps,
// the manager then counts the new amount, and the state is current again.
func TestDemoRestartAfterApply(t *testing.T) {
	n := startNode(t, Options{Seed: 2, Speed: 20, WarmUp: 30 * time.Second})
	eng := readyEngine(t, n)
	wait := func(what string, ok func(s *model.Snapshot) bool) *model.Snapshot {
		t.Helper()
		end := time.Now().Add(5 * time.Second)
		for {
			s := eng.Latest()
			if ok(s) {
				return s
			}
			if time.Now().After(end) {
				t.Fatalf("after 5 s, %s: agents %+v", what, s.Agents)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	state := func(s *model.Snapshot, id model.AgentID) model.RestartState {
		for _, a := range s.Agents {
			if a.ID == id {
				return a.Restart.State
			}
		}
		return ""
	}
	a0, a1 := n.parts[0].id, n.parts[1].id
	wait("every agent current", func(s *model.Snapshot) bool {
		return state(s, a0) == model.RestartCurrent && state(s, a1) == model.RestartCurrent
	})

	applySlot(t, n, eng.Latest, string(a0)+"=cuda.shares=1.5")
	s := wait("restart pending for "+string(a0), func(s *model.Snapshot) bool {
		return state(s, a0) == model.RestartPending && state(s, a1) == model.RestartCurrent
	})
	pendingIssue := false
	for _, is := range s.Issues {
		pendingIssue = pendingIssue || is.Code == model.IssueRestartPending
	}
	if !pendingIssue {
		t.Error("no restart-pending issue")
	}
	n.mu.Lock()
	before := n.sim.agents[0].capacity[model.SlotCUDAShares]
	n.mu.Unlock()
	if before.String() != "2.0" {
		t.Fatalf("before the restart the agent reports %s cuda.shares, want the 2.0 it started with", before)
	}
	if n.PendingSince().IsZero() {
		t.Error("PendingSince is zero with a restart pending")
	}

	ids, err := n.Restart()
	if err != nil || len(ids) != 1 || ids[0] != a0 {
		t.Fatalf("Restart: %v %v, want %s alone", ids, err, a0)
	}
	n.mu.Lock()
	after := n.sim.agents[0].capacity[model.SlotCUDAShares]
	// The live kernels are in the new maps: what they hold is what the
	// maps hold.
	held := model.Zero
	for _, k := range n.sim.live {
		if k.agent == 0 {
			for _, d := range k.held() {
				for _, sl := range d.Alloc {
					if sl.Slot == model.SlotCUDAShares {
						for _, sh := range sl.Shares {
							held = held.Add(sh.Amount)
						}
					}
				}
			}
		}
	}
	inMaps := model.Zero
	for _, sl := range n.sim.agents[0].maps["cuda"].Allocations() {
		if sl.Slot == model.SlotCUDAShares {
			for _, sh := range sl.Shares {
				inMaps = inMaps.Add(sh.Amount)
			}
		}
	}
	n.mu.Unlock()
	if after.String() != "1.5" {
		t.Errorf("after the restart the agent reports %s cuda.shares, want 1.5", after)
	}
	if !held.Equal(inMaps) {
		t.Errorf("the restarted agent's maps hold %s cuda.shares, its live kernels %s", inMaps, held)
	}
	wait("every agent current after the restart", func(s *model.Snapshot) bool {
		return state(s, a0) == model.RestartCurrent && state(s, a1) == model.RestartCurrent
	})
	if ids, err := n.Restart(); err != nil || len(ids) != 0 {
		t.Errorf("a second Restart: %v %v, want nothing to do", ids, err)
	}
	if !n.PendingSince().IsZero() {
		t.Error("PendingSince set with nothing pending")
	}
}

// TestRestartStatesReadAChangedFileOnly: asked every second, RestartStates
// reads agent.toml again only when it is another file (fgtop's apply
// replaces it) or was edited in place; each change is seen at the next
// call.
func TestRestartStatesReadAChangedFileOnly(t *testing.T) {
	n := startNode(t, Options{Seed: 2, Speed: 20})
	a0 := n.parts[0].id
	// A read within racyWindow of the file's last change is not kept:
	// let the file the demo wrote age past it.
	time.Sleep(racyWindow + 100*time.Millisecond)
	reads := func() int {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.diskReads
	}
	before := reads()
	for range 5 {
		if st := n.RestartStates()[a0].State; st != model.RestartCurrent {
			t.Fatalf("state %s before any change", st)
		}
	}
	if got := reads() - before; got != 1 {
		t.Fatalf("five calls on an unchanged file read it %d times, want 1", got)
	}

	applySlot(t, n, func() *model.Snapshot { return nil }, string(a0)+"=cuda.shares=1.5")
	if st := n.RestartStates()[a0].State; st != model.RestartPending {
		t.Fatalf("after an apply replaced agent.toml: state %s, want pending", st)
	}

	// An edit in place that breaks the file is seen too.
	f, err := os.OpenFile(n.ConfigPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n[[[ not toml\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st := n.RestartStates()[a0].State; st != model.RestartUnknown {
		t.Fatalf("after an edit in place broke agent.toml: state %s, want unknown", st)
	}
	if got := reads() - before; got != 3 {
		t.Fatalf("%d reads for two changes, want 3", got)
	}
}

// TestRestartStatesSeeARacyEdit: agent.toml edited in place to the same
// size, its modification time set back to the one read (as a file system
// stamping from a coarse clock would leave it), is read again: a read made
// within racyWindow of a change is not kept, and the change time moves.
// (The hrev7 review's test: before, 200 of 200 such edits were missed.)
func TestRestartStatesSeeARacyEdit(t *testing.T) {
	n := startNode(t, Options{Seed: 2, Speed: 20})
	a0 := n.parts[0].id
	orig, err := os.ReadFile(n.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	broken := append([]byte("[[[ "), orig[4:]...)
	for i := range 50 {
		if err := os.WriteFile(n.ConfigPath, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if st := n.RestartStates()[a0].State; st != model.RestartCurrent {
			t.Fatalf("try %d: state %s on the original file", i, st)
		}
		fi, err := os.Stat(n.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(n.ConfigPath, broken, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(n.ConfigPath, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if st := n.RestartStates()[a0].State; st != model.RestartUnknown {
			t.Fatalf("try %d: state %s after a same-size edit broke agent.toml", i, st)
		}
	}
}

// applySlot applies one AGENT=SLOT=AMOUNT to the node's agent.toml as an
// operator's console does (a desk's session: plan, then apply).
func applySlot(t *testing.T, n *Node, latest func() *model.Snapshot, slot string) {
	t.Helper()
	desk := partition.NewDesk(partition.DeskOptions{Config: n.ConfigPath, Snapshot: latest})
	sess, err := desk.Open(agentconfig.Actor{Name: "demo", Origin: "console", Role: agentconfig.RoleOperator}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	set, err := partition.ParseSlotSet(slot)
	if err != nil {
		t.Fatal(err)
	}
	plan := sess.Plan(partition.Request{Slots: []partition.SlotSet{set}})
	if !plan.Valid() {
		t.Fatalf("plan: %v", plan.Errors)
	}
	if _, err := sess.Apply(plan, true); err != nil {
		t.Fatal(err)
	}
}

package fleet

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestDrillClosedEndsItsCommands: a node's console closed with q ends
// the commands it left running (its clock above all), so none of them
// delivers a message of the closed console to the fleet, or to the
// next node opened, which would wait on its clock twice from then on;
// and none is left waiting on a clock nobody stops.
func TestDrillClosedEndsItsCommands(t *testing.T) {
	m := newTestFleet(t, 120, 40)
	m.Cursor = -1
	for i, r := range m.Rows {
		if m.fl.Nodes[r].Snap != nil {
			m.Cursor = i
			break
		}
	}
	if m.Cursor < 0 {
		t.Fatal("no node with a snapshot")
	}
	cmd := m.Open()
	if m.drill == nil || cmd == nil {
		t.Fatal("enter opened nothing")
	}
	// Each of Init's commands runs in a goroutine, as the program runs
	// them: those that wait (the snapshot listener, the clock) must end
	// once the console is closed.
	b, ok := cmd().(tea.BatchMsg)
	if !ok {
		t.Fatalf("the console's Init is not a batch")
	}
	endedCh := make(chan tea.Msg, len(b))
	for _, c := range b {
		if c == nil {
			continue
		}
		go func() { endedCh <- c() }()
	}
	time.Sleep(20 * time.Millisecond)
	fleetPress(m, "q")
	if m.drill != nil {
		t.Fatal("q did not close the node's console")
	}
	closedAt := time.Now()
	n := 0
	for _, c := range b {
		if c != nil {
			n++
		}
	}
	deadline := time.After(500 * time.Millisecond)
	for range n {
		select {
		case <-endedCh:
		case <-deadline:
			t.Fatalf("a command of the closed console still runs %v after q (its clock not stopped)", time.Since(closedAt).Round(time.Millisecond))
		}
	}
}

// TestDrillAtSaysWhereTheRecordIs: in a node's console opened from the
// fleet, :at does not tell the operator to start fgtop with --history
// (that console keeps no record): the node's record is on the node, and
// the fleet's own :at looks at every node then.
func TestDrillAtSaysWhereTheRecordIs(t *testing.T) {
	s := drillCommand(t, newTestFleet(t, 120, 40), ":at -1h")
	if !strings.Contains(s, "the node's record is on the node") || strings.Contains(s, "--history DIR") {
		t.Errorf(":at in a node's console opened from the fleet:\n%s", s)
	}
}

// TestDrillJournalSaysWhereItIs: :journal in a node's console opened from
// the fleet said "this console has no agent.toml (start fgtop with
// --config FILE)" of a node that has one: its journal is on the node,
// beside it, and the node's own console shows it.
func TestDrillJournalSaysWhereItIs(t *testing.T) {
	s := drillCommand(t, newTestFleet(t, 200, 40), ":journal")
	if !strings.Contains(s, "no journal: it is beside agent.toml on the node") || strings.Contains(s, "--config FILE") {
		t.Errorf(":journal in a node's console opened from the fleet:\n%s", s)
	}
}

// drillCommand opens the first node with a snapshot in its own console,
// runs the command line cmd there and gives the screen, its styles
// stripped.
func drillCommand(t *testing.T, m *Model, cmd string) string {
	t.Helper()
	for i, r := range m.Rows {
		if m.fl.Nodes[r].Snap != nil {
			m.Cursor = i
			break
		}
	}
	if m.Open(); m.drill == nil {
		t.Fatal("enter opened nothing")
	}
	for _, k := range cmd {
		fleetPress(m, string(k))
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	return stripANSI(m.View().Content)
}

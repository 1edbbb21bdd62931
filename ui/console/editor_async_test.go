package console

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// runCmds runs a command tree as a program does, each command in its own
// goroutine, and sends the messages they return on out.
func runCmds(cmd tea.Cmd, out chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	go func() {
		switch m := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range m {
				runCmds(c, out)
			}
		default:
			out <- m
		}
	}()
}

// deliverUntil hands a the messages its commands send on msgs, running
// the commands those return, until done says so; what waits for more
// than 5 s fails the test as never coming.
func deliverUntil(t *testing.T, a *App, msgs chan tea.Msg, what string, done func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !done() {
		select {
		case m := <-msgs:
			_, c := a.Update(m)
			runCmds(c, msgs)
		case <-deadline:
			t.Fatal(what + " never came back")
		}
	}
}

// TestOtherApplyNeverStalls: two consoles share one desk (the SSH
// server's case). alice applies, and a hook pauses her write half-way
// (the temporary file written, not yet renamed). Meanwhile bob's console
// keeps answering: ticks, the desk poll, opening the editor (refused: the
// draft is alice's), keys and frames all return at once; so does alice's
// own console, which says the apply is running and refuses a second.
func TestOtherApplyNeverStalls(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	inWrite, release := make(chan struct{}), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	desk := partition.NewDesk(partition.DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return snap },
		Now: fixedNow,
		Hooks: &agentconfig.Hooks{Fault: func(s agentconfig.Step) error {
			if s == agentconfig.StepTempWritten {
				close(inWrite)
				<-release
			}
			return nil
		}}})
	al := editing(t, desk, snap, alice)
	bo := testApp(t, 120, 40, snap, Options{Actor: bob, Desk: desk})
	// From here on both run their commands as a program does.
	al.SyncCmds, bo.SyncCmds = false, false
	alMsgs, boMsgs := make(chan tea.Msg, 64), make(chan tea.Msg, 64)

	typeKeys(al, "jjj")
	press(al, agentNum(1))
	typeKeys(al, "A")
	al.Update(tab)
	_, cmd := al.Update(enter)
	runCmds(cmd, alMsgs)
	select {
	case <-inWrite:
	case <-time.After(5 * time.Second):
		t.Fatal("the apply never reached its write")
	}
	if v := screen(al); !strings.Contains(v, "applying") {
		t.Errorf("alice's editor does not say the apply is running:\n%s", v)
	}

	// Each step is one Update or View, as the program makes them; each is
	// timed, and a step that blocks fails the test instead of hanging it.
	var worst time.Duration
	step := func(name string, f func()) {
		t.Helper()
		done := make(chan time.Duration, 1)
		go func() {
			start := time.Now()
			f()
			done <- time.Since(start)
		}()
		select {
		case d := <-done:
			worst = max(worst, d)
		case <-time.After(2 * time.Second):
			t.Fatalf("%s blocked while another console's apply was writing", name)
		}
	}
	deliver := func(a *App, ch chan tea.Msg) {
		for {
			select {
			case m := <-ch:
				step("Update(desk message)", func() { _, c := a.Update(m); runCmds(c, ch) })
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	for i := 0; i < 20; i++ {
		step("bob's tick", func() { _, c := bo.Update(kit.TickMsg{}); runCmds(c, boMsgs) })
		deliver(bo, boMsgs)
		step("bob's frame", func() { feed(bo, snap) })
		step("bob's keys", func() { typeKeys(bo, "jk") })
		step("bob's View", func() { _ = bo.View() })
		step("alice's tick", func() { _, c := al.Update(kit.TickMsg{}); runCmds(c, alMsgs) })
		step("alice's View", func() { _ = al.View() })
	}
	step("bob's e", func() { _, c := bo.Update(keyRune('e')); runCmds(c, boMsgs) })
	deliver(bo, boMsgs)
	if bo.dlg() == nil || bo.dlg().Kind != editor.DlgTakeOver {
		t.Errorf("bob's e during alice's apply: dialog %+v, flash %q", bo.dlg(), bo.Flash.Text)
	}
	if v := screen(bo); !strings.Contains(v, "draft: alice") {
		t.Errorf("bob's header does not name alice:\n%s", v)
	}
	step("alice's second apply", func() { al.ed().DoApply(al.ed().Plan, false) })
	if !strings.Contains(al.Flash.Text, "in progress") {
		t.Errorf("a second apply during the first: flash %q", al.Flash.Text)
	}
	draft := al.ed().Req
	al.Flash = kit.Flash{}
	step("alice's edit", func() { press(al, agentNum(2)) })
	if !strings.Contains(al.Flash.Text, "in progress") || len(al.ed().Req.Moves) != len(draft.Moves) {
		t.Errorf("an edit during the apply: flash %q, moves %v", al.Flash.Text, al.ed().Req.Moves)
	}
	// 100 ms is a frame budget ten times over, on a loaded test machine.
	if worst > 100*time.Millisecond {
		t.Errorf("slowest Update/View during another's apply: %v", worst)
	}
	t.Logf("slowest Update/View while the apply was paused in its write: %v", worst)

	close(release)
	released = true
	deliverUntil(t, al, alMsgs, "the apply's outcome", func() bool { return !al.ed().Applying })
	if !strings.Contains(al.Flash.Text, "applied and verified") {
		t.Fatalf("after the write: flash %q", al.Flash.Text)
	}
	// bob learns of the write from the desk.
	bo.Update(esc)
	_, c := bo.Update(kit.TickMsg{})
	runCmds(c, boMsgs)
	deliver(bo, boMsgs)
	if v := screen(bo); !strings.Contains(v, "agent.toml written") {
		t.Errorf("bob's header does not show alice's write:\n%s", v)
	}
}

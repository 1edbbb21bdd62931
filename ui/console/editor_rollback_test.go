package console

import (
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// appliedOnce is an operator's console whose editor applied one move
// (GPU3 to the first agent) on the fixture; node is what the desk judges
// by from then on.
func appliedOnce(t *testing.T, node **model.Snapshot) (a *App, path, before, after string) {
	t.Helper()
	path = fixtureConfig(t)
	before = mustRead(t, path)
	*node = freeNode()
	desk := partition.NewDesk(partition.DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return *node },
		Now: func() time.Time { return fake.T0.Add(3 * time.Second) }})
	a = editing(t, desk, *node, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "A")
	press(a, tab, enter)
	after = mustRead(t, path)
	if after == before || !strings.Contains(a.Flash.Text, "applied and verified") {
		t.Fatalf("not applied: %q", a.Flash.Text)
	}
	return a, path, before, after
}

// TestEditorRollbackKey: U in the journal undoes the last apply, as
// `fgtop rollback` does, for an operator with no shell on the node (one
// on SSH): a dialog whose default is Cancel says what it restores, Enter
// on it writes nothing, confirming restores the file byte for byte and
// journals the rollback for the console's actor; with nothing left to
// undo it says so and writes nothing.
func TestEditorRollbackKey(t *testing.T) {
	var node *model.Snapshot
	a, path, before, after := appliedOnce(t, &node)
	typeKeys(a, "J")
	typeKeys(a, "U")
	d := a.dlg()
	if d == nil || d.FocusOK {
		t.Fatalf("U opened no dialog on Cancel (%+v): %q\n%s", d, a.Flash.Text, screen(a))
	}
	v := screen(a)
	for _, want := range []string{"Undo the last apply", "Restore agent.toml as it was before the apply of " + fixedNow().Local().Format("2006-01-02"), "by alice?", "that apply changed: agents[0].resource.devices", "▶ Cancel", "restart them afterwards"} {
		if !strings.Contains(v, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, v)
		}
	}
	press(a, enter)
	if a.dlg() != nil || mustRead(t, path) != after {
		t.Fatalf("Enter on the fresh dialog rolled back or kept it open")
	}
	typeKeys(a, "U")
	press(a, tab, enter)
	if got := mustRead(t, path); got != before {
		t.Fatalf("not restored (flash %q):\n%s", a.Flash.Text, screen(a))
	}
	if !strings.Contains(a.Flash.Text, "rolled back: agent.toml restored") {
		t.Errorf("flash %q", a.Flash.Text)
	}
	recs, _, err := agentconfig.ReadJournal(agentconfig.JournalPath(path))
	if err != nil || len(recs) != 2 {
		t.Fatalf("journal %+v %v", recs, err)
	}
	if r := recs[1]; r.Action != "rollback" || r.Actor != "alice" || r.Origin != "console" || r.Result != "ok" || r.Forced {
		t.Errorf("the rollback's record %+v", r)
	}
	if v := screen(a); !strings.Contains(v, "rolled back 10:00") || !strings.Contains(v, "rollback") {
		t.Errorf("the journal view does not show the rollback:\n%s", v)
	}
	// The draft is on the restored file: nothing to apply, nothing stale.
	if ed := a.ed(); ed.Dirty() || ed.Stale != "" || ed.Lost != "" {
		t.Errorf("after the rollback: dirty %v, stale %q, lost %q", ed.Dirty(), ed.Stale, ed.Lost)
	}
	typeKeys(a, "U")
	if a.dlg() != nil || mustRead(t, path) != before || !strings.HasPrefix(a.Flash.Text, "nothing to roll back: ") {
		t.Errorf("U with nothing to undo: dialog %v, flash %q", a.dlg() != nil, a.Flash.Text)
	}
}

// TestEditorRollbackRefusedOverLiveKernels: a rollback whose restored
// partition would take a device from the agent whose kernel now holds it
// (GPU3, given to the first agent by the apply) is refused, naming the kernel, as `fgtop rollback` refuses it without
// --force; the console has no force. A kernel that starts between the
// dialog and its confirmation is caught too (the desk judges again).
func TestEditorRollbackRefusedOverLiveKernels(t *testing.T) {
	var node *model.Snapshot
	a, path, _, after := appliedOnce(t, &node)
	typeKeys(a, "J")
	// Now a kernel of the agent the apply gave GPU3 to holds it.
	node = heldByAgent0()
	typeKeys(a, "U")
	if a.dlg() != nil || mustRead(t, path) != after {
		t.Fatalf("a rollback over a live kernel asked or wrote:\n%s", screen(a))
	}
	v := screen(a)
	for _, want := range []string{"not rolled back: refusing to roll back", "3f2a6c1e", "or on the node:", editor.RollbackCommand(path)} {
		if !strings.Contains(v, want) {
			t.Errorf("the journal view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "(--force rolls back anyway)") {
		t.Errorf("the console offers the command line's --force as its own:\n%s", v)
	}

	node = freeNode()
	typeKeys(a, "U")
	if a.dlg() == nil {
		t.Fatalf("no dialog on a free node: %q", a.Flash.Text)
	}
	node = heldByAgent0()
	press(a, tab, enter)
	if mustRead(t, path) != after || !strings.HasPrefix(a.Flash.Text, "not rolled back: ") {
		t.Errorf("a kernel started after the dialog: flash %q, file changed %v", a.Flash.Text, mustRead(t, path) != after)
	}
}

// TestEditorRollbackFileChangedSince: U after the file was changed on
// disk since the apply (a hand edit) is refused before any dialog, as
// `fgtop rollback` refuses it without --force, and says so in the
// console's words: the command line's "--force rolls back anyway" was
// offered as if the console had it, and only after the operator had
// confirmed a dialog that could not succeed.
func TestEditorRollbackFileChangedSince(t *testing.T) {
	var node *model.Snapshot
	a, path, _, after := appliedOnce(t, &node)
	edited := after + "\n# a hand edit\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	typeKeys(a, "J")
	typeKeys(a, "U")
	opened := a.dlg() != nil
	if opened {
		press(a, tab, enter)
	}
	if mustRead(t, path) != edited {
		t.Fatal("the rollback wrote over a file changed since the apply")
	}
	if opened || !strings.HasPrefix(a.Flash.Text, "not rolled back: ") || !strings.Contains(a.Flash.Text, "changed") {
		t.Errorf("U over a file changed since the apply: dialog %v, flash %q", opened, a.Flash.Text)
	}
	if v := screen(a) + a.Flash.Text; strings.Contains(v, "--force rolls back anyway") || !strings.Contains(v, "--force") {
		t.Errorf("the console offers the command line's --force as its own:\n%s", v)
	}
}

// TestJournalCommand: :journal lists the partition's applies and
// rollbacks for anyone, a viewer included (the editor's J is behind the
// draft an operator must hold, and a viewer has no editor): who applied
// what, when, and what it changed; esc goes back. Without an agent.toml
// it says there is no journal.
func TestJournalCommand(t *testing.T) {
	var node *model.Snapshot
	op, _, _, _ := appliedOnce(t, &node)
	for _, ro := range []bool{true, false} {
		a := testApp(t, 160, 40, node, Options{ReadOnly: ro, Desk: op.opts.Desk})
		command(a, "journal")
		ds := detailOf(a)
		if ds == nil || ds.Kind != detJournal {
			t.Fatalf("read-only %v: :journal opened no journal: %q\n%s", ro, a.Flash.Text, screen(a))
		}
		v := screen(a)
		for _, want := range []string{"journal " + op.opts.Desk.JournalPath(), "ACTION", "apply", "alice", "agents[0].resource.devices", "backup "} {
			if !strings.Contains(v, want) {
				t.Errorf("read-only %v: the journal lacks %q:\n%s", ro, want, v)
			}
		}
		press(a, esc)
		if detailOf(a) != nil {
			t.Errorf("read-only %v: esc left the journal open", ro)
		}
	}
	a := testApp(t, 160, 40, node, Options{})
	command(a, "journal")
	if detailOf(a) != nil || !strings.Contains(a.Flash.Text, "no journal") {
		t.Errorf("no agent.toml: detail %v, flash %q", detailOf(a) != nil, a.Flash.Text)
	}
}

// TestRollbackRestartAdvice: after a rollback the editor says whether the
// agents must restart from what the engine judged of the version written,
// live: a rollback to the version the agents started with needs none. A
// judgement of another version (the one before, a later one) or of some
// agents only is no proof, and the advice stays a restart.
func TestRollbackRestartAdvice(t *testing.T) {
	var node *model.Snapshot
	a, path, before, _ := appliedOnce(t, &node)
	typeKeys(a, "JU")
	// The dialog, asked before the write, does not promise a restart the
	// outcome may then call unneeded.
	if v := strings.Join(strings.Fields(strings.ReplaceAll(screen(a), "│", " ")), " "); !strings.Contains(v, "restart them afterwards, unless the outcome says they run the restored version already") {
		t.Errorf("the undo dialog asks for a restart outright:\n%s", screen(a))
	}
	press(a, tab, enter)
	if got := mustRead(t, path); got != before {
		t.Fatalf("not restored (flash %q)", a.Flash.Text)
	}
	// The condition before the restart, so that a cut line (80 columns)
	// does not read as an order to restart.
	if !strings.Contains(a.Flash.Text, "restored; if the header says restart pending, restart the agents") {
		t.Errorf("flash %q", a.Flash.Text)
	}
	restored := agentconfig.HashOf([]byte(before))
	judged := func(states ...model.Restart) {
		s := freeNode()
		s.ConfigHash = restored
		for i := range s.Agents {
			s.Agents[i].Restart = states[min(i, len(states)-1)]
		}
		s.Seq = node.Seq + 1
		s.Gen++
		feed(a, s)
	}
	const restart, none = "restart the agents: they read agent.toml only at start-up", "the agents run this version already: no restart needed"
	for _, c := range []struct {
		name   string
		states []model.Restart
		want   string
	}{
		{"not judged yet", []model.Restart{{}}, restart},
		{"pending", []model.Restart{{State: model.RestartPending, ConfigHash: restored}}, restart},
		{"current, judged on the version before", []model.Restart{{State: model.RestartCurrent, ConfigHash: agentconfig.HashOf([]byte(mustRead(t, path) + "x"))}}, restart},
		{"one current, one pending", []model.Restart{{State: model.RestartCurrent, ConfigHash: restored}, {State: model.RestartPending, ConfigHash: restored}}, restart},
		{"every agent runs it", []model.Restart{{State: model.RestartCurrent, ConfigHash: restored}}, none},
	} {
		judged(c.states...)
		v := screen(a)
		other := none
		if c.want == none {
			other = restart
		}
		if !strings.Contains(v, c.want) || strings.Contains(v, other) {
			t.Errorf("%s: want %q, not %q:\n%s", c.name, c.want, other, v)
		}
	}
}

// TestRollbackRestartAdviceAt80: on an 80-column terminal the journal's
// outcome line of a rollback wraps rather than being cut, so "no restart
// needed" (or the restart it asks for) is on the screen.
func TestRollbackRestartAdviceAt80(t *testing.T) {
	var node *model.Snapshot
	a, path, before, _ := appliedOnce(t, &node)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typeKeys(a, "JU")
	press(a, tab, enter)
	if got := mustRead(t, path); got != before {
		t.Fatalf("not restored (flash %q)", a.Flash.Text)
	}
	restored := agentconfig.HashOf([]byte(before))
	s := freeNode()
	s.ConfigHash = restored
	for i := range s.Agents {
		s.Agents[i].Restart = model.Restart{State: model.RestartCurrent, ConfigHash: restored}
	}
	s.Seq = node.Seq + 1
	s.Gen++
	feed(a, s)
	v := screen(a)
	for _, ln := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(ln); w > 80 {
			t.Fatalf("a line %d wide:\n%s", w, v)
		}
	}
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{"the agents run this version already: no restart needed", "a change takes effect when they restart."} {
		if !strings.Contains(flat, want) {
			t.Errorf("the journal lacks %q at 80 columns:\n%s", want, v)
		}
	}
}

// TestRollbackRefusedAt80: a refused rollback's way on, the command line
// with --force, is whole at 80 columns (wrapped, never cut), to paste.
func TestRollbackRefusedAt80(t *testing.T) {
	var node *model.Snapshot
	a, path, _, after := appliedOnce(t, &node)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typeKeys(a, "J")
	node = heldByAgent0()
	typeKeys(a, "U")
	if mustRead(t, path) != after {
		t.Fatal("a refused rollback wrote")
	}
	v := screen(a)
	for _, ln := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(ln); w > 80 {
			t.Fatalf("a line %d wide:\n%s", w, v)
		}
	}
	want := editor.RollbackCommand(path) + " --force"
	if flat := strings.Join(strings.Fields(v), " "); !strings.Contains(flat, want) {
		t.Errorf("the refusal lacks %q whole at 80 columns:\n%s", want, v)
	}
}

// heldByAgent0 is the fake node with GPU3's kernel run by the first
// agent, the one appliedOnce's apply gave GPU3 to: undoing it would take
// the device from under the kernel.
func heldByAgent0() *model.Snapshot {
	held := fake.Node(fake.Options{})
	for _, k := range held.Kernels() {
		if k.ID == "3f2a6c1e-5b7d-4e8a-9f0c-1d2e3a4b5c6d" {
			k.Agent = fake.Agent0
		}
	}
	fake.Finish(held)
	return held
}

package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/testfix"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

var (
	alice = agentconfig.Actor{Name: "alice", Origin: "console", Role: agentconfig.RoleOperator}
	bob   = agentconfig.Actor{Name: "bob", Origin: "ssh:192.0.2.9:4022", Role: agentconfig.RoleOperator}
)

// fixtureConfig copies the device-based two-agent fixture into a temp dir.
func fixtureConfig(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "engine", "partition", "testdata", "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

func testDesk(path string, snap *model.Snapshot) *partition.Desk {
	return partition.NewDesk(partition.DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return snap },
		Now: func() time.Time { return fake.T0.Add(3 * time.Second) }})
}

// freeNode is the fixture node with GPU3 (...2d04) free: the one kernel
// holding it is gone.
func freeNode() *model.Snapshot {
	s := fake.Node(fake.Options{})
	s.SetKernels(slices.DeleteFunc(slices.Clone(s.Kernels()), func(k *model.Kernel) bool {
		return k.ID == "3f2a6c1e-5b7d-4e8a-9f0c-1d2e3a4b5c6d"
	}))
	fake.Finish(s)
	return s
}

// editing is an operator's console on the fixture with the editor open.
func editing(t *testing.T, desk *partition.Desk, snap *model.Snapshot, who agentconfig.Actor) *App {
	t.Helper()
	a := testApp(t, 120, 40, snap, Options{Actor: who, Desk: desk})
	typeKeys(a, "e")
	if a.ed() == nil {
		t.Fatalf("e did not open the editor:\n%s", screen(a))
	}
	return a
}

// engineReads delivers snap as the engine publishes it once it has read
// the config at path again (it follows agent.toml): with the file's hash.
// The console reads no file itself.
func engineReads(t *testing.T, a *App, snap *model.Snapshot, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	next := *snap
	next.Seq++
	next.ConfigHash = hex.EncodeToString(sum[:])
	a.adoptNow(&next)
}

func screen(a *App) string { return ansi.Strip(a.View().Content) }

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// changedLines lists the lines of after that differ from before (same
// line count expected: the editor edits values in place).
func changedLines(t *testing.T, before, after string) []string {
	t.Helper()
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		t.Fatalf("line count %d -> %d", len(b), len(a))
	}
	var out []string
	for i := range a {
		if a[i] != b[i] {
			out = append(out, strings.TrimSpace(a[i]))
		}
	}
	return out
}

func press(a *App, keys ...tea.KeyPressMsg) {
	for _, k := range keys {
		a.Update(k)
	}
}

var (
	enter    = keyCode(tea.KeyEnter)
	esc      = keyCode(tea.KeyEscape)
	tab      = keyCode(tea.KeyTab)
	clearIn  = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	ctrlC    = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	agentNum = func(n int) tea.KeyPressMsg { return keyRune(rune('0' + n)) }
)

func TestEditorMoveFreeDeviceAndApply(t *testing.T) {
	path := fixtureConfig(t)
	before := mustRead(t, path)
	snap := freeNode()
	desk := testDesk(path, snap)
	a := editing(t, desk, snap, alice)

	typeKeys(a, "jjj") // GPU3, ...2d04: numa1's, free
	press(a, agentNum(1))
	if got := a.ed().Req.Moves; len(got) != 1 || got[0].Agent != fake.Agent0 || !strings.HasSuffix(got[0].Device, "2d04") {
		t.Fatalf("draft moves %+v", got)
	}
	if v := screen(a); !strings.Contains(v, "valid under the BEP-1044 draft's loader (PR #8463): 2 file changes") || strings.Contains(v, "live kernels affected") {
		t.Fatalf("status:\n%s", v)
	}

	// The dialog opens on Cancel: Enter right away closes it and writes
	// nothing.
	typeKeys(a, "A")
	if a.dlg() == nil || a.dlg().FocusOK {
		t.Fatalf("apply dialog %+v", a.dlg())
	}
	if v := screen(a); !strings.Contains(v, "▶ Cancel") {
		t.Fatalf("Cancel is not the focused button:\n%s", v)
	}
	press(a, enter)
	if a.dlg() != nil || mustRead(t, path) != before {
		t.Fatal("Enter on the fresh dialog applied or kept it open")
	}
	if !a.ed().Dirty() {
		t.Fatal("cancel lost the draft")
	}

	typeKeys(a, "A")
	press(a, tab, enter)
	after := mustRead(t, path)
	if after == before {
		t.Fatalf("not applied: %s\n%s", a.Flash.Text, screen(a))
	}
	for _, l := range changedLines(t, before, after) {
		if !strings.HasPrefix(l, "devices = {") {
			t.Errorf("a line other than a device list changed: %q", l)
		}
	}
	if n := len(changedLines(t, before, after)); n != 2 {
		t.Errorf("%d lines changed, want the two device lists", n)
	}
	if !strings.Contains(a.Flash.Text, "applied and verified") || a.ed().Dirty() {
		t.Errorf("flash %q, dirty %v", a.Flash.Text, a.ed().Dirty())
	}
	v := screen(a)
	for _, want := range []string{"restart the agents", "agent.toml written", "no change"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	recs, _, err := agentconfig.ReadJournal(agentconfig.JournalPath(path))
	if err != nil || len(recs) != 1 {
		t.Fatalf("journal %v %v", recs, err)
	}
	if r := recs[0]; r.Actor != "alice" || r.Origin != "console" || r.Action != "apply" || r.Result != "ok" || r.Forced {
		t.Errorf("journal record %+v", r)
	}

	// The journal view lists it.
	typeKeys(a, "J")
	if v := screen(a); !strings.Contains(v, "Journal") || !strings.Contains(v, "alice") || !strings.Contains(v, editor.ShortHash(recs[0].NewHash)) {
		t.Errorf("journal view:\n%s", v)
	}
	// What it changed and where the old file went, not hashes alone (the
	// tour).
	if v := screen(a); !strings.Contains(v, "agents[0].resource.devices") || !strings.Contains(v, " → ") || !strings.Contains(v, "backup "+recs[0].Backup[:20]) {
		t.Errorf("the journal view does not say what the apply changed, or its backup (%s):\n%s", recs[0].Backup, v)
	}
	press(a, esc)
	if a.ed().Showing != editor.EdGrid {
		t.Error("esc did not leave the journal view")
	}
}

// TestEditorAppliedSaysHowToUndo: after an apply the result under the
// grid, the flash, the journal view and the help say how to undo it: U in
// the journal (an operator on SSH has no shell), and the command that
// does it from a shell, with the file it edits (the CLI's search for
// agent.toml would not find a --config elsewhere or the demo's): the tour
// found no word of `fgtop rollback` anywhere.
func TestEditorAppliedSaysHowToUndo(t *testing.T) {
	path := fixtureConfig(t)
	real, err := agentconfig.ResolvePath(path)
	if err != nil {
		t.Fatal(err)
	}
	undo := "undo: J, then U"
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	if strings.Contains(screen(a), "fgtop rollback") {
		t.Fatalf("an undo is offered before any apply:\n%s", screen(a))
	}
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "A")
	press(a, tab, enter)
	if !strings.Contains(a.Flash.Text, "applied and verified") {
		t.Fatalf("not applied: %q", a.Flash.Text)
	}
	if lines := strings.Split(screen(a), "\n"); !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), undo+" · no change") }) {
		t.Errorf("the status under the grid does not say how to undo (%q):\n%s", undo, screen(a))
	}
	if !strings.HasSuffix(a.Flash.Text, "undo: J, then U") {
		t.Errorf("flash %q does not end in the undo keys", a.Flash.Text)
	}
	typeKeys(a, "J")
	if lines := strings.Split(screen(a), "\n"); !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "U undoes the last apply · or on the node:")
	}) || !strings.Contains(screen(a), editor.RollbackCommand(path)) {
		t.Errorf("the journal view does not say how to undo, with the whole command %q:\n%s", editor.RollbackCommand(path), screen(a))
	}
	// At 80 columns too the command is whole, on a row of its own.
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if lines := strings.Split(screen(a), "\n"); !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "fgtop rollback --config /")
	}) {
		t.Errorf("at 80 columns the undo command is not on a row of its own:\n%s", screen(a))
	}
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	press(a, esc)
	typeKeys(a, "?")
	if v := screen(a); !strings.Contains(v, "U in the journal (J) undoes the last apply") || !strings.Contains(v, "from a shell: fgtop rollback --config") || !strings.Contains(v, real) {
		t.Errorf("the help does not say how to undo:\n%s", screen(a))
	}
}

func TestEditorHeldDeviceNeedsTypedAgentID(t *testing.T) {
	path := fixtureConfig(t)
	before := mustRead(t, path)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)

	typeKeys(a, "jj") // GPU2, ...2d03: numa0's, kernel 9a1b2c3d of numa0 holds 0.20
	press(a, agentNum(2))
	if v := screen(a); !strings.Contains(v, "moves away from them") {
		t.Fatalf("the held device is not marked:\n%s", v)
	}
	typeKeys(a, "A")
	d := a.dlg()
	if d == nil || d.Expect != string(fake.Agent0) || d.Input == nil {
		t.Fatalf("dialog %+v", d)
	}
	press(a, tab, enter) // OK without typing
	if a.dlg() == nil || !strings.Contains(screen(a), "exactly to apply") || mustRead(t, path) != before {
		t.Fatalf("OK without the typed id did something:\n%s", screen(a))
	}
	typeKeys(a, string(fake.Agent1)) // the wrong agent
	press(a, enter)
	if a.dlg() == nil || mustRead(t, path) != before {
		t.Fatal("the wrong agent id applied")
	}
	press(a, clearIn)
	typeKeys(a, string(fake.Agent0))
	if !strings.Contains(screen(a), "matches: Enter applies") {
		t.Errorf("no sign the id matches:\n%s", screen(a))
	}
	press(a, enter)
	if mustRead(t, path) == before {
		t.Fatalf("not applied with the right id: %s", a.Flash.Text)
	}
	recs, _, _ := agentconfig.ReadJournal(agentconfig.JournalPath(path))
	if len(recs) != 1 || !recs[0].Forced {
		t.Errorf("journal %+v: want one forced apply", recs)
	}
}

// TestEditorTypedConfirmationIsHonest: typing the matching id does not
// move the focus off Cancel, and the dialog says what Enter does then;
// Enter cancels, and says so. With two agents affected the prompt asks for
// their ids, plural, and takes them in any order.
func TestEditorTypedConfirmationIsHonest(t *testing.T) {
	path := fixtureConfig(t)
	before := mustRead(t, path)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	press(a, agentNum(2)) // GPU0, held by numa0, to numa1
	typeKeys(a, "j")
	press(a, agentNum(1)) // GPU1, held by numa1, to numa0
	typeKeys(a, "A")
	d := a.dlg()
	if d == nil || d.FocusOK {
		t.Fatalf("dialog %+v", d)
	}
	v := screen(a)
	if !strings.Contains(v, "type the ids of the agents") || !strings.Contains(v, "separated by spaces") {
		t.Errorf("two affected agents, singular prompt:\n%s", v)
	}
	if d.Expect != string(fake.Agent0)+" "+string(fake.Agent1) {
		t.Fatalf("expect %q", d.Expect)
	}
	typeKeys(a, string(fake.Agent1)+"  "+string(fake.Agent0)) // any order, any spacing
	v = screen(a)
	if !strings.Contains(v, "matches: tab to Apply, then Enter") || strings.Contains(v, "Apply is armed") || !strings.Contains(v, "▶ Cancel") {
		t.Errorf("matching id with Cancel focused:\n%s", v)
	}
	press(a, enter)
	if a.dlg() != nil || mustRead(t, path) != before {
		t.Fatal("Enter on Cancel applied or kept the dialog")
	}
	if !strings.Contains(a.Flash.Text, "cancelled: nothing written") || !strings.Contains(screen(a), "cancelled: nothing written") {
		t.Errorf("the cancel is silent: flash %q", a.Flash.Text)
	}
	// esc says the same; so does Cancel on the discard and take-over
	// dialogs (they are checked in their own tests).
	typeKeys(a, "A")
	press(a, esc)
	if !strings.Contains(a.Flash.Text, "cancelled: nothing written") {
		t.Errorf("esc: flash %q", a.Flash.Text)
	}
	// The way that applies: type, tab, Enter.
	typeKeys(a, "A")
	typeKeys(a, string(fake.Agent0)+" "+string(fake.Agent1))
	press(a, tab)
	if !strings.Contains(screen(a), "matches: Enter applies") {
		t.Errorf("Apply focused:\n%s", screen(a))
	}
	press(a, enter)
	if mustRead(t, path) == before {
		t.Fatalf("not applied: %s", a.Flash.Text)
	}
}

func TestEditorUndoReset(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1)) // GPU3 to numa0
	typeKeys(a, "k")
	press(a, agentNum(2)) // GPU2 to numa1
	if n := len(a.ed().Req.Moves); n != 2 {
		t.Fatalf("%d moves", n)
	}
	typeKeys(a, "u")
	if m := a.ed().Req.Moves; len(m) != 1 || !strings.HasSuffix(m[0].Device, "2d04") {
		t.Fatalf("after u: %+v", m)
	}
	typeKeys(a, "r")
	if a.ed().Dirty() || len(a.ed().Plan.Edits) != 0 {
		t.Fatalf("after r: %+v", a.ed().Req)
	}
	typeKeys(a, "u") // r is undoable too
	if len(a.ed().Req.Moves) != 1 {
		t.Fatalf("u after r: %+v", a.ed().Req)
	}
	// Moving a device back where the file has it leaves nothing to apply.
	typeKeys(a, "j")
	press(a, agentNum(2))
	if a.ed().Dirty() {
		t.Errorf("moving back left %+v", a.ed().Req)
	}
	// → and ← move between neighbours.
	press(a, keyCode(tea.KeyLeft))
	if m := a.ed().Req.Moves; len(m) != 1 || m[0].Agent != fake.Agent0 {
		t.Errorf("← gave %+v", m)
	}
}

func TestEditorInvalidCPUNeverEntersTheDraft(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	cpuRow := slices.IndexFunc(a.ed().Rows, func(r editor.EdRow) bool { return r.Kind == editor.RowCPU && r.Agent == 0 })
	a.ed().Cursor = cpuRow
	press(a, enter)
	if a.ed().Input == nil || a.ed().Input.Value() != "0-15" {
		t.Fatalf("cpu field %+v", a.ed().Input)
	}
	for _, bad := range []string{"0-7,x-", "0-99", "7-3"} {
		press(a, clearIn)
		typeKeys(a, bad)
		if e := a.ed().InputCheck.Err; e == nil || !strings.Contains(screen(a), e.Error()) {
			t.Errorf("%q: no error shown (%v)", bad, e)
		}
		press(a, enter)
		if a.ed().Input == nil || len(a.ed().Req.CPU) != 0 {
			t.Fatalf("%q entered the draft: %+v", bad, a.ed().Req)
		}
	}
	press(a, clearIn)
	typeKeys(a, "0-7")
	press(a, enter)
	if a.ed().Input != nil || len(a.ed().Req.CPU) != 1 || a.ed().Req.CPU[0].Spec != "0-7" || a.ed().Req.CPU[0].Agent != fake.Agent0 {
		t.Fatalf("valid cpu: %+v", a.ed().Req)
	}
	if !strings.Contains(screen(a), "(was 0-15") {
		t.Errorf("the change is not marked:\n%s", screen(a))
	}

	// mem: a size, not above the node's.
	memRow := slices.IndexFunc(a.ed().Rows, func(r editor.EdRow) bool { return r.Kind == editor.RowMem && r.Agent == 1 })
	a.ed().Cursor = memRow
	press(a, enter, clearIn)
	typeKeys(a, "12Q")
	press(a, enter)
	if a.ed().Input == nil || len(a.ed().Req.Mem) != 0 {
		t.Fatal("a bad size entered the draft")
	}
	press(a, clearIn)
	typeKeys(a, "96G")
	press(a, enter)
	if len(a.ed().Req.Mem) != 1 || a.ed().Req.Mem[0].Bytes.Cmp(model.NewDec(96<<30, 0)) != 0 {
		t.Fatalf("mem: %+v", a.ed().Req.Mem)
	}
	// esc in a field cancels it without touching the draft.
	press(a, enter, clearIn)
	typeKeys(a, "1G")
	press(a, esc)
	if a.ed().Input != nil || a.ed().Req.Mem[0].Bytes.Cmp(model.NewDec(96<<30, 0)) != 0 {
		t.Fatal("esc in the field changed the draft")
	}
}

// TestEditorStaleAfterAnotherApply: a second desk on the same file is
// another process (the CLI, another server); its apply makes the draft
// stale, and apply is refused until the recomputed plan is reviewed.
func TestEditorStaleAfterAnotherApply(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))

	// Bob applies from the CLI, which takes no draft (two desks share the
	// draft record, so a second console could not have opened one).
	cur, err := agentconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	draft, errs := partition.Draft(cur, partition.InventoryOf(snap), partition.Request{Mem: []partition.MemSet{{Agent: fake.Agent1, Bytes: model.NewDec(64<<30, 0)}}})
	if _, err := partition.Apply(partition.Build(cur, draft, snap, errs...), partition.ApplyOptions{Actor: bob}); err != nil {
		t.Fatal(err)
	}
	afterBob := mustRead(t, path)

	a.Update(kit.TickMsg{})
	if a.ed().Stale != "" {
		t.Fatal("stale before the engine read bob's file")
	}
	engineReads(t, a, snap, path)
	a.Update(kit.TickMsg{})
	if a.ed().Stale == "" || !strings.Contains(screen(a), "STALE") {
		t.Fatalf("not stale after bob's apply:\n%s", screen(a))
	}
	typeKeys(a, "A")
	if a.dlg() != nil || !strings.Contains(a.Flash.Text, "review") {
		t.Fatalf("apply of a stale draft: dialog %v, flash %q", a.dlg() != nil, a.Flash.Text)
	}
	// Even a plan confirmed before the staleness was seen is refused.
	a.ed().DoApply(a.ed().Plan, false)
	a.Update(kit.TickMsg{}) // its outcome comes back as a message
	if mustRead(t, path) != afterBob || !strings.Contains(a.Flash.Text, "not applied") {
		t.Fatalf("stale apply wrote; flash %q", a.Flash.Text)
	}

	typeKeys(a, "p") // review: rebase and show the recomputed plan
	if a.ed().Stale != "" || a.ed().Showing != editor.EdPlan {
		t.Fatalf("after p: stale %q view %d", a.ed().Stale, a.ed().Showing)
	}
	// It says whose write the plan is now made on (the tour: only that it
	// was recomputed).
	if f := a.Flash.Text; !strings.Contains(f, "reviewed") || !strings.Contains(f, "by bob; J lists it") {
		t.Errorf("the review does not name bob's write: %q", f)
	}
	if v := screen(a); !strings.Contains(v, "2d04") {
		t.Errorf("the recomputed plan lacks the move:\n%s", v)
	}
	typeKeys(a, "A")
	press(a, tab, enter)
	final, err := agentconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := final.Agent(fake.Agent1).Alloc.Mem; got.Cmp(model.NewDec(64<<30, 0)) != 0 {
		t.Errorf("bob's change lost: mem %s", got)
	}
	if ids := final.Agent(fake.Agent0).Alloc.Devices["cuda"]; !slices.Contains(ids, fake.GPU(4)) {
		t.Errorf("alice's move missing: %v", ids)
	}
}

// TestEditorStaleAfterExternalRollback: after this console's own apply,
// another process rolls agent.toml back to the bytes of before. The desk
// once ignored that hash for good (it was the engine's lag behind the
// apply), so the grid kept the applied amount and said "no change" until
// A; the draft must go STALE as soon as the engine reads the file.
func TestEditorStaleAfterExternalRollback(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	raw := sha256.Sum256([]byte(mustRead(t, path)))
	snap.ConfigHash = hex.EncodeToString(raw[:])
	var a *App
	desk := partition.NewDesk(partition.DeskOptions{Config: path, Now: func() time.Time { return fake.T0.Add(3 * time.Second) },
		Snapshot: func() *model.Snapshot {
			if a == nil || a.Snap == nil {
				return snap
			}
			return a.Snap
		}})
	a = editing(t, desk, snap, alice)
	before := mustRead(t, path)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "A")
	press(a, tab, enter)
	if mustRead(t, path) == before {
		t.Fatalf("alice's apply wrote nothing: %s", a.Flash.Text)
	}
	engineReads(t, a, a.Snap, path)
	a.Update(kit.TickMsg{})
	if a.ed().Stale != "" {
		t.Fatalf("stale after its own apply: %s", a.ed().Stale)
	}

	// bob rolls back from the CLI: the file is the one of before.
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: path, Actor: bob}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, path) != before {
		t.Fatal("the rollback did not restore the file")
	}
	engineReads(t, a, a.Snap, path) // adopting the snapshot is enough: no tick
	if v := screen(a); a.ed().Stale == "" || !strings.Contains(v, "STALE") {
		t.Fatalf("not stale after another process's rollback:\n%s", v)
	}
}

// TestEditorConfigReplaced: agent.toml replaced on disk while a draft is
// edited shows as stale, with the reason.
func TestEditorConfigReplaced(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Replace(mustRead(t, path), `mem = "120G"`, `mem = "100G"`, 1)), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	engineReads(t, a, snap, path)
	a.Update(kit.TickMsg{})
	if v := screen(a); !strings.Contains(v, "STALE") || !strings.Contains(v, "changed on disk") {
		t.Fatalf("replaced file not shown as stale:\n%s", v)
	}
	typeKeys(a, "p")
	if a.ed().Stale != "" {
		t.Fatal("review did not clear the staleness")
	}
	if got := a.ed().Plan.Current.Agent(fake.Agent0).Mem; got.Cmp(model.NewDec(100<<30, 0)) != 0 {
		t.Errorf("the review did not rebase on the new file: mem %s", got)
	}
}

// TestSmallDialogCutSaysWhereToReadIt: at 40x10 (an SSH session from a
// small pane) dialog bodies are cut. Every dialog's cut said "esc, then
// p: the whole plan", the take-over's too, where esc cancels it and p on
// the main screen shows no plan. Only the apply dialog points at the plan.
func TestSmallDialogCutSaysWhereToReadIt(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	desk := testDesk(path, snap)
	editing(t, desk, snap, alice)
	b := testApp(t, 40, 10, snap, Options{Actor: bob, Desk: desk})
	typeKeys(b, "e")
	if b.dlg() == nil || b.dlg().Kind != editor.DlgTakeOver {
		t.Fatalf("bob's e: dialog %+v", b.dlg())
	}
	v := screen(b)
	if !strings.Contains(v, "more line") {
		t.Fatalf("the take-over dialog is not cut at 40x10:\n%s", v)
	}
	if strings.Contains(v, "whole plan") {
		t.Errorf("the take-over dialog points at a plan it does not have:\n%s", v)
	}
}

func TestEditorTakeOver(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	desk := testDesk(path, snap) // one desk, two consoles: the SSH server's case
	al := editing(t, desk, snap, alice)
	viewer := testApp(t, 120, 40, snap, Options{ReadOnly: true, Actor: agentconfig.Actor{Name: "vic", Role: agentconfig.RoleViewer}, Desk: desk})
	if v := screen(viewer); !strings.Contains(v, "draft: alice since") {
		t.Errorf("a viewer does not see who holds the draft:\n%s", v)
	}

	b := testApp(t, 120, 40, snap, Options{Actor: bob, Desk: desk})
	typeKeys(b, "e")
	if b.ed() != nil || b.dlg() == nil || b.dlg().Kind != editor.DlgTakeOver {
		t.Fatalf("bob's e: editor %v dialog %+v", b.ed() != nil, b.dlg())
	}
	if v := screen(b); !strings.Contains(v, "alice (console) since") {
		t.Errorf("the dialog does not say who holds the draft:\n%s", v)
	}
	press(b, enter) // default Cancel
	if b.ed() != nil || b.dlg() != nil {
		t.Fatal("Enter on the take-over dialog took over")
	}
	if !strings.Contains(b.Flash.Text, "cancelled: nothing written") {
		t.Errorf("cancelled take-over: flash %q", b.Flash.Text)
	}
	if h, _ := desk.Holder(); h.Actor.Name != "alice" {
		t.Fatalf("holder %v", h)
	}
	typeKeys(b, "e")
	press(b, tab, enter)
	if b.ed() == nil {
		t.Fatalf("take-over failed: %s", b.Flash.Text)
	}
	if h, _ := desk.Holder(); h.Actor.Name != "bob" {
		t.Fatalf("holder %v", h)
	}

	al.Update(kit.TickMsg{})
	if al.ed().Lost == "" || !strings.Contains(screen(al), "no longer hold the draft") {
		t.Fatalf("alice was not told:\n%s", screen(al))
	}
	// Her footer offers only what still acts: it offered apply, undo and
	// reset, each answered "you no longer hold the draft" (the tour).
	al.Flash = kit.Flash{}
	foot := stripANSI(al.viewFooter(200))
	mustContain(t, "a lost draft's footer", foot, "esc", "? help", "ctrl+c quit")
	for _, gone := range []string{"apply", "undo", "reset", "mode"} {
		if strings.Contains(foot, gone) {
			t.Errorf("a lost draft's footer offers %q: %q", gone, foot)
		}
	}
	// So does the grid's legend above it.
	if v := screen(al); strings.Contains(v, "move the selected device") || strings.Contains(v, "m mode") {
		t.Errorf("a lost draft's legend offers the grid's keys:\n%s", v)
	}
	typeKeys(al, "jj")
	typeKeys(al, "A")
	if al.dlg() != nil {
		t.Error("alice can still open the apply dialog")
	}
	press(al, esc) // leaving: no discard question for a lost draft
	if al.ed() != nil {
		t.Fatal("esc did not leave the lost editor")
	}
	if h, _ := desk.Holder(); h.Actor.Name != "bob" {
		t.Errorf("alice leaving released bob's hold: %v", h)
	}
	viewer.Update(kit.TickMsg{})
	if v := screen(viewer); !strings.Contains(v, "draft: bob since") {
		t.Errorf("viewer header after the take-over:\n%s", v)
	}
	b.Close()
	if _, held := desk.Holder(); held {
		t.Error("Close did not give the draft back")
	}
}

func TestEditorLeaveAsksWhenDirty(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	desk := testDesk(path, snap)
	a := editing(t, desk, snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	press(a, esc)
	if a.dlg() == nil || a.dlg().Kind != editor.DlgDiscard {
		t.Fatal("esc with a draft did not ask")
	}
	press(a, enter) // Cancel
	if a.ed() == nil || !a.ed().Dirty() {
		t.Fatal("Enter on the discard dialog discarded")
	}
	if !strings.Contains(a.Flash.Text, "cancelled: nothing written") {
		t.Errorf("cancelled discard: flash %q", a.Flash.Text)
	}
	press(a, esc, tab, enter)
	if a.ed() != nil {
		t.Fatal("discard did not leave")
	}
	if _, held := desk.Holder(); held {
		t.Error("leaving did not give the draft back")
	}
	// q is a letter in the editor, not quit; ctrl+c quits and releases.
	typeKeys(a, "e")
	typeKeys(a, "q")
	if a.ed() == nil {
		t.Fatal("q left the editor")
	}
	_, cmd := a.Update(ctrlC)
	if cmd == nil || a.ed() != nil {
		t.Fatal("ctrl+c did not quit and release")
	}
}

func TestEditorModeSwitchPreview(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "m") // manual -> shared
	if a.ed().Plan.ModeTo != agentconfig.ModeShared {
		t.Fatalf("mode %s", a.ed().Plan.ModeTo)
	}
	typeKeys(a, "m") // -> auto-split: the grid previews the deal
	p := a.ed().Plan
	if p.ModeTo != agentconfig.ModeAutoSplit || !p.Next.Exclusive {
		t.Fatalf("mode %s", p.ModeTo)
	}
	if v := screen(a); !strings.Contains(v, "manual → auto-split") || !strings.Contains(v, "preview") {
		t.Errorf("no preview shown:\n%s", v)
	}
	// The preview is the deal: the first agent gets the first cores.
	if got := partition.IDRanges(p.Next.Agent(fake.Agent0).Owns["cpu"]); got != "0-15" {
		t.Errorf("auto-split cpu of numa0 = %s", got)
	}
	press(a, agentNum(2))
	if len(a.ed().Req.Moves) != 0 || !strings.Contains(a.Flash.Text, "manual") {
		t.Errorf("a move outside manual: %+v, flash %q", a.ed().Req.Moves, a.Flash.Text)
	}
	typeKeys(a, "m") // back to manual: nothing left to change
	if a.ed().Dirty() {
		t.Errorf("back to the file's mode, the draft is %+v", a.ed().Req)
	}
}

// TestEditorKeysAndHelp: the editor's keys exist for operators only, and
// its help lists them (and only while editing).
func TestEditorKeysAndHelp(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	desk := testDesk(path, snap)
	viewer := testApp(t, 120, 40, snap, Options{ReadOnly: true, Actor: agentconfig.Actor{Name: "vic", Role: agentconfig.RoleViewer}, Desk: desk})
	typeKeys(viewer, "e")
	if viewer.ed() != nil || viewer.dlg() != nil {
		t.Fatal("a viewer opened the editor")
	}
	if _, held := desk.Holder(); held {
		t.Fatal("a viewer holds the draft")
	}
	if !strings.Contains(viewer.Flash.Text, "is an operator's key") {
		t.Errorf("a viewer's e is not answered: flash %q", viewer.Flash.Text)
	}
	// esc drops that flash, which the help's footer would show: only the
	// help's list counts here.
	viewer.Update(keyCode(tea.KeyEscape))
	typeKeys(viewer, "?")
	for _, desc := range []string{"edit partition", "device to next agent", "apply", "undo"} {
		if strings.Contains(screen(viewer), desc) {
			t.Errorf("viewer help lists %q", desc)
		}
	}

	a := editing(t, desk, snap, alice)
	typeKeys(a, "?")
	help := screen(a)
	for _, desc := range []string{"device to next agent", "apply…", "undo", "reset draft", "plan / review", "journal", "mode shared/auto-split/manual"} {
		if !strings.Contains(help, desc) {
			t.Errorf("editor help lacks %q:\n%s", desc, help)
		}
	}
	if strings.Contains(help, "sort column") {
		t.Error("editor help lists main-screen keys")
	}
	press(a, esc)
	if ed := a.ed(); ed == nil || a.top() != kit.Layer(ed) {
		t.Fatal("esc from the help did not return to the editor")
	}

	// An operator without a desk is told why there is no editor.
	b := testApp(t, 120, 40, snap, Options{Actor: alice})
	typeKeys(b, "e")
	if b.ed() != nil || !strings.Contains(b.Flash.Text, "no agent.toml to edit") {
		t.Errorf("no desk: %q", b.Flash.Text)
	}
	// An operator console whose actor has no role is refused by the desk.
	c := testApp(t, 120, 40, snap, Options{Actor: agentconfig.Actor{Name: "x"}, Desk: desk})
	typeKeys(c, "e")
	if c.ed() != nil || !strings.Contains(c.Flash.Text, "not allowed") {
		t.Errorf("roleless actor: %q", c.Flash.Text)
	}
}

// TestEditorFits checks every editor screen at small and large sizes:
// exactly h rows, none wider than w.
func TestEditorFits(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {60, 16}, {200, 60}} {
		a := editing(t, testDesk(path, snap), snap, alice)
		a.Update(teaSize(sz[0], sz[1]))
		typeKeys(a, "jj")
		press(a, agentNum(2))
		for _, k := range []string{"", "A", "\x1b", "p", "J"} {
			switch k {
			case "\x1b":
				press(a, esc)
			case "":
			default:
				typeKeys(a, k)
			}
			checkFrame(t, a.View().Content, sz[0], sz[1])
			if v := screen(a); k == "A" && (!strings.Contains(v, "Cancel") || !strings.Contains(v, "> ") || !strings.Contains(v, string(fake.Agent0))) {
				t.Errorf("%dx%d: the dialog's field or buttons are cut:\n%s", sz[0], sz[1], screen(a))
			}
		}
		a.Close()
	}
}

func TestWrapWords(t *testing.T) {
	in := []kit.Span{{Lvl: kit.LvlPlain, Text: "kernel c638c90c of agent i-demo-numa0 holds 0.90 "}, {Lvl: kit.LvlWarn, Text: "cuda.shares on cuda:5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca103"}}
	for _, w := range []int{20, 33, 50, 200} {
		rows := kit.WrapWords(in, w)
		var all string
		for i, r := range rows {
			if n := kit.SpansWidth(r); n > w {
				t.Errorf("w=%d: row %d is %d wide", w, i, n)
			}
			for j, sp := range r {
				if i > 0 && j == 0 {
					continue // the indent
				}
				all += sp.Text
			}
		}
		if strings.ReplaceAll(all, " ", "") != strings.ReplaceAll(in[0].Text+in[1].Text, " ", "") {
			t.Errorf("w=%d: text lost: %q", w, all)
		}
		if w == 50 && !strings.HasSuffix(strings.TrimRight(spansText(rows[0]), " "), "holds 0.90") {
			t.Errorf("w=50: first row %q does not end at a word", spansText(rows[0]))
		}
	}
}

func spansText(sp []kit.Span) string {
	var b strings.Builder
	for _, s := range sp {
		b.WriteString(s.Text)
	}
	return b.String()
}

// TestEditorProgram drives the real program (teatest): open the editor,
// move a free device, apply through the dialog, and see the flash.
func TestEditorProgram(t *testing.T) {
	path := fixtureConfig(t)
	before := mustRead(t, path)
	snap := freeNode()
	desk := testDesk(path, snap)
	ch := make(chan *model.Snapshot, 1)
	ch <- snap
	tm := teatest.NewTestModel(t, New(ch, Options{Actor: alice, Desk: desk, Now: fixedNow, Theme: themes.MustBuiltin(themes.Mono)}),
		teatest.WithInitialTermSize(100, 30))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("gpu-node01")
	tm.Type("e")
	wait("Partition")
	tm.Type("jjj1A")
	wait("Apply the draft")
	tm.Send(tab)
	tm.Send(enter)
	wait("applied and verified")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*App)
	m.Close()
	if mustRead(t, path) == before {
		t.Error("the file was not written")
	}
	if _, held := desk.Holder(); held {
		t.Error("the draft is still held after Close")
	}
}

// BenchmarkEditorReplan is what a keypress (and a tick with a new
// snapshot) costs while editing: plan the draft and rebuild the grid.
func BenchmarkEditorReplan(b *testing.B) {
	path := fixtureConfig(b)
	snap := fake.Node(fake.Options{})
	a := testApp(b, 120, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
	typeKeys(a, "e")
	typeKeys(a, "jj2")
	b.ReportAllocs()
	for b.Loop() {
		a.ed().Replan()
		a.View()
	}
}

// TestEditorFieldsSayWhatTheyRead: the cpu and mem fields show, as they
// are typed, how the text is read; a size with no unit is bytes (said, not
// refused), a size below memory-align-size or of a fraction of a byte is
// refused, and so are a core listed twice and an empty part of a list.
func TestEditorFieldsSayWhatTheyRead(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	field := func(kind editor.EdRowKind, text string) (editor.FieldCheck, string) {
		t.Helper()
		a.ed().Cursor = slices.IndexFunc(a.ed().Rows, func(r editor.EdRow) bool { return r.Kind == kind && r.Agent == 0 })
		press(a, enter, clearIn)
		typeKeys(a, text)
		if a.ed().Input == nil {
			t.Fatalf("%q: the field is not open", text)
		}
		row := ""
		for _, l := range strings.Split(screen(a), "\n") {
			if strings.HasPrefix(l, "▶") {
				row = l
			}
		}
		return a.ed().InputCheck, row
	}
	cases := []struct {
		Kind              editor.EdRowKind
		Text              string
		shows, warn, errs string
	}{
		{Kind: editor.RowMem, Text: "120", shows: "= 120 bytes", errs: "below the config's memory-align-size 16 MiB"},
		{Kind: editor.RowMem, Text: "536870912", shows: "= 512 MiB", warn: "no unit: that is bytes"},
		{Kind: editor.RowMem, Text: "0.5G", shows: "= 512 MiB"},
		{Kind: editor.RowMem, Text: "96GiB", shows: "= 96 GiB"},
		{Kind: editor.RowMem, Text: "1M", errs: "below the config's memory-align-size"},
		{Kind: editor.RowMem, Text: "0.3K", errs: "not a whole number of bytes"},
		{Kind: editor.RowMem, Text: "12Q", errs: "not a size"},
		{Kind: editor.RowCPU, Text: "0-7", shows: "= 8 cores"},
		{Kind: editor.RowCPU, Text: "0-7,", errs: "a trailing comma"},
		{Kind: editor.RowCPU, Text: "0,,3", errs: "an empty part"},
		{Kind: editor.RowCPU, Text: "0-3,2", errs: "core 2 listed twice"},
		{Kind: editor.RowCPU, Text: "0-3,2-5", errs: "core 2-3 listed twice"},
	}
	for _, c := range cases {
		chk, row := field(c.Kind, c.Text)
		switch {
		case c.errs != "":
			if chk.Err == nil || !strings.Contains(chk.Err.Error(), c.errs) || !strings.Contains(row, c.errs) {
				t.Errorf("%q: error %v, row %q; want %q shown", c.Text, chk.Err, row, c.errs)
			}
			press(a, enter)
			if a.ed().Input == nil || a.ed().Dirty() {
				t.Errorf("%q was refused but entered the draft: %+v", c.Text, a.ed().Req)
			}
		default:
			if chk.Err != nil || !strings.Contains(row, c.shows) || (c.warn != "" && !strings.Contains(row, c.warn)) {
				t.Errorf("%q: check %+v, row %q; want %q and warning %q", c.Text, chk, row, c.shows, c.warn)
			}
			if c.warn == "" && strings.Contains(row, "no unit") {
				t.Errorf("%q: warned %q", c.Text, row)
			}
		}
		if c.shows != "" && !strings.Contains(row, c.shows) {
			t.Errorf("%q: row %q does not say %q", c.Text, row, c.shows)
		}
		press(a, esc)
	}
	// A bare number is allowed (a warning is not a refusal).
	field(editor.RowMem, "536870912")
	press(a, enter)
	if len(a.ed().Req.Mem) != 1 || a.ed().Req.Mem[0].Bytes.Cmp(model.NewDec(512<<20, 0)) != 0 {
		t.Fatalf("bare bytes: %+v", a.ed().Req.Mem)
	}
}

// TestEditorPlanViewReviews: the plan view's STALE banner says p reviews
// and recomputes; p there does it.
func TestEditorPlanViewReviews(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "p")
	if a.ed().Showing != editor.EdPlan {
		t.Fatal("p did not show the plan")
	}
	// Someone changes the file on disk (an editor, another tool).
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Replace(mustRead(t, path), `mem = "120G"`, `mem = "64G"`, 1)), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	engineReads(t, a, snap, path)
	a.Update(kit.TickMsg{})
	if v := screen(a); a.ed().Stale == "" || !strings.Contains(v, "p reviews and recomputes") {
		t.Fatalf("plan view not stale:\n%s", v)
	}
	a.Flash = kit.Flash{}
	a.Invalidate()
	if !strings.Contains(screen(a), "p plan") {
		t.Errorf("the plan view's footer does not offer p:\n%s", screen(a))
	}
	typeKeys(a, "p")
	if a.ed().Stale != "" || a.ed().Showing != editor.EdPlan {
		t.Fatalf("p in the plan view: stale %q, view %d", a.ed().Stale, a.ed().Showing)
	}
	if got := a.ed().Plan.Current.Agent(fake.Agent0).Mem; got.Cmp(model.NewDec(64<<30, 0)) != 0 {
		t.Errorf("not recomputed on the file as it is now: mem %s", got)
	}
}

// TestEditorHelpKeepsTheEditorsFooter: ? inside the editor lists the
// editor's keys; its footer offers neither the main screen's keys nor the
// editor's: the help's own (/ filter, j/k scroll), with q/esc back and
// ctrl+c quit.
func TestEditorHelpKeepsTheEditorsFooter(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	a.Flash = kit.Flash{}
	typeKeys(a, "?")
	lines := strings.Split(screen(a), "\n")
	foot := lines[len(lines)-1]
	if strings.Contains(foot, "detail") || strings.Contains(foot, "A apply") || strings.Contains(foot, "q quit") ||
		!strings.Contains(foot, "q/esc back") || !strings.Contains(foot, "ctrl+c quit") {
		t.Errorf("help footer over the editor: %q", foot)
	}
	if v := screen(a); !strings.Contains(v, "apply") {
		t.Errorf("the help over the editor does not list the editor's keys:\n%s", v)
	}
}

// TestEditorSaysWhyMainKeysDoNothing: / and : did nothing and said
// nothing in the editor, where q says why it does not quit (the tour):
// each says what it is for and how to get there, and the editor stays.
func TestEditorSaysWhyMainKeysDoNothing(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	for _, c := range []struct{ key, want string }{
		{"/", "/ filters on the main screen: esc leaves the editor"},
		{":", ": commands are on the main screen: esc leaves the editor"},
		{"q", "q does not quit in the editor: esc leaves it, ctrl+c quits"},
	} {
		a.Flash = kit.Flash{}
		typeKeys(a, c.key)
		if a.ed() == nil || a.top() != kit.Layer(a.ed()) {
			t.Fatalf("%s left the editor", c.key)
		}
		if a.Flash.Text != c.want {
			t.Errorf("%s: flash %q, want %q", c.key, a.Flash.Text, c.want)
		}
	}
}

// TestEditorFooterAndQuit: the footer keeps apply, plan, undo, leaving
// and quit at 120 and 80 columns; q says it is not quit; ctrl+c with a
// draft asks (default Cancel) and a second ctrl+c quits.
func TestEditorFooterAndQuit(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	desk := testDesk(path, snap)
	for _, w := range []int{120, 80} {
		a := editing(t, desk, snap, alice)
		a.Update(teaSize(w, 24))
		a.Flash = kit.Flash{}
		lines := strings.Split(screen(a), "\n")
		foot := lines[len(lines)-1]
		for _, want := range []string{"A apply", "p plan", "u undo", "esc back", "ctrl+c quit"} {
			if !strings.Contains(foot, want) {
				t.Errorf("%d columns: footer %q lacks %q", w, foot, want)
			}
		}
		if w == 120 && !strings.Contains(foot, "enter edit cpu/mem") {
			t.Errorf("120 columns: footer %q", foot)
		}
		a.Close()
	}
	a := editing(t, desk, snap, alice)
	typeKeys(a, "q")
	if a.ed() == nil || !strings.Contains(a.Flash.Text, "ctrl+c quits") {
		t.Fatalf("q: editor %v, flash %q", a.ed() != nil, a.Flash.Text)
	}
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	_, cmd := a.Update(ctrlC)
	if cmd != nil || a.dlg() == nil || a.dlg().Kind != editor.DlgDiscard || a.dlg().FocusOK || a.ed() == nil {
		t.Fatalf("ctrl+c with a draft: cmd %v, dialog %+v", cmd != nil, a.dlg())
	}
	press(a, enter) // Cancel
	if a.ed() == nil || !a.ed().Dirty() || !strings.Contains(a.Flash.Text, "cancelled") {
		t.Fatalf("cancelled quit lost the draft; flash %q", a.Flash.Text)
	}
	a.Update(ctrlC)
	_, cmd = a.Update(ctrlC)
	if cmd == nil || a.ed() != nil {
		t.Fatal("a second ctrl+c did not quit")
	}
	if _, held := desk.Holder(); held {
		t.Error("quitting kept the draft")
	}
	// ctrl+c inside a field asks too.
	a = editing(t, desk, snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	a.ed().Cursor = slices.IndexFunc(a.ed().Rows, func(r editor.EdRow) bool { return r.Kind == editor.RowMem })
	press(a, enter)
	if _, cmd := a.Update(ctrlC); cmd != nil || a.dlg() == nil || a.dlg().Kind != editor.DlgDiscard {
		t.Fatalf("ctrl+c in a field quit at once")
	}
	a.Close()
}

// TestEditorStatusSaysWhatTheDraftChanges: the status counts the draft's
// changes against the file, not the keys pressed; A applies is offered
// only when there is something to apply; shared mode is not "N devices".
func TestEditorStatusSaysWhatTheDraftChanges(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	status := func() string {
		lines := strings.Split(screen(a), "\n")
		return strings.Join(lines[len(lines)-4:len(lines)-1], "\n")
	}
	typeKeys(a, "jjj")
	for range 10 { // ten presses, one device moved
		press(a, keyCode(tea.KeyLeft))
		press(a, keyCode(tea.KeyRight))
	}
	press(a, agentNum(1))
	if s := status(); !strings.Contains(s, "draft: 1 device move ") || strings.Contains(s, "edits") || !strings.Contains(s, "A applies") {
		t.Errorf("one move after many presses:\n%s", s)
	}
	press(a, agentNum(2)) // back where the file has it
	if s := status(); strings.Contains(s, "A applies") || !strings.Contains(s, "draft: no change") {
		t.Errorf("no change:\n%s", s)
	}
	typeKeys(a, "m") // shared
	if s := status(); !strings.Contains(s, "every device shared by every agent") || strings.Contains(s, "changing owner") {
		t.Errorf("shared mode:\n%s", s)
	}
	a.ed().Lost = "taken over by bob"
	a.Invalidate()
	if s := status(); strings.Contains(s, "A applies") {
		t.Errorf("lost session offers apply:\n%s", s)
	}
}

// TestEditorMarksKernelsLeftBehind: after an apply moves a held device,
// its row still shows the old agent's kernels, marked !; so does a device
// the file gives to one agent while another's kernels hold it. The result
// line (with the backup path) wraps instead of being cut.
func TestEditorMarksKernelsLeftBehind(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	row := func(label string) string {
		for _, l := range strings.Split(screen(a), "\n") {
			if strings.Contains(l, label) && strings.Contains(l, "held by") {
				return l
			}
		}
		t.Fatalf("no row %q:\n%s", label, screen(a))
		return ""
	}
	if r := row("GPU0"); strings.Contains(r, "!") {
		t.Errorf("numa0's kernels on numa0's GPU0 marked: %q", r)
	}
	if r := row("GPU2"); !strings.Contains(r, "! not their agent's device") {
		t.Errorf("numa1's kernel on numa0's GPU2 not marked: %q", r)
	}
	press(a, agentNum(2)) // GPU0 to numa1
	typeKeys(a, "A")
	typeKeys(a, string(fake.Agent0))
	press(a, tab, enter)
	if a.ed().Dirty() || !strings.Contains(a.Flash.Text, "applied") {
		t.Fatalf("not applied: %q", a.Flash.Text)
	}
	if r := row("GPU0"); !strings.Contains(r, "! not their agent's device") {
		t.Errorf("numa0's kernels left on GPU0 after the apply not marked: %q", r)
	}
	v := screen(a)
	if !strings.Contains(strings.ReplaceAll(v, "\n", ""), filepath.Base(filepath.Dir(path))) {
		t.Errorf("the backup path is cut:\n%s", v)
	}
	lines := strings.Split(v, "\n")
	res := strings.Join(lines[len(lines)-3:len(lines)-1], " ")
	if !strings.Contains(res, "backup") || strings.Contains(res, "…") {
		t.Errorf("result rows: %q", res)
	}
}

// TestEditorPlanWrapKeepsMarkers: a "+ [...]" line of the plan diff that
// wraps keeps its + on the continuation rows.
func TestEditorPlanWrapKeepsMarkers(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	a.Update(teaSize(80, 40))
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "p")
	var plus []int
	lines := strings.Split(screen(a), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "+ ") {
			plus = append(plus, i)
		}
	}
	cont := 0
	for _, i := range plus {
		if i > 0 && slices.Contains(plus, i-1) {
			cont++
		}
	}
	if cont == 0 {
		t.Fatalf("no wrapped + line kept its marker at 80 columns:\n%s", screen(a))
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "      ") && strings.TrimSpace(l) != "" && i > 0 && slices.Contains(plus, i-1) && !slices.Contains(plus, i) {
			t.Errorf("row %d continues a + line without the marker: %q", i, l)
		}
	}
}

// TestEditorHelpWrapsAt80: the editor's notes in the help wrap, none is
// cut with an ellipsis.
func TestEditorHelpWrapsAt80(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	a.Update(teaSize(80, 24))
	for _, l := range helpLines(a, 80) {
		if tr := strings.TrimRight(ansi.Strip(l), " "); strings.HasSuffix(tr, "…") && !strings.HasSuffix(tr, "apply…") {
			t.Errorf("cut help line: %q", ansi.Strip(l))
		}
	}
	all := ansi.Strip(strings.Join(helpLines(a, 80), " "))
	if !strings.Contains(all, "restart them after an apply") {
		t.Errorf("the last note is missing")
	}
}

// TestEditorAsksFormat: switching to manual on a file without allocation
// tables asks which format to write them in, main's slot-based form by
// default (Enter), the BEP-1044 form only when chosen, and the editor says
// plainly that main cannot load the latter.
func TestEditorAsksFormat(t *testing.T) {
	text := "[resource]\nallocation-mode = \"auto-split\" # split\nreserved-cpu = 0\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent0) +
		"\"\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent1) + "\"\n"
	text = testfix.AgentTOML(text)
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "m") // auto-split -> manual: the question
	if a.dlg() == nil || a.dlg().Kind != editor.DlgFormat || a.dlg().FocusOK || a.ed().Plan.ModeTo != agentconfig.ModeAutoSplit {
		t.Fatalf("no format question:\n%s", screen(a))
	}
	if v := screen(a); !strings.Contains(v, "Main's slot-based") || !strings.Contains(v, "BEP-1044 device-based") {
		t.Errorf("the question does not name both formats:\n%s", v)
	}
	press(a, esc)
	if a.dlg() != nil || a.ed().Plan.ModeTo != agentconfig.ModeAutoSplit || a.ed().Dirty() {
		t.Fatalf("esc changed the draft: %+v", a.ed().Req)
	}

	typeKeys(a, "m")
	press(a, enter) // the default: main's form
	p := a.ed().Plan
	if p.ModeTo != agentconfig.ModeManual || p.Format != agentconfig.FormatSlotBased || p.DraftFormat || !p.Valid() {
		t.Fatalf("enter: mode %s format %s draft %v errors %q", p.ModeTo, p.Format, p.DraftFormat, p.Errors)
	}
	if !strings.Contains(string(p.NewRaw), "cpu = 16\n") || !strings.Contains(string(p.NewRaw), `"cuda.shares" = "2.00" }`) || strings.Contains(screen(a), agentconfig.DraftFormatWarning) {
		t.Errorf("slot-based manual:\n%s\n%s", p.NewRaw, screen(a))
	}

	press(a, keyRune('u'))
	typeKeys(a, "m")
	press(a, tab, enter) // the BEP-1044 form, chosen
	p = a.ed().Plan
	if p.ModeTo != agentconfig.ModeManual || p.Format != agentconfig.FormatDeviceBased || !p.DraftFormat {
		t.Fatalf("device-based: mode %s format %s draft %v", p.ModeTo, p.Format, p.DraftFormat)
	}
	if v := screen(a); !strings.Contains(v, agentconfig.DraftFormatWarning) {
		t.Errorf("the editor does not say main cannot load it:\n%s", v)
	}
	if b := mustRead(t, path); b != text {
		t.Errorf("the file changed without an apply:\n%s", b)
	}
}

// TestEditorVerdictFollowsFormat: the editor's plan is judged by
// Backend.AI main's loader unless the operator chose the BEP-1044 format,
// then by the draft's, and the status says which. The file has a key main
// removed (scaling-group), which the draft still takes: a file the agent
// of main refuses is not "valid" because the draft would load it.
func TestEditorVerdictFollowsFormat(t *testing.T) {
	text := "[resource]\nallocation-mode = \"shared\"\nreserved-cpu = 0\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent0) +
		"\"\nscaling-group = \"default\"\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent1) + "\"\n"
	text = testfix.AgentTOML(text)
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "m") // shared -> auto-split: no tables, main judges
	p := a.ed().Plan
	if p.ModeTo != agentconfig.ModeAutoSplit || p.Valid() || p.JudgedBy != partition.JudgeMain {
		t.Fatalf("auto-split: mode %s valid %v judged by %s: %q", p.ModeTo, p.Valid(), p.JudgedBy, p.Errors)
	}
	if v := screen(a); !strings.Contains(v, "INVALID under Backend.AI main's loader") {
		t.Errorf("the status does not say main's loader refuses it:\n%s", v)
	}
	typeKeys(a, "A")
	if a.dlg() != nil {
		t.Fatalf("apply opened a dialog for a plan main refuses:\n%s", screen(a))
	}

	typeKeys(a, "m")
	press(a, enter) // main's slot-based form: still main's verdict
	if p := a.ed().Plan; p.Format != agentconfig.FormatSlotBased || p.Valid() || p.JudgedBy != partition.JudgeMain {
		t.Fatalf("slot-based: format %s valid %v judged by %s", p.Format, p.Valid(), p.JudgedBy)
	}
	press(a, keyRune('u'))
	typeKeys(a, "m")
	press(a, tab, enter) // the BEP-1044 form, chosen: the draft's verdict counts
	p = a.ed().Plan
	if p.Format != agentconfig.FormatDeviceBased || !p.Valid() || p.JudgedBy != partition.JudgeDraft || p.LoadsOnMain {
		t.Fatalf("device-based: format %s valid %v judged by %s main %v: %q", p.Format, p.Valid(), p.JudgedBy, p.LoadsOnMain, p.Errors)
	}
	if v := screen(a); !strings.Contains(v, "valid under the BEP-1044 draft's loader (PR #8463)") {
		t.Errorf("the status does not say the draft's loader judged it:\n%s", v)
	}
}

// TestHeaderSaysDraftFormat: a console on a BEP-1044 file says so in its
// header, on every screen.
func TestHeaderSaysDraftFormat(t *testing.T) {
	snap := fake.Node(fake.Options{})
	a := testApp(t, 160, 30, snap, Options{})
	if strings.Contains(screen(a), agentconfig.DraftFormatWarning) {
		t.Fatal("a slot-based node warns")
	}
	for _, w := range []int{80, 160} {
		snap = fake.Node(fake.Options{})
		snap.DraftFormat = true
		a = testApp(t, w, 30, snap, Options{})
		if v := screen(a); !strings.Contains(strings.Join(strings.SplitN(v, "\n", 3)[:2], "\n"), agentconfig.DraftFormatWarning) {
			t.Errorf("header at width %d:\n%s", w, v)
		}
	}
}

// TestEditorKeepsItsPlanAtRest: the engine's retimed snapshot (same
// content, a newer time, every idle second) leaves the editor's plan as it
// is; a snapshot of new content plans again.
func TestEditorKeepsItsPlanAtRest(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	snap.Gen = 7
	a := editing(t, testDesk(path, snap), snap, alice)
	a.Update(kit.TickMsg{})
	plan := a.ed().Plan
	if plan == nil {
		t.Fatal("the editor has no plan")
	}
	for i := 1; i <= 3; i++ {
		c := *snap
		c.Seq += uint64(i)
		c.Time = snap.Time.Add(time.Duration(i) * time.Second)
		feed(a, &c)
		a.Update(kit.TickMsg{})
		if a.ed().Plan != plan {
			t.Fatalf("second %d: a retimed snapshot of the same content planned again", i)
		}
	}
	c := *snap
	c.Gen++
	feed(a, &c)
	if a.ed().Plan == plan {
		t.Fatal("a snapshot of new content did not plan again")
	}
}

// TestEditorApplyDialogSaysWhatWasNotChecked: a kernel file that could
// not be parsed hides what its kernel holds: the plan's verdict says it
// was valid only as far as it was checked, and the apply dialog lists what
// was not, above its Cancel.
func TestEditorApplyDialogSaysWhatWasNotChecked(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	snap.Issues = append(snap.Issues, model.Issue{Severity: model.SevError, Code: model.IssueParse,
		File: "/var/lib/backend.ai/scratches/k/config/resource.txt", Message: "SLOTS: not JSON"})
	desk := testDesk(path, snap)
	a := editing(t, desk, snap, alice)
	typeKeys(a, "jjj")
	press(a, agentNum(1))
	typeKeys(a, "A")
	v := screen(a)
	if a.dlg() == nil || !strings.Contains(v, "Not checked on this node:") || !strings.Contains(v, "1 kernel file(s) could not be read or parsed") || !strings.Contains(v, "▶ Cancel") {
		t.Fatalf("apply dialog:\n%s", v)
	}
	press(a, enter)
	if a.dlg() != nil {
		t.Fatal("the dialog did not close on Cancel")
	}
}

// TestEditorStaleReasonFollowsTheFile: agent.toml made unusable on disk
// while a draft is edited makes it stale ("cannot be used"); restored byte
// for byte, the draft stays stale until p, but no longer says the file
// cannot be used.
func TestEditorStaleReasonFollowsTheFile(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	raw := sha256.Sum256([]byte(mustRead(t, path)))
	snap.ConfigHash = hex.EncodeToString(raw[:])
	a := editing(t, testDesk(path, snap), snap, alice)
	bad := *a.Snap
	bad.Seq++
	bad.ConfigHash = model.ConfigUnusable
	a.adoptNow(&bad)
	a.Update(kit.TickMsg{})
	if !strings.Contains(a.ed().Stale, "cannot be used") {
		t.Fatalf("stale %q, want the file that cannot be used", a.ed().Stale)
	}
	engineReads(t, a, a.Snap, path)
	a.Update(kit.TickMsg{})
	if s := a.ed().Stale; s == "" || strings.Contains(s, "cannot be used") {
		t.Fatalf("stale %q after the file came back: want stale, not 'cannot be used'", s)
	}
	// (The flash of the moment it went stale, in the footer, says what
	// happened then.)
	v := screen(a)
	if body := v[:strings.LastIndex(strings.TrimRight(v, "\n"), "\n")]; strings.Contains(body, "cannot be used") {
		t.Errorf("the editor still says the file cannot be used:\n%s", v)
	}
}

// TestEditorReviewOfUnusableFileSaysWhy: agent.toml broken on disk under a
// draft makes it stale, and the editor offers p; p on a file that does not
// load used to do nothing and say nothing. It now says why it cannot
// review, and the draft stays stale.
func TestEditorReviewOfUnusableFileSaysWhy(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	raw := sha256.Sum256([]byte(mustRead(t, path)))
	snap.ConfigHash = hex.EncodeToString(raw[:])
	a := editing(t, testDesk(path, snap), snap, alice)
	if err := os.WriteFile(path, []byte(mustRead(t, path)+"\ngarbage = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := *a.Snap
	bad.Seq++
	bad.ConfigHash = model.ConfigUnusable
	a.adoptNow(&bad)
	a.Update(kit.TickMsg{})
	if !strings.Contains(a.ed().Stale, "cannot be used") {
		t.Fatalf("stale %q, want the file that cannot be used", a.ed().Stale)
	}
	press(a, keyRune('p'))
	if !strings.Contains(a.Flash.Text, "cannot review") || !strings.Contains(a.Flash.Text, "not valid TOML") {
		t.Errorf("p on a file that does not load: flash %q, want why it cannot review\n%s", a.Flash.Text, screen(a))
	}
	if a.ed().Stale == "" {
		t.Error("the draft is no longer stale, on a file that does not load")
	}
}

// TestLeavingEditorDropsItsFlash: the footer's "editing FILE: the draft is
// yours until you leave (esc)" goes with the editor; it stayed its time on
// the main screen after esc, saying the draft was still the operator's.
func TestLeavingEditorDropsItsFlash(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	if !strings.Contains(screen(a), "the draft is yours") {
		t.Fatalf("the editor opened without its note:\n%s", screen(a))
	}
	press(a, esc)
	if a.ed() != nil {
		t.Fatalf("esc did not leave the editor:\n%s", screen(a))
	}
	if s := screen(a); strings.Contains(s, "the draft is yours") {
		t.Errorf("the main screen still says the draft is yours:\n%s", s)
	}
}

package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/enginetest"
	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// Two agents of a slot-based node whose sessions a real recorder records.
const (
	rpA = model.AgentID("i-node-a")
	rpB = model.AgentID("i-node-b")
)

// recordedNode is a node recorded by the real recorder: a real agent.toml
// (slot-based, manual: i-node-a given 1.5 cuda.shares, i-node-b 2.5 of the
// four mock A100s' 4.0), a real scratch tree per agent, the real engine
// following it with a scripted clock, the recorder writing what it
// publishes. Known by hand: i-node-a runs kernel 1 (1.0 on GPU0) from +1h
// and kernel 2 (0.8 on GPU1) from +2h, both to +3h, so its peak is 1.8
// over its 1.5; i-node-b runs kernel 3 (1.0 on GPU2) from +1h30 to +4h.
// It returns the config, the history directory and the node's last
// snapshot; the record ends a day after it began, within the console's
// week before fixedNow.
func recordedNode(t *testing.T) (string, string, *model.Snapshot) {
	t.Helper()
	base := fixedNow().Add(-5 * 24 * time.Hour)
	var now atomic.Int64
	now.Store(base.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	agent := func(id model.AgentID, port int, shares string) string {
		return fmt.Sprintf("[[agents]]\n[agents.agent]\nid = %q\nagent-sock-port = %d\n[agents.resource]\ncpu = 60\nmem = \"480G\"\ndevices = { \"cuda.shares\" = %q }\n", id, port, shares)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	text := testfix.AgentTOML("[resource]\nallocation-mode = \"manual\"\n" + agent(rpA, 6007, "1.5") + agent(rpB, 6008, "2.5"))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	live, roots := enginetest.StartScripted(t, path, clock, rpA, rpB)
	dir := t.TempDir()
	rec, err := record.Open(record.Options{Dir: dir, FlushEvery: time.Millisecond, Clock: clock, Keep: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var last *model.Snapshot
	observe := func(cond func(*model.Snapshot) error) {
		last = live.Wait(t, "the scripted change", 20*time.Second, cond)
		rec.Observe(last)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	observe(func(*model.Snapshot) error { return nil })
	files := enginetest.NewFiles(t)
	start := func(d time.Duration, ag model.AgentID, n, gpu int, amt string) {
		now.Store(base.Add(d).UnixNano())
		id := enginetest.KernelID(n)
		enginetest.MustWriteKernel(t, roots[ag], id, files.Resource(roots[ag], id, []enginetest.Share{{Dev: enginetest.MockDevices[gpu], Amount: model.MustDec(amt)}}))
		observe(func(s *model.Snapshot) error {
			if k := s.Kernel(model.KernelID(id)); k == nil || k.Alloc == nil {
				return fmt.Errorf("kernel %s not seen yet", id)
			}
			return nil
		})
	}
	stop := func(d time.Duration, ag model.AgentID, n int) {
		now.Store(base.Add(d).UnixNano())
		id := enginetest.KernelID(n)
		if err := os.RemoveAll(filepath.Join(roots[ag], id)); err != nil {
			t.Fatal(err)
		}
		observe(func(s *model.Snapshot) error {
			if s.Kernel(model.KernelID(id)) != nil {
				return fmt.Errorf("kernel %s still seen", id)
			}
			return nil
		})
	}
	start(time.Hour, rpA, 1, 0, "1.0")
	start(90*time.Minute, rpB, 3, 2, "1.0")
	start(2*time.Hour, rpA, 2, 1, "0.8")
	stop(3*time.Hour, rpA, 1)
	stop(3*time.Hour+time.Second, rpA, 2)
	stop(4*time.Hour, rpB, 3)
	now.Store(base.Add(24 * time.Hour).UnixNano())
	observe(func(*model.Snapshot) error { return nil })
	return path, dir, last
}

// replayConsole is an operator's console on the recorded node with the
// editor open, run from here on as a program runs it (commands in their
// own goroutines).
func replayConsole(t *testing.T) (*App, chan tea.Msg) {
	t.Helper()
	path, dir, snap := recordedNode(t)
	return editorOpen(t, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: dir})
}

// editorOpen is a console given o on snap with the editor open, run from
// here on as a program runs it; msgs are the messages its commands send.
func editorOpen(t *testing.T, snap *model.Snapshot, o Options) (*App, chan tea.Msg) {
	t.Helper()
	a := testApp(t, 140, 40, snap, o)
	a.SyncCmds = false
	msgs := make(chan tea.Msg, 64)
	step(a, msgs, keyRune('e'))
	deliverUntil(t, a, msgs, "the editor", func() bool { return a.ed() != nil })
	return a, msgs
}

// typeAmount moves the slot grid's cursor by the keys moves and types amt
// as the amount of the row it lands on, not yet entered.
func typeAmount(a *App, msgs chan tea.Msg, moves, amt string) {
	typeKeysAsync(a, msgs, moves)
	step(a, msgs, enter)
	step(a, msgs, clearIn)
	typeKeysAsync(a, msgs, amt)
}

// setAmount is typeAmount, entered.
func setAmount(a *App, msgs chan tea.Msg, moves, amt string) {
	typeAmount(a, msgs, moves, amt)
	step(a, msgs, enter)
}

// step is one key press, its commands run as a program runs them.
func step(a *App, msgs chan tea.Msg, k tea.KeyPressMsg) {
	_, cmd := a.Update(k)
	runCmds(cmd, msgs)
}

// lineUntil delivers messages until the screen has want, and returns it.
func lineUntil(t *testing.T, a *App, msgs chan tea.Msg, want string) string {
	t.Helper()
	return lineUntilNever(t, a, msgs, want, "")
}

// lineUntilNever is lineUntil where a screen with never (unless empty)
// before want fails the test.
func lineUntilNever(t *testing.T, a *App, msgs chan tea.Msg, want, never string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for v := screen(a); !strings.Contains(v, want); v = screen(a) {
		if never != "" && strings.Contains(v, never) {
			t.Fatalf("the screen shows %q before the line %q:\n%s", never, want, v)
		}
		select {
		case m := <-msgs:
			_, c := a.Update(m)
			runCmds(c, msgs)
		case <-deadline:
			t.Fatalf("the replay's line %q never came:\n%s", want, screen(a))
		}
	}
	return screen(a)
}

// TestEditorReplayLine: the draft is replayed against the real record
// after each edit, in a command (the Update of the edit returns with the
// line still saying it is replaying), and the line under the verdict says
// what it found, as worked out by hand: under the file, and under a draft
// that gives i-node-b less, i-node-a's second kernel (1.8 held of its
// 1.5) would not have started. R lists it (time, kernel, agent, what it
// asked, why in the manager's words); esc goes back.
func TestEditorReplayLine(t *testing.T) {
	a, msgs := replayConsole(t)
	e := a.ed()
	if e.Scope() != editor.ScSlotGrid {
		t.Fatalf("scope %v: the recorded node's file is slot-based", e.Scope())
	}
	// The first row is i-node-a's cuda.shares, the second i-node-b's.
	typeAmount(a, msgs, "j", "2.2")
	began := time.Now()
	_, cmd := a.Update(enter)
	took := time.Since(began)
	if got := e.Req.Slots; len(got) != 1 || got[0].Agent != rpB || got[0].Amount.String() != "2.2" {
		t.Fatalf("draft %+v, want i-node-b cuda.shares 2.2", got)
	}
	if v := screen(a); !strings.Contains(v, "last 7d under this draft: replaying") {
		t.Errorf("right after the edit the line does not say it is replaying (Update must not replay):\n%s", v)
	}
	if cmd == nil {
		t.Fatal("the edit returned no command: the replay does not run off the UI loop")
	}
	runCmds(cmd, msgs)
	v := lineUntil(t, a, msgs, "1 session of i-node-a would not have started (cuda.shares peak 1.8 > 1.5)")
	if !strings.Contains(v, "(all the record holds) under this draft: 1 session of i-node-a") || !strings.Contains(v, "R lists them") {
		t.Errorf("the line:\n%s", v)
	}
	t.Logf("the edit's Update took %v", took)
	// At 80 columns the line is cut: the key that lists the refused
	// sessions and what would not have started go first, the span last,
	// rather than off the edge (the tours).
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if v := screen(a); !strings.Contains(v, "R lists them: 1 session of i-node-a would not have started (cuda.shares peak 1") {
		t.Errorf("at 80 columns the replay line loses R:\n%s", v)
	}
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})

	step(a, msgs, keyRune('R'))
	if e.Scope() != editor.ScRefused {
		t.Fatalf("R: scope %v", e.Scope())
	}
	v = screen(a)
	for _, want := range []string{"Refused under the draft", "KERNEL", enginetest.KernelID(2)[:12], "i-node-a", "cuda.shares=0.8", "the manager would not send it there", "0.5 cuda.shares free (given 1.5, its kernels hold 1.0), 0.8 requested", "have run on i-node-b"} {
		if !strings.Contains(v, want) {
			t.Errorf("the refused list lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, enginetest.KernelID(1)[:12]) || strings.Contains(v, enginetest.KernelID(3)[:12]) {
		t.Errorf("the refused list names a kernel that starts:\n%s", v)
	}
	step(a, msgs, esc)
	if e.Scope() != editor.ScSlotGrid {
		t.Fatalf("esc from the refused list: scope %v", e.Scope())
	}
}

// TestEditorReplaySuggest: S fills the draft with replay's suggestion
// (off the UI loop too): i-node-a's peak, 1.8, and i-node-b what is left
// of the node's 4.0 nearest its 2.5, 2.2; the line then says every
// recorded session starts; u undoes it.
func TestEditorReplaySuggest(t *testing.T) {
	a, msgs := replayConsole(t)
	e := a.ed()
	step(a, msgs, keyRune('S'))
	deliverUntil(t, a, msgs, "the suggestion", func() bool { return len(e.Req.Slots) > 0 })
	got := map[model.AgentID]string{}
	for _, s := range e.Req.Slots {
		got[s.Agent] += string(s.Slot) + "=" + s.Amount.String()
	}
	if got[rpA] != "cuda.shares=1.8" || got[rpB] != "cuda.shares=2.2" || len(got) != 2 {
		t.Errorf("S filled the draft with %v, want i-node-a cuda.shares=1.8, i-node-b cuda.shares=2.2", got)
	}
	if !strings.Contains(a.Flash.Text, "every recorded session starts") {
		t.Errorf("flash %q", a.Flash.Text)
	}
	// i-node-a's kernels held 1.8 of its 1.5 and the record saw them run:
	// the raise is said to be weighed, as plan --suggest says it.
	if !strings.Contains(a.Flash.Text, "weigh the raise before applying it: i-node-a's kernels asked 1.8 cuda.shares") || a.Flash.Lvl != kit.LvlWarn {
		t.Errorf("flash %q (level %v): no word of the raise over what the record saw held", a.Flash.Text, a.Flash.Lvl)
	}
	// At 80 columns the footer cut the flash after "every recorded
	// session starts under --slot i-node-a=cuda.shares=1.…": the warning
	// and u were never seen (the tour, at any width below 250).
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if v := screen(a); !strings.Contains(v, "suggestion: weigh the raise before applying it (u undoes)") {
		t.Errorf("at 80 columns the flash of S loses the warning:\n%s", v)
	}
	step(a, msgs, keyRune('S'))
	deliverUntil(t, a, msgs, "the second suggestion", func() bool { return strings.Contains(a.Flash.Text, "the draft has them already") })
	if v := screen(a); !strings.Contains(v, "suggestion: all sessions start; the draft has them ") {
		t.Errorf("at 80 columns the flash of S again is cut:\n%s", v)
	}
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	lineUntil(t, a, msgs, "(all the record holds) under this draft: all 3 sessions start")
	// Where the line is cut, it was cut before its verdict ("as it is:
	// all 8 s…" at 80 columns in the tour, a young record's span being
	// "last 7s (all the record held, read 48s ago)"; here at 64): the
	// verdict goes first there, as a refusal's count does.
	a.Update(tea.WindowSizeMsg{Width: 64, Height: 24})
	if v := screen(a); !strings.Contains(v, " all 3 sessions start · last 1d") {
		t.Errorf("at 64 columns the replay line loses its verdict:\n%s", v)
	}
	a.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	step(a, msgs, keyRune('u'))
	if len(e.Req.Slots) != 0 {
		t.Errorf("u after S: draft %+v", e.Req.Slots)
	}
	lineUntil(t, a, msgs, "R lists them: 1 session of i-node-a ran that these amounts refuse (cuda.shares peak 1.8 > 1.5) · last")
}

// TestEditorReplaySuggestQuantumUnknown: on a fractional node that could
// not read its quantum_size, S fills nothing: amounts in steps of a
// default quantum may be ones the node's allocator rounds away.
func TestEditorReplaySuggestQuantumUnknown(t *testing.T) {
	path, dir, snap := recordedNode(t)
	if !snap.Allocator.Fractional {
		t.Fatalf("the recorded node's allocator %+v: want fractional", snap.Allocator)
	}
	snap.Allocator.Quantum = model.Zero
	a, msgs := editorOpen(t, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: dir})
	e := a.ed()
	step(a, msgs, keyRune('S'))
	deliverUntil(t, a, msgs, "the refusal", func() bool { return strings.Contains(a.Flash.Text, "quantum_size") })
	if !strings.HasPrefix(a.Flash.Text, "S: ") || len(e.Req.Slots) != 0 {
		t.Errorf("flash %q, draft %+v: want no suggestion naming the quantum_size, the draft untouched", a.Flash.Text, e.Req.Slots)
	}
}

// TestEditorReplayKeysOperatorsOnly: the replay's keys are in an
// operator's map (help lists S and R in the slot-based grid) only where a
// record is; a viewer's (--readonly) map has neither, its help does not
// offer filling a draft, and S there only reverses the sort.
func TestEditorReplayKeysOperatorsOnly(t *testing.T) {
	S := keyRune('S')
	op := NewKeyMap(kit.RoleOperator)
	if op.LookupIn(editor.ScSlotGrid, S) != kit.ActNone {
		t.Error("S is bound in the editor of a console without a record")
	}
	path, dir, snap := recordedNode(t)
	a := testApp(t, 140, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: dir})
	if a.Keys.LookupIn(editor.ScSlotGrid, S) != editor.ActEdSuggest {
		t.Error("S does not fill the draft in an operator's slot-based grid")
	}
	typeKeys(a, "e?")
	if h := screen(a); !strings.Contains(h, "fill the draft with the amounts") || !strings.Contains(h, "the draft would have refused") {
		t.Errorf("the operator's help does not list S and R:\n%s", h)
	}

	v := testApp(t, 140, 40, snap, Options{Actor: bob, Desk: testDesk(path, snap), History: dir, ReadOnly: true})
	for _, sc := range []kit.Scope{editor.ScSlotGrid, editor.ScEditor, ScMain} {
		if act := v.Keys.LookupIn(sc, S); act == editor.ActEdSuggest {
			t.Errorf("S fills a draft in a viewer's scope %v", sc)
		}
	}
	for _, b := range v.Keys.BindingList {
		if b.Act == editor.ActEdSuggest || b.Act == editor.ActEdRefused {
			t.Errorf("a viewer's key map has %q", b.Key.Help().Desc)
		}
	}
	typeKeys(v, "eS")
	if v.ed() != nil {
		t.Fatal("a viewer opened the editor")
	}
	typeKeys(v, "?")
	h := strings.Join(helpLines(v, 140), "\n")
	if strings.Contains(h, "fill the draft") || strings.Contains(h, "would have refused") {
		t.Errorf("the viewer's help offers the replay's keys:\n%s", h)
	}
}

// TestEditorReplaySupersede: an edit made while the replay of the draft
// before it runs supersedes it: that replay's answer (one refused
// session) is never shown, the next replay starts once it returns, and
// the line ends with the answer for the draft as it is (all start).
func TestEditorReplaySupersede(t *testing.T) {
	a, msgs := replayConsole(t)
	lineUntil(t, a, msgs, "R lists them: 1 session of i-node-a ran that these amounts refuse (cuda.shares peak 1.8 > 1.5) · last")
	// i-node-b to 1.0: i-node-a still refuses its second kernel.
	setAmount(a, msgs, "j", "1.0")
	// Its debounce ends: the replay starts; its command is held back.
	var held tea.Cmd
	for held == nil {
		select {
		case m := <-msgs:
			_, c := a.Update(m)
			if _, ok := m.(editor.ReplayMsg); ok {
				held = c
			} else {
				runCmds(c, msgs)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the first edit's replay never started")
		}
	}
	// i-node-a to 2.0 while it runs: every session starts.
	setAmount(a, msgs, "k", "2.0")
	if got := a.ed().Req.Slots; len(got) != 2 {
		t.Fatalf("draft %+v, want both agents' cuda.shares", got)
	}
	runCmds(held, msgs)
	// "1 session" would be the answer for the draft already replaced.
	lineUntilNever(t, a, msgs, "(all the record holds) under this draft: all 3 sessions start", "under this draft: 1 session")
}

// typeKeysAsync types s, running the commands as a program does.
func typeKeysAsync(a *App, msgs chan tea.Msg, s string) {
	for _, r := range s {
		step(a, msgs, keyRune(r))
	}
}

// TestEditorReplayNothingRecordedYet: a recorder that has written nothing
// yet (the demo's first seconds) is said as such, not as an error that
// repeats its prefix ("no replay: replay: the history directory holds no
// record yet").
func TestEditorReplayNothingRecordedYet(t *testing.T) {
	path, _, snap := recordedNode(t)
	a, msgs := editorOpen(t, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: t.TempDir()})
	setAmount(a, msgs, "j", "2.2")
	v := lineUntil(t, a, msgs, "last 7d: nothing recorded yet to replay")
	if strings.Contains(v, "replay: replay:") || strings.Contains(v, "no replay:") {
		t.Errorf("the line:\n%s", v)
	}
}

// TestEditorLegendWholeKeys: the slot grid's legend lists its keys; at 80
// columns the edge cut one in the middle ("u undo · r reset d…", the
// tour). Keys that do not fit are left out whole, marked "…" as the
// footer marks them, and each one shown is as it reads at full width.
func TestEditorLegendWholeKeys(t *testing.T) {
	a, _ := replayConsole(t)
	legend := func() string {
		for _, ln := range strings.Split(screen(a), "\n") {
			if strings.Contains(ln, "enter edit amount") {
				return strings.TrimSpace(ln)
			}
		}
		t.Fatalf("no legend:\n%s", screen(a))
		return ""
	}
	wide := legend()
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	narrow := legend()
	parts := strings.Split(narrow, " · ")
	if len(parts) < 3 || parts[len(parts)-1] != "…" {
		t.Fatalf("at 80 columns the legend %q does not end in a left-out mark", narrow)
	}
	for _, p := range parts[:len(parts)-1] {
		if !strings.Contains(wide, p+" · ") {
			t.Errorf("at 80 columns the legend %q shows %q, not a key as the full legend %q has it", narrow, p, wide)
		}
	}
}

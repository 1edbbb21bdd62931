package console

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestPushKeepsRanks: whatever order layers open in, the prompt stays
// over dialogs and dialogs over screens; screens stack newest on top.
func TestPushKeepsRanks(t *testing.T) {
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{})
	ed := &editor.Editor{Common: a.Common}
	hs := &helpScreen{common: a.common}
	d1 := &kit.Dialog{Common: a.Common, Title: "one"}
	d2 := &kit.Dialog{Common: a.Common, Title: "two"}
	p := &prompt{common: a.common, mode: PromptFilter}
	for _, l := range []kit.Layer{p, d1, ed, hs, d2} {
		a.push(l)
	}
	want := []kit.Layer{ed, hs, d1, d2, p}
	for i := range want {
		if a.layers[i] != want[i] {
			t.Fatalf("layer %d is %T (%p), want %T (%p)", i, a.layers[i], a.layers[i], want[i], want[i])
		}
	}
	if a.top() != kit.Layer(p) || a.ed() != ed || a.dlg() != d2 {
		t.Fatalf("top %T, ed %p, dlg %p", a.top(), a.ed(), a.dlg())
	}
	// A closed layer gives up the keys at once and leaves the stack when
	// Update returns.
	p.Close()
	if a.top() != kit.Layer(d2) {
		t.Fatalf("with the prompt closed the top is %T", a.top())
	}
	a.Update(frameMsg{})
	if len(a.layers) != 4 {
		t.Fatalf("%d layers after prune, want 4", len(a.layers))
	}
}

// TestKeyRouting: the top layer has the keys. Each case opens layers the
// way an operator does and checks who took a key.
func TestKeyRouting(t *testing.T) {
	for _, tt := range []struct {
		Name  string
		check func(t *testing.T, a *App)
	}{
		{"a dialog over the editor takes the key", func(t *testing.T, a *App) {
			typeKeys(a, "jjj")
			press(a, agentNum(1))
			typeKeys(a, "A")
			if a.dlg() == nil {
				t.Fatal("A opened no dialog")
			}
			cursor, req := a.ed().Cursor, len(a.ed().Req.Moves)
			typeKeys(a, "jk2u")
			if a.ed().Cursor != cursor || len(a.ed().Req.Moves) != req {
				t.Fatalf("keys under the dialog reached the editor: cursor %d→%d, moves %d→%d", cursor, a.ed().Cursor, req, len(a.ed().Req.Moves))
			}
			press(a, esc)
			if a.dlg() != nil || a.ed() == nil || !a.ed().Dirty() || a.top() != kit.Layer(a.ed()) {
				t.Fatalf("esc: dialog %v, top %T; want the dialog gone and the editor with its draft", a.dlg() != nil, a.top())
			}
			if !strings.Contains(a.Flash.Text, "cancelled") {
				t.Errorf("flash %q", a.Flash.Text)
			}
		}},
		{"the help over the editor takes q as a filter letter after /", func(t *testing.T, a *App) {
			typeKeys(a, "?")
			if helpOf(a) == nil || a.top() != kit.Layer(helpOf(a)) {
				t.Fatalf("? in the editor: top %T", a.top())
			}
			typeKeys(a, "/")
			_, cmd := a.Update(keyRune('q'))
			if cmd != nil || helpOf(a) == nil || helpOf(a).Filter != "q" || a.ed() == nil {
				t.Fatalf("q over the editor: cmd %v, help %+v, editor %v", cmd != nil, helpOf(a), a.ed() != nil)
			}
			// The help lists the editor's keys, and its footer is the
			// editor's.
			if v := screen(a); !strings.Contains(v, "q is a letter here") {
				t.Errorf("filtered editor help lacks the q note:\n%s", v)
			}
			press(a, esc, esc)
			if a.top() != kit.Layer(a.ed()) {
				t.Fatalf("esc, esc: top %T, want the editor", a.top())
			}
			// Not typing, q closes the help and the editor stays.
			typeKeys(a, "?")
			if _, cmd := a.Update(keyRune('q')); cmd != nil || a.top() != kit.Layer(a.ed()) {
				t.Fatalf("q on the help over the editor: cmd %v, top %T", cmd != nil, a.top())
			}
		}},
		{"a dialog opens over the help and is drawn there", func(t *testing.T, a *App) {
			typeKeys(a, "jjj")
			press(a, agentNum(1))
			typeKeys(a, "?")
			_, cmd := a.Update(ctrlC)
			if cmd != nil || a.dlg() == nil || a.dlg().Kind != editor.DlgDiscard {
				t.Fatalf("ctrl+c over the help with a draft: cmd %v, dialog %+v", cmd != nil, a.dlg())
			}
			if v := screen(a); !strings.Contains(v, "Quit fgtop") || !strings.Contains(v, " Help ") {
				t.Errorf("the question is not drawn over the help:\n%s", v)
			}
			// The dialog has the keys: a letter is not the help's filter.
			typeKeys(a, "x")
			if helpOf(a).Filter != "" {
				t.Errorf("a key under the dialog reached the help: filter %q", helpOf(a).Filter)
			}
			press(a, esc)
			if a.top() != kit.Layer(helpOf(a)) || a.ed() == nil || !a.ed().Dirty() {
				t.Fatalf("esc: top %T; want the help over the editor, the draft kept", a.top())
			}
		}},
	} {
		t.Run(tt.Name, func(t *testing.T) {
			snap := freeNode()
			a := editing(t, testDesk(fixtureConfig(t), snap), snap, alice)
			defer a.Close()
			tt.check(t, a)
		})
	}
}

// TestPromptOverLateDialog: the take-over question comes back from the
// desk after the operator has started typing a filter; it opens under
// the prompt, which keeps the keys until it closes.
func TestPromptOverLateDialog(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	desk := testDesk(path, snap)
	al := editing(t, desk, snap, alice)
	defer al.Close()
	bo := testApp(t, 120, 40, snap, Options{Actor: bob, Desk: desk})
	defer bo.Close()
	bo.SyncCmds = false
	msgs := make(chan tea.Msg, 16)
	_, cmd := bo.Update(keyRune('e')) // the desk's Open runs in a command
	typeKeys(bo, "/numa")
	runCmds(cmd, msgs)
	deliverUntil(t, bo, msgs, "the take-over question", func() bool { return bo.dlg() != nil })
	if p := promptOf(bo); p == nil || bo.top() != kit.Layer(p) {
		t.Fatalf("the dialog took the top from the prompt: top %T", bo.top())
	}
	typeKeys(bo, "0")
	if promptOf(bo).Input != "numa0" || bo.Kernels.Filter != "numa0" || bo.dlg().FocusOK {
		t.Fatalf("a key with the prompt over a dialog: input %q, filter %q", promptOf(bo).Input, bo.Kernels.Filter)
	}
	press(bo, enter)
	if promptOf(bo) != nil || bo.top() != kit.Layer(bo.dlg()) {
		t.Fatalf("enter: top %T, want the dialog", bo.top())
	}
	press(bo, esc)
	if bo.ModalOpen() || !strings.Contains(bo.Flash.Text, "stays with its holder") {
		t.Fatalf("esc: top %T, flash %q", bo.top(), bo.Flash.Text)
	}
}

// TestDetailHelpAndWheel: ? on a detail shows the help over it (esc
// then returns to the detail, scrolled as it was), and the wheel scrolls
// the screen on top, passing the prompt by.
func TestDetailHelpAndWheel(t *testing.T) {
	a := testApp(t, 100, 20, fake.Node(fake.Options{}), Options{})
	a.Update(keyCode(tea.KeyEnter))
	if detailOf(a) == nil {
		t.Fatal("enter opened no detail")
	}
	wheel := func(b tea.MouseButton) { a.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: b}) }
	wheel(tea.MouseWheelDown)
	wheel(tea.MouseWheelDown)
	if got := detailOf(a).off; got != 2 {
		t.Errorf("two wheel steps down the detail: offset %d", got)
	}
	typeKeys(a, "?")
	if _, ok := a.top().(*helpScreen); !ok {
		t.Fatalf("? on the detail: top %T, want the help", a.top())
	}
	wheel(tea.MouseWheelDown)
	if helpOf(a).off != 1 {
		t.Errorf("wheel on the help: offset %d", helpOf(a).off)
	}
	press(a, esc)
	if ds, ok := a.top().(*detail); !ok || ds.off != 2 {
		t.Fatalf("esc from that help: top %T, want the detail where it was (offset 2)", a.top())
	}
	press(a, esc)
	if a.ModalOpen() {
		t.Fatalf("esc from the detail: top %T, want the main screen", a.top())
	}
	// With the prompt open the wheel still moves the pane under it.
	typeKeys(a, "/")
	a.View() // lays the panes out for the pointer
	before := a.devices.Cursor
	r := a.lay.panes[paneDevices]
	a.Update(tea.MouseWheelMsg{X: r.x + 1, Y: r.y + 2, Button: tea.MouseWheelDown})
	if a.devices.Cursor != before+1 || promptOf(a) == nil {
		t.Errorf("wheel with the prompt open: cursor %d→%d, prompt %v", before, a.devices.Cursor, promptOf(a) != nil)
	}
}

// TestDialogHintsFromKeyMap: a dialog's key line is generated from the
// key map's dialog scope, the bindings that handle its keys; ←/→ are left
// out while there is a field to type in (they move in it then).
func TestDialogHintsFromKeyMap(t *testing.T) {
	a := testApp(t, 80, 24, nil, Options{})
	ti := textinput.New()
	for _, tt := range []struct {
		Name  string
		Input *textinput.Model
		want  string
	}{
		{"buttons only", nil, "tab/←/h/→/l: switch button · enter: press it · esc: cancel"},
		{"with a field", &ti, "tab: switch button · enter: press it · esc: cancel"},
	} {
		d := &kit.Dialog{Common: a.Common, Input: tt.Input}
		if got := d.Hints(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.Name, got, tt.want)
		}
	}
	// Each key the line names does what it says.
	d := &kit.Dialog{Common: a.Common, OKLabel: "OK", OK: func() tea.Cmd { return nil }}
	a.push(d)
	for _, k := range []tea.KeyPressMsg{keyCode(tea.KeyRight), keyCode(tea.KeyLeft), tab} {
		before := d.FocusOK
		a.Update(k)
		if d.FocusOK == before {
			t.Errorf("%s did not switch the button", k)
		}
	}
	press(a, esc)
	if a.dlg() != nil || !strings.Contains(a.Flash.Text, "cancelled") {
		t.Errorf("esc did not cancel: flash %q", a.Flash.Text)
	}
}

// TestLayerViewsFit: every layer's View keeps SetSize's contract at many
// sizes, tiny ones included: a screen draws exactly h rows, and no layer
// draws a row wider than w (a dialog's box at most w-2 wide and h-1 high
// from 80 columns on, the prompt one row), nor does the frame.
func TestLayerViewsFit(t *testing.T) {
	open := []struct {
		Name, Keys, top string
	}{
		{"editor grid", "", "*editor.Editor"}, {"editor plan", "p", "*editor.Editor"}, {"editor journal", "J", "*editor.Editor"},
		{"editor help", "?", "*console.helpScreen"}, {"editor field", "G\r", "*editor.Editor"}, {"apply dialog", "jjj1A", "*kit.Dialog"},
		{"main help", "\x1b?", "*console.helpScreen"}, {"detail", "\x1b\r", "*console.detail"},
		{"prompt", "\x1b/numa0 and a long filter", "*console.prompt"},
	}
	sizes := [][2]int{{20, 3}, {40, 10}, {80, 24}, {120, 40}, {200, 60}}
	for _, o := range open {
		t.Run(o.Name, func(t *testing.T) {
			snap := freeNode()
			a := editing(t, testDesk(fixtureConfig(t), snap), snap, alice)
			defer a.Close()
			for _, r := range o.Keys {
				switch r {
				case '\r':
					press(a, enter)
				case '\x1b':
					// leave the editor (its draft, if any, discarded)
					press(a, esc)
					if d := a.dlg(); d != nil {
						press(a, tab, enter)
					}
				default:
					typeKeys(a, string(r))
				}
			}
			l := a.top()
			if got := fmt.Sprintf("%T", l); got != o.top {
				t.Fatalf("top %s, want %s", got, o.top)
			}
			if ed := a.ed(); o.Name == "editor field" && ed.Input == nil {
				t.Fatal("no field open")
			}
			for _, sz := range sizes {
				w, h := sz[0], sz[1]
				a.Update(teaSize(w, h))
				a.sizeLayer(l)
				rows := l.View()
				lw, lh := w, h
				switch l.Rank() {
				case kit.RankScreen:
					lh = max(h-a.headerHeight()-1, 0)
					if len(rows) != lh {
						t.Errorf("%dx%d: %d rows, want %d", w, h, len(rows), lh)
					}
				case kit.RankDialog:
					lw, lh = max(w-2, 20), h-1
					if w < 80 {
						// On a tiny screen the box keeps its buttons and
						// may outgrow it: the root clips it (checkFrame
						// below).
						lw, lh = 1<<30, 1<<30
					}
				default:
					lh = 1
				}
				if len(rows) > lh {
					t.Errorf("%dx%d: %d rows, room for %d", w, h, len(rows), lh)
				}
				for i, row := range rows {
					if rw := ansi.StringWidth(row); rw > lw {
						t.Errorf("%dx%d: row %d is %d cells, room for %d: %q", w, h, i, rw, lw, ansi.Strip(row))
					}
				}
				checkFrame(t, a.View().Content, w, h)
			}
		})
	}
}

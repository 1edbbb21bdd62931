package ui

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestPushKeepsRanks: whatever order layers open in, the prompt stays
// over dialogs and dialogs over screens; screens stack newest on top.
func TestPushKeepsRanks(t *testing.T) {
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{})
	ed := &editor{kitCommon: a.kitCommon}
	hs := &helpScreen{common: a.common}
	d1 := &dialog{kitCommon: a.kitCommon, title: "one"}
	d2 := &dialog{kitCommon: a.kitCommon, title: "two"}
	p := &prompt{common: a.common, mode: promptFilter}
	for _, l := range []layer{p, d1, ed, hs, d2} {
		a.push(l)
	}
	want := []layer{ed, hs, d1, d2, p}
	for i := range want {
		if a.layers[i] != want[i] {
			t.Fatalf("layer %d is %T (%p), want %T (%p)", i, a.layers[i], a.layers[i], want[i], want[i])
		}
	}
	if a.top() != layer(p) || a.ed() != ed || a.dlg() != d2 {
		t.Fatalf("top %T, ed %p, dlg %p", a.top(), a.ed(), a.dlg())
	}
	// A closed layer gives up the keys at once and leaves the stack when
	// Update returns.
	p.close()
	if a.top() != layer(d2) {
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
		name  string
		check func(t *testing.T, a *App)
	}{
		{"a dialog over the editor takes the key", func(t *testing.T, a *App) {
			typeKeys(a, "jjj")
			press(a, agentNum(1))
			typeKeys(a, "A")
			if a.dlg() == nil {
				t.Fatal("A opened no dialog")
			}
			cursor, req := a.ed().cursor, len(a.ed().req.Moves)
			typeKeys(a, "jk2u")
			if a.ed().cursor != cursor || len(a.ed().req.Moves) != req {
				t.Fatalf("keys under the dialog reached the editor: cursor %d→%d, moves %d→%d", cursor, a.ed().cursor, req, len(a.ed().req.Moves))
			}
			press(a, esc)
			if a.dlg() != nil || a.ed() == nil || !a.ed().dirty() || a.top() != layer(a.ed()) {
				t.Fatalf("esc: dialog %v, top %T; want the dialog gone and the editor with its draft", a.dlg() != nil, a.top())
			}
			if !strings.Contains(a.flash.text, "cancelled") {
				t.Errorf("flash %q", a.flash.text)
			}
		}},
		{"the help over the editor takes q as a filter letter", func(t *testing.T, a *App) {
			typeKeys(a, "?")
			if helpOf(a) == nil || a.top() != layer(helpOf(a)) {
				t.Fatalf("? in the editor: top %T", a.top())
			}
			_, cmd := a.Update(keyRune('q'))
			if cmd != nil || helpOf(a) == nil || helpOf(a).filter != "q" || a.ed() == nil {
				t.Fatalf("q over the editor: cmd %v, help %+v, editor %v", cmd != nil, helpOf(a), a.ed() != nil)
			}
			// The help lists the editor's keys, and its footer is the
			// editor's.
			if v := screen(a); !strings.Contains(v, "q is a letter here") {
				t.Errorf("filtered editor help lacks the q note:\n%s", v)
			}
			press(a, esc, esc)
			if a.top() != layer(a.ed()) {
				t.Fatalf("esc, esc: top %T, want the editor", a.top())
			}
		}},
		{"a dialog opens over the help and is drawn there", func(t *testing.T, a *App) {
			typeKeys(a, "jjj")
			press(a, agentNum(1))
			typeKeys(a, "?")
			_, cmd := a.Update(ctrlC)
			if cmd != nil || a.dlg() == nil || a.dlg().kind != dlgDiscard {
				t.Fatalf("ctrl+c over the help with a draft: cmd %v, dialog %+v", cmd != nil, a.dlg())
			}
			if v := screen(a); !strings.Contains(v, "Quit fgtop") || !strings.Contains(v, " Help ") {
				t.Errorf("the question is not drawn over the help:\n%s", v)
			}
			// The dialog has the keys: a letter is not the help's filter.
			typeKeys(a, "x")
			if helpOf(a).filter != "" {
				t.Errorf("a key under the dialog reached the help: filter %q", helpOf(a).filter)
			}
			press(a, esc)
			if a.top() != layer(helpOf(a)) || a.ed() == nil || !a.ed().dirty() {
				t.Fatalf("esc: top %T; want the help over the editor, the draft kept", a.top())
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
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
	bo.syncCmds = false
	msgs := make(chan tea.Msg, 16)
	_, cmd := bo.Update(keyRune('e')) // the desk's Open runs in a command
	typeKeys(bo, "/numa")
	runCmds(cmd, msgs)
	deliverUntil(t, bo, msgs, "the take-over question", func() bool { return bo.dlg() != nil })
	if p := promptOf(bo); p == nil || bo.top() != layer(p) {
		t.Fatalf("the dialog took the top from the prompt: top %T", bo.top())
	}
	typeKeys(bo, "0")
	if promptOf(bo).input != "numa0" || bo.kernels.filter != "numa0" || bo.dlg().focusOK {
		t.Fatalf("a key with the prompt over a dialog: input %q, filter %q", promptOf(bo).input, bo.kernels.filter)
	}
	press(bo, enter)
	if promptOf(bo) != nil || bo.top() != layer(bo.dlg()) {
		t.Fatalf("enter: top %T, want the dialog", bo.top())
	}
	press(bo, esc)
	if bo.modalOpen() || !strings.Contains(bo.flash.text, "stays with its holder") {
		t.Fatalf("esc: top %T, flash %q", bo.top(), bo.flash.text)
	}
}

// TestDetailHelpAndWheel: ? on a detail shows the help in its place (esc
// then returns to the main screen), and the wheel scrolls the screen on
// top, passing the prompt by.
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
	if detailOf(a) != nil || helpOf(a) == nil {
		t.Fatalf("? on the detail: top %T", a.top())
	}
	wheel(tea.MouseWheelDown)
	if helpOf(a).off != 1 {
		t.Errorf("wheel on the help: offset %d", helpOf(a).off)
	}
	press(a, esc)
	if a.modalOpen() {
		t.Fatalf("esc from that help: top %T, want the main screen", a.top())
	}
	// With the prompt open the wheel still moves the pane under it.
	typeKeys(a, "/")
	a.View() // lays the panes out for the pointer
	before := a.devices.cursor
	r := a.lay.panes[paneDevices]
	a.Update(tea.MouseWheelMsg{X: r.x + 1, Y: r.y + 2, Button: tea.MouseWheelDown})
	if a.devices.cursor != before+1 || promptOf(a) == nil {
		t.Errorf("wheel with the prompt open: cursor %d→%d, prompt %v", before, a.devices.cursor, promptOf(a) != nil)
	}
}

// TestDialogHintsFromKeyMap: a dialog's key line is generated from the
// key map's dialog scope, the bindings that handle its keys; ←/→ are left
// out while there is a field to type in (they move in it then).
func TestDialogHintsFromKeyMap(t *testing.T) {
	a := testApp(t, 80, 24, nil, Options{})
	ti := textinput.New()
	for _, tt := range []struct {
		name  string
		input *textinput.Model
		want  string
	}{
		{"buttons only", nil, "tab/←/→: switch button · enter: press it · esc: cancel"},
		{"with a field", &ti, "tab: switch button · enter: press it · esc: cancel"},
	} {
		d := &dialog{kitCommon: a.kitCommon, input: tt.input}
		if got := d.hints(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// Each key the line names does what it says.
	d := &dialog{kitCommon: a.kitCommon, okLabel: "OK", ok: func() tea.Cmd { return nil }}
	a.push(d)
	for _, k := range []tea.KeyPressMsg{keyCode(tea.KeyRight), keyCode(tea.KeyLeft), tab} {
		before := d.focusOK
		a.Update(k)
		if d.focusOK == before {
			t.Errorf("%s did not switch the button", k)
		}
	}
	press(a, esc)
	if a.dlg() != nil || !strings.Contains(a.flash.text, "cancelled") {
		t.Errorf("esc did not cancel: flash %q", a.flash.text)
	}
}

// TestLayerViewsFit: every layer's View keeps SetSize's contract at many
// sizes, tiny ones included: a screen draws exactly h rows, and no layer
// draws a row wider than w (a dialog's box at most w-2 wide and h-1 high
// from 80 columns on, the prompt one row), nor does the frame.
func TestLayerViewsFit(t *testing.T) {
	open := []struct {
		name, keys, top string
	}{
		{"editor grid", "", "*ui.editor"}, {"editor plan", "p", "*ui.editor"}, {"editor journal", "J", "*ui.editor"},
		{"editor help", "?", "*ui.helpScreen"}, {"editor field", "G\r", "*ui.editor"}, {"apply dialog", "jjj1A", "*ui.dialog"},
		{"main help", "\x1b?", "*ui.helpScreen"}, {"detail", "\x1b\r", "*ui.detail"},
		{"prompt", "\x1b/numa0 and a long filter", "*ui.prompt"},
	}
	sizes := [][2]int{{20, 3}, {40, 10}, {80, 24}, {120, 40}, {200, 60}}
	for _, o := range open {
		t.Run(o.name, func(t *testing.T) {
			snap := freeNode()
			a := editing(t, testDesk(fixtureConfig(t), snap), snap, alice)
			defer a.Close()
			for _, r := range o.keys {
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
			if ed := a.ed(); o.name == "editor field" && ed.input == nil {
				t.Fatal("no field open")
			}
			for _, sz := range sizes {
				w, h := sz[0], sz[1]
				a.Update(teaSize(w, h))
				a.sizeLayer(l)
				rows := l.View()
				lw, lh := w, h
				switch l.rank() {
				case rankScreen:
					lh = max(h-a.headerHeight()-1, 0)
					if len(rows) != lh {
						t.Errorf("%dx%d: %d rows, want %d", w, h, len(rows), lh)
					}
				case rankDialog:
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

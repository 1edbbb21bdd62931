package console

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

// TestReadOnlyKeyMap checks the structure: a viewer's key map holds no
// binding that changes the node, neither for handling keys nor in the
// help, while an operator's does (so the check is not vacuous).
func TestReadOnlyKeyMap(t *testing.T) {
	viewer, operator := NewKeyMap(kit.RoleViewer), NewKeyMap(kit.RoleOperator)
	if n := len(viewer.Mutating()); n != 0 {
		t.Fatalf("viewer has %d mutating bindings", n)
	}
	if len(operator.Mutating()) == 0 {
		t.Fatal("operator has no mutating binding: the read-only test would prove nothing")
	}
	for _, b := range viewer.BindingList {
		if b.Mutating || b.Group == kit.GrpOperate {
			t.Errorf("viewer binding %v is an operator action", b.Key.Keys())
		}
	}
	// No binding of the viewer works outside the main screen.
	for _, b := range viewer.BindingList {
		if b.Scope&^ScMain != 0 || b.Short&^ScMain != 0 {
			t.Errorf("viewer binding %v works in scope %b", b.Key.Keys(), b.Scope)
		}
	}
	// Every operator-only key is absent from everything the viewer sees.
	var helpKeys []string
	for _, col := range viewer.FullHelpIn(ScAll) {
		for _, b := range col {
			helpKeys = append(helpKeys, b.Keys()...)
		}
	}
	for _, b := range viewer.ShortHelp() {
		helpKeys = append(helpKeys, b.Keys()...)
	}
	for _, m := range operator.BindingList {
		if !m.Mutating {
			continue
		}
		for _, k := range m.Key.Keys() {
			// A key the main screen gives to something else (enter: detail)
			// may be listed; one that only the operator's map has may not.
			if viewer.LookupIn(ScAll, keyMsg(k)) == kit.ActNone {
				for _, hk := range helpKeys {
					if hk == k {
						t.Errorf("viewer help lists operator key %q", k)
					}
				}
			}
			if got := viewer.LookupIn(ScAll, keyMsg(k)); got != kit.ActNone && got == m.Act {
				t.Errorf("viewer key %q does the operator action %d", k, m.Act)
			}
		}
	}
	// The main screen of both maps is the same but for the operator keys:
	// read-only removes, it adds nothing.
	mainOp := 0
	for _, b := range operator.BindingList {
		if b.Scope&ScMain != 0 && !b.Mutating {
			mainOp++
		}
	}
	if len(viewer.BindingList) != mainOp {
		t.Errorf("viewer has %d bindings, the operator's main screen %d that are not mutating", len(viewer.BindingList), mainOp)
	}
}

// TestReadOnlyApp checks the running console: the lock mark shows, the
// help screen has no operator section, and the edit key does nothing.
func TestReadOnlyApp(t *testing.T) {
	for _, ro := range []bool{true, false} {
		a := testApp(t, 120, 30, fake.Node(fake.Options{}), Options{ReadOnly: ro})
		main := ansi.Strip(a.View().Content)
		if got := strings.Contains(main, "read-only"); got != ro {
			t.Errorf("ro=%v: lock mark shown = %v", ro, got)
		}
		typeKeys(a, "e") // no desk: the operator is told why there is no editor
		edit := strings.Contains(ansi.Strip(a.View().Content), "no agent.toml to edit")
		if edit == ro {
			t.Errorf("ro=%v: e opened the edit notice = %v", ro, edit)
		}
		// esc drops a viewer's "read-only: e (edit partition) ..." flash,
		// which the help's footer would show: only the help's list counts.
		a.Update(keyCode(tea.KeyEscape))
		typeKeys(a, "?")
		help := ansi.Strip(a.View().Content)
		if !strings.Contains(help, "quit") {
			t.Fatalf("help screen not shown:\n%s", help)
		}
		if got := strings.Contains(help, "edit partition"); got == ro {
			t.Errorf("ro=%v: help lists edit partition = %v", ro, got)
		}
	}
}

// TestEveryKeyDoesOneThing checks that within each scope a key is bound
// once, and that every binding has an action, help and a scope.
func TestEveryKeyDoesOneThing(t *testing.T) {
	km := NewKeyMap(kit.RoleOperator)
	for _, sc := range []kit.Scope{ScMain, editor.ScEditor, editor.ScPlan, editor.ScJournal, kit.ScDialog} {
		seenKey := map[string]kit.Action{}
		for _, b := range km.BindingList {
			if b.Scope&sc == 0 {
				continue
			}
			for _, k := range b.Key.Keys() {
				if prev, ok := seenKey[k]; ok {
					t.Errorf("scope %b: key %q bound twice (%d and %d)", sc, k, prev, b.Act)
				}
				seenKey[k] = b.Act
			}
		}
	}
	for _, b := range km.BindingList {
		if b.Act == kit.ActNone || b.Scope == 0 {
			t.Errorf("binding %v has no action or no scope", b.Key.Keys())
		}
		if b.Key.Help().Desc == "" {
			t.Errorf("binding %v has no help", b.Key.Keys())
		}
	}
}

// keyMsg is the key press a key.Binding name stands for.
func keyMsg(k string) tea.KeyPressMsg {
	named := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "left": tea.KeyLeft, "right": tea.KeyRight,
		"up": tea.KeyUp, "down": tea.KeyDown, "tab": tea.KeyTab, "home": tea.KeyHome, "end": tea.KeyEnd,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown}
	if c, ok := named[k]; ok {
		return keyCode(c)
	}
	if rest, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: []rune(rest)[0], Mod: tea.ModCtrl}
	}
	if rest, ok := strings.CutPrefix(k, "shift+"); ok && rest == "tab" {
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	return keyRune([]rune(k)[0])
}

// TestViewerIsToldOfOperatorKeys: a viewer's map has no operator key, but
// pressing one says why nothing happened (the tour: e did nothing, with no
// word), and runs nothing; any other unbound key stays silent.
func TestViewerIsToldOfOperatorKeys(t *testing.T) {
	calls := 0
	hook := func() (string, error) { calls++; return "", nil }
	tests := []struct {
		name, key string
		opts      Options
		says      string
	}{
		{"edit", "e", Options{ReadOnly: true}, "read-only: e (edit partition) is an operator's key, in a console on the node that is not read-only; nothing was changed"},
		{"demo restart", "R", Options{ReadOnly: true, DemoRestart: hook}, "read-only: R (demo: restart"},
		{"R on a real node", "R", Options{ReadOnly: true}, ""},
		{"unbound key", "x", Options{ReadOnly: true, DemoRestart: hook}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testApp(t, 160, 40, fake.Node(fake.Options{}), tt.opts)
			typeKeys(a, tt.key)
			got := a.Flash.Text
			if (tt.says == "") != (got == "") || !strings.HasPrefix(got, tt.says) {
				t.Errorf("%s: flash %q, want %q", tt.key, got, tt.says)
			}
			if len(a.layers) > 0 {
				t.Errorf("%s opened a layer for a viewer", tt.key)
			}
			// At 80 columns the footer keeps the answer whole, in short.
			if foot := stripANSI(a.viewFooter(80)); tt.says != "" && !strings.Contains(foot, "is an operator's key") {
				t.Errorf("%s: the 80-column footer cuts the answer: %q", tt.key, foot)
			}
		})
	}
	if calls != 0 {
		t.Errorf("a viewer's R ran the restart %d times", calls)
	}
}

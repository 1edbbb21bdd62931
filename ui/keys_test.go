package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestReadOnlyKeyMap checks the structure: a viewer's key map holds no
// binding that changes the node, neither for handling keys nor in the
// help, while an operator's does (so the check is not vacuous).
func TestReadOnlyKeyMap(t *testing.T) {
	viewer, operator := NewKeyMap(RoleViewer), NewKeyMap(RoleOperator)
	if n := len(viewer.Mutating()); n != 0 {
		t.Fatalf("viewer has %d mutating bindings", n)
	}
	if len(operator.Mutating()) == 0 {
		t.Fatal("operator has no mutating binding: the read-only test would prove nothing")
	}
	for _, b := range viewer.bindings {
		if b.mutating || b.group == grpOperate {
			t.Errorf("viewer binding %v is an operator action", b.key.Keys())
		}
	}
	// Every operator-only key is absent from everything the viewer sees.
	var helpKeys []string
	for _, col := range viewer.FullHelp() {
		for _, b := range col {
			helpKeys = append(helpKeys, b.Keys()...)
		}
	}
	for _, b := range viewer.ShortHelp() {
		helpKeys = append(helpKeys, b.Keys()...)
	}
	for _, m := range operator.Mutating() {
		for _, k := range m.Keys() {
			for _, hk := range helpKeys {
				if hk == k {
					t.Errorf("viewer help lists operator key %q", k)
				}
			}
			if viewer.lookup(keyRune([]rune(k)[0])) != actNone {
				t.Errorf("viewer key %q does something", k)
			}
		}
	}
	// The rest of the map is identical: read-only removes, it adds nothing.
	if len(viewer.bindings)+len(operator.Mutating()) != len(operator.bindings) {
		t.Errorf("viewer %d + mutating %d != operator %d bindings", len(viewer.bindings), len(operator.Mutating()), len(operator.bindings))
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
		typeKeys(a, "e")
		edit := strings.Contains(ansi.Strip(a.View().Content), "partition editing")
		if edit == ro {
			t.Errorf("ro=%v: e opened the edit notice = %v", ro, edit)
		}
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

func TestEveryActionHasOneBinding(t *testing.T) {
	km := NewKeyMap(RoleOperator)
	seenKey := map[string]action{}
	for _, b := range km.bindings {
		if b.act == actNone {
			t.Errorf("binding %v has no action", b.key.Keys())
		}
		if b.key.Help().Desc == "" {
			t.Errorf("binding %v has no help", b.key.Keys())
		}
		for _, k := range b.key.Keys() {
			if prev, ok := seenKey[k]; ok {
				t.Errorf("key %q bound twice (%d and %d)", k, prev, b.act)
			}
			seenKey[k] = b.act
		}
	}
}

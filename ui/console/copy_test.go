package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestCopySelectedID presses y in each pane, for an operator and a viewer,
// and checks the clipboard command carries the selected row's id and the
// flash names it.
func TestCopySelectedID(t *testing.T) {
	for _, ro := range []bool{false, true} {
		role := map[bool]string{false: "operator", true: "viewer"}[ro]
		a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{ReadOnly: ro})
		if a.Kernels.follow {
			typeKeys(a, "f") // every kernel, so the kernel pane has rows
		}
		for range numPanes {
			want := a.selectedID()
			_, cmd := a.Update(keyRune('y'))
			if want == "" {
				if cmd != nil || !strings.Contains(a.Flash.Text, "nothing to copy") {
					t.Errorf("%v pane %d: no id, got cmd %v flash %q", role, a.focus, cmd != nil, a.Flash.Text)
				}
			} else {
				if cmd == nil {
					t.Fatalf("%v pane %d: y gave no command", role, a.focus)
				}
				msg := cmd()
				if got := fmt.Sprint(msg); got != want || fmt.Sprintf("%T", msg) != fmt.Sprintf("%T", tea.SetClipboard("")()) {
					t.Errorf("%v pane %d: clipboard got %T %q, want %q", role, a.focus, msg, got, want)
				}
				if a.Flash.Text != "copied "+want {
					t.Errorf("%v pane %d: flash %q", role, a.focus, a.Flash.Text)
				}
			}
			a.Update(keyCode(tea.KeyTab))
		}
	}
	// The ids are real ones: the device pane's first row is a GPU.
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	if id := a.selectedID(); id == "" || id != string(a.d.Devs[0].Key.ID) {
		t.Errorf("device id %q", id)
	}
}

package console

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestPromptFooterKeepsWayOut: while / or : is open, ? and q type
// themselves, so the footer row names the keys that do work there (enter,
// esc, ctrl+c quit) beside the typed text, at 80 columns too, in ASCII
// with --ascii; the typed text keeps its room first as the line narrows.
func TestPromptFooterKeepsWayOut(t *testing.T) {
	for _, tt := range []struct {
		Name  string
		open  string
		w     int
		ascii bool
		want  []string
	}{
		{"filter at 80", "/", 80, false, []string{"/type:bat_", "enter keep filter", "esc cancel", "ctrl+c quit"}},
		{"command at 80", ":", 80, false, []string{":sort_", "enter run", "esc cancel", "ctrl+c quit"}},
		{"filter at 80 ascii", "/", 80, true, []string{"/type:bat_", "esc cancel", "ctrl+c quit"}},
		{"filter at 40", "/", 40, false, []string{"/type:bat_", "ctrl+c quit"}},
	} {
		t.Run(tt.Name, func(t *testing.T) {
			a := testApp(t, tt.w, 24, fake.Node(fake.Options{}), Options{ASCII: tt.ascii})
			typeKeys(a, tt.open)
			if tt.open == "/" {
				typeKeys(a, "type:bat")
			} else {
				typeKeys(a, "sort")
			}
			rows := strings.Split(screen(a), "\n")
			foot := rows[len(rows)-1]
			for _, w := range tt.want {
				if !strings.Contains(foot, w) {
					t.Errorf("footer %q lacks %q", foot, w)
				}
			}
			if tt.ascii {
				for _, b := range []byte(foot) {
					if b >= 0x80 {
						t.Fatalf("footer %q has byte %#x under --ascii", foot, b)
					}
				}
			}
		})
	}
	st := testStyles(t, "mono", false)
	if got := stripANSI(PromptLine(st, PromptFilter, "type:bat", 24)); !strings.HasPrefix(got, "/type:bat_") || strings.Contains(got, "quit") {
		t.Errorf("at 24 columns the prompt keeps its text alone: %q", got)
	}
}

// TestPromptCtrlCQuits: ctrl+c in the prompt quits as it does everywhere
// else in the console (it was swallowed: an operator in the filter had to
// know esc first).
func TestPromptCtrlCQuits(t *testing.T) {
	a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "/abc")
	if promptOf(a) == nil {
		t.Fatal("/ opened no prompt")
	}
	_, cmd := a.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if cmd == nil {
		t.Fatal("ctrl+c in the prompt did nothing")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c in the prompt does not quit")
	}
}

// TestEditorFieldFooterKeepsWayOut: while an editor field takes the keys
// (? and q type themselves), its footer keeps ctrl+c quit, and under a
// flash esc cancel and ctrl+c quit stay beside it (the flash took the
// whole line).
func TestEditorFieldFooterKeepsWayOut(t *testing.T) {
	path := fixtureConfig(t)
	snap := fake.Node(fake.Options{})
	a := editing(t, testDesk(path, snap), snap, alice)
	a.ed().Cursor = slices.IndexFunc(a.ed().Rows, func(r editor.EdRow) bool { return r.Kind == editor.RowCPU && r.Agent == 0 })
	press(a, enter)
	if a.ed().Input == nil {
		t.Fatal("enter on the cpu row opened no field")
	}
	a.Flash = kit.Flash{} // the editor's own "editing ..." news
	for _, w := range []int{80, 120} {
		mustContain(t, "field footer", stripANSI(a.viewFooter(w)), "enter set", "ctrl+c quit")
	}
	a.Flashf(kit.LvlWarn, "3 new issues; over-capacity: cpu:16 is held beyond its capacity: 2 of 1")
	f := stripANSI(a.viewFooter(80))
	mustContain(t, "field footer with a flash", f, "3 new issues", "esc cancel", "ctrl+c quit")
	if kit.Width(f) > 80 {
		t.Fatalf("footer %d cells: %q", kit.Width(f), f)
	}
}

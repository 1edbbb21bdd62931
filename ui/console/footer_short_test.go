package console

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestFootersWholeAt80: at 80 columns the help's footer while filtering,
// the unknown-command hint and :fit's answer each say what they mean whole
// in a short form beside the keys kept at the right; the long forms were
// cut "pgdn scr…", ":…" and "GPU0=…" (the long ones stay where they fit).
func TestFootersWholeAt80(t *testing.T) {
	last := func(a *App) string {
		lines := strings.Split(screen(a), "\n")
		return lines[len(lines)-1]
	}
	for _, c := range []struct {
		name string
		ro   bool
		do   func(a *App)
		want []string
	}{
		{"help while filtering", false, func(a *App) {
			a.Update(keyRune('?'))
			typeKeys(a, "/fil")
		}, []string{"/fil_", "enter keep filter", "esc cancel", "ctrl+c quit"}},
		{"help with a kept filter", false, func(a *App) {
			a.Update(keyRune('?'))
			typeKeys(a, "/fil")
			a.Update(enter)
		}, []string{"/ filter", "j/k scroll", "esc clear filter", "q back", "ctrl+c quit"}},
		{"typo", false, func(a *App) {
			typeKeys(a, ":fitt")
			a.Update(enter)
		}, []string{"unknown command :fitt; did you mean :fit?", "? help"}},
		{"unknown", false, func(a *App) {
			typeKeys(a, ":zzz")
			a.Update(enter)
		}, []string{"unknown command :zzz", "? lists every command", "? help"}},
		{"an editor word", false, func(a *App) {
			typeKeys(a, ":edit")
			a.Update(enter)
		}, []string{"unknown command :edit; the partition editor is e"}},
		{"an editor word, read-only", true, func(a *App) {
			typeKeys(a, ":edit")
			a.Update(enter)
		}, []string{"unknown command :edit; read-only: no partition editor here"}},
		// A sort column or theme that names nothing listed what exists,
		// cut at 80 columns ("10g-mig 20g-mig 5…", "high-contra…") with
		// no word of the one meant.
		{"sort typo", false, func(a *App) {
			typeKeys(a, ":sort agnet")
			a.Update(enter)
		}, []string{"no column agnet; did you mean agent? (? lists the columns)", "? help"}},
		{"sort unknown", false, func(a *App) {
			typeKeys(a, ":sort zzz")
			a.Update(enter)
		}, []string{"no column zzz (? lists the columns)", "? help"}},
		{"sort alone", false, func(a *App) {
			typeKeys(a, ":sort")
			a.Update(enter)
		}, []string{"usage: :sort COLUMN [asc|desc] (? lists the columns)", "? help"}},
		{"theme typo", false, func(a *App) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			typeKeys(a, ":theme ligth")
			if _, cmd := a.Update(enter); cmd != nil {
				a.Update(cmd())
			}
		}, []string{`unknown theme "ligth"; did you mean light? (:theme lists them)`, "? help"}},
		{"theme unknown", false, func(a *App) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			typeKeys(a, ":theme solarized")
			if _, cmd := a.Update(enter); cmd != nil {
				a.Update(cmd())
			}
		}, []string{`unknown theme "solarized" (:theme lists them)`, "? help"}},
		{"fit taken", false, func(a *App) {
			typeKeys(a, ":fit cuda.shares=0.5,cpu=2,mem=4g")
			if _, cmd := a.Update(enter); cmd != nil {
				a.Update(cmd())
			}
		}, []string{"fit: numa1 takes it: cuda.shares GPU3=0.50", "esc back"}},
		{"fit refused", false, func(a *App) {
			typeKeys(a, ":fit cuda.shares=3")
			if _, cmd := a.Update(enter); cmd != nil {
				a.Update(cmd())
			}
		}, []string{"fit: refused: numa0: insufficient cuda.shares", "esc back"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{ReadOnly: c.ro})
			a.View()
			c.do(a)
			got := last(a)
			if strings.Contains(got, "…") {
				t.Errorf("footer cut: %q", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("footer %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestEditorOpenedAt80: the note that the draft is the operator's was cut
// at 80 columns, "editing /tmp/…/agent.toml: the draft …", before it said
// whose and until when; the short form keeps that (the pane's title names
// the file), and a wide terminal still shows the path.
func TestEditorOpenedAt80(t *testing.T) {
	snap := fake.Node(fake.Options{})
	for _, w := range []int{80, 200} {
		path := fixtureConfig(t)
		a := testApp(t, w, 24, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
		typeKeys(a, "e")
		if a.ed() == nil {
			t.Fatalf("e did not open the editor:\n%s", screen(a))
		}
		lines := strings.Split(screen(a), "\n")
		got := lines[len(lines)-1]
		want := editor.OpenedFlashShort
		if w == 200 {
			want = editor.OpenedFlash(path)
		}
		if !strings.Contains(got, want) || strings.Contains(got, "…") {
			t.Errorf("%d columns: footer %q, want %q whole", w, got, want)
		}
	}
}

// TestAtFootersAt80: :at with no time, or one it cannot read, listed the
// forms it takes, cut at 80 columns after the first ("want RFC 3339
// (2026-11-27T14:02:00Z), a local~"): the short form gives the two a
// person types and where the rest are.
func TestAtFootersAt80(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"at", "usage: :at TIME (e.g. 14:02 or -2h; more in ?)"},
		{"at yesterdy", `:at "yesterdy": not a time (e.g. 14:02 or -2h; more in ?)`},
	} {
		a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{History: t.TempDir()})
		a.View()
		typeKeys(a, ":"+c.typed)
		a.Update(enter)
		lines := strings.Split(screen(a), "\n")
		if got := lines[len(lines)-1]; !strings.Contains(got, c.want) || strings.Contains(got, "…") {
			t.Errorf(":%s: footer %q, want %q whole", c.typed, got, c.want)
		}
	}
}

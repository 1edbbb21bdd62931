package console

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

// nonASCII reports the first byte >= 0x80 of a frame (escape sequences
// stripped), with its line, or "".
func nonASCII(frame string) string {
	for i, ln := range strings.Split(ansi.Strip(frame), "\n") {
		for j := 0; j < len(ln); j++ {
			if ln[j] >= 0x80 {
				return fmt.Sprintf("line %d col %d: %q", i+1, j, ln)
			}
		}
	}
	return ""
}

// TestASCIIEverywhere renders every screen, dialog and the editor with
// --ascii, as the keys open them, and finds no byte >= 0x80: the main
// screen at three sizes (graphs on the larger), its help, every detail,
// the prompts, the editor's grid, a field, plan, journal, the apply,
// discard, take-over and format dialogs (TestASCIIFleet: the fleet
// console).
func TestASCIIEverywhere(t *testing.T) {
	pinLocalUTC(t)
	check := func(t *testing.T, what, frame string) {
		t.Helper()
		if bad := nonASCII(frame); bad != "" {
			t.Errorf("%s: non-ASCII byte at %s", what, bad)
		}
	}
	opts := func(o Options) Options { o.ASCII = true; return o }
	for _, sz := range [][2]int{{80, 24}, {160, 48}, {220, 60}} {
		for _, src := range []string{"", "degraded", "mock"} {
			name := fmt.Sprintf("%dx%d-%s", sz[0], sz[1], src)
			t.Run(name, func(t *testing.T) {
				a := testApp(t, sz[0], sz[1], fake.Node(fake.Options{Source: src}), opts(Options{}))
				for i := 0; i < 30; i++ { // history for the graphs
					s := fake.Node(fake.Options{Source: src})
					s.Time = fake.T0.Add(time.Duration(i) * time.Second)
					feed(a, s)
				}
				check(t, "main", a.View().Content)
				for _, seq := range []struct {
					what string
					Keys []tea.KeyPressMsg
				}{
					{"help", []tea.KeyPressMsg{keyRune('?')}},
					{"help end", []tea.KeyPressMsg{keyRune('?'), keyRune('G')}},
					{"device detail", []tea.KeyPressMsg{keyCode(tea.KeyEnter)}},
					{"mig detail", []tea.KeyPressMsg{keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyCode(tea.KeyEnter)}},
					{"host detail", []tea.KeyPressMsg{keyRune('G'), keyCode(tea.KeyEnter)}},
					{"kernel detail", []tea.KeyPressMsg{keyRune('f'), keyCode(tea.KeyTab), keyCode(tea.KeyEnter)}},
					{"stale kernel detail", []tea.KeyPressMsg{keyRune('f'), keyCode(tea.KeyTab), keyRune('G'), keyCode(tea.KeyEnter)}},
					{"agents", []tea.KeyPressMsg{keyCode(tea.KeyTab), keyCode(tea.KeyTab), keyCode(tea.KeyEnter)}},
					{"issue detail", []tea.KeyPressMsg{keyCode(tea.KeyTab), keyCode(tea.KeyTab), keyCode(tea.KeyTab), keyCode(tea.KeyEnter)}},
					{"filter prompt", []tea.KeyPressMsg{keyRune('/'), keyRune('b')}},
					{"filter", []tea.KeyPressMsg{keyRune('/'), keyRune('b'), keyCode(tea.KeyEnter)}},
					{"command prompt", []tea.KeyPressMsg{keyRune(':'), keyRune('s')}},
					{"bars per agent", []tea.KeyPressMsg{keyRune('a')}},
				} {
					b := testApp(t, sz[0], sz[1], fake.Node(fake.Options{Source: src}), opts(Options{}))
					press(b, seq.Keys...)
					check(t, seq.what, b.View().Content)
				}
			})
		}
	}
	t.Run("editor", func(t *testing.T) {
		for _, seq := range []struct {
			what string
			Keys []tea.KeyPressMsg
		}{
			{"grid", nil},
			{"moved", []tea.KeyPressMsg{keyRune('j'), keyRune('j'), keyRune('j'), agentNum(1)}},
			{"plan", []tea.KeyPressMsg{keyRune('j'), keyRune('j'), keyRune('j'), agentNum(1), keyRune('p')}},
			{"apply dialog", []tea.KeyPressMsg{keyRune('j'), keyRune('j'), keyRune('j'), agentNum(1), keyRune('A')}},
			{"discard dialog", []tea.KeyPressMsg{keyRune('j'), keyRune('j'), keyRune('j'), agentNum(1), keyCode(tea.KeyEscape)}},
			{"journal", []tea.KeyPressMsg{keyRune('J')}},
			{"mode", []tea.KeyPressMsg{keyRune('m')}},
			{"field", []tea.KeyPressMsg{keyRune('G'), keyCode(tea.KeyEnter), keyRune('x')}},
			{"help", []tea.KeyPressMsg{keyRune('?')}},
			{"live kernels moved", []tea.KeyPressMsg{agentNum(2), keyRune('A')}},
		} {
			for _, w := range []int{80, 120} {
				path := fixtureConfig(t)
				snap := freeNode()
				a := testApp(t, w, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap), ASCII: true})
				typeKeys(a, "e")
				if a.ed() == nil {
					t.Fatalf("no editor:\n%s", screen(a))
				}
				press(a, seq.Keys...)
				check(t, fmt.Sprintf("editor %s at %d", seq.what, w), a.View().Content)
			}
		}
	})
	t.Run("slot-based editor", func(t *testing.T) {
		// Backend.AI main's form, the demo's: its own grid, legend and
		// field, and the quit dialog a draft brings, under a flash.
		for _, seq := range []struct {
			what string
			Keys []tea.KeyPressMsg
		}{
			{"grid", nil},
			{"field", []tea.KeyPressMsg{keyCode(tea.KeyEnter), keyRune('3')}},
			{"changed", []tea.KeyPressMsg{keyCode(tea.KeyEnter), keyRune('3'), keyCode(tea.KeyEnter)}},
			{"plan", []tea.KeyPressMsg{keyCode(tea.KeyEnter), keyRune('3'), keyCode(tea.KeyEnter), keyRune('p')}},
			{"quit dialog", []tea.KeyPressMsg{keyCode(tea.KeyEnter), keyRune('3'), keyCode(tea.KeyEnter), {Code: 'c', Mod: tea.ModCtrl}}},
			{"help", []tea.KeyPressMsg{keyRune('?')}},
		} {
			for _, w := range []int{80, 120} {
				path := slotConfig(t)
				snap := freeNode()
				a := testApp(t, w, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap), ASCII: true})
				typeKeys(a, "e")
				if a.ed() == nil {
					t.Fatalf("no editor:\n%s", screen(a))
				}
				press(a, seq.Keys...)
				switch {
				case seq.what == "field" && a.ed().Input == nil,
					seq.what == "quit dialog" && a.dlg() == nil,
					seq.what == "plan" && !strings.Contains(screen(a), "plan for"):
					t.Fatalf("%s: the keys did not get there:\n%s", seq.what, screen(a))
				}
				a.Flashf(kit.LvlWarn, "2 new issues; over-capacity: cpu:16 is held beyond its capacity")
				check(t, fmt.Sprintf("slot-based editor %s at %d", seq.what, w), a.View().Content)
			}
		}
	})
	t.Run("past", func(t *testing.T) {
		dir, past := pastRecord(t)
		for _, w := range []int{80, 160} {
			a := testApp(t, w, 40, fake.Node(fake.Options{}), opts(Options{History: dir}))
			command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
			if !a.past.on {
				t.Fatal("not in the past")
			}
			check(t, fmt.Sprintf("past at %d", w), a.View().Content)
		}
	})
	t.Run("dialogs", func(t *testing.T) {
		path := fixtureConfig(t)
		snap := freeNode()
		desk := testDesk(path, snap)
		a := testApp(t, 120, 40, snap, Options{Actor: alice, Desk: desk, ASCII: true})
		typeKeys(a, "e")
		b := testApp(t, 120, 40, snap, Options{Actor: bob, Desk: desk, ASCII: true})
		typeKeys(b, "e")
		if b.dlg() == nil {
			t.Fatal("no take-over dialog")
		}
		check(t, "take-over dialog", b.View().Content)
		check(t, "holder's console", a.View().Content)
		text := testfix.AgentTOML("[resource]\nallocation-mode = \"auto-split\"\nreserved-cpu = 0\n[[agents]]\n[agents.agent]\nid = \"" +
			string(fake.Agent0) + "\"\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent1) + "\"\n")
		_, path2 := goldenConfig(t, text)
		c := testApp(t, 120, 40, snap, Options{Actor: alice, Desk: testDesk(path2, snap), ASCII: true})
		typeKeys(c, "em")
		if c.dlg() == nil {
			t.Fatal("no format dialog")
		}
		check(t, "format dialog", c.View().Content)
	})
}

// TestASCIIOnlyKeepsWidths: the stand-ins take the cells the characters
// took, so --ascii frames keep their columns.
func TestASCIIOnlyKeepsWidths(t *testing.T) {
	for _, s := range []string{"plain", "numa0×2 · tab/←/→", "gpu-nöde 节点 🔒", "bad \xff utf8", "\x1b[1mbold…\x1b[m"} {
		got := kit.ASCIIOnly(s)
		if nonASCII(got) != "" {
			t.Errorf("%q -> %q: not ASCII", s, got)
		}
		if utf8.ValidString(s) && ansi.StringWidth(got) != ansi.StringWidth(s) {
			t.Errorf("%q -> %q: width %d, was %d", s, got, ansi.StringWidth(got), ansi.StringWidth(s))
		}
	}
}

// FuzzASCIIOnly: whatever text reaches an --ascii frame (node names,
// issue messages, user names come from outside), what is drawn is 7-bit,
// and valid UTF-8 keeps its width, so columns stay aligned.
func FuzzASCIIOnly(f *testing.F) {
	for _, s := range []string{"", "numa0×2 · tab/←/→", "节点", "\x1b[1m…\x1b[m", "a\u0301", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		got := kit.ASCIIOnly(s)
		for i := 0; i < len(got); i++ {
			if got[i] >= 0x80 {
				t.Fatalf("%q -> %q: byte %#x", s, got, got[i])
			}
		}
		// Widths are compared for text, not for escape sequences (whose
		// extent a stray ESC changes).
		if utf8.ValidString(s) && !strings.ContainsAny(s, "\x1b\u009b\u009d\u0090\u0098\u009e\u009f") && ansi.StringWidth(got) != ansi.StringWidth(s) {
			t.Fatalf("%q -> %q: width %d, was %d", s, got, ansi.StringWidth(got), ansi.StringWidth(s))
		}
	})
}

// TestASCIIApplyReadsNaturally: with --ascii the editor offered "A
// apply~" even at 200 columns (the tour): the key map's words are the
// 7-bit terminal's, "A apply...", in the legend and the footer.
func TestASCIIApplyReadsNaturally(t *testing.T) {
	path := slotConfig(t)
	snap := freeNode()
	a := testApp(t, 200, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap), ASCII: true})
	typeKeys(a, "e")
	if a.ed() == nil {
		t.Fatalf("e did not open the editor:\n%s", screen(a))
	}
	a.Flash = kit.Flash{}
	v := screen(a)
	if strings.Contains(v, "apply~") || strings.Count(v, "A apply...") < 2 {
		t.Errorf("the legend and footer do not both say %q:\n%s", "A apply...", v)
	}
}

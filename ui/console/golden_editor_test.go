package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// pinLocalUTC makes local time UTC for the test (no ui test runs in
// parallel): the header's "since 10:00" then reads the same anywhere.
func pinLocalUTC(t *testing.T) {
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
}

// TestGoldenEditor pins the partition editor's grid, its plan view, the
// apply dialog and the discard question (esc with a draft) at 120x40 on the fixture with GPU3 moved to the first
// agent (a draft with a change to show), driven like the editor tests
// (the desk's commands run at once). The frames are compared with
// testdata/TestGoldenEditor/NAME.golden and NAME/text.golden; update with
// go test ./ui/ -run TestGoldenEditor -update
func TestGoldenEditor(t *testing.T) {
	// The holder's "since 10:00" is local time: pin the zone so the
	// goldens read the same on any machine.
	pinLocalUTC(t)
	for _, tt := range []struct {
		Name string
		Keys []tea.KeyPressMsg
	}{
		{"editor-120x40", nil},
		{"plan-120x40", []tea.KeyPressMsg{keyRune('p')}},
		{"apply-dialog-120x40", []tea.KeyPressMsg{keyRune('A')}},
		{"discard-dialog-120x40", []tea.KeyPressMsg{keyCode(tea.KeyEscape)}},
	} {
		t.Run(tt.Name, func(t *testing.T) {
			dir, path := goldenConfig(t, mustRead(t, fixtureConfig(t)))
			snap := freeNode()
			a := editing(t, testDesk(path, snap), snap, alice)
			typeKeys(a, "jjj") // GPU3, ...2d04: free
			press(a, agentNum(1))
			press(a, tt.Keys...)
			requireGoldenFrame(t, a, dir)
		})
	}
}

// TestGoldenDialogs pins the two dialogs the editor's goldens do not
// reach, at 120x40, opened by their real keys: the take-over question
// (bob presses e while alice holds the draft; opens on Cancel) and the
// format question (m on a file with no allocation tables: auto-split to
// manual; opens on main's slot-based form). Compared with
// testdata/TestGoldenDialogs/NAME.golden and NAME/text.golden; update with
// go test ./ui/ -run TestGoldenDialogs -update
func TestGoldenDialogs(t *testing.T) {
	pinLocalUTC(t)
	t.Run("takeover-dialog-120x40", func(t *testing.T) {
		dir, path := goldenConfig(t, mustRead(t, fixtureConfig(t)))
		snap := freeNode()
		desk := testDesk(path, snap) // one desk, two consoles
		editing(t, desk, snap, alice)
		b := testApp(t, 120, 40, snap, Options{Actor: bob, Desk: desk})
		typeKeys(b, "e")
		if b.ed() != nil || b.dlg() == nil || b.dlg().Kind != editor.DlgTakeOver {
			t.Fatalf("bob's e: editor %v dialog %+v", b.ed() != nil, b.dlg())
		}
		requireGoldenFrame(t, b, dir)
	})
	t.Run("format-dialog-120x40", func(t *testing.T) {
		text := testfix.AgentTOML("[resource]\nallocation-mode = \"auto-split\" # split\nreserved-cpu = 0\n[[agents]]\n[agents.agent]\nid = \"" +
			string(fake.Agent0) + "\"\n[[agents]]\n[agents.agent]\nid = \"" + string(fake.Agent1) + "\"\n")
		dir, path := goldenConfig(t, text)
		snap := freeNode()
		a := editing(t, testDesk(path, snap), snap, alice)
		typeKeys(a, "m") // auto-split -> manual: which format?
		if a.dlg() == nil || a.dlg().Kind != editor.DlgFormat || a.ed().Plan.ModeTo != agentconfig.ModeAutoSplit {
			t.Fatalf("no format question:\n%s", screen(a))
		}
		requireGoldenFrame(t, a, dir)
	})
}

// goldenConfig writes text as the config at a path that is the same every
// run, since the frames name it: /tmp/fgtop-golden-PPPPPPPPPP/agent.toml
// (the pid, fixed width), shown in the goldens as
// /tmp/fgtop-golden-XXXXXXXXXX. It returns the directory and the path.
func goldenConfig(t *testing.T, text string) (dir, path string) {
	t.Helper()
	dir = fmt.Sprintf("/tmp/fgtop-golden-%010d", os.Getpid())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Skipf("no fixed config dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// requireGoldenFrame compares a's 120x40 frame, with the config dir
// masked, with the test's golden (styled) and its text golden.
func requireGoldenFrame(t *testing.T, a *App, dir string) {
	t.Helper()
	frame := strings.ReplaceAll(a.View().Content, dir, "/tmp/fgtop-golden-XXXXXXXXXX")
	// The title keeps the path's end where the whole does not fit.
	frame = strings.ReplaceAll(frame, fmt.Sprintf("golden-%010d", os.Getpid()), "golden-XXXXXXXXXX")
	checkFrame(t, frame, 120, 40)
	golden.RequireEqual(t, []byte(frame))
	t.Run("text", func(t *testing.T) {
		golden.RequireEqual(t, []byte(ansi.Strip(frame)))
	})
}

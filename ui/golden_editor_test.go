package ui

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
		name string
		keys []tea.KeyPressMsg
	}{
		{"editor-120x40", nil},
		{"plan-120x40", []tea.KeyPressMsg{keyRune('p')}},
		{"apply-dialog-120x40", []tea.KeyPressMsg{keyRune('A')}},
		{"discard-dialog-120x40", []tea.KeyPressMsg{keyCode(tea.KeyEscape)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The frames name the config's path, so it must be the same
			// every run: /tmp/fgtop-golden-PPPPPPPPPP (the pid, fixed
			// width), shown in the goldens as /tmp/fgtop-golden-XXXXXXXXXX.
			dir := fmt.Sprintf("/tmp/fgtop-golden-%010d", os.Getpid())
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Skipf("no fixed config dir: %v", err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			path := filepath.Join(dir, "agent.toml")
			if err := os.WriteFile(path, []byte(mustRead(t, fixtureConfig(t))), 0o640); err != nil {
				t.Fatal(err)
			}
			snap := freeNode()
			a := editing(t, testDesk(path, snap), snap, alice)
			typeKeys(a, "jjj") // GPU3, ...2d04: free
			press(a, agentNum(1))
			press(a, tt.keys...)
			frame := strings.ReplaceAll(a.View().Content, dir, "/tmp/fgtop-golden-XXXXXXXXXX")
			checkFrame(t, frame, 120, 40)
			golden.RequireEqual(t, []byte(frame))
			t.Run("text", func(t *testing.T) {
				golden.RequireEqual(t, []byte(ansi.Strip(frame)))
			})
		})
	}
}

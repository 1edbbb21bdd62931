package console

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestGolden runs the real program (teatest) on the fixture node with a
// fixed clock, size and colour profile, feeds the snapshot through the
// channel like the engine does, presses keys, and compares the final
// model's frame with testdata/TestGolden/NAME.golden (the styled frame)
// and NAME/text.golden (the same without escapes, for review). Update
// with: go test ./ui/ -run TestGolden -update
func TestGolden(t *testing.T) {
	type keys []tea.Msg
	tests := []struct {
		Name   string
		W, H   int
		source string
		opts   Options
		Keys   keys
	}{
		{Name: "main-80x24", W: 80, H: 24},
		{Name: "main-160x48", W: 160, H: 48},
		{Name: "degraded-80x24", W: 80, H: 24, source: "degraded"},
		{Name: "degraded-160x48", W: 160, H: 48, source: "degraded", Keys: keys{keyRune('a')}},
		{Name: "readonly-80x24", W: 80, H: 24, opts: Options{ReadOnly: true}},
		{Name: "readonly-help-80x24", W: 80, H: 24, opts: Options{ReadOnly: true}, Keys: keys{keyRune('?')}},
		{Name: "mig-detail-80x24", W: 80, H: 24, Keys: keys{keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyCode(tea.KeyEnter)}},
		{Name: "all-kernels-sorted-160x48", W: 160, H: 48, Keys: keys{keyRune('f'), keyCode(tea.KeyTab), keyRune(':'),
			keyRune('s'), keyRune('o'), keyRune('r'), keyRune('t'), keyRune(' '), keyRune('-'), keyRune('s'), keyRune('h'),
			keyRune('a'), keyRune('r'), keyRune('e'), keyRune('s'), keyCode(tea.KeyEnter)}},
		{Name: "filter-80x24", W: 80, H: 24, Keys: keys{keyRune('f'), keyRune('/'), keyRune('!'), keyRune('n'), keyRune('u'),
			keyRune('m'), keyRune('a'), keyRune('0')}},
		{Name: "mock-ascii-mono-80x24", W: 80, H: 24, source: "mock", opts: Options{ASCII: true, Theme: themes.MustBuiltin(themes.Mono)}},
		{Name: "colorblind-160x48", W: 160, H: 48, opts: Options{Theme: themes.MustBuiltin(themes.Colorblind)}},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			opts := tt.opts
			if opts.Theme == nil {
				opts.Theme = themes.MustBuiltin(themes.Dark)
			}
			opts.Now = fixedNow
			ch := make(chan *model.Snapshot, 1)
			ch <- fake.Node(fake.Options{Source: tt.source})
			tm := teatest.NewTestModel(t, New(ch, opts),
				teatest.WithInitialTermSize(tt.W, tt.H),
				teatest.WithProgramOptions(
					tea.WithColorProfile(colorprofile.ANSI256),
					tea.WithEnvironment([]string{"TERM=xterm-256color"}),
				))
			// The frame shows the node once the snapshot is adopted.
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
				return bytes.Contains(b, []byte("gpu-node01"))
			}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
			for _, k := range tt.Keys {
				tm.Send(k)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			frame := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View().Content
			checkFrame(t, frame, tt.W, tt.H)
			golden.RequireEqual(t, []byte(frame))
			t.Run("text", func(t *testing.T) {
				golden.RequireEqual(t, []byte(ansi.Strip(frame)))
			})
		})
	}
}

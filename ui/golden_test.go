package ui

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
		name   string
		w, h   int
		source string
		opts   Options
		keys   keys
	}{
		{name: "main-80x24", w: 80, h: 24},
		{name: "main-160x48", w: 160, h: 48},
		{name: "degraded-80x24", w: 80, h: 24, source: "degraded"},
		{name: "degraded-160x48", w: 160, h: 48, source: "degraded", keys: keys{keyRune('a')}},
		{name: "readonly-80x24", w: 80, h: 24, opts: Options{ReadOnly: true}},
		{name: "readonly-help-80x24", w: 80, h: 24, opts: Options{ReadOnly: true}, keys: keys{keyRune('?')}},
		{name: "mig-detail-80x24", w: 80, h: 24, keys: keys{keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyRune('j'), keyCode(tea.KeyEnter)}},
		{name: "all-kernels-sorted-160x48", w: 160, h: 48, keys: keys{keyRune('f'), keyCode(tea.KeyTab), keyRune(':'),
			keyRune('s'), keyRune('o'), keyRune('r'), keyRune('t'), keyRune(' '), keyRune('-'), keyRune('s'), keyRune('h'),
			keyRune('a'), keyRune('r'), keyRune('e'), keyRune('s'), keyCode(tea.KeyEnter)}},
		{name: "filter-80x24", w: 80, h: 24, keys: keys{keyRune('f'), keyRune('/'), keyRune('!'), keyRune('n'), keyRune('u'),
			keyRune('m'), keyRune('a'), keyRune('0')}},
		{name: "mock-ascii-mono-80x24", w: 80, h: 24, source: "mock", opts: Options{ASCII: true, Theme: themes.MustBuiltin(themes.Mono)}},
		{name: "colorblind-160x48", w: 160, h: 48, opts: Options{Theme: themes.MustBuiltin(themes.Colorblind)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts.Theme == nil {
				opts.Theme = themes.MustBuiltin(themes.Dark)
			}
			opts.Now = fixedNow
			ch := make(chan *model.Snapshot, 1)
			ch <- fake.Node(fake.Options{Source: tt.source})
			tm := teatest.NewTestModel(t, New(ch, opts),
				teatest.WithInitialTermSize(tt.w, tt.h),
				teatest.WithProgramOptions(
					tea.WithColorProfile(colorprofile.ANSI256),
					tea.WithEnvironment([]string{"TERM=xterm-256color"}),
				))
			// The frame shows the node once the snapshot is adopted.
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
				return bytes.Contains(b, []byte("gpu-node01"))
			}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
			for _, k := range tt.keys {
				tm.Send(k)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			frame := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View().Content
			checkFrame(t, frame, tt.w, tt.h)
			golden.RequireEqual(t, []byte(frame))
			t.Run("text", func(t *testing.T) {
				golden.RequireEqual(t, []byte(ansi.Strip(frame)))
			})
		})
	}
}

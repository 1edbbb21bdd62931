package console

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

func testStyles(t testing.TB, theme string, ascii bool) *kit.Styles {
	t.Helper()
	st, err := kit.NewStyles(themes.MustBuiltin(theme), ascii)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func stripANSI(s string) string { return ansi.Strip(s) }

// fixedNow is the tests' clock: three seconds after the fixture snapshot.
func fixedNow() time.Time { return fake.T0.Add(3 * time.Second) }

// testApp is an App at a size with a snapshot adopted, driven directly
// (no program): what the unit tests use.
func testApp(t testing.TB, w, h int, s *model.Snapshot, opts Options) *App {
	t.Helper()
	if opts.Theme == nil {
		opts.Theme = themes.MustBuiltin(themes.Dark)
	}
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	a := newApp(nil, opts)
	// Driven without a program: the desk's commands run at once and their
	// messages are handled before Update returns (TestOtherApplyNeverStalls
	// runs them as a program does).
	a.SyncCmds = true
	a.Init()
	a.Update(teaSize(w, h))
	if s != nil {
		feed(a, s)
	}
	return a
}

// feed delivers a snapshot as the program would: queued, then adopted on
// the frame tick.
func feed(a *App, s *model.Snapshot) {
	a.Update(SnapshotMsg{s})
	a.Update(frameMsg{})
}

// helpOf, detailOf and promptOf are the open help, detail and prompt, or
// nil.
func helpOf(a *App) *helpScreen { return find[*helpScreen](a) }
func detailOf(a *App) *detail   { return find[*detail](a) }
func promptOf(a *App) *prompt   { return find[*prompt](a) }

// helpLines is the body of the help that ? opens on what a shows now,
// at width w; a is left as it was.
func helpLines(a *App, w int) []string {
	n := len(a.layers)
	a.openHelp()
	hs := helpOf(a)
	a.layers = a.layers[:n]
	a.Invalidate()
	return hs.Lines(w)
}

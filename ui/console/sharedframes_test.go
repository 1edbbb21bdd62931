package console

import (
	"fmt"
	"image/color"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// framesSnapshots are samplesSnapshots with issues that come and go (a
// new one flashes, in every console at the same instant).
func framesSnapshots(n int) []*model.Snapshot {
	out := samplesSnapshots(n)
	for i, s := range out {
		if i >= 8 && i%9 < 5 {
			c := *s
			c.Issues = append(slices.Clone(s.Issues), model.Issue{Severity: model.SevWarning, Code: "test-issue",
				Message: fmt.Sprintf("test issue %d", i/9)})
			out[i] = &c
		}
	}
	return out
}

// framesClock is a console's clock the test moves.
type framesClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *framesClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *framesClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// framesApp is testApp without the fixed theme (the theme follows the
// terminal's background, so a BackgroundColorMsg changes it).
func framesApp(w, h int, opts Options) *App {
	a := newApp(nil, opts)
	a.SyncCmds = true
	a.Init()
	a.Update(teaSize(w, h))
	return a
}

// twinPair is a console sharing frames and its twin composing its own,
// given the same messages.
type twinPair struct {
	name        string
	shared, own *App
}

func (p *twinPair) update(msgs ...tea.Msg) {
	for _, m := range msgs {
		p.shared.Update(m)
		p.own.Update(m)
	}
}

// check compares the pair's frames (and what View says besides).
func (p *twinPair) check(t *testing.T, step int) string {
	t.Helper()
	got, want := p.shared.View(), p.own.View()
	if got.Content != want.Content {
		t.Fatalf("step %d, %s: the console sharing frames draws another frame than its twin: %s", step, p.name, firstDiff(got.Content, want.Content))
	}
	if p.shared.staleAt != p.own.staleAt {
		t.Fatalf("step %d, %s: the frame goes stale at %v, its twin's at %v", step, p.name, p.shared.staleAt, p.own.staleAt)
	}
	if got.WindowTitle != want.WindowTitle {
		t.Fatalf("step %d, %s: title %q, its twin's %q", step, p.name, got.WindowTitle, want.WindowTitle)
	}
	return got.Content
}

// TestSharedFramesExact: read-only consoles given one Frames (serve's
// sessions) draw, at every step, exactly the frame of a twin fed the same
// messages that composes its own: sessions there from the start, one that
// joins late, one resized to the others' size, one that gets a key, one
// whose terminal turns out light, through snapshots whose new issues
// flash and clock ticks between them. The sessions in one state compose
// each frame once between them.
func TestSharedFramesExact(t *testing.T) {
	snaps := framesSnapshots(60)
	clk := &framesClock{t: snaps[0].Time}
	o := Options{ReadOnly: true, Now: clk.now}.ShareDerivations()
	alone := o
	alone.Frames = nil
	mk := func(name string, w, h int, opts Options) *twinPair {
		return &twinPair{name, framesApp(w, h, opts), framesApp(w, h, with(opts, alone))}
	}
	dark := o
	dark.Background = "dark"
	// A session whose clock reads 7 ms later: it adopts, flashes and
	// draws that much after the others.
	later := dark
	later.Now = func() time.Time { return clk.now().Add(7 * time.Millisecond) }
	pairs := []*twinPair{
		mk("first", 160, 48, dark),
		mk("second", 160, 48, later),
		mk("resized", 120, 40, dark),
		mk("key", 160, 48, dark),
		mk("light later", 160, 48, o),
		mk("skipped one", 160, 48, dark),
		mk("mouse", 160, 48, dark),
	}
	const join = 27 // with a new issue: the others flash it, the late one does not
	flashes, light := 0, false
	for i, s := range snaps {
		clk.set(s.Time.Add(300 * time.Millisecond))
		switch i {
		case 12:
			pairs[3].update(keyRune('j'))
		case 20:
			pairs[2].update(teaSize(160, 48))
		case join:
			pairs = append(pairs, mk("late", 160, 48, dark))
		case 15:
			// A click on the kernels' AGENT header, where the twin has it.
			own := pairs[6].own
			r := own.lay.panes[paneKernels]
			for _, c := range own.Kernels.cols {
				if c.Key == "agent" {
					pairs[6].update(tea.MouseClickMsg{X: r.x + c.x, Y: r.y + 1, Button: tea.MouseLeft})
				}
			}
			if pairs[6].own.Kernels.sortCol != "agent" {
				t.Fatalf("the click sorted by %q", pairs[6].own.Kernels.sortCol)
			}
		case 30:
			pairs[4].update(tea.BackgroundColorMsg{Color: color.White})
		}
		for _, p := range pairs {
			if p.name == "skipped one" && i == 41 {
				continue // its program drained two snapshots to the newest
			}
			p.update(SnapshotMsg{s}, frameMsg{})
			if f := p.check(t, i); p.name == "first" && strings.Contains(f, "new issue") {
				flashes++
			}
		}
		// A tick half a second later, and one past the next second's
		// grace with no snapshot: ages move in the shared frames too.
		for _, d := range []time.Duration{800 * time.Millisecond, 1050 * time.Millisecond} {
			if i%4 != 0 && d > time.Second {
				continue
			}
			clk.set(s.Time.Add(d))
			for _, p := range pairs {
				p.update(clockMsg{})
				p.check(t, i)
			}
		}
		if i == 30 && pairs[4].shared.St.Theme.Name != pairs[0].shared.St.Theme.Name {
			light = true
		}
	}
	if flashes == 0 || !light {
		t.Fatalf("flashes drawn %d, theme changed %v: the test shows less than it says", flashes, light)
	}
	if !pairs[3].shared.shareOff || pairs[0].shared.shareOff {
		t.Error("the console that got a key still shares (or the first one no longer does)")
	}
	hits, misses := o.Frames.Stats()
	t.Logf("frames taken %d, composed %d", hits, misses)
	if hits < misses {
		t.Errorf("frames taken %d, composed %d: the sessions in one state do not compose once", hits, misses)
	}
}

// with returns opts with the Frames of alone (nil).
func with(opts, alone Options) Options {
	opts.Frames = alone.Frames
	return opts
}

// TestSharedFramesConcurrently: sessions adopt and draw on goroutines of
// their own through one Frames (go test -race), meeting after each
// snapshot as serve's sessions, on the whole second, do; each draws its
// twin's frame at every step.
func TestSharedFramesConcurrently(t *testing.T) {
	snaps := framesSnapshots(30)
	o := Options{ReadOnly: true, Background: "dark"}.ShareDerivations()
	const sessions = 4
	var wg sync.WaitGroup
	steps := make([]sync.WaitGroup, len(snaps))
	for i := range steps {
		steps[i].Add(sessions)
	}
	errs := make(chan string, sessions*len(snaps))
	for k := range sessions {
		wg.Go(func() {
			clk := &framesClock{t: snaps[0].Time}
			opts := o
			opts.Now = clk.now
			alone := opts
			alone.Frames = nil
			p := &twinPair{fmt.Sprint("session ", k), framesApp(160, 48, opts), framesApp(160, 48, alone)}
			for i, s := range snaps {
				clk.set(s.Time.Add(300 * time.Millisecond))
				p.update(SnapshotMsg{s}, frameMsg{})
				got, want := p.shared.View().Content, p.own.View().Content
				if got != want {
					errs <- fmt.Sprintf("session %d, step %d: %s", k, i, firstDiff(got, want))
				}
				steps[i].Done()
				steps[i].Wait()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if hits, _ := o.Frames.Stats(); hits == 0 {
		t.Error("no frame was taken from another session")
	}
}

// TestSharedFramesNeedReadOnly: an operator's console composes its own
// frames even with a Frames.
func TestSharedFramesNeedReadOnly(t *testing.T) {
	o := Options{Background: "dark"}.ShareDerivations()
	a, b := framesApp(160, 48, o), framesApp(160, 48, o)
	for _, s := range samplesSnapshots(5) {
		feed(a, s)
		feed(b, s)
		_, _ = a.View(), b.View()
	}
	if hits, misses := o.Frames.Stats(); hits+misses != 0 {
		t.Errorf("operators' consoles took %d frames and offered %d", hits, misses)
	}
}

// BenchmarkSessionsSharedFrames is serve's read-only sessions at rest,
// as BenchmarkSessionsAtRest, with their frames composed once for those
// in one state (frames=shared) or by each (frames=own, as before
// Frames). Ns/op is per session and snapshot.
func BenchmarkSessionsSharedFrames(b *testing.B) {
	for _, n := range []int{10, 50} {
		for _, shared := range []bool{false, true} {
			name := fmt.Sprintf("sessions=%d/frames=own", n)
			if shared {
				name = fmt.Sprintf("sessions=%d/frames=shared", n)
			}
			b.Run(name, func(b *testing.B) {
				s := fake.Large(4, 16)
				o := Options{ReadOnly: true, Theme: themes.MustBuiltin(themes.Dark)}.ShareDerivations()
				if !shared {
					o.Frames = nil
				}
				apps := make([]*App, n)
				for i := range apps {
					apps[i] = testApp(b, 160, 48, s, o)
				}
				adoptInTurn(b, apps, s)
			})
		}
	}
}

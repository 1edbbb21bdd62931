package console

import (
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/kit"
)

// reviewPairs makes n twin pairs (sharing / alone) on one clock.
func reviewPairs(t *testing.T, n int) (*framesClock, Options, []*twinPair) {
	snaps := framesSnapshots(4)
	clk := &framesClock{t: snaps[0].Time}
	o := Options{ReadOnly: true, Background: "dark", Now: clk.now}.ShareDerivations()
	alone := o
	alone.Frames = nil
	var ps []*twinPair
	for i := range n {
		ps = append(ps, &twinPair{string(rune('A' + i)), framesApp(160, 48, o), framesApp(160, 48, alone)})
	}
	for _, s := range snaps[:4] {
		clk.set(s.Time.Add(300 * time.Millisecond))
		for _, p := range ps {
			p.update(SnapshotMsg{s}, frameMsg{})
			p.check(t, 0)
		}
	}
	return clk, o, ps
}

// TestSharedFramesClosed: App.Closed ("engine stopped" in the header) is
// drawn by compose, so it is in frameKey: an open session does not take a
// closed one's frame, nor the closed one the open one's, whichever
// composes first (the hrev8 review's tests, here and below).
func TestSharedFramesClosed(t *testing.T) {
	for _, closedFirst := range []bool{true, false} {
		clk, _, ps := reviewPairs(t, 2)
		a, b := ps[0], ps[1]
		a.update(closedMsg{})
		// The closed flash runs out; both tick.
		clk.set(clk.now().Add(kit.FlashDuration(kit.LvlCrit) + time.Second))
		a.update(clockMsg{})
		b.update(clockMsg{})
		if a.shared.Flash.Text != "" || b.shared.Flash.Text != "" {
			t.Fatalf("flash still on: %q / %q", a.shared.Flash.Text, b.shared.Flash.Text)
		}
		first, second := a, b
		if !closedFirst {
			first, second = b, a
		}
		first.check(t, 1)  // composes and offers its frame
		second.check(t, 2) // must not take it
	}
}

// TestSharedFramesOffForGood: a session that had input (a key, a paste, a mouse
// wheel) never takes a frame again, even when back in the others' state.
func TestSharedFramesOffForGood(t *testing.T) {
	for _, in := range []struct {
		name string
		msgs []tea.Msg
	}{
		{"key j then k", []tea.Msg{keyRune('j'), keyRune('k')}},
		{"paste", []tea.Msg{tea.PasteMsg{Content: "x"}}},
		{"wheel", []tea.Msg{tea.MouseWheelMsg{X: 1, Y: 1, Button: tea.MouseWheelDown}, tea.MouseWheelMsg{X: 1, Y: 1, Button: tea.MouseWheelUp}}},
	} {
		t.Run(in.name, func(t *testing.T) {
			clk, o, ps := reviewPairs(t, 2)
			a, b := ps[0], ps[1]
			b.update(in.msgs...)
			if !b.shared.shareOff {
				t.Fatal("not off")
			}
			for i := range 5 {
				clk.set(clk.now().Add(time.Second))
				a.update(clockMsg{})
				a.check(t, i)
				h0, _ := o.Frames.Stats()
				b.update(clockMsg{})
				b.shared.Invalidate()
				b.own.Invalidate()
				b.check(t, i)
				if h1, _ := o.Frames.Stats(); h1 != h0 || b.shared.frameTaken {
					t.Fatalf("step %d: the session with input took a frame", i)
				}
			}
		})
	}
}

// TestSharedFramesClickAfterInvalidate: a session whose frames were all
// taken gets a snapshot (frame invalidated, no View yet: serve's screen
// draws at most once per MinInterval) and then a click on the kernels'
// AGENT header: the click reads the columns of the frame it shows, which
// come with a taken frame.
func TestSharedFramesClickAfterInvalidate(t *testing.T) {
	clk, _, ps := reviewPairs(t, 2)
	b := ps[1]
	if !b.shared.frameTaken {
		t.Fatal("B did not take A's frame")
	}
	s := framesSnapshots(5)[4]
	clk.set(s.Time.Add(300 * time.Millisecond))
	b.update(SnapshotMsg{s}, frameMsg{})
	own := b.own
	r := own.lay.panes[paneKernels]
	clicked := false
	for _, c := range own.Kernels.cols {
		if c.Key == "agent" {
			b.update(tea.MouseClickMsg{X: r.x + c.x, Y: r.y + 1, Button: tea.MouseLeft})
			clicked = true
		}
	}
	if !clicked || own.Kernels.sortCol != "agent" {
		t.Fatalf("twin's click sorted by %q", own.Kernels.sortCol)
	}
	if got := b.shared.Kernels.sortCol; got != "agent" {
		t.Errorf("the session that took frames sorted by %q, its twin by agent", got)
	}
	b.check(t, 1)
}

// TestSharedFramesShowPast: a console showing the PAST banner (ShowPast)
// stays off the shared path.
func TestSharedFramesShowPast(t *testing.T) {
	clk, _, ps := reviewPairs(t, 2)
	a, b := ps[0], ps[1]
	at := clk.now().Add(-time.Hour)
	a.shared.ShowPast(at)
	a.own.ShowPast(at)
	clk.set(clk.now().Add(time.Second))
	a.update(clockMsg{})
	b.update(clockMsg{})
	a.check(t, 1)
	b.check(t, 2)
}

// TestSharedFramesConcurrent: sessions on goroutines with clocks 0-9 ms apart,
// ticks between snapshots, two sizes, one that gets a key midway: every
// session draws its twin's frame at every step (go test -race).
func TestSharedFramesConcurrent(t *testing.T) {
	snaps := framesSnapshots(40)
	o := Options{ReadOnly: true, Background: "dark"}.ShareDerivations()
	const sessions = 6
	var wg sync.WaitGroup
	steps := make([]sync.WaitGroup, len(snaps))
	for i := range steps {
		steps[i].Add(sessions)
	}
	errs := make(chan string, sessions*len(snaps)*3)
	for k := range sessions {
		wg.Go(func() {
			clk := &framesClock{t: snaps[0].Time}
			off := time.Duration(k*3%10) * time.Millisecond
			opts := o
			opts.Now = func() time.Time { return clk.now().Add(off) }
			alone := opts
			alone.Frames = nil
			w := 160
			if k == 5 {
				w = 120
			}
			p := &twinPair{fmt.Sprint("session ", k), framesApp(w, 48, opts), framesApp(w, 48, alone)}
			cmp := func(i int) {
				got, want := p.shared.View().Content, p.own.View().Content
				if got != want {
					errs <- fmt.Sprintf("session %d, step %d: %s", k, i, firstDiff(got, want))
				}
			}
			for i, s := range snaps {
				if k == 4 && i == 20 {
					p.update(keyRune('j'))
				}
				clk.set(s.Time.Add(300 * time.Millisecond))
				p.update(SnapshotMsg{s}, frameMsg{})
				cmp(i)
				clk.set(s.Time.Add(1050 * time.Millisecond))
				p.update(clockMsg{})
				cmp(i)
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
	hits, misses := o.Frames.Stats()
	t.Logf("taken %d composed %d", hits, misses)
	if hits == 0 {
		t.Error("no frame was taken from another session")
	}
}

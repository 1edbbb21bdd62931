package console

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
)

// samplesSnapshots are restSnapshots with the engine's content generations,
// and every fifth second a poll that read what the last one read (the
// same generation a second later), so consoles adopt and retime.
func samplesSnapshots(n int) []*model.Snapshot {
	var out []*model.Snapshot
	for i, s := range restSnapshots(n) {
		c := *s
		c.Gen = uint64(i + 1)
		if i > 0 && i%5 == 0 {
			r := *out[len(out)-1]
			r.Seq, r.Time = c.Seq, c.Time
			out = append(out, &r)
			continue
		}
		out = append(out, &c)
	}
	return out
}

// TestLateJoinerDrawsTheSameGraphs: a console that opens late with the
// server's Samples draws, from its first snapshot on, exactly what a
// console there from the start draws (its history graphs included), and
// the early console draws what a console alone draws. A late joiner
// without them starts its graphs at its first snapshot, which the test
// sees as a difference (so it can fail).
func TestLateJoinerDrawsTheSameGraphs(t *testing.T) {
	snaps := samplesSnapshots(60)
	o := Options{}.ShareDerivations()
	early := testApp(t, 160, 48, nil, o)
	alone := testApp(t, 160, 48, nil, Options{})
	const join = 25
	var late, lateAlone *App
	differed := false
	for i, s := range snaps {
		if i == join {
			late = testApp(t, 160, 48, nil, o)
			lateAlone = testApp(t, 160, 48, nil, Options{})
		}
		early.adopt(s)
		alone.adopt(s)
		want := early.View().Content
		if got := alone.View().Content; got != want {
			t.Fatalf("snapshot %d: a console sharing its samples draws\n%s\nwhere one alone draws\n%s", i, want, got)
		}
		if late == nil {
			continue
		}
		late.adopt(s)
		lateAlone.adopt(s)
		if got := late.View().Content; got != want {
			t.Fatalf("snapshot %d: the console opened at snapshot %d draws\n%s\nwhere the one there from the start draws\n%s", i, join, got, want)
		}
		if lateAlone.View().Content != want {
			differed = true
		}
	}
	if !differed {
		t.Fatal("a late console without the shared samples drew what the early one drew: the test shows nothing")
	}
}

// TestSamplesShareConcurrently: sessions adopt on goroutines of their own
// and join while the others adopt (each given first the snapshot the
// first session adopted last, as the engine offers a new subscriber its
// newest); recording and copying the samples is
// race-free (go test -race), and every session ends on the frame of a
// console there from the start.
func TestSamplesShareConcurrently(t *testing.T) {
	snaps := samplesSnapshots(40)
	o := Options{}.ShareDerivations()
	const sessions = 4
	var wg sync.WaitGroup
	apps := make([]*App, sessions)
	for k := range apps {
		apps[k] = testApp(t, 160, 48, nil, o)
	}
	// Session k joins once session 0 adopted snapshot 5k, as a session
	// opened then is first given the newest snapshot; the others go on
	// at their own pace.
	joined := make([]chan struct{}, sessions)
	for k := range joined {
		joined[k] = make(chan struct{})
	}
	for k, a := range apps {
		wg.Go(func() {
			<-joined[k]
			for i, s := range snaps[k*5:] {
				a.adopt(s)
				_ = a.View()
				if j := i / 5; k == 0 && i%5 == 0 && j > 0 && j < sessions {
					close(joined[j])
				}
			}
		})
	}
	close(joined[0])
	wg.Wait()
	alone := testApp(t, 160, 48, nil, Options{})
	for _, s := range snaps {
		alone.adopt(s)
	}
	want := alone.View().Content
	for k, a := range apps {
		if got := a.View().Content; got != want {
			t.Errorf("session %d (joined at snapshot %d) ends on another frame: %s", k, k*5, firstDiff(got, want))
		}
	}
}

// firstDiff says where two frames first differ, line by line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is\n%q\nwant\n%q", i, ansi.Strip(g[i]), ansi.Strip(w[i]))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestSamplesGapNotFilled: every session leaves (or is in past mode)
// while the engine goes on publishing; a session opened afterwards draws
// no sample a snapshot did not say (before, its graphs filled the gap with
// the last readings before it: 782 of 2,160 samples differed from a
// console that saw every snapshot). (The hrev7 review's test.)
func TestSamplesGapNotFilled(t *testing.T) {
	snaps := samplesSnapshots(90)
	o := Options{}.ShareDerivations()
	early := testApp(t, 160, 48, nil, o)
	truth := testApp(t, 160, 48, nil, Options{})
	var late *App
	for i, s := range snaps {
		truth.adopt(s)
		switch {
		case i < 20:
			early.adopt(s)
		case i == 70:
			late = testApp(t, 160, 48, nil, o)
			fallthrough
		case i > 70:
			late.adopt(s)
		}
	}
	wrong, compared := 0, 0
	for k, th := range truth.hist {
		lh := late.hist[k]
		if lh == nil || lh.sec != th.sec {
			t.Fatalf("device %v: late ring missing or not aligned", k)
		}
		rings := [][2]*ring{{&th.Util, &lh.Util}, {&th.Mem, &lh.Mem}, {&th.alloc, &lh.alloc}}
		for _, r := range rings {
			n := min(r[0].N, r[1].N)
			for i := 0; i < n; i++ {
				tv, lv := r[0].at(r[0].N-1-i), r[1].at(r[1].N-1-i)
				if math.IsNaN(float64(lv)) {
					continue
				}
				compared++
				if tv != lv && !(math.IsNaN(float64(tv)) && math.IsNaN(float64(lv))) {
					wrong++
				}
			}
		}
	}
	if wrong > 0 {
		t.Errorf("the session opened after the gap holds %d of %d samples that differ from what the snapshots said (a console that saw every snapshot)", wrong, compared)
	}
}

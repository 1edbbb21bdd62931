package console

import (
	"sync"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// restSnapshots is what a node publishes over n seconds: telemetry every
// second, and now and then something else (an agent's health), so both
// ways of deriving run.
func restSnapshots(n int) []*model.Snapshot {
	s := fake.Large(8, 40)
	out := []*model.Snapshot{s}
	for i := 1; i < n; i++ {
		s = fake.Tick(s, i)
		if i%7 == 0 {
			s.Agents[1].Health = model.AgentHealth{State: model.AgentHealthState([]string{"up", "down"}[i%2])}
		}
		out = append(out, s)
	}
	return out
}

// TestSessionsShareDerivations: consoles given one Deriver (serve's
// sessions) derive each snapshot once between them, and each draws what a
// console deriving alone draws.
func TestSessionsShareDerivations(t *testing.T) {
	snaps := restSnapshots(30)
	dv := render.NewDeriver()
	a := testApp(t, 160, 48, nil, Options{Deriver: dv})
	b := testApp(t, 200, 60, nil, Options{Deriver: dv})
	alone := testApp(t, 160, 48, nil, Options{})
	for _, s := range snaps {
		a.adopt(s)
		b.adopt(s)
		alone.adopt(s)
		if a.d != b.d {
			t.Fatalf("snapshot %d: the sessions hold two derivations of it", s.Seq)
		}
		if got, want := a.View().Content, alone.View().Content; got != want {
			t.Fatalf("snapshot %d: a session draws\n%s\nwhere a console alone draws\n%s", s.Seq, got, want)
		}
		_ = b.View()
	}
	if got := dv.Made(); got != len(snaps) {
		t.Errorf("two sessions over %d snapshots: %d derivations, want one a snapshot", len(snaps), got)
	}
}

// TestSessionsShareDerivationsConcurrently: sessions run their programs on
// goroutines of their own; deriving through one Deriver and drawing from
// the shared derivations is race-free (go test -race) and each session
// ends on the frame a console alone draws.
func TestSessionsShareDerivationsConcurrently(t *testing.T) {
	snaps := restSnapshots(40)
	dv := render.NewDeriver()
	const sessions = 4
	apps := make([]*App, sessions)
	for i := range apps {
		apps[i] = testApp(t, 160, 48, nil, Options{Deriver: dv})
	}
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Go(func() {
			for _, s := range snaps {
				a.adopt(s)
				_ = a.View()
			}
		})
	}
	wg.Wait()
	alone := testApp(t, 160, 48, nil, Options{})
	for _, s := range snaps {
		alone.adopt(s)
	}
	want := alone.View().Content
	for i, a := range apps {
		if got := a.View().Content; got != want {
			t.Errorf("session %d ends on\n%s\nwant\n%s", i, got, want)
		}
	}
	if got := dv.Made(); got > sessions*len(snaps) || got < len(snaps) {
		t.Errorf("%d derivations of %d snapshots by %d sessions", got, len(snaps), sessions)
	}
}

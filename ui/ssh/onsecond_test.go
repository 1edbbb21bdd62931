package sshserve

import (
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// stampedTerm notes when each write of a session's output arrived.
type stampedTerm struct {
	*term
	mu sync.Mutex
	at []time.Time
}

func (s *stampedTerm) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	return s.term.Write(p)
}

// since returns the arrival times from t on.
func (s *stampedTerm) since(t time.Time) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Time
	for _, a := range s.at {
		if !a.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// openStamped opens a console whose output arrivals are noted.
func (f *fixture) openStamped(t *testing.T, key gossh.Signer) *stampedTerm {
	t.Helper()
	_, sess := f.ptySession(t, "victor", key)
	st := &stampedTerm{term: newTerm(termW, termH)}
	sess.Stdout, sess.Stderr = st, newTerm(termW, termH)
	if _, err := sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSessionsDrawOnTheSecond: viewers opened at three phases of the
// second draw their once-a-second changes (the snapshot's age) just past
// the wall clock's whole second, all of them, and their programs (whose
// Bubble Tea ticker takes the start's phase) start on it: with
// UI.ClockOnSecond and StartOnSecond the server composes every session's
// change at one instant. Without them each session draws at the phase it
// was opened at (a second and the clock's grace later), which the bound
// on the arrivals' offsets refuses.
func TestSessionsDrawOnTheSecond(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	f := startServer(t, func(c *Config) {
		c.UI.Now = time.Now
		c.UI.ClockOnSecond = true
		c.StartOnSecond = true
	}, func(s *Server) {
		s.programStarted = func(at time.Time) {
			mu.Lock()
			starts = append(starts, at)
			mu.Unlock()
		}
	})
	snap := fake.Node(fake.Options{})
	snap.Time = time.Now().Truncate(time.Second).Add(-2 * time.Second)
	f.pub.Publish(snap)

	var terms []*stampedTerm
	for _, phase := range []time.Duration{300, 550, 800} {
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second + phase*time.Millisecond).Sub(now))
		terms = append(terms, f.openStamped(t, f.viewer.Signer))
	}
	for _, st := range terms {
		waitUntil(t, "the console", func() bool { return strings.Contains(st.screen(), "gpu-node01") })
	}
	from := time.Now().Add(1200 * time.Millisecond)
	time.Sleep(time.Until(from) + 3*time.Second)
	// The offsets past the second: the clock fires at tickGrace (50 ms),
	// then the frame is composed, diffed and carried over SSH on a loaded
	// machine. A session at its own phase draws at 350, 600 or 850 ms.
	const lo, hi = 30 * time.Millisecond, 320 * time.Millisecond
	for i, st := range terms {
		got := st.since(from)
		if len(got) < 2 {
			t.Fatalf("session %d drew %d changes in 3 s of a snapshot's age moving, want 2 or more", i, len(got))
		}
		for _, at := range got {
			if off := at.Sub(at.Truncate(time.Second)); off < lo || off > hi {
				t.Errorf("session %d drew at %s past the second, want between %s and %s", i, off, lo, hi)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != len(terms) {
		t.Fatalf("%d programs started, want %d", len(starts), len(terms))
	}
	for i, at := range starts {
		if off := at.Sub(at.Truncate(time.Second)); off > 100*time.Millisecond {
			t.Errorf("session %d's program started %s past the second, want within 100 ms of it", i, off)
		}
	}
}

package history

import (
	"testing"
	"time"
)

// heldSessions is the sessions of SessionsListHeld over [since, until),
// each with its Held made into maps where it has one.
func heldSessions(t *testing.T, rd *Reader, since, until time.Time) (*SessionsResult, int) {
	t.Helper()
	res, list, err := rd.SessionsListHeld(since, until)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	res.Sessions = make([]KernelSession, list.Len())
	for i := range res.Sessions {
		s := &res.Sessions[i]
		list.At(i, s)
		if !s.Held.IsZero() {
			if s.Alloc != nil {
				t.Fatalf("%s: both Alloc and Held", s.Kernel)
			}
			held++
			s.Alloc = s.Held.Map()
			if n := s.Held.Len(); n != entriesOf(s) {
				t.Fatalf("%s: Held has %d entries, its maps %d", s.Kernel, n, entriesOf(s))
			}
		}
	}
	return res, held
}

func entriesOf(s *KernelSession) int {
	n := 0
	for _, devs := range s.Alloc {
		n += len(devs)
	}
	return n
}

// TestSessionsListHeldIsSessions: the sessions with their arrivals kept
// as the walk keeps them (SessionsListHeld, what a replay reads) are
// Sessions' once made into maps, walked or taken from the folds, over
// the whole record and spans cut at random points of it.
func TestSessionsListHeldIsSessions(t *testing.T) {
	held := 0
	for run := range 6 {
		rd, folds := foldedRun(t, run)
		from, to, err := rd.Span()
		if err != nil {
			t.Fatal(err)
		}
		spans := [][2]time.Time{{}, {from.Add(to.Sub(from) / 3), from.Add(2 * to.Sub(from) / 3)}, {from.Add(to.Sub(from) / 2), time.Time{}}}
		for _, sp := range spans {
			for _, useFolds := range []bool{false, true} {
				rd.noFolds = !useFolds
				rd.foldOf = nil
				if useFolds {
					rd.foldOf = foldsOf(folds)
				}
				want, err := rd.Sessions(sp[0], sp[1])
				if err != nil {
					t.Fatal(err)
				}
				got, n := heldSessions(t, rd, sp[0], sp[1])
				held += n
				if w, g := sessionsText(want), sessionsText(got); w != g {
					t.Fatalf("run %d, span %v, folds %v: the held sessions differ\nSessions:\n%s\nheld:\n%s", run, sp, useFolds, w, g)
				}
			}
		}
	}
	if held == 0 {
		t.Fatal("no session's arrival was held: nothing compared")
	}
	t.Logf("%d arrivals held", held)
}

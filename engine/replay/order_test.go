package replay

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// stableEvents is how run ordered its events before events merged them:
// the partitions, then each session's arrival and departure, in one
// stable sort by time, a departure before an arrival at one moment; a
// departure at or before its own arrival then put right after it.
func stableEvents(r *runner) []event {
	rec := r.rec
	var evs []event
	instant := map[int]bool{}
	for i := 1; i < len(r.part); i++ {
		evs = append(evs, event{t: r.part[i].At, leave: true, i: -i})
	}
	for k := range len(rec.Sessions) {
		i := k
		if r.only != nil {
			if k >= len(r.only) {
				break
			}
			i = r.only[k]
		}
		s := &rec.Sessions[i]
		at := s.Start
		if s.Before && at.Before(rec.From) {
			at = rec.From
		}
		evs = append(evs, event{t: at, i: i})
		if !s.Open && s.End.Before(rec.To) {
			evs = append(evs, event{t: s.End, leave: true, i: i})
			instant[i] = !s.End.After(at)
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		if a.leave != b.leave {
			if a.leave {
				return -1
			}
			return 1
		}
		return 0
	})
	var out []event
	for _, ev := range evs {
		if ev.leave && instant[ev.i] {
			continue
		}
		out = append(out, ev)
		if !ev.leave && instant[ev.i] {
			out = append(out, event{t: ev.t, leave: true, i: ev.i})
		}
	}
	return out
}

// TestEventsAreTheStableSort: the merged events are the stable sort's,
// event for event, on random spans whose sessions arrive, leave and meet
// partition changes at the same moments (times drawn from a few
// seconds), some running at the start, some open at the end, and on
// every agent's subset of them (runApart's runs).
func TestEventsAreTheStableSort(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	from := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return from.Add(time.Duration(rng.IntN(n)) * time.Second) }
	for round := range 300 {
		rec := &Record{From: from, To: from.Add(20 * time.Second)}
		n := rng.IntN(60)
		for k := range n {
			s := Session{Kernel: model.KernelID(fmt.Sprintf("k%03d", k)), Agent: model.AgentID(fmt.Sprintf("a%d", rng.IntN(3)))}
			switch rng.IntN(4) {
			case 0:
				s.Before, s.Start = true, from.Add(-time.Duration(rng.IntN(3))*time.Second)
			default:
				s.Start = at(21)
			}
			s.End = s.Start.Add(time.Duration(rng.IntN(8)) * time.Second)
			if s.End.After(rec.To) || rng.IntN(6) == 0 {
				s.End, s.Open = rec.To, rng.IntN(2) == 0
			}
			rec.Sessions = append(rec.Sessions, s)
		}
		sortSessions(rec.Sessions)
		part := Partition{{At: from}}
		for range rng.IntN(4) {
			part = append(part, Epoch{At: at(21)})
		}
		slices.SortStableFunc(part[1:], func(a, b Epoch) int { return a.At.Compare(b.At) })
		runs := []*runner{{rec: rec, part: part}}
		for _, g := range apartGroups(rec) {
			runs = append(runs, &runner{rec: rec, part: part, only: g})
		}
		for j, r := range runs {
			if got, want := r.events(), stableEvents(r); !slices.Equal(got, want) {
				t.Fatalf("seed %d round %d run %d: merged\n%v\nstable sort\n%v", seed, round, j, got, want)
			}
		}
	}
}

// apartGroups are rec's sessions by agent, as apart groups them.
func apartGroups(rec *Record) [][]int {
	idx := map[model.AgentID]int{}
	var groups [][]int
	for i := range rec.Sessions {
		a := rec.Sessions[i].Agent
		g, ok := idx[a]
		if !ok {
			g = len(groups)
			idx[a] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// TestSessionsOfInHalvesAgrees: the sessions made in two halves on two
// cores and joined are those made in one pass and sorted, field by
// field, for 20,000 random kernels' stays around a span (before it,
// across its start, inside, across its end, after it; open, gone in a
// gap, seen first after one; slots of several devices, and none).
func TestSessionsOfInHalvesAgrees(t *testing.T) {
	// The halves are made on two cores only where there are two.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 28))
	from := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	amts := []model.Dec{model.MustDec("0.1"), model.MustDec("0.25"), model.MustDec("1.0"), model.MustDec("2"), model.MustDec("0.50")}
	var ks []history.KernelSession
	start := from.Add(-10 * time.Minute)
	for k := range 20000 {
		start = start.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		ses := history.KernelSession{Kernel: model.KernelID(fmt.Sprintf("k%05d", k)), Agent: "a", User: "u", Session: "s",
			From: start, To: start.Add(time.Duration(rng.IntN(1200)) * time.Second), Since: rng.IntN(5) == 0, Gone: rng.IntN(7) == 0,
			Open: rng.IntN(9) == 0, Changed: rng.IntN(4) == 0, Alloc: model.Allocations{}}
		for _, slot := range []model.SlotName{model.SlotCUDAShares, model.SlotCPU, model.SlotMem} {
			if rng.IntN(3) == 0 {
				continue
			}
			devs := map[model.DeviceID]model.Dec{}
			for d := range 1 + rng.IntN(3) {
				devs[model.DeviceID(fmt.Sprint(d))] = amts[rng.IntN(len(amts))]
			}
			ses.Alloc[slot] = devs
		}
		ks = append(ks, ses)
	}
	slices.SortFunc(ks, func(a, b history.KernelSession) int {
		if c := a.From.Compare(b.From); c != 0 {
			return c
		}
		return cmpStr(string(a.Kernel), string(b.Kernel))
	})
	got := sessionsOf(ks, from, to, nil)
	want := make([]Session, len(ks))
	want = want[:sessionsOfPart(want, 0, len(ks), func(i int, _ *history.KernelSession) *history.KernelSession { return &ks[i] }, from, to, nil)]
	slices.SortFunc(want, cmpSessions)
	if len(got) != len(want) || len(got) < 1000 {
		t.Fatalf("seed %d: %d sessions in halves, %d in one pass", seed, len(got), len(want))
	}
	for i := range got {
		if a, b := sessionLine(&got[i]), sessionLine(&want[i]); a != b {
			t.Fatalf("seed %d: session %d in halves\n%s\nin one pass\n%s", seed, i, a, b)
		}
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestCompareIsTheTwoRuns: the report of the fidelity run and a
// proposal's run made at once is the one of the two made one after the
// other, for the text and --json, with and without a proposal.
func TestCompareIsTheTwoRuns(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	for _, prop := range [][]model.Agent{nil, given(rec, map[model.AgentID]string{agentA: "0.5", agentB: "1.0"})} {
		for _, word := range []int{0, Printed, 1} {
			want := NewDoc(rec, Run(rec, rec.AsItWas(), Options{Fidelity: true, Word: word}), nil)
			if prop != nil {
				want = NewDoc(rec, Run(rec, rec.AsItWas(), Options{Fidelity: true, Word: word}), Run(rec, Fixed(prop), Options{Word: word}))
			}
			got := Compare(rec, prop, true, word)
			var a, b strings.Builder
			want.WriteText(&a)
			got.WriteText(&b)
			ja, _ := json.Marshal(want)
			jb, _ := json.Marshal(got)
			if a.String() != b.String() || string(ja) != string(jb) {
				t.Fatalf("proposal %v, word %d: at once\n%s\n%s\none after the other\n%s\n%s", prop != nil, word, b.String(), jb, a.String(), ja)
			}
			if prop != nil && !got.Proposal {
				t.Fatal("the proposal's run is not in the report")
			}
		}
	}
}

// loadWhole is the replay's record of all of rd's span.
func loadWhole(t *testing.T, rd *history.Reader) *Record {
	t.Helper()
	rec, err := Load(rd, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

package replay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestChunksBeforeLeftAtStart: sessions running before the span that
// left at or before its start (End <= From: a hand-made record, Load
// drops them) arrive at From and leave right after, whole and in chunks.
func TestChunksBeforeLeftAtStart(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 59))
	for round := range 20 {
		r := randomWeek(rec, rng)
		n := 0
		for i := range r.Sessions {
			s := &r.Sessions[i]
			if !s.Before || rng.IntN(2) == 0 {
				continue
			}
			s.Open, s.End = false, r.From.Add(-time.Duration(rng.IntN(2))*time.Minute)
			n++
		}
		if n == 0 {
			continue
		}
		for _, k := range []int{2, 3, 4} {
			chunksAgree(t, fmt.Sprintf("seed %d round %d", seed, round), r, r.AsItWas(), Options{Fidelity: true, Word: 1}, k)
		}
	}
}

// TestFollowerLeftBeforeArrival: sessions whose departure is noted
// before their arrival (End < Start, both in the span: times out of
// order) are, fed, what Run makes of them.
func TestFollowerLeftBeforeArrival(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 60))
	base := loadWhole(t, scriptedWeek(t).reader())
	stood := 0
	for round := range 100 {
		rec := clusteredWeek(base, rng, 10+rng.IntN(40), round%4 == 0)
		for i := range rec.Sessions {
			s := &rec.Sessions[i]
			if s.Before || rng.IntN(5) != 0 {
				continue
			}
			e := s.Start.Add(-time.Duration(rng.IntN(3)) * OrderSlack / 2)
			if e.After(rec.From) {
				s.End, s.Open = e, false
			}
		}
		opts := Options{Fidelity: true, Word: rng.IntN(3)}
		want := Run(rec, rec.AsItWas(), opts)
		fw := newFollower(rec, opts)
		ch := make(chan history.SessionBatch)
		go func() {
			defer close(ch)
			for _, b := range feed(rec, rng) {
				ch <- b
			}
		}()
		fw.follow(ch)
		if fw.broken != "" {
			// The record is made again and run whole: Run's.
			continue
		}
		stood++
		fw.runTo(time.Time{}, true)
		got := fw.r.end()
		if disagreementsText(want.Disagreements) != disagreementsText(got.Disagreements) || want.SameMoment != got.SameMoment ||
			want.Compared != got.Compared || want.Sessions != got.Sessions {
			t.Fatalf("seed %d, round %d: the runs differ\nRun %+v\nfed %+v", seed, round, want, got)
		}
		var a, b strings.Builder
		_ = NewDoc(rec, want, nil).WriteText(&a)
		_ = NewDoc(rec, got, nil).WriteText(&b)
		if a.String() != b.String() {
			t.Fatalf("seed %d, round %d: the reports differ\nRun:\n%s\nfed:\n%s", seed, round, a.String(), b.String())
		}
	}
	if stood < 50 {
		t.Fatalf("seed %d: only %d of 100 fed runs stood", seed, stood)
	}
	t.Logf("seed %d: %d of 100 fed runs stood", seed, stood)
}

// TestInstantAtPartitionChange: a session that arrives and leaves at the
// moment a new partition comes in holds nothing after it: the run's use
// sums (mean use, time over) are those of the run without it.
func TestInstantAtPartitionChange(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	at := rec.From.Add(3 * time.Hour)
	p0 := given(rec, map[model.AgentID]string{agentA: "2.5", agentB: "1.5"})
	p1 := given(rec, map[model.AgentID]string{agentA: "1.5", agentB: "2.5"})
	part := Partition{{Agents: p0}, {At: at, Agents: p1}}
	inst := rec.Sessions[3] // agent A's, at 3h
	if !inst.Start.Equal(at) {
		t.Fatalf("session 3 starts at %v", inst.Start)
	}
	for _, end := range []time.Time{at, at.Add(-time.Minute)} {
		w := *rec
		w.Sessions = append([]Session(nil), rec.Sessions...)
		w.Sessions[3].End = end
		wo := *rec
		wo.Sessions = append(append([]Session(nil), rec.Sessions[:3]...), rec.Sessions[4:]...)
		for _, p := range []Partition{part, Fixed(p0)} {
			a, b := Run(&w, p, Options{Fidelity: true}), Run(&wo, p, Options{Fidelity: true})
			for i := range a.Agents {
				for j := range a.Agents[i].Slots {
					x, y := a.Agents[i].Slots[j], b.Agents[i].Slots[j]
					if fmt.Sprint(x.MeanUse) != fmt.Sprint(y.MeanUse) || x.Over != y.Over {
						t.Errorf("left at %v: %s %s: %+v, without it %+v", end.Sub(at), a.Agents[i].Agent, x.Slot, x, y)
					}
				}
			}
		}
	}
}

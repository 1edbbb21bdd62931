package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestAgentsApartAgree: where each agent's sessions are replayed on
// their own (one partition, every session naming its agent, no question
// to the other agents), the run is the same in every field, in the same
// order, as the agents replayed together: on the scripted week and on
// random weeks, some of whose sessions name agents the partition lacks
// (each then refused in its own words, listed after the partition's
// agents by first arrival).
func TestAgentsApartAgree(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	opts := []Options{{NoElsewhere: true, count: true}, {NoElsewhere: true}, {NoElsewhere: true, Word: 1}, {NoElsewhere: true, Word: Printed}}
	agree := func(what string, r *Record, part Partition) {
		t.Helper()
		if apart(r, part, opts[0]) == nil {
			t.Fatalf("%s: the agents are not run apart", what)
		}
		for _, o := range opts {
			got := Run(r, part, o)
			o.serial = true
			want := Run(r, part, o)
			if a, b := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); a != b {
				t.Fatalf("%s %+v: apart\n%s\ntogether\n%s", what, o, a, b)
			}
		}
	}
	for _, amt := range []string{"0.1", "0.5", "1.0", "2.0", "100"} {
		agree("scripted, "+amt, rec, Fixed(given(rec, map[model.AgentID]string{agentA: amt, agentB: amt})))
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 3))
	for round := range 30 {
		r := randomWeek(rec, rng)
		for i := range r.Sessions {
			if rng.IntN(6) == 0 {
				r.Sessions[i].Agent = model.AgentID(fmt.Sprintf("i-gone-%d", rng.IntN(2)))
			}
		}
		amts := map[model.AgentID]string{agentA: fmt.Sprintf("%d.%d", rng.IntN(4), rng.IntN(10)), agentB: fmt.Sprintf("%d.%d", rng.IntN(4), rng.IntN(10))}
		agree(fmt.Sprintf("seed %d round %d %v", seed, round, amts), r, Fixed(given(r, amts)))
	}
	// Where the agents depend on each other, they are run together.
	part := Fixed(given(rec, map[model.AgentID]string{agentA: "1.0", agentB: "1.0"}))
	for _, o := range []Options{{}, {Fidelity: true, NoElsewhere: true}} {
		if apart(rec, part, o) != nil {
			t.Errorf("%+v: run apart", o)
		}
	}
	if apart(rec, Partition{part[0], {At: rec.From.Add(time.Hour), Agents: part[0].Agents}}, opts[0]) != nil {
		t.Error("a partition change: run apart")
	}
}

// TestPrepIsTheRun: a run whose sessions' requests, sums and nearness are
// made ahead on another goroutine (startPrep) is, in every field, the run
// that makes them as it goes, fidelity runs and runs under amounts, on the
// scripted week (with and without the host's devices) and random weeks;
// and the preps are made.
func TestPrepIsTheRun(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	opts := []Options{{Fidelity: true}, {Fidelity: true, Word: Printed}, {}, {Word: 1}, {NoElsewhere: true, serial: true}}
	agree := func(what string, r *Record, part Partition) {
		t.Helper()
		for _, o := range opts {
			o.prepAt = -1
			want := Run(r, part, o)
			o.prepAt = 1
			pr := &runner{rec: r, part: part, opts: o, res: &Result{From: r.From, To: r.To}}
			got := pr.run()
			if pr.preps == nil {
				t.Fatalf("%s %+v: no preps made", what, o)
			}
			if a, b := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); a != b {
				t.Fatalf("%s %+v: prepared\n%s\nas it goes\n%s", what, o, a, b)
			}
		}
	}
	agree("scripted, as it was", rec, rec.AsItWas())
	// Without the host's devices: the requests' cpu and mem are not the
	// allocator's (registered).
	gpus := *rec
	gpus.Devices = nil
	for _, d := range rec.Devices {
		if d.Name == "cuda" {
			gpus.Devices = append(gpus.Devices, d)
		}
	}
	agree("scripted without host devices", &gpus, gpus.AsItWas())
	agree("scripted without host devices, 0.5", &gpus, Fixed(given(&gpus, map[model.AgentID]string{agentA: "0.5", agentB: "0.5"})))
	for _, amt := range []string{"0.1", "1.0", "100"} {
		agree("scripted, "+amt, rec, Fixed(given(rec, map[model.AgentID]string{agentA: amt, agentB: amt})))
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 4))
	for round := range 20 {
		r := randomWeek(rec, rng)
		amts := map[model.AgentID]string{agentA: fmt.Sprintf("%d.%d", rng.IntN(4), rng.IntN(10)), agentB: fmt.Sprintf("%d.%d", rng.IntN(4), rng.IntN(10))}
		agree(fmt.Sprintf("seed %d round %d %v", seed, round, amts), r, Fixed(given(r, amts)))
		agree(fmt.Sprintf("seed %d round %d as it was", seed, round), r, r.AsItWas())
	}
}

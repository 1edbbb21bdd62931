package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// chunksAgree runs rec under part with opts in k chunks of time and
// whole, and fails unless the results are the same in every field (the
// counts of answers found by the cheap check or given again aside: they
// are the chunks' own work). It returns whether the run was chunked.
func chunksAgree(t *testing.T, what string, rec *Record, part Partition, opts Options, k int) bool {
	t.Helper()
	opts.chunkAt, opts.chunks = 1, k
	if chunksOf(rec, part, opts) != k {
		return false
	}
	got := runChunked(rec, part, opts, k)
	if got == nil {
		t.Fatalf("%s: the chunks could not be put together", what)
	}
	opts.chunkAt = -1
	want := Run(rec, part, opts)
	got.short, got.memoHits, want.short, want.memoHits = 0, 0, 0, 0
	if a, b := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); a != b {
		t.Fatalf("%s: in %d chunks\n%s\nwhole\n%s", what, k, a, b)
	}
	return true
}

// TestChunksAreTheRun: a fidelity run cut in chunks of time, each first
// taking the events before it quietly, is the whole run in every field:
// the disagreements and their words (the first ones worded, the rest
// not, across the chunks), the peaks and when they came, the time over
// the amount, the mean use, the counts. On the scripted week (with and
// without the host's devices) as it was and under amounts that make the
// manager and the allocator refuse, and on random weeks whose sessions
// hold their amounts in several forms (0.5, 0.50: the maps keep the
// form of what they were given, and the words print it).
func TestChunksAreTheRun(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	gpus := *rec
	gpus.Devices = nil
	for _, d := range rec.Devices {
		if d.Name == "cuda" {
			gpus.Devices = append(gpus.Devices, d)
		}
	}
	opts := []Options{{Fidelity: true}, {Fidelity: true, Word: Printed}, {Fidelity: true, Word: 1}, {Fidelity: true, Word: 3}}
	ran := 0
	check := func(what string, r *Record, part Partition) {
		t.Helper()
		for _, o := range opts {
			for _, k := range []int{2, 3, 4} {
				if chunksAgree(t, fmt.Sprintf("%s %+v", what, o), r, part, o, k) {
					ran++
				}
			}
		}
	}
	for _, r := range []*Record{rec, &gpus} {
		check("scripted, as it was", r, r.AsItWas())
		for _, amt := range []string{"0.1", "0.5", "1.0", "2.0"} {
			check("scripted, "+amt, r, Fixed(given(r, map[model.AgentID]string{agentA: amt, agentB: amt})))
		}
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 5))
	for round := range 30 {
		r := randomWeek(rec, rng)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			if rng.IntN(2) == 0 {
				continue
			}
			// The same amounts in another form.
			got := map[model.DeviceID]model.Dec{}
			total := model.Zero
			for id, v := range s.Got[model.SlotCUDAShares] {
				if w, err := v.Quantize(int32(-1-rng.IntN(4)), apd.RoundHalfEven); err == nil && w.Equal(v) {
					v = w
				}
				got[id] = v
				total = total.Add(v)
			}
			s.Got = model.Allocations{model.SlotCUDAShares: got}
			s.Requested = model.ResourceSlot{model.SlotCUDAShares: total}
		}
		amts := map[model.AgentID]string{agentA: fmt.Sprintf("%d.%d", rng.IntN(3), rng.IntN(10)), agentB: fmt.Sprintf("%d.%d", rng.IntN(3), rng.IntN(10))}
		check(fmt.Sprintf("seed %d round %d as it was", seed, round), r, r.AsItWas())
		check(fmt.Sprintf("seed %d round %d %v", seed, round, amts), r, Fixed(given(r, amts)))
	}
	// Amounts of one decimal, a few of them in a finer form (0.500) on
	// sessions that leave early: the maps' forms, and the free amounts
	// the words print, keep the finer form after they left.
	for round := range 30 {
		r := randomWeek(rec, rng)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			fine := rng.IntN(12) == 0
			if fine {
				s.End, s.Open = s.Start.Add(time.Minute), false
			} else if !s.Open {
				// Long stays: the allocator refuses, in words that
				// print what is free.
				s.End = s.Start.Add(3 * s.End.Sub(s.Start))
			}
			got := map[model.DeviceID]model.Dec{}
			total := model.Zero
			for id := range s.Got[model.SlotCUDAShares] {
				v := model.NewDec(int64(4+rng.IntN(6)), -1)
				if fine {
					v = model.NewDec(v.Apd().Coeff.Int64()*100, -3)
				}
				got[id] = v
				total = total.Add(v)
			}
			s.Got = model.Allocations{model.SlotCUDAShares: got}
			s.Requested = model.ResourceSlot{model.SlotCUDAShares: total}
		}
		sortSessions(r.Sessions)
		check(fmt.Sprintf("seed %d fine round %d as it was", seed, round), r, r.AsItWas())
		check(fmt.Sprintf("seed %d fine round %d, the manager's words", seed, round), r, Fixed(given(r, map[model.AgentID]string{agentA: "1.5", agentB: "0.5"})))
		check(fmt.Sprintf("seed %d fine round %d, the allocator's words", seed, round), r, Fixed(given(r, map[model.AgentID]string{agentA: "100", agentB: "100"})))
	}
	if ran == 0 {
		t.Fatal("no run was chunked")
	}
	// Not chunked: a partition change, a run that is not a fidelity run.
	part := Fixed(given(rec, map[model.AgentID]string{agentA: "1.0", agentB: "1.0"}))
	if k := chunksOf(rec, Partition{part[0], {At: rec.From.Add(rec.To.Sub(rec.From) / 2), Agents: part[0].Agents}}, Options{Fidelity: true, chunkAt: 1}); k > 1 {
		t.Errorf("a partition change: %d chunks", k)
	}
	if k := chunksOf(rec, part, Options{chunkAt: 1}); k > 1 {
		t.Errorf("a run under amounts: %d chunks", k)
	}
}

// TestChunkBounds: the chunks cover every event once, in order, and the
// later ones (which take more events quietly first) are shorter.
func TestChunkBounds(t *testing.T) {
	for _, n := range []int{0, 1, 5, 100, 211417} {
		for k := 2; k <= maxChunks; k++ {
			b := chunkBounds(n, k)
			if len(b) != k+1 || b[0] != 0 || b[k] != n {
				t.Fatalf("%d events in %d: %v", n, k, b)
			}
			for j := 1; j <= k; j++ {
				if b[j] < b[j-1] {
					t.Fatalf("%d events in %d: %v", n, k, b)
				}
				if n >= 100 && j < k && b[j+1]-b[j] > b[j]-b[j-1] {
					t.Fatalf("%d events in %d: chunk %d longer than %d: %v", n, k, j, j-1, b)
				}
			}
		}
	}
}

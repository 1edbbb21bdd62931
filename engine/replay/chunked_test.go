package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
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
			for id, v := range s.Alloc()[model.SlotCUDAShares] {
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
			for id := range s.Alloc()[model.SlotCUDAShares] {
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

// TestChunksZeroLengthSession: a session that left at or before it
// arrived (seen once; its times out of order) leaves right after its
// arrival in the run's events, whole or in chunks: it holds nothing
// after its moment, and the chunks' quiet passes take it as the whole
// run does.
func TestChunksZeroLengthSession(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 58))
	for round := range 20 {
		r := randomWeek(rec, rng)
		instant := map[int]bool{}
		for i := range r.Sessions {
			s := &r.Sessions[i]
			if s.Before || rng.IntN(6) != 0 {
				continue
			}
			s.Open = false
			s.End = s.Start
			if rng.IntN(3) == 0 {
				s.End = s.Start.Add(-time.Minute)
			}
			instant[i] = true
		}
		if len(instant) == 0 {
			continue
		}
		run := &runner{rec: r, part: r.AsItWas(), opts: Options{Fidelity: true}, res: &Result{}}
		run.begin()
		evs := run.events()
		arrived := map[int]bool{}
		for j, ev := range evs {
			if ev.i < 0 {
				continue
			}
			if !ev.leave {
				arrived[ev.i] = true
				if instant[ev.i] && (j+1 == len(evs) || !evs[j+1].leave || evs[j+1].i != ev.i) {
					t.Fatalf("seed %d round %d: session %d left at its arrival, but its departure is not the next event", seed, round, ev.i)
				}
				continue
			}
			if !arrived[ev.i] {
				t.Fatalf("seed %d round %d: session %d leaves before it arrives", seed, round, ev.i)
			}
		}
		for _, k := range []int{2, 3, 4} {
			chunksAgree(t, fmt.Sprintf("seed %d round %d", seed, round), r, r.AsItWas(), Options{Fidelity: true, Word: 1}, k)
			chunksAgree(t, fmt.Sprintf("seed %d round %d, 0.5 each", seed, round), r, Fixed(given(r, map[model.AgentID]string{agentA: "0.5", agentB: "0.5"})), Options{Fidelity: true}, k)
		}
	}
}

// TestChunksHostMemoryRunsWhole: a week whose sessions hold a terabyte of
// the host's memory each, its agents given memory, has use sums past
// 10^26, where the chunks' tallies cannot be put together exactly:
// sumsFit finds it before any chunk runs (else they would all run and
// then the whole run again), and the run is the whole run. With 1 GiB
// each, and with no memory given (no use of it kept), the same week is
// cut in chunks.
func TestChunksHostMemoryRunsWhole(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	withMem := func(amount string) *Record {
		r := *rec
		r.Sessions = slices.Clone(rec.Sessions)
		v := model.MustDec(amount)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			got := model.Allocations{}
			req := model.ResourceSlot{}
			for slot, devs := range s.Alloc() {
				got[slot], req[slot] = devs, s.Requested[slot]
			}
			if devs, ok := got[model.SlotMem]; ok {
				m := map[model.DeviceID]model.Dec{}
				for id := range devs {
					m[id] = v
				}
				got[model.SlotMem], req[model.SlotMem] = m, v
			}
			s.Got, s.Requested = got, req
		}
		return &r
	}
	// No memory given: the amount of memory is none.
	noMem := func(r *Record) Partition {
		agents := given(r, nil)
		for i := range agents {
			agents[i].Given[model.SlotMem] = model.Zero
			agents[i].Mem = model.Zero
		}
		return Fixed(agents)
	}
	fits := func(r *Record, part Partition) bool {
		run := &runner{rec: r, part: part, opts: Options{Fidelity: true}, res: &Result{}}
		run.begin()
		return run.sumsFit()
	}
	opts := Options{Fidelity: true, Word: 1, chunkAt: 1, chunks: 3}
	big := withMem("1099511627776")
	if fits(big, big.AsItWas()) {
		t.Fatal("a terabyte held all week, memory given: the use sums are said to fit")
	}
	if runChunked(big, big.AsItWas(), opts, 3) != nil {
		t.Fatal("a terabyte held all week: cut in chunks")
	}
	got := Run(big, big.AsItWas(), opts)
	opts.chunkAt = -1
	want := Run(big, big.AsItWas(), opts)
	got.short, got.memoHits, want.short, want.memoHits = 0, 0, 0, 0
	if a, b := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); a != b {
		t.Fatalf("a terabyte held all week:\n%s\nwhole\n%s", a, b)
	}
	small := withMem("1073741824")
	for _, c := range []struct {
		what string
		r    *Record
		part Partition
	}{{"1 GiB held all week", small, small.AsItWas()}, {"a terabyte held all week, no memory given", big, noMem(big)}} {
		if !fits(c.r, c.part) {
			t.Fatalf("%s: the use sums are said not to fit", c.what)
		}
		if !chunksAgree(t, c.what, c.r, c.part, Options{Fidelity: true, Word: 1}, 3) {
			t.Fatalf("%s: not cut in chunks", c.what)
		}
	}
}

// TestChunkDisagreementsInBlocks: a chunk's disagreements go into blocks
// of disBlock that are never grown (nothing copied before joinChunks),
// in the order they came, and each is counted; a whole run's are its
// result's.
func TestChunkDisagreementsInBlocks(t *testing.T) {
	n := 2*disBlock + 5
	r := &runner{chunk: true, res: &Result{}}
	whole := &runner{res: &Result{}}
	for i := range n {
		g := Disagreement{Kernel: model.KernelID(fmt.Sprint("k", i))}
		r.disagree(g)
		whole.disagree(g)
	}
	if r.disagreed != n || len(r.res.Disagreements) != 0 || len(r.disBlocks) != 3 {
		t.Fatalf("%d disagreements: %d counted, %d in the result, %d blocks; want %d, 0, 3", n, r.disagreed, len(r.res.Disagreements), len(r.disBlocks), n)
	}
	var got []Disagreement
	for _, b := range r.disBlocks {
		if cap(b) != disBlock {
			t.Errorf("a block of room for %d, want %d", cap(b), disBlock)
		}
		got = append(got, b...)
	}
	same := len(got) == len(whole.res.Disagreements)
	for i := 0; same && i < len(got); i++ {
		same = got[i].Kernel == whole.res.Disagreements[i].Kernel
	}
	if !same || whole.disagreed != n {
		t.Errorf("the blocks hold %d disagreements, not the whole run's %d in its order", len(got), len(whole.res.Disagreements))
	}
}

package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// runsAgree runs rec under part with opts twice, with and without the
// cheap refusal before the allocator's attempt, and fails unless the two
// results are the same in every field (the refusals, their kinds and
// reasons, the other agents, the disagreements, the slot lines, the
// counts). It returns how many refusals the cheap check made.
func runsAgree(t *testing.T, what string, rec *Record, part Partition, opts Options) int {
	t.Helper()
	fast := Run(rec, part, opts)
	opts.noShort = true
	full := Run(rec, part, opts)
	if full.short != 0 {
		t.Fatalf("%s: the reference run took the cheap check %d times", what, full.short)
	}
	n := fast.short
	fast.short = 0
	if a, b := fmt.Sprintf("%+v", *fast), fmt.Sprintf("%+v", *full); a != b {
		t.Fatalf("%s: with the cheap refusal\n%s\nwith the attempt only\n%s", what, a, b)
	}
	return n
}

// allOptions are the runs the replay makes: the fidelity run and a
// proposal's, worded in full (--json), for the text, and counted (the
// suggestion's search).
func allOptions() []Options {
	return []Options{
		{Fidelity: true}, {Fidelity: true, Word: Printed}, {Fidelity: true, Word: 1},
		{}, {Word: Printed}, {Word: 1}, {NoElsewhere: true, Word: 1},
		{NoElsewhere: true, count: true},
	}
}

// TestShortRefusalAgrees: the refusal found before the allocator's
// attempt (alloc.Short) changes no answer: on the scripted week under
// partitions from one that refuses most to one that refuses none, on one
// GPU where only the allocator refuses, and on random weeks made of its
// sessions (random arrivals, stays, amounts, devices and partitions),
// every run gives the same result as the attempt alone, and the check
// did refuse some.
func TestShortRefusalAgrees(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	short := 0
	for _, amt := range []string{"0.1", "0.5", "1.0", "2.0", "4.0", "100"} {
		for _, one := range []bool{false, true} {
			r := rec
			if one {
				r = oneGPU(rec)
			}
			part := Fixed(given(r, map[model.AgentID]string{agentA: amt, agentB: amt}))
			for _, o := range allOptions() {
				short += runsAgree(t, fmt.Sprintf("%s each, one GPU %v, %+v", amt, one, o), r, part, o)
			}
		}
	}
	if short == 0 {
		t.Fatal("the scripted week: no refusal came from the cheap check")
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	short = 0
	for round := range 40 {
		r := randomWeek(rec, rng)
		amts := map[model.AgentID]string{}
		for _, a := range []model.AgentID{agentA, agentB} {
			amts[a] = fmt.Sprintf("%d.%d", rng.IntN(4), rng.IntN(10))
			if rng.IntN(2) == 0 {
				// Past the devices: only the allocator refuses.
				amts[a] = "100"
			}
		}
		part := Fixed(given(r, amts))
		if rng.IntN(3) == 0 {
			// The record's own partitions, and a change inside the span.
			part = Partition{{Agents: given(r, amts)}, {At: r.From.Add(r.To.Sub(r.From) / 2), Agents: r.Epochs[0].Agents}}
		}
		for _, o := range allOptions() {
			short += runsAgree(t, fmt.Sprintf("seed %d round %d %v %+v", seed, round, amts, o), r, part, o)
		}
	}
	if short == 0 {
		t.Fatalf("seed %d: no refusal of the random weeks came from the cheap check", seed)
	}
	t.Logf("seed %d: %d refusals of the random weeks came from the cheap check", seed, short)
}

// oneGPU is rec with only its first GPU (the other devices kept).
func oneGPU(rec *Record) *Record {
	one := *rec
	one.Devices = nil
	gpus := 0
	for _, d := range rec.Devices {
		if d.Name != "cuda" || gpus == 0 {
			one.Devices = append(one.Devices, d)
		}
		if d.Name == "cuda" {
			gpus++
		}
	}
	return &one
}

// randomWeek is rec's devices, settings and partition with 60 random
// sessions: each on one or two of the GPUs, with amounts in thousandths
// (some between the allocator's hundredths), some open at the end, some
// running before the span.
func randomWeek(rec *Record, rng *rand.Rand) *Record {
	r := *rec
	var gpus []model.DeviceID
	for _, d := range rec.Devices {
		if d.Name == "cuda" {
			gpus = append(gpus, d.ID)
		}
	}
	span := r.To.Sub(r.From)
	r.Sessions = nil
	for i := range 60 {
		s := Session{Kernel: model.KernelID(fmt.Sprintf("k%03d", i)), Session: fmt.Sprintf("s%03d", i), Owner: "u",
			Agent: []model.AgentID{agentA, agentB}[rng.IntN(2)]}
		s.Start = r.From.Add(time.Duration(rng.Int64N(int64(span))))
		if rng.IntN(8) == 0 {
			s.Before, s.Start = true, r.From
		}
		s.End = s.Start.Add(time.Duration(rng.Int64N(int64(span / 4))))
		if s.End.After(r.To) || rng.IntN(10) == 0 {
			s.End, s.Open = r.To, true
		}
		got := map[model.DeviceID]model.Dec{}
		total := model.Zero
		for range 1 + rng.IntN(2) {
			v := model.NewDec(int64(1+rng.IntN(1500)), -3)
			got[gpus[rng.IntN(len(gpus))]] = v
		}
		for _, v := range got {
			total = total.Add(v)
		}
		s.Got = model.Allocations{model.SlotCUDAShares: got}
		s.Requested = model.ResourceSlot{model.SlotCUDAShares: total}
		r.Sessions = append(r.Sessions, s)
	}
	slices.SortStableFunc(r.Sessions, func(a, b Session) int {
		if a.Before != b.Before {
			if a.Before {
				return -1
			}
			return 1
		}
		return a.Start.Compare(b.Start)
	})
	return &r
}

package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// followedAgrees checks that the run fed as rd's [from, to) is read
// (LoadStarted, its notes handed over every so many) is the run after
// the read (Load, then Run under the partitions in force): the record,
// the text and the JSON of the report the same, with opts. It returns
// why the fed run was made again ("": it stood).
func followedAgrees(t *testing.T, what string, rd *history.Reader, from, to time.Time, opts Options, every int) string {
	t.Helper()
	opts.Fidelity = true
	want, err := Load(rd, from, to)
	if err != nil {
		t.Fatal(err)
	}
	got, p, err := loadStarted(rd, from, to, opts, every)
	if err != nil {
		t.Fatal(err)
	}
	gotRes := p.Wait()
	wantRes := Run(want, want.AsItWas(), opts)
	for i := range max(len(want.Sessions), len(got.Sessions)) {
		if i >= len(want.Sessions) || i >= len(got.Sessions) {
			t.Fatalf("%s: %d sessions read after, %d as it ran", what, len(want.Sessions), len(got.Sessions))
		}
		if a, b := sessionLine(&want.Sessions[i]), sessionLine(&got.Sessions[i]); a != b {
			t.Fatalf("%s: session %d\nafter the read %s\nas it ran      %s", what, i, a, b)
		}
	}
	text := func(rec *Record, res *Result) (string, string) {
		doc := NewDoc(rec, res, nil)
		var sb strings.Builder
		if err := doc.WriteText(&sb); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return sb.String(), string(js)
	}
	wt, wj := text(want, wantRes)
	gt, gj := text(got, gotRes)
	if wt != gt {
		t.Errorf("%s (every %d, redo %q): the text differs\nafter the read:\n%s\nas it ran:\n%s", what, every, p.redo, wt, gt)
	}
	if wj != gj {
		t.Errorf("%s (every %d, redo %q): the JSON differs\nafter the read:\n%s\nas it ran:\n%s", what, every, p.redo, wj, gj)
	}
	if disagreementsText(wantRes.Disagreements) != disagreementsText(gotRes.Disagreements) || wantRes.SameMoment != gotRes.SameMoment ||
		wantRes.Compared != gotRes.Compared || wantRes.Skipped != gotRes.Skipped || wantRes.short != gotRes.short {
		t.Errorf("%s (every %d, redo %q): the runs differ\nafter the read %+v\nas it ran      %+v", what, every, p.redo, wantRes, gotRes)
	}
	return p.redo
}

// TestFollowedRunIsTheRunAfter: on the scripted week, whole and cut at
// several spans, handing the walk's notes over one by one and in
// batches, the run fed as the record is read is the run after the read,
// and it stands (no agent learnt late, no partition change, nothing out
// of order); on the record whose partition changes inside the span, and
// the one with a gap, it is the same too (made again where it must be).
func TestFollowedRunIsTheRunAfter(t *testing.T) {
	w := scriptedWeek(t)
	rd := w.reader()
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	span := to.Sub(from)
	for _, every := range []int{1, 3, 0} {
		for _, o := range []Options{{}, {Word: 1}} {
			if why := followedAgrees(t, "the scripted week", rd, from, to, o, every); why != "" {
				t.Errorf("every %d: the fed run was made again: %s", every, why)
			}
			for i := range 5 {
				a := from.Add(span * time.Duration(i) / 6)
				b := a.Add(span * time.Duration(2+i) / 9)
				if why := followedAgrees(t, fmt.Sprintf("the scripted week, %s..%s", a, b), rd, a, b, o, every); why != "" {
					t.Errorf("every %d, %s..%s: the fed run was made again: %s", every, a, b, why)
				}
			}
		}
	}
}

// countdown is a context whose reads stop after n checks of it: a read
// stopped at every point of the walk in turn.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestFollowedRunLeaksNothing: a read stopped by its context, at every
// point of the walk in turn (the fed run taking notes beside it), ends
// with an error and no goroutine left behind.
func TestFollowedRunLeaksNothing(t *testing.T) {
	w := scriptedWeek(t)
	rd := w.reader()
	base := runtime.NumGoroutine()
	inWalk := 0
	for n := int64(0); n < 400; n += 3 {
		c := &countdown{Context: context.Background()}
		c.n.Store(n)
		rd.SetContext(c)
		_, p, err := loadStarted(rd, time.Time{}, time.Time{}, Options{}, 1)
		if err == nil {
			p.Wait()
			continue
		}
		if strings.Contains(err.Error(), "reading the sessions") {
			inWalk++
		}
	}
	rd.SetContext(nil)
	if inWalk == 0 {
		t.Fatal("no read was stopped inside the walk")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d reads stopped inside the walk", inWalk)
}

// TestFollowedRunBench is the comparison on the bench week
// (FGTOP_REPLAY_BENCH_DIR, as TestReplayBench).
func TestFollowedRunBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	if why := followedAgrees(t, "the bench week", rd, from, to, Options{Word: Printed}, 0); why != "" {
		t.Errorf("the fed run was made again: %s", why)
	}
}

// clusteredWeek is rec's devices, settings and partition with n random
// sessions whose arrivals and departures crowd a few moments: many
// within OrderSlack of each other, departures at the very moment of
// arrivals, some running before the span, some open at its end, some
// naming no agent, some leaving at the moment they arrived; in the
// order Load gives them (arrival, then kernel).
func clusteredWeek(rec *Record, rng *rand.Rand, n int, unnamed bool) *Record {
	r := *rec
	r.Sessions = nil
	var gpus []model.DeviceID
	for _, d := range rec.Devices {
		if d.Name == "cuda" {
			gpus = append(gpus, d.ID)
		}
	}
	span := r.To.Sub(r.From)
	var moments []time.Time
	for range 1 + n/6 {
		moments = append(moments, r.From.Add(time.Duration(rng.Int64N(int64(span)))))
	}
	at := func() time.Time {
		return moments[rng.IntN(len(moments))].Add(time.Duration(rng.IntN(3)) * OrderSlack / 2)
	}
	for i := range n {
		s := Session{Kernel: model.KernelID(fmt.Sprintf("k%03d", rng.IntN(1000))), Session: "s", Owner: "u",
			Agent: []model.AgentID{agentA, agentB}[rng.IntN(2)]}
		if unnamed && rng.IntN(8) == 0 {
			s.Agent = ""
		}
		s.Kernel += model.KernelID(fmt.Sprint(i))
		s.Start = at()
		if rng.IntN(8) == 0 {
			s.Before, s.Start = true, r.From
		}
		s.End = at()
		if !s.End.After(s.Start) {
			s.End = s.Start.Add(time.Duration(1+rng.IntN(2)) * OrderSlack / 2)
		}
		if !s.Before && rng.IntN(12) == 0 {
			// Seen once: it leaves at the moment it arrived.
			s.End = s.Start
		}
		if s.End.After(r.To) || rng.IntN(10) == 0 {
			s.End, s.Open = r.To, true
		}
		got := map[model.DeviceID]model.Dec{}
		for range 1 + rng.IntN(2) {
			got[gpus[rng.IntN(len(gpus))]] = model.NewDec(int64(1+rng.IntN(900)), -3)
		}
		s.Got = model.Allocations{model.SlotCUDAShares: got}
		s.Requested = requestOf(s.Got, map[fixed]model.Dec{})
		r.Sessions = append(r.Sessions, s)
	}
	slices.SortFunc(r.Sessions, func(a, b Session) int { return cmpNote(a.Start, a.Kernel, b.Start, b.Kernel) })
	return &r
}

// feed is what the walk would note of rec's sessions, in the walk's
// order (by moment; arrivals before the span's start first), cut into
// batches at random, each promising the moment of the next.
func feed(rec *Record, rng *rand.Rand) []history.SessionBatch {
	var notes []history.SessionNote
	for i, s := range rec.Sessions {
		notes = append(notes, history.SessionNote{Kind: history.NoteArrive, Kernel: s.Kernel, At: s.Start, Agent: s.Agent, Alloc: s.Got, Seq: i})
		if !s.Open {
			notes = append(notes, history.SessionNote{Kind: history.NoteLeave, Kernel: s.Kernel, At: s.End, Seq: i})
		}
	}
	slices.SortStableFunc(notes, func(a, b history.SessionNote) int { return a.At.Compare(b.At) })
	var out []history.SessionBatch
	for len(notes) > 0 {
		n := 1 + rng.IntN(min(len(notes), 8))
		// A batch ends between two moments: the walk sends its notes
		// before it folds the next moment.
		for n < len(notes) && notes[n].At.Equal(notes[n-1].At) {
			n++
		}
		b := history.SessionBatch{Notes: notes[:n]}
		if n < len(notes) {
			b.Upto = notes[n].At
		}
		out = append(out, b)
		notes = notes[n:]
	}
	return out
}

// TestFollowerIsTheRun: the fed run taking a crowded week's notes batch
// by batch (arrivals within OrderSlack of each other, departures at the
// moment of arrivals, sessions that leave as they arrive, sessions with
// no agent on a node of two) is Run on the week: the same
// disagreements, counts and report. It fails when the fed run takes a
// moment less than OrderSlack behind the walk, an arrival before a
// departure of its moment, or a departure before its own arrival.
func TestFollowerIsTheRun(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	base := loadWhole(t, scriptedWeek(t).reader())
	stood := 0
	start := time.Now()
	for round := range 200 {
		rec := clusteredWeek(base, rng, 10+rng.IntN(40), round%4 == 0)
		if round%3 == 0 {
			rec = oneGPU(rec)
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
			t.Fatalf("seed %d, round %d: the fed run broke on notes in order: %s", seed, round, fw.broken)
		}
		if fw.noAgent == 0 {
			stood++
		}
		fw.runTo(time.Time{}, true)
		got := fw.r.end()
		if len(fw.work.Sessions) != len(rec.Sessions) {
			t.Fatalf("seed %d, round %d: %d sessions taken of %d", seed, round, len(fw.work.Sessions), len(rec.Sessions))
		}
		if disagreementsText(want.Disagreements) != disagreementsText(got.Disagreements) || want.SameMoment != got.SameMoment ||
			want.Compared != got.Compared || want.Unrouted != got.Unrouted || want.Sessions != got.Sessions {
			t.Fatalf("seed %d, round %d: the runs differ\nRun %+v\nfed %+v", seed, round, want, got)
		}
		var a, b strings.Builder
		if err := NewDoc(rec, want, nil).WriteText(&a); err != nil {
			t.Fatal(err)
		}
		if err := NewDoc(rec, got, nil).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("seed %d, round %d: the reports differ\nRun:\n%s\nfed:\n%s", seed, round, a.String(), b.String())
		}
	}
	if stood < 100 {
		t.Fatalf("seed %d: only %d of 200 fed runs ran before the walk's end", seed, stood)
	}
	t.Logf("seed %d: %d of 200 fed runs ran before the walk's end, in %s", seed, stood, time.Since(start))
}

// disagreementsText is ds as fmt prints them, each with where it ran as
// maps (GotAlloc): a run of a record's sessions and one of the same
// sessions as maps keep it in two forms.
func disagreementsText(ds []Disagreement) string {
	out := make([]string, len(ds))
	for i, g := range ds {
		out[i] = fmt.Sprint(g.At, g.Kernel, g.Agent, g.Refused, g.GotAlloc(), g.Placed)
	}
	return strings.Join(out, "\n")
}

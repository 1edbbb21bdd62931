package replay

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// TestReplayBench times the replay of a record made by engine/history's
// TestWeekBench (BENCHMARKS.md: FGTOP_HISTORY_DIR=DIR
// FGTOP_HISTORY_WEEK=168): reading the sessions, the fidelity run, a
// proposal's run and the suggestion. FGTOP_REPLAY_BENCH_DIR=DIR runs it.
func TestReplayBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	start := time.Now()
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Load(rd, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	t0 := time.Now()
	asWas := Run(rec, rec.AsItWas(), Options{Fidelity: true})
	fid := time.Since(t0)
	today := make([]model.Agent, len(rec.Epochs[0].Agents))
	for i, a := range rec.Epochs[0].Agents {
		a.Given = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("6.0")}
		today[i] = a
	}
	t0 = time.Now()
	prop := Run(rec, Fixed(today), Options{})
	propT := time.Since(t0)
	t0 = time.Now()
	sg := Suggest(rec, SuggestInput{Today: today, Total: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("8.0")}, Reserved: model.ResourceSlot{},
		Step: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.01")}})
	sugT := time.Since(t0)
	t.Logf("%d sessions, %s to %s; load %v, fidelity run %v (%d disagreements), proposal run %v (%d refused), suggest %v (%v, %d refused)",
		len(rec.Sessions), rec.From.UTC().Format(time.RFC3339), rec.To.UTC().Format(time.RFC3339), load, fid, len(asWas.Disagreements),
		propT, len(prop.Refused), sugT, sg.Amounts, len(sg.Result.Refused))
}

// TestPrepBench times the fidelity run of the text report over a record
// (FGTOP_REPLAY_BENCH_DIR, --until FGTOP_REPLAY_BENCH_UNTIL, 7 days):
// whole with its sessions' parts made as it goes, whole with them made
// ahead (startPrep), and in chunks of time (runChunked), in turn, three
// rounds: the same results, and the time each takes.
func TestPrepBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	var to time.Time
	if u := os.Getenv("FGTOP_REPLAY_BENCH_UNTIL"); u != "" {
		if to, err = time.Parse(time.RFC3339, u); err != nil {
			t.Fatal(err)
		}
	}
	from := time.Time{}
	if !to.IsZero() {
		from = to.Add(-7 * 24 * time.Hour)
	}
	rec, err := Load(rd, from, to)
	if err != nil {
		t.Fatal(err)
	}
	fr := &runner{rec: rec, part: rec.AsItWas(), opts: Options{Fidelity: true}, res: &Result{}}
	fr.begin()
	t0 := time.Now()
	fit := fr.sumsFit()
	t.Logf("%d sessions; the fidelity run is cut in %d chunks; its sums fit: %v (found in %v)", len(rec.Sessions),
		chunksOf(rec, rec.AsItWas(), Options{Fidelity: true}), fit, time.Since(t0))
	var want string
	ways := []struct {
		name string
		o    Options
	}{
		{"as it goes", Options{prepAt: -1, chunkAt: -1}},
		{"prepared ahead", Options{chunkAt: -1}},
		{"in chunks", Options{}},
	}
	for round := range 3 {
		for _, w := range ways {
			o := w.o
			o.Fidelity, o.Word = true, Printed
			t0 := time.Now()
			res := Run(rec, rec.AsItWas(), o)
			took := time.Since(t0)
			res.short, res.memoHits = 0, 0
			got := fmt.Sprintf("%+v", *res)
			if want == "" {
				want = got
			} else if got != want {
				t.Fatalf("round %d, %s: another result", round, w.name)
			}
			t.Logf("round %d, %d sessions, %s: %v", round, len(rec.Sessions), w.name, took)
		}
	}
}

// TestEditorRunBench times what the console's editor runs after each
// edit of a draft (ui/editor: Run under the draft, every refusal worded,
// the record read once before): the record of FGTOP_REPLAY_BENCH_DIR's
// week up to FGTOP_REPLAY_BENCH_UNTIL, its agents given 2.0, 6.0 and 8.0
// shares in turn, five runs each (BENCHMARKS.md: the editor's line).
func TestEditorRunBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	var from, to time.Time
	if u := os.Getenv("FGTOP_REPLAY_BENCH_UNTIL"); u != "" {
		if to, err = time.Parse(time.RFC3339, u); err != nil {
			t.Fatal(err)
		}
		from = to.Add(-7 * 24 * time.Hour)
	}
	rec, err := Load(rd, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, amt := range []string{"2.0", "6.0", "8.0"} {
		draft := make([]model.Agent, len(rec.Epochs[0].Agents))
		for i, a := range rec.Epochs[0].Agents {
			a.Given = model.ResourceSlot{model.SlotCUDAShares: model.MustDec(amt)}
			draft[i] = a
		}
		var took []time.Duration
		refused := 0
		for range 5 {
			t0 := time.Now()
			res := Run(rec, Fixed(draft), Options{})
			took = append(took, time.Since(t0))
			refused = len(res.Refused)
		}
		slices.Sort(took)
		t.Logf("%d sessions, draft of %s shares: %d refused; runs %v (median %v)", len(rec.Sessions), amt, refused, took, took[len(took)/2])
	}
}

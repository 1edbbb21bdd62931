package history

import (
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestGivenOnlyChangeIsRecorded: an apply that changes only a slot-based
// partition's amounts (Agent.Given) is a partition change: the record
// must say it (the replay of the week judges each session by it).
func TestGivenOnlyChangeIsRecorded(t *testing.T) {
	dir := t.TempDir()
	rec, err := Open(Options{Dir: dir, FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	snap := func(seq uint64, given string) *model.Snapshot {
		return &model.Snapshot{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Minute), Node: "n",
			Agents: []model.Agent{{ID: "a", Given: model.ResourceSlot{model.SlotCUDAShares: model.MustDec(given)}, Held: model.ResourceSlot{}}}}
	}
	for i, g := range []string{"2.0", "3.0"} {
		rec.Observe(snap(uint64(i+1), g))
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.At(t0.Add(2 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Snap.Agents[0].Given[model.SlotCUDAShares]; g.String() != "3.0" {
		t.Fatalf("given %s after the change, want 3.0", g)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// recordAt writes a record of one kernel whose first snapshot is at begin
// and whose recorder stops a second later, and returns its directory.
func recordAt(t *testing.T, begin time.Time) string {
	t.Helper()
	hist := t.TempDir()
	now := begin
	rec, err := history.Open(history.Options{Dir: hist, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: begin, Node: "gpu-node01"}
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}})
	rec.Observe(s)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	now = begin.Add(time.Second)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return hist
}

// TestRecordFirstSecond: the start fgtop prints for a record that begins
// part way into a second (08:25:39 of 08:25:39.696), pasted back, is the
// record's beginning for snapshot --at, history --since and plan --replay
// --since; before, each said it was before the record begins, "the record
// covers 08:25:39 to ...". A time with a fraction before the start is
// still refused, naming both to the fraction that tells them apart.
func TestRecordFirstSecond(t *testing.T) {
	begin := time.Now().Add(-time.Hour).Truncate(time.Second).Add(696 * time.Millisecond)
	hist := recordAt(t, begin)
	pasted := begin.Local().Format("2006-01-02 15:04:05") // as fgtop prints it

	code, out := runCLI(t, "snapshot", "--at", pasted, "--history", hist, "--compact")
	if code != exitOK || !strings.Contains(out, `"k1"`) {
		t.Errorf("snapshot --at %s, the record's first second: exit %d, want 0 and the node then:\n%s", pasted, code, out)
	}
	until := begin.Add(500 * time.Millisecond).Format(time.RFC3339Nano)
	code, out = runCLI(t, "history", "--kernel", "k1", "--history", hist, "--since", pasted, "--until", until)
	if code != exitOK || strings.Contains(out, "before the record begins") || !strings.Contains(out, "k1") {
		t.Errorf("history --since %s: exit %d, want 0 and k1 without a stretch before the record:\n%s", pasted, code, out)
	}
	code, out = runCLI(t, "plan", "--replay", "1h", "--since", pasted, "--history", hist)
	if strings.Contains(out, "before the record does") || strings.Contains(out, "holds nothing of the record") {
		t.Errorf("plan --replay --since %s: exit %d, said the span begins before the record:\n%s", pasted, code, out)
	}

	early := begin.Truncate(time.Second).Add(250 * time.Millisecond)
	day := begin.Local().Format("2006-01-02 15:04:05")
	zone := begin.Local().Format(" MST")
	asked, starts := day+".250"+zone, day+".696"+zone
	code, out = runCLI(t, "snapshot", "--at", early.Format(time.RFC3339Nano), "--history", hist)
	if want := asked + " is before the record begins; the record covers " + starts + " to "; code != exitProblem || !strings.Contains(out, want) {
		t.Errorf("snapshot --at 250 ms before the record: exit %d, want %d saying %q:\n%s", code, exitProblem, want, out)
	}
	code, out = runCLI(t, "history", "--kernel", "k1", "--history", hist, "--since", early.Format(time.RFC3339Nano), "--until", until)
	for _, want := range []string{"missing: " + asked + " to " + starts + ": before the record begins", "the record begins at " + starts + ", after --since"} {
		if code != exitProblem || !strings.Contains(out, want) {
			t.Errorf("history --since 250 ms before the record: exit %d, want %d saying %q:\n%s", code, exitProblem, want, out)
		}
	}
}

// TestRecordLastSecond: the end fgtop prints for a record that ends part
// way into a second (08:25:40 of 08:25:40.696) and that no recorder
// writes any more, pasted back as --until, is the record's end for
// history and plan --replay, as its start is for --since; before, each cut
// the span 0.696 s short of the end. A time with a fraction after the end
// is still after it, a stretch the record lacks.
func TestRecordLastSecond(t *testing.T) {
	begin := time.Now().Add(-time.Hour).Truncate(time.Second).Add(696 * time.Millisecond)
	hist := recordAt(t, begin)
	end := begin.Add(time.Second) // the recorder stops a second later
	pasted := end.Local().Format("2006-01-02 15:04:05")

	code, out := runCLI(t, "history", "--kernel", "k1", "--history", hist, "--until", pasted, "--json")
	var doc struct {
		RecordTo  string `json:"record_to"`
		Intervals []struct {
			To   string `json:"to"`
			Open bool   `json:"open"`
		} `json:"intervals"`
		Missing []json.RawMessage `json:"missing"`
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&doc); err != nil {
		t.Fatalf("history --until %s --json: %v:\n%s", pasted, err, out)
	}
	recTo, err := time.Parse(time.RFC3339Nano, doc.RecordTo)
	if err != nil || !recTo.Equal(end) {
		t.Fatalf("record_to %q, want the recorder's last moment %s", doc.RecordTo, end.Format(time.RFC3339Nano))
	}
	if code != exitOK || len(doc.Missing) != 0 || len(doc.Intervals) != 1 || doc.Intervals[0].To != doc.RecordTo || !doc.Intervals[0].Open {
		t.Errorf("history --until %s, the record's last second: exit %d, want 0 and k1 open to the record's end %s, nothing missing:\n%s", pasted, code, doc.RecordTo, out)
	}
	code, out = runCLI(t, "plan", "--replay", "1h", "--until", pasted, "--history", hist, "--json")
	var rep struct {
		To time.Time `json:"to"`
	}
	if err := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):])).Decode(&rep); err != nil {
		t.Fatalf("plan --replay --until %s --json: %v:\n%s", pasted, err, out)
	}
	if !rep.To.Equal(end) || strings.Contains(out, "past the record's end") {
		t.Errorf("plan --replay 1h --until %s: exit %d, replayed to %s, want the record's end %s:\n%s", pasted, code, rep.To.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), out)
	}
	code, out = runCLI(t, "snapshot", "--at", pasted, "--history", hist, "--compact")
	if code != exitOK || !strings.Contains(out, `"k1"`) {
		t.Errorf("snapshot --at %s, the record's last second: exit %d, want 0 and the node then:\n%s", pasted, code, out)
	}

	late := end.Add(100 * time.Millisecond).Format(time.RFC3339Nano)
	code, out = runCLI(t, "history", "--kernel", "k1", "--history", hist, "--until", late)
	if want := "the record ends here and no recorder has written since"; code != exitProblem || !strings.Contains(out, want) {
		t.Errorf("history --until 100 ms after the record's end: exit %d, want %d saying %q:\n%s", code, exitProblem, want, out)
	}

	// A kernel that arrives in the last second, after the whole second
	// pasted and before the end: the record holds it, so the answer does
	// (the walk, which stops at --until, reads on to the end).
	hist = t.TempDir()
	now := begin
	rec, err := history.Open(history.Options{Dir: hist, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Time{begin, end.Add(-200 * time.Millisecond)} {
		now = at
		s := &model.Snapshot{Seq: uint64(i + 1), Time: at, Node: "gpu-node01"}
		ks := []*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
			Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}}
		if i == 1 {
			ks = append(ks, &model.Kernel{ID: "k2", Agent: "a", State: model.KernelOK,
				Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.25")}}})
		}
		s.SetKernels(ks)
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	now = end
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, "history", "--kernel", "k2", "--history", hist, "--until", pasted)
	if code != exitOK || !strings.Contains(out, "cuda.shares=0.25") {
		t.Errorf("history --kernel k2 --until %s, k2 arriving in the record's last second: exit %d, want 0 and k2 held:\n%s", pasted, code, out)
	}
}

// TestDamagedRecordSaid: a record of one garbage segment is said to be
// damaged by snapshot --at a time before it or in its second, and by plan
// --replay, as history says it; before, they said the time was before a
// record that "covers 08:25:39 to 08:25:39", as if intact. snapshot exits
// 1 (the record lacks the moment), plan --replay 2 (nothing to replay; as
// history names nothing in such a record).
func TestDamagedRecordSaid(t *testing.T) {
	hist := t.TempDir()
	named := time.Now().Add(-10 * time.Minute).Truncate(time.Second).Add(205 * time.Millisecond)
	seg := fmt.Sprintf("seg-%020d.fgh", named.UnixNano())
	if err := os.WriteFile(filepath.Join(hist, seg), []byte("garbage!"), 0o600); err != nil {
		t.Fatal(err)
	}
	damage := seg + ": not an fgtop history segment (8 bytes, shorter than its header)"
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"snapshot", "--at", "-20m", "--history", hist}, exitProblem},
		{[]string{"snapshot", "--at", named.Local().Format("2006-01-02 15:04:05"), "--history", hist}, exitProblem},
		{[]string{"snapshot", "--at", named.Add(-100 * time.Millisecond).Format(time.RFC3339Nano), "--history", hist}, exitProblem},
		{[]string{"history", "--device", "GPU1", "--history", hist}, exitBadUsage},
		{[]string{"plan", "--replay", "1h", "--history", hist}, exitBadUsage},
		{[]string{"plan", "--replay", "1h", "--until", "-20m", "--history", hist}, exitBadUsage},
	} {
		code, out := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(out, damage) {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s", c.args, code, c.code, damage, out)
		}
	}
}

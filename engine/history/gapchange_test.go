package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// recorderRuns returns what runs a recorder over dir for n snapshots of
// node, made by next, and closes it: a run of the recorder between two
// stretches of the clock no recorder ran in. It returns the last
// snapshot's time.
func recorderRuns(t *testing.T, dir string, node *synthNode, next func() *model.Snapshot) func(n int) time.Time {
	return func(n int) time.Time {
		t.Helper()
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			rec.Observe(next())
		}
		rec.Close()
		return node.t
	}
}

// sharesKernel is a kernel of node's agent holding amt cuda.shares on
// device dev.
func sharesKernel(node *synthNode, id model.KernelID, dev model.DeviceID, amt string) *model.Kernel {
	return &model.Kernel{ID: id, Agent: "i-node01", AgentBy: model.AgentByRecord, State: model.KernelOK,
		Path: "/s/" + string(id[:8]) + "/config/resource.txt", Seen: node.t, ModTime: node.t,
		Alloc: model.Allocations{model.SlotCUDAShares: {dev: model.MustDec(amt)}}}
}

// tick is the node a second later, as it is (step changes it too).
func (n *synthNode) tick() *model.Snapshot {
	n.t = n.t.Add(time.Second)
	return n.snap()
}

// TestChangeInAGapIsNotExact: a kernel whose amount changed while no
// recorder ran is not said to have changed at the moment the record began
// again. What it held before ended somewhere in the gap ("?": Gone, at the
// gap's start), what it holds after it held already when the record began
// again ("<": Since); a kernel that held the same across the gap keeps one
// interval. The sequential and the parallel walks agree.
func TestChangeInAGapIsNotExact(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(3, 0)
	k := sharesKernel(node, "aaaaaaaa-0000-4000-8000-000000000001", "1", "0.70")
	same := sharesKernel(node, "bbbbbbbb-0000-4000-8000-000000000002", "1", "0.20")
	node.ks[k.ID], node.ks[same.ID] = k, same
	run := recorderRuns(t, dir, node, node.tick)
	start := node.t.Add(time.Second)
	lastSeen := run(5)
	node.t = node.t.Add(30 * time.Second) // no recorder: the change is in here
	changed := *k
	changed.Alloc = model.Allocations{model.SlotCUDAShares: {"1": model.MustDec("0.40")}}
	node.ks[k.ID] = &changed
	again := node.t.Add(time.Second)
	run(5)

	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := rd.historySeq(Filter{Device: "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	par := rd.historyPar(Filter{Device: "cuda:1"}, 2)
	for name, res := range map[string]*HistoryResult{"sequential": seq, "parallel": par} {
		var got []string
		for _, iv := range res.Intervals {
			got = append(got, fmt.Sprintf("%s %s from %s since %v to %s gone %v open %v", iv.Kernel[:8], iv.Amounts[model.SlotCUDAShares],
				iv.From.Format(time.TimeOnly), iv.Since, iv.To.Format(time.TimeOnly), iv.Gone, iv.Open))
		}
		want := []string{
			fmt.Sprintf("aaaaaaaa 0.70 from %s since true to %s gone true open false", start.Format(time.TimeOnly), lastSeen.Format(time.TimeOnly)),
			fmt.Sprintf("bbbbbbbb 0.20 from %s since true to %s gone false open true", start.Format(time.TimeOnly), node.t.Format(time.TimeOnly)),
			fmt.Sprintf("aaaaaaaa 0.40 from %s since true to %s gone false open true", again.Format(time.TimeOnly), node.t.Format(time.TimeOnly)),
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
		if len(res.Missing) != 1 {
			t.Errorf("%s: missing %v, want the gap", name, res.Missing)
		}
	}
}

// TestUntilInAGapAndALostTail: asked up to a moment inside a gap, a
// kernel seen last before the gap is not "open" (it left in the gap or
// not: the record cannot say), but ended somewhere in the gap, as without
// --until; asked up to a moment the part read covers, it is held then
// ("open"). A record whose last segment is damaged does not claim what
// was held after its last intact change: the rows end there with "?", and
// the lost stretch reads "from ... on".
func TestUntilInAGapAndALostTail(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(4, 0)
	k := sharesKernel(node, "cccccccc-0000-4000-8000-000000000003", "2", "0.60")
	node.ks[k.ID] = k
	run := recorderRuns(t, dir, node, node.tick)
	run(5)
	lastSeen := node.t
	node.t = node.t.Add(30 * time.Second)
	delete(node.ks, k.ID) // it leaves in the gap
	run(5)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	one := func(f Filter) Interval {
		t.Helper()
		f.Device = "cuda:2"
		res, err := rd.History(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Intervals) != 1 {
			t.Fatalf("%+v: %d intervals", f, len(res.Intervals))
		}
		return res.Intervals[0]
	}
	whole := one(Filter{})
	if !whole.Gone || whole.Open || !whole.To.Equal(lastSeen) {
		t.Fatalf("the whole record: %+v, want it gone in the gap after %s", whole, lastSeen)
	}
	inGap := one(Filter{Since: lastSeen.Add(-2 * time.Second), Until: lastSeen.Add(10 * time.Second)})
	if !inGap.Gone || inGap.Open || !inGap.To.Equal(lastSeen) {
		t.Errorf("--until in the gap: %+v, want it gone in the gap after %s, not open", inGap, lastSeen)
	}
	before := one(Filter{Since: lastSeen.Add(-3 * time.Second), Until: lastSeen.Add(-time.Second)})
	if before.Gone || !before.Open {
		t.Errorf("--until before the gap: %+v, want it held then (open)", before)
	}

	// The last segment's end damaged: the kernel held to the end is not
	// open past it.
	node.ks[k.ID] = k
	run(5)
	segs, _ := listSegments(dir)
	last := segs[len(segs)-1].Path
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err = OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(Filter{Device: "cuda:2"})
	if err != nil {
		t.Fatal(err)
	}
	tail := res.Intervals[len(res.Intervals)-1]
	if tail.Open || !tail.Gone {
		t.Errorf("held at a damaged end: %+v, want it ended there with '?'", tail)
	}
	lost := res.Missing[len(res.Missing)-1]
	if !strings.HasPrefix(lost.String(), "from ") || !strings.Contains(lost.String(), " on: segment ") {
		t.Errorf("the lost tail reads %q", lost)
	}
}

// TestQueryHostOnly: a kernel that held only cores and memory is in the
// record: asked by its id or its owner, history lists what it held there
// (it said "no kernel in the record", while snapshot --at showed it), and
// a core or the memory is a device history answers for.
func TestQueryHostOnly(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(5, 0)
	k := &model.Kernel{ID: "17171717-0000-4000-8000-000000000017", Agent: "i-node01", AgentBy: model.AgentByRecord, State: model.KernelOK,
		Path: "/s/h/config/resource.txt", Seen: node.t, ModTime: node.t,
		Alloc:  model.Allocations{model.SlotCPU: {"0": model.One, "1": model.One}, model.SlotMem: {"root": model.MustDec("4294967296")}},
		Record: &model.KernelRecord{SessionID: "5e550000-0000-4000-8000-000000000017", OwnerUserID: "77777777-aaaa-4aaa-8aaa-000000000007"}}
	node.ks[k.ID] = k
	// Snapshots of this node as it is (the synthetic steps would change
	// or remove the kernel at random).
	// The node lists its GPU, two cores and its memory, as the engine's
	// snapshots do.
	devs := []model.Device{{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.One}, {ID: "0", Name: "cpu", Slot: model.SlotCPU, Capacity: model.One},
		{ID: "1", Name: "cpu", Slot: model.SlotCPU, Capacity: model.One}, {ID: "root", Name: "mem", Slot: model.SlotMem, Capacity: model.MustDec("17179869184")}}
	run := recorderRuns(t, dir, node, func() *model.Snapshot {
		s := node.tick()
		s.Devices = devs
		return s
	})
	run(3)
	delete(node.ks, k.ID) // it ends; the record goes on
	node.ks["aaaaaaaa-0000-4000-8000-0000000000aa"] = sharesKernel(node, "aaaaaaaa-0000-4000-8000-0000000000aa", "0", "0.50")
	run(3)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{Kernel: "1717"}, {User: "7777"}, {Device: "cpu:1"}, {Device: "mem:root"}} {
		res, err := rd.Query(f)
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		found := false
		for _, iv := range res.Intervals {
			found = found || iv.Kernel == k.ID
		}
		if !found {
			t.Errorf("%+v: %d intervals, none of %s", f, len(res.Intervals), k.ID)
		}
	}
	if _, err := rd.Query(Filter{Kernel: "1818"}); err == nil {
		t.Error("a kernel the record does not hold was found")
	}
	// A core the record does not know: the error lists the cores it
	// knows (it listed the GPUs alone, though cpu:1 is a name it takes).
	if _, err := rd.Query(Filter{Device: "cpu:99"}); err == nil || !strings.Contains(err.Error(), "cpu:1") || !strings.Contains(err.Error(), "mem:root") {
		t.Errorf("cpu:99: %v", err)
	}
	// Asked for a span after it held anything: known, and it held
	// nothing then (an empty answer, as for an accelerator kernel), not
	// "no kernel in the record".
	res, err := rd.Query(Filter{Kernel: "1717", Since: node.t.Add(-time.Second)})
	if err != nil || len(res.Intervals) != 0 {
		t.Errorf("after its span: %v, %d intervals", err, len(res.Intervals))
	}
}

// TestStrayFileInsideASegment: a file named like a segment for a time the
// segment before it recorded through (garbage, or a copy gone wrong) is no
// segment the recorder wrote: history and snapshot --at answer as without
// it, the record's real gap keeps its own reason, and the file is listed
// as skipped, not as a stretch the record lacks.
func TestStrayFileInsideASegment(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(6, 3)
	run := recorderRuns(t, dir, node, node.step)
	run(20)
	node.t = node.t.Add(time.Minute)
	run(20)
	cleanRd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := cleanRd.History(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	segs, _ := listSegments(dir)
	inside := segs[0].Start.Add(10 * time.Second)
	stray := filepath.Join(dir, fmt.Sprintf("seg-%020d.fgh", inside.UnixNano()))
	if err := os.WriteFile(stray, []byte("not a segment at all, just bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rd.History(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Missing) != fmt.Sprint(clean.Missing) || len(got.Intervals) != len(clean.Intervals) {
		t.Errorf("with the stray file: missing %v, %d intervals; without: %v, %d", got.Missing, len(got.Intervals), clean.Missing, len(clean.Intervals))
	}
	if len(got.Skipped) != 1 || got.Skipped[0].Path != stray {
		t.Errorf("skipped %v, want the stray file", got.Skipped)
	}
	res, err := rd.At(inside.Add(3 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exact || len(res.Missing) != 0 || len(res.Skipped) != 1 {
		t.Errorf("snapshot --at inside the first segment: exact %v, missing %v, skipped %v", res.Exact, res.Missing, res.Skipped)
	}
	if len(rd.Skipped()) != 1 {
		t.Errorf("the reader's own list: %v", rd.Skipped())
	}
	// Asked from after its name (the walk then begins at the segment
	// before it) and named inside the last segment (the record's end is
	// that segment's): the same answers as without it.
	since := inside.Add(5 * time.Second)
	cleanSince, _ := cleanRd.History(Filter{Since: since})
	gotSince, _ := rd.History(Filter{Since: since})
	if fmt.Sprint(gotSince.Missing) != fmt.Sprint(cleanSince.Missing) || len(gotSince.Intervals) != len(cleanSince.Intervals) {
		t.Errorf("--since after its name: missing %v, %d intervals; without it: %v, %d", gotSince.Missing, len(gotSince.Intervals), cleanSince.Missing, len(cleanSince.Intervals))
	}
	// One that begins with a segment's header and holds nothing after it
	// (a copy cut short) is read, cannot be, and is skipped the same way.
	hdr, err := os.ReadFile(segs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, fmt.Sprintf("seg-%020d.fgh", inside.Add(time.Second).UnixNano()))
	if err := os.WriteFile(cut, append(hdr[:headerSize:headerSize], "garbage"...), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err = OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rd.History(Filter{}); err != nil || fmt.Sprint(got.Missing) != fmt.Sprint(clean.Missing) {
		t.Errorf("with a cut copy: missing %v (%v), without: %v", got.Missing, err, clean.Missing)
	}
	res, err = rd.At(inside.Add(3 * time.Second))
	if err != nil || !res.Exact || len(res.Missing) != 0 || len(res.Skipped) != 2 {
		t.Errorf("snapshot --at with a cut copy: %v, exact %v, missing %v, skipped %v", err, res != nil && res.Exact, res.Missing, res.Skipped)
	}
	if err := os.Remove(cut); err != nil {
		t.Fatal(err)
	}
	_, cleanEnd, _ := cleanRd.Span()
	last := segs[len(segs)-1].Start.Add(2 * time.Second)
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seg-%020d.fgh", last.UnixNano())), []byte("0123456789abcdefghijklmnop"), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err = OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, end, err := rd.Span(); err != nil || !end.Equal(cleanEnd) {
		t.Errorf("the record's end with a stray named inside the last segment: %v (%v), want %v", end, err, cleanEnd)
	}
}

// TestOwnerLearntInAGap: a kernel whose owner became known while no
// recorder ran, holding the same amount, held it throughout: one row (the
// owner's from its first moment), not one that ended in the gap and
// another after it. The sequential and parallel walks agree.
func TestOwnerLearntInAGap(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(7, 0)
	k := sharesKernel(node, "dddddddd-0000-4000-8000-000000000004", "3", "0.70")
	node.ks[k.ID] = k
	run := recorderRuns(t, dir, node, node.tick)
	run(5)
	node.t = node.t.Add(30 * time.Second)
	known := *k
	known.Record = &model.KernelRecord{SessionID: "5e550000-0000-4000-8000-000000000004", OwnerUserID: "44444444-aaaa-4aaa-8aaa-000000000004"}
	node.ks[k.ID] = &known
	run(5)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{Device: "cuda:3"}, {Kernel: "dddd"}, {User: "4444"}} {
		seq, err := rd.historySeq(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, res := range map[string]*HistoryResult{"sequential": seq, "parallel": rd.historyPar(f, 2)} {
			if len(res.Intervals) != 1 || !res.Intervals[0].Open || res.Intervals[0].Gone || res.Intervals[0].User != known.Record.OwnerUserID {
				t.Errorf("%+v, %s: %+v, want one open row of the owner", f, name, res.Intervals)
			}
		}
	}
}

// TestUntilInAQuickRestart: a recorder stopped and started again within
// the moment the record does not call a gap is no gap: asked up to a
// moment between the two, a kernel held across is held then ("open"), not
// ended in a gap nobody listed.
func TestUntilInAQuickRestart(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(8, 0)
	k := sharesKernel(node, "eeeeeeee-0000-4000-8000-000000000005", "4", "0.30")
	node.ks[k.ID] = k
	run := recorderRuns(t, dir, node, node.tick)
	run(5)
	stopped := node.t
	run(5)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(Filter{Device: "cuda:4", Since: stopped.Add(-2 * time.Second), Until: stopped.Add(500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != 0 {
		t.Skipf("the restart is listed as a gap here (%v): not the case this test is about", res.Missing)
	}
	if len(res.Intervals) != 1 || res.Intervals[0].Gone || !res.Intervals[0].Open || !res.More {
		t.Errorf("%+v (more %v), want it held at --until", res.Intervals, res.More)
	}
}

package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Every holding of cuda:1 in every snapshot seen live lies in exactly one
// interval History lists, with its amount, and no interval claims a kernel
// at a moment a live snapshot shows it not holding the device.
func TestHistoryDeviceMatchesLive(t *testing.T) {
	dir := t.TempDir()
	rec, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := churn(t, 60, func(s *model.Snapshot) { rec.Observe(s); rec.Flush() })
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(Filter{Device: "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) < 5 || len(res.Missing) > 0 {
		t.Fatalf("%d intervals, missing %v", len(res.Intervals), res.Missing)
	}
	key := model.DeviceKey{Name: "cuda", ID: "1"}
	checked := 0
	for _, s := range got {
		held := map[model.KernelID]model.Dec{}
		for _, h := range s.snap.Holdings(key) {
			held[h.Kernel] = h.Amount
		}
		covering := map[model.KernelID]model.Dec{}
		for _, iv := range res.Intervals {
			if iv.Device != key {
				t.Fatalf("interval on %s", iv.Device)
			}
			if !s.snap.Time.Before(iv.From) && (s.snap.Time.Before(iv.To) || iv.Open && !s.snap.Time.After(iv.To)) {
				if _, dup := covering[iv.Kernel]; dup {
					t.Fatalf("%s: two intervals of %s", s.snap.Time, iv.Kernel)
				}
				covering[iv.Kernel] = iv.Amounts[model.SlotCUDAShares]
			}
		}
		if len(held) != len(covering) {
			t.Fatalf("at %s (seq %d): live %d holders, history %d", s.snap.Time, s.snap.Seq, len(held), len(covering))
		}
		for k, v := range held {
			if !covering[k].Identical(v) {
				t.Fatalf("at %s: %s holds %s live, history says %s", s.snap.Time, k, v, covering[k])
			}
		}
		checked += len(held)
	}
	if checked == 0 {
		t.Fatal("nothing held on cuda:1 in any snapshot")
	}
	// Kernel filter: one kernel's intervals only.
	k := res.Intervals[0].Kernel
	kr, err := rd.History(Filter{Kernel: string(k)[:13]})
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range kr.Intervals {
		if iv.Kernel != k {
			t.Fatalf("kernel filter %s gave %s", k, iv.Kernel)
		}
	}
	if len(kr.Intervals) == 0 {
		t.Fatal("kernel filter found nothing")
	}
}

func TestParseWhen(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 11, 27, 16, 40, 3, 0, loc)
	for _, c := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "14:02", want: time.Date(2026, 11, 27, 14, 2, 0, 0, loc)},
		{in: "14:02:17", want: time.Date(2026, 11, 27, 14, 2, 17, 0, loc)},
		{in: "17:00", want: time.Date(2026, 11, 26, 17, 0, 0, 0, loc)},
		// A fraction is kept: read as its whole second, a moment after a
		// record's end within that second was read as the end (exit 0).
		{in: "14:02:17.5", want: time.Date(2026, 11, 27, 14, 2, 17, 5e8, loc)},
		{in: "yesterday 14:02:17.25", want: time.Date(2026, 11, 26, 14, 2, 17, 25e7, loc)},
		{in: "-2h", want: now.Add(-2 * time.Hour)},
		{in: "-1d12h", want: now.Add(-36 * time.Hour)},
		{in: "now", want: now},
		{in: "2026-11-27T13:02:00Z", want: time.Date(2026, 11, 27, 13, 2, 0, 0, time.UTC)},
		{in: "2026-11-25 09:30", want: time.Date(2026, 11, 25, 9, 30, 0, 0, loc)},
		// The days operators name (now is Friday 2026-11-27 16:40:03).
		{in: "yesterday", want: time.Date(2026, 11, 26, 0, 0, 0, 0, loc)},
		{in: "yesterday 14:02", want: time.Date(2026, 11, 26, 14, 2, 0, 0, loc)},
		{in: "Yesterday 14:02:17", want: time.Date(2026, 11, 26, 14, 2, 17, 0, loc)},
		{in: "today", want: time.Date(2026, 11, 27, 0, 0, 0, 0, loc)},
		{in: "today 9:05", want: time.Date(2026, 11, 27, 9, 5, 0, 0, loc)},
		{in: "monday", want: time.Date(2026, 11, 23, 0, 0, 0, 0, loc)},
		{in: "wed 18:00", want: time.Date(2026, 11, 25, 18, 0, 0, 0, loc)},
		{in: "friday 09:00", want: time.Date(2026, 11, 27, 9, 0, 0, 0, loc)},
		{in: "fri 17:00", want: time.Date(2026, 11, 20, 17, 0, 0, 0, loc)},
		{in: "yesterday 25:00", bad: true},
		{in: "yesterday at 14:02", bad: true},
		{in: "someday", bad: true},
		{in: "--2h", bad: true},
		{in: "25:00", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseWhen(c.in, now)
		if c.bad {
			if err == nil {
				t.Errorf("%q: no error (got %s)", c.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%q: got %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// TestSpanOrder: a backwards span names both ends as read, and a time of
// day still to come today, read as yesterday's, is said to be the cause.
func TestSpanOrder(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 11, 27, 16, 40, 3, 0, loc)
	for _, c := range []struct {
		since, until string
		want         []string // substrings of the error; nil: no error
		not          string
	}{
		{since: "16:00", until: "16:30"},
		{since: "16:00", until: ""},
		{since: "", until: "16:30"},
		{since: "16:00", until: "16:00"},
		{since: "16:00", until: "16:50", want: []string{"--until (2026-11-26 16:50:00 X) is before --since (2026-11-27 16:00:00 X)", "16:50 is still to come today (now is 16:40:03), so it reads as yesterday's"}},
		{since: "15:00", until: "14:00", want: []string{"--until (2026-11-27 14:00:00 X) is before --since (2026-11-27 15:00:00 X)"}, not: "yesterday"},
		{since: "today 16:00", until: "yesterday 17:00", want: []string{"--until (2026-11-26 17:00:00 X)"}, not: "still to come"},
		// Both still to come, so both yesterday's: read as today's, --until
		// would still be before --since; the span is backwards as typed.
		{since: "16:55", until: "16:50", want: []string{"--until (2026-11-26 16:50:00 X) is before --since (2026-11-26 16:55:00 X)"}, not: "still to come"},
	} {
		var since, until time.Time
		var err error
		if c.since != "" {
			if since, err = ParseWhen(c.since, now); err != nil {
				t.Fatal(err)
			}
		}
		if c.until != "" {
			if until, err = ParseWhen(c.until, now); err != nil {
				t.Fatal(err)
			}
		}
		err = SpanOrder(since, until, c.until, now)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s..%s: %v", c.since, c.until, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s..%s: no error", c.since, c.until)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s..%s: %q lacks %q", c.since, c.until, err, w)
			}
		}
		if c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%s..%s: %q says %q", c.since, c.until, err, c.not)
		}
	}
}

func TestStep(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(5, 10)
	got := recordSynth(t, dir, node, 20, 2, Options{})
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := got[5].snap.Time
	next, ok := rd.Step(at, +1)
	if !ok || !next.Equal(got[6].snap.Time) {
		t.Fatalf("next after %s: %s %v, want %s", at, next, ok, got[6].snap.Time)
	}
	prev, ok := rd.Step(at, -1)
	if !ok || !prev.Equal(got[4].snap.Time) {
		t.Fatalf("previous before %s: %s %v, want %s", at, prev, ok, got[4].snap.Time)
	}
	if _, ok := rd.Step(got[len(got)-1].snap.Time, +1); ok {
		t.Fatal("a change after the last")
	}
}

func TestOneWriterPerDirectory(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("a second writer: %v", err)
	}
	rd, err := OpenReader(dir)
	if err != nil || !rd.Active {
		t.Fatalf("reader: %v, active %v", err, rd != nil && rd.Active)
	}
	a.Close()
	b, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}

// Retention drops the oldest segments by age and by size, never the one
// being written.
func TestRetention(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(6, 50)
	node.bloat = 200
	recordSynth(t, dir, node, 400, 1, Options{CheckpointEvery: 20 * time.Second, MaxSize: 100 << 10})
	segs, _ := listSegments(dir)
	var total int64
	for _, s := range segs {
		total += s.Size
	}
	if total > 100<<10+segs[len(segs)-1].Size || segs[0].Start.Equal(time.Date(2026, 11, 20, 0, 0, 1, 0, time.UTC)) {
		t.Fatalf("%d segments, %d bytes, first %s", len(segs), total, segs[0].Start)
	}
	// By age: a week later, everything but the newest goes.
	node.t = node.t.Add(8 * 24 * time.Hour)
	recordSynth(t, dir, node, 3, 1, Options{})
	segs, _ = listSegments(dir)
	if len(segs) != 2 {
		t.Fatalf("%d segments after a week", len(segs))
	}
}

// TestStepShown: stepping by the second the console shows never stays in
// the shown second (changes a few milliseconds apart left PAST 14:02:17
// where it was), and lands on the last change of the second it reaches.
func TestStepShown(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(7, 6)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := node.t
	var at []time.Time
	for _, off := range []time.Duration{1000, 1200, 1400, 2300, 2500, 4000} {
		node.t = t0.Add(off*time.Millisecond - time.Second)
		s := node.step()
		if !s.Time.Equal(t0.Add(off * time.Millisecond)) {
			t.Fatalf("synthetic step at %s, want %s", s.Time, t0.Add(off*time.Millisecond))
		}
		rec.Observe(s)
		at = append(at, s.Time)
	}
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if next, _ := rd.Step(at[0], +1); !next.Equal(at[1]) {
		t.Fatalf("Step by change: %s, want %s (200 ms later)", next, at[1])
	}
	for _, c := range []struct {
		from      time.Time
		dir       int
		want      time.Time
		wantFound bool
	}{
		{at[0], +1, at[4], true}, // past 1.2 and 1.4 s, to the last of second 2
		{at[1], +1, at[4], true},
		{at[4], +1, at[5], true},
		{at[4], -1, at[2], true}, // the last change of second 1
		{at[5], -1, at[4], true},
		{at[2], -1, time.Time{}, false}, // nothing before second 1 but its own changes
		{at[5], +1, time.Time{}, false},
	} {
		got, ok := rd.StepShown(c.from, c.dir, time.Second)
		if ok != c.wantFound || (ok && !got.Equal(c.want)) {
			t.Errorf("StepShown(%s, %+d): %s %v, want %s %v", c.from.Format("05.000"), c.dir, got.Format("05.000"), ok, c.want.Format("05.000"), c.wantFound)
		}
	}
}

// TestStepShownAcrossSegments: a second whose changes a new segment
// splits (a recorder restarted, or a rotation, within it) is stepped to
// at its last change, in the later segment, not at the last change the
// earlier segment holds.
func TestStepShownAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(7, 6)
	clock := func() time.Time { return node.t }
	rec, err := Open(Options{Dir: dir, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t0 := node.t
	var at []time.Time
	for i, off := range []time.Duration{1000, 2200, 2700, 4000} {
		if i == 2 {
			// A new recorder's segment begins within second 2.
			rec.Close()
			node.t = t0.Add(2400 * time.Millisecond)
			if rec, err = Open(Options{Dir: dir, Clock: clock}); err != nil {
				t.Fatal(err)
			}
		}
		node.t = t0.Add(off*time.Millisecond - time.Second)
		s := node.step()
		rec.Observe(s)
		at = append(at, s.Time)
	}
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rd.segs); n != 2 {
		t.Fatalf("%d segments, want 2", n)
	}
	if got, ok := rd.StepShown(at[0], +1, time.Second); !ok || !got.Equal(at[2]) {
		t.Errorf("StepShown(%s, +1): %s %v, want %s (the last change of second 2, in the second segment)",
			at[0].Format("05.000"), got.Format("05.000"), ok, at[2].Format("05.000"))
	}
	if got, ok := rd.StepShown(at[3], -1, time.Second); !ok || !got.Equal(at[2]) {
		t.Errorf("StepShown(%s, -1): %s %v, want %s", at[3].Format("05.000"), got.Format("05.000"), ok, at[2].Format("05.000"))
	}
}

// A span that ends before the record begins walks no segment; the answer
// still says where the record ends (`fgtop history --until` before the
// record printed "which covers ... to 0001-01-01").
func TestSpanBeforeRecordKnowsItsEnd(t *testing.T) {
	dir := t.TempDir()
	rec, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	churn(t, 10, func(s *model.Snapshot) { rec.Observe(s); rec.Flush() })
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rd.Span()
	if err != nil || to.IsZero() {
		t.Fatalf("span %s-%s: %v", from, to, err)
	}
	early := from.Add(-time.Hour)
	for _, f := range []Filter{{Device: "cuda:1", Until: early}, {Until: early, Since: early.Add(-time.Hour)}} {
		res, err := rd.History(f)
		if err != nil {
			t.Fatal(err)
		}
		if !res.From.Equal(from) || !res.To.Equal(to) || len(res.Intervals) != 0 {
			t.Errorf("%+v: span %s-%s with %d intervals, want the record's %s-%s and none", f, res.From, res.To, len(res.Intervals), from, to)
		}
	}
	ss, err := rd.Sessions(time.Time{}, early)
	if err != nil {
		t.Fatal(err)
	}
	if !ss.To.Equal(to) || len(ss.Sessions) != 0 {
		t.Errorf("sessions before the record: to %s with %d sessions, want %s and none", ss.To, len(ss.Sessions), to)
	}
}

package history

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// recordSnaps records snaps in dir, each at its own time, with opts.
func recordSnaps(t *testing.T, dir string, snaps []*model.Snapshot, opts Options) {
	t.Helper()
	var now time.Time
	opts.Dir, opts.Clock = dir, func() time.Time { return now }
	rec, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range snaps {
		now = s.Time
		rec.Observe(s)
		if i%3 == 2 {
			rec.Flush()
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// ivText is an interval as a line to compare.
func ivText(iv Interval) string {
	return fmt.Sprintf("%s %s %s %v %s<%v %s open=%v gone=%v", iv.Device, iv.Kernel, iv.Agent, iv.Amounts,
		iv.From.Format("15:04:05.000"), iv.Since, iv.To.Format("15:04:05.000"), iv.Open, iv.Gone)
}

// cutTo is the whole record's answer cut to [since, until] by hand: what
// a span's answer must be, wherever the record's segments begin.
func cutTo(all []Interval, since, until time.Time) []string {
	var out []string
	for _, iv := range all {
		if iv.To.Before(since) && !iv.Open || !until.IsZero() && iv.From.After(until) {
			continue
		}
		if iv.From.Before(since) {
			iv.From, iv.Since = since, true
		}
		if !until.IsZero() && (iv.To.After(until) || iv.Open && iv.To.Equal(until)) {
			iv.To, iv.Open, iv.Gone = until, true, false
		}
		out = append(out, ivText(iv))
	}
	slices.Sort(out)
	return out
}

// history --since/--until lists the whole record's answer cut to the
// span, the same for a record of one segment and one of many: before, it
// listed what the walk read past --until (real ends up to the end of the segment
// --until falls in, "open" rows ending there, record_to there) and began
// "<" rows at the checkpoint before --since, so the answer moved with the
// segments' starts, and "open" did not mean "held at --until" as the
// help says.
func TestSpanIsCutWhateverTheSegments(t *testing.T) {
	node := newSynth(11, 12)
	var snaps []*model.Snapshot
	for range 150 {
		snaps = append(snaps, node.step())
	}
	one, many := t.TempDir(), t.TempDir()
	recordSnaps(t, one, snaps, Options{})
	recordSnaps(t, many, snaps, Options{CheckpointEvery: 25 * time.Second})
	rdOne, err := OpenReader(one)
	if err != nil {
		t.Fatal(err)
	}
	rdMany, err := OpenReader(many)
	if err != nil {
		t.Fatal(err)
	}
	if len(rdOne.segs) != 1 || len(rdMany.segs) < 5 {
		t.Fatalf("%d and %d segments, want 1 and at least 5", len(rdOne.segs), len(rdMany.segs))
	}
	_, end, err := rdOne.Span()
	if err != nil {
		t.Fatal(err)
	}
	whole, err := rdOne.History(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := snaps[0].Time
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	spans := [][2]time.Time{
		{at(30.5), at(31.5)}, {at(40), at(40)}, {at(33), at(90)}, {{}, at(60.2)}, {at(101), {}},
		{at(24.9), at(75.1)}, {at(-5), at(10)},
	}
	for _, sp := range spans {
		since, until := sp[0], sp[1]
		want := cutTo(whole.Intervals, since, until)
		for name, rd := range map[string]*Reader{"one segment": rdOne, "many segments": rdMany} {
			for _, f := range []Filter{{Since: since, Until: until}, {Since: since, Until: until, Device: "cuda:3"}} {
				res, err := rd.History(f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, iv := range CutToSpan(res.Intervals, f) {
					got = append(got, ivText(iv))
				}
				slices.Sort(got)
				w := want
				if f.Device != "" {
					w = slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s[:7] != "cuda:3 " })
				}
				if !slices.Equal(got, w) {
					t.Errorf("%s, %s to %s, device %q: %d rows, want %d; only got\n%s\nonly wanted\n%s", name, since.Format("15:04:05.0"), until.Format("15:04:05.0"),
						f.Device, len(got), len(w), onlyIn(got, w), onlyIn(w, got))
				}
				to := res.To
				if res.RecordTo.After(to) {
					to = res.RecordTo
				}
				if !to.Equal(end) {
					t.Errorf("%s, until %s: the record ends at %s, the answer says %s", name, until.Format("15:04:05.0"), end.Format("15:04:05"), to.Format("15:04:05"))
				}
			}
		}
	}
}

// onlyIn lists the lines of a that b lacks.
func onlyIn(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

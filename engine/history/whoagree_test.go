package history

import (
	"fmt"
	"slices"
	"testing"
)

// A query by who (user, session) lists exactly the intervals the whole
// history lists for them: two readers of one record agree. The synthetic
// node gives a kernel a new owner and session when it changes its
// allocation, so a kernel first known as another's becomes the asked
// one's by a patch; the walk used to stop following such a kernel and
// lost what it held as the asked one's.
func TestWhoQueriesAgreeWithTheWhole(t *testing.T) {
	key := func(iv Interval) string {
		return fmt.Sprintf("%s %s %s %s %v", iv.Kernel, iv.Device, iv.From.Format("15:04:05"), iv.To.Format("15:04:05"), iv.Amounts)
	}
	for run := range 40 {
		dir := t.TempDir()
		recordSynth(t, dir, newSynth(uint64(run), 12), 40, 1, Options{})
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		all, err := rd.History(Filter{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[Filter][]string{}
		for _, iv := range all.Intervals {
			want[Filter{User: iv.User}] = append(want[Filter{User: iv.User}], key(iv))
			want[Filter{Session: iv.Session}] = append(want[Filter{Session: iv.Session}], key(iv))
		}
		for f, w := range want {
			res, err := rd.History(f)
			if err != nil {
				t.Fatalf("run %d, %+v: %v", run, f, err)
			}
			var got []string
			for _, iv := range res.Intervals {
				got = append(got, key(iv))
			}
			slices.Sort(got)
			slices.Sort(w)
			if !slices.Equal(got, w) {
				t.Fatalf("run %d, %+v:\n got %q\nwant %q", run, f, got, w)
			}
		}
	}
}

package history

import (
	"testing"
	"time"
)

// TestStamps: moments in one second are told apart by their fractions,
// to the fewest digits that do; others, and a whole second, are said to
// the second.
func TestStamps(t *testing.T) {
	sec := time.Date(2026, 12, 6, 8, 25, 39, 0, time.Local)
	day := sec.Format("2006-01-02 15:04:05")
	zone := sec.Format(" MST")
	for _, c := range []struct {
		name string
		in   []time.Duration // after sec
		want []string
	}{
		{"a bound part way into the asked whole second", []time.Duration{0, 696 * time.Millisecond}, []string{day + zone, day + ".696" + zone}},
		{"both with fractions", []time.Duration{250 * time.Millisecond, 696 * time.Millisecond}, []string{day + ".250" + zone, day + ".696" + zone}},
		{"one millisecond apart needs microseconds", []time.Duration{696100 * time.Microsecond, 696400 * time.Microsecond}, []string{day + ".696100" + zone, day + ".696400" + zone}},
		{"equal", []time.Duration{696 * time.Millisecond, 696 * time.Millisecond}, []string{day + zone, day + zone}},
		{"another second", []time.Duration{696 * time.Millisecond, 1200 * time.Millisecond}, []string{day + zone, sec.Add(time.Second).Format("2006-01-02 15:04:05") + zone}},
		{"an equal pair beside a third in its second", []time.Duration{100 * time.Millisecond, 205 * time.Millisecond, 205 * time.Millisecond},
			[]string{day + ".100" + zone, day + ".205" + zone, day + ".205" + zone}},
	} {
		var ts []time.Time
		for _, d := range c.in {
			ts = append(ts, sec.Add(d))
		}
		got := Stamps(ts...)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
				break
			}
		}
	}
}

// TestAtStart: only a time on a whole second, in the second the record
// begins in and before it, is read as the record's beginning.
func TestAtStart(t *testing.T) {
	from := time.Date(2026, 12, 6, 8, 25, 39, 696e6, time.UTC)
	for _, c := range []struct {
		at   time.Time
		want time.Time
	}{
		{from.Truncate(time.Second), from},
		{from.Truncate(time.Second).Add(250 * time.Millisecond), from.Truncate(time.Second).Add(250 * time.Millisecond)},
		{from.Truncate(time.Second).Add(-time.Second), from.Truncate(time.Second).Add(-time.Second)},
		{from.Add(time.Second).Truncate(time.Second), from.Add(time.Second).Truncate(time.Second)},
	} {
		if got := AtStart(c.at, from); !got.Equal(c.want) {
			t.Errorf("AtStart(%s): %s, want %s", c.at.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), c.want.Format(time.RFC3339Nano))
		}
	}
	// A record that begins on a whole second: a whole second before it is
	// before it.
	whole := from.Truncate(time.Second)
	if got := AtStart(whole.Add(-time.Second), whole); !got.Equal(whole.Add(-time.Second)) {
		t.Errorf("a second before a whole-second start: %s", got)
	}
}

// TestAtEnd: only a time on a whole second, in the second the record ends
// in and before the end, is read as the record's end.
func TestAtEnd(t *testing.T) {
	to := time.Date(2026, 12, 6, 10, 0, 5, 300e6, time.UTC)
	sec := to.Truncate(time.Second)
	for _, c := range []struct {
		at   time.Time
		want time.Time
	}{
		{sec, to},
		{sec.Add(250 * time.Millisecond), sec.Add(250 * time.Millisecond)},
		{sec.Add(400 * time.Millisecond), sec.Add(400 * time.Millisecond)},
		{sec.Add(time.Second), sec.Add(time.Second)},
		{sec.Add(-time.Second), sec.Add(-time.Second)},
		{time.Time{}, time.Time{}},
	} {
		if got := AtEnd(c.at, to); !got.Equal(c.want) {
			t.Errorf("AtEnd(%s): %s, want %s", c.at.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), c.want.Format(time.RFC3339Nano))
		}
	}
	// A record that ends on a whole second: that second is its end.
	if got := AtEnd(sec, sec); !got.Equal(sec) {
		t.Errorf("a whole-second end: %s", got)
	}
}

package history

import (
	"fmt"
	"time"
)

// Stamps names moments as fgtop says a moment (local time to the
// second, with its zone), each with the fraction of a second it has where
// another of them falls in the same second and differs: a record that
// begins at 08:25:39.696 is not "08:25:39 to ..." beside an asked
// 08:25:39.250 said to lie before it. The fraction has the fewest of 3, 6
// or 9 digits that tell every such two apart; a time on a whole second is
// said without one.
func Stamps(ts ...time.Time) []string {
	digits, unit := 3, 1_000_000
	shares := make([]bool, len(ts)) // another differs within its second
	for i, a := range ts {
		for j, b := range ts[i+1:] {
			if a.Unix() != b.Unix() || a.Equal(b) {
				continue
			}
			shares[i], shares[i+1+j] = true, true
			for a.Nanosecond()/unit == b.Nanosecond()/unit && unit > 1 {
				digits, unit = digits+3, unit/1000
			}
		}
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmtTime(t)
		if shares[i] {
			out[i] = stampFrac(t, digits, unit)
		}
	}
	return out
}

// stampFrac is fmtTime with t's fraction of a second to digits digits
// (unit nanoseconds each), none when t is on a whole second.
func stampFrac(t time.Time, digits, unit int) string {
	if t.Nanosecond() == 0 {
		return fmtTime(t)
	}
	l := t.Local()
	return fmt.Sprintf("%s.%0*d%s", l.Format("2006-01-02 15:04:05"), digits, l.Nanosecond()/unit, l.Format(" MST"))
}

// AtStart is t read against a record that begins at from: a time written
// to the whole second (08:25:39, 14:02, an RFC 3339 time without a
// fraction) stands for that second, so one whose second the record begins
// in, after it, is the record's beginning; any other time is itself. The
// record's first state is the one it holds of that second: an operator
// pasting the start fgtop printed gets it, not "before the record begins".
func AtStart(t, from time.Time) time.Time {
	if t.Nanosecond() == 0 && t.Before(from) && from.Sub(t) < time.Second {
		return from
	}
	return t
}

// AtEnd is t, an end of a span, read against a record that ends at to and
// that no recorder writes any more: a time written to the whole second
// stands for that second to its end, so one whose second the record ends
// in, before the end, is the record's end; any other time is itself (one
// with a fraction after the end is still after it). An operator pasting the
// end fgtop printed, to the second, gets the whole record, not one cut
// short by the fraction the print left off.
func AtEnd(t, to time.Time) time.Time {
	if t.Nanosecond() == 0 && to.After(t) && to.Sub(t) < time.Second {
		return to
	}
	return t
}

package console

import (
	"testing"
	"time"
)

// TestClockOnTheSecond: on the whole second the clock fires at the next
// second's grace, whenever it is restarted, and the first snapshot of
// each second does the tick's work (so the engine's poll on the second
// keeps the clock from firing); off it, a TickInterval and the grace
// after the restart, and half a TickInterval after the last tick.
func TestClockOnTheSecond(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		onSecond  bool
		now       string
		next      time.Duration
		last, snp string
		due       bool
	}{
		{true, "10:00:00.300", 750 * time.Millisecond, "10:00:00.001", "10:00:00.600", false},
		{true, "10:00:00.950", 100 * time.Millisecond, "10:00:00.600", "10:00:01.002", true},
		{true, "10:00:01.050", time.Second, "10:00:00.001", "10:00:00.999", false},
		{false, "10:00:00.300", TickInterval + tickGrace, "10:00:00.001", "10:00:00.600", true},
		{false, "10:00:00.950", TickInterval + tickGrace, "10:00:00.600", "10:00:01.002", false},
	} {
		k := &consoleClock{onSecond: c.onSecond}
		if got := k.next(at(c.now)); got != c.next {
			t.Errorf("onSecond %v, restarted at %s: fires %s later, want %s", c.onSecond, c.now, got, c.next)
		}
		if got := k.due(at(c.last), at(c.snp)); got != c.due {
			t.Errorf("onSecond %v, last tick %s, snapshot at %s: tick's work %v, want %v", c.onSecond, c.last, c.snp, got, c.due)
		}
	}
}

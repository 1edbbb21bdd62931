package kit

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAgeNext: FmtAge prints the same from d up to just before
// AgeNext(d), and otherwise at AgeNext(d), for ages from below zero to
// past 100 days, on and off every unit's boundary.
func TestAgeNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	ds := []time.Duration{-time.Hour, -1, 0, 1, time.Second - 1, time.Second, 59 * time.Second, time.Minute - 1, time.Minute,
		time.Hour - 1, time.Hour, 24*time.Hour - 1, 24 * time.Hour, 25 * time.Hour, 100*24*time.Hour - 1, 100 * 24 * time.Hour}
	for range 5000 {
		ds = append(ds, time.Duration(rng.Int64N(int64(200*24*time.Hour)))-time.Minute)
	}
	for _, d := range ds {
		e := AgeNext(d)
		if e <= d {
			t.Fatalf("AgeNext(%v) = %v, not after it", d, e)
		}
		if FmtAge(e) == FmtAge(d) {
			t.Errorf("AgeNext(%v) = %v: both print %q", d, e, FmtAge(d))
		}
		if FmtAge(e-1) != FmtAge(d) {
			t.Errorf("AgeNext(%v) = %v: %v prints %q, not %q: it changed earlier", d, e, e-1, FmtAge(e-1), FmtAge(d))
		}
	}
}

// TestAgeAtUnknown: a time not known (zero) is "-", with no instant to
// draw again at, not 106751 days (a fleet's node that sent none: the
// tour); a known one is FmtAge and AgeNext.
func TestAgeAtUnknown(t *testing.T) {
	now := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	if text, next := AgeAt(now, time.Time{}); text != "-" || !next.IsZero() {
		t.Errorf("unknown: %q, next %v", text, next)
	}
	c := &Common{}
	c.BeginStale()
	if text := c.Age(now, time.Time{}); text != "-" || !c.StaleAt().IsZero() {
		t.Errorf("Common.Age of unknown: %q, stale at %v", text, c.StaleAt())
	}
	since := now.Add(-90 * time.Second)
	if text, next := AgeAt(now, since); text != FmtAge(90*time.Second) || !next.Equal(since.Add(AgeNext(90*time.Second))) {
		t.Errorf("90s: %q, next %v", text, next)
	}
}

package console

import (
	"math"
	"testing"
)

// TestPctHuge: a share past any int (1e23 held against 1.00) reads as
// past what a column says, never as the lowest int's "-9223...%".
func TestPctHuge(t *testing.T) {
	for v, want := range map[float32]string{0.5: "50%", 1.6: "160%", 1e23: ">999999%", -1e23: "<-999999%", float32(math.NaN()): "n/a"} {
		if got := pct(v); got != want {
			t.Errorf("pct(%g) = %q, want %q", v, got, want)
		}
	}
}

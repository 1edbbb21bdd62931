package console

import (
	"testing"
	"time"
)

// TestTickOnTheSecond: the clock tick fires on the wall clock's second,
// whenever the console asked for it, so serve's viewers all move their
// ages at one instant and draw the same frames (which they then share).
// Asked half-way through a second, it comes at the next second, not a
// second later.
func TestTickOnTheSecond(t *testing.T) {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(1500 * time.Millisecond).Sub(now))
	asked := time.Now()
	cmd := tick()
	cmd()
	fired := time.Now()
	// Timers may come late on a loaded machine, never early.
	if phase := fired.Sub(fired.Truncate(time.Second)); phase > 300*time.Millisecond {
		t.Errorf("asked at %s, the tick came at %s, %v into a second, want on the second",
			asked.Format("15:04:05.000"), fired.Format("15:04:05.000"), phase.Round(time.Millisecond))
	}
	if d := fired.Sub(asked); d > 900*time.Millisecond {
		t.Errorf("asked half-way through a second, the tick came %v later", d.Round(time.Millisecond))
	}
}

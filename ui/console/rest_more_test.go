package console

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestRestFrameExactResizedAndViewed: TestRestFrameExact's sequences with
// what it leaves out: resizes (the graphs' and sparklines' widths, the
// layout with or without the history graphs) and the view keys (follow,
// per-agent bars, sort), between snapshots of the same content.
func TestRestFrameExactResizedAndViewed(t *testing.T) {
	walkRest(t, 296, 300, []restOp{
		restSame(5),
		restMoved(1),
		restTick(1, 400*time.Millisecond, 1050*time.Millisecond, 59*time.Second),
		{2, func(r *restRig, rng *rand.Rand) string {
			w, h := 60+rng.IntN(200), 12+rng.IntN(60)
			r.each(func(a *App) { a.Update(tea.WindowSizeMsg{Width: w, Height: h}) })
			return fmt.Sprintf("resize %dx%d", w, h)
		}},
		restKeys(1, "f", "a", "s", "S", "g", "G", "j", "\t"),
	})
}

package console

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestRestFrameExactResizedAndViewed: TestRestFrameExact's sequences with
// what it leaves out: resizes (the graphs' and sparklines' widths, the
// layout with or without the history graphs) and the view keys (follow,
// per-agent bars, sort), between snapshots of the same content.
func TestRestFrameExactResizedAndViewed(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 296))
		r := newRestRig(t, fake.Large(1+rng.IntN(5), rng.IntN(12)), 100+rng.IntN(140), 24+rng.IntN(40))
		for step := range 300 {
			what := ""
			switch op := rng.IntN(10); {
			case op < 5:
				r.now = r.now.Add([]time.Duration{time.Second, 990 * time.Millisecond, 1010 * time.Millisecond, 3 * time.Second}[rng.IntN(4)])
				what = "same content"
				r.snap(0)
			case op < 6:
				r.now = r.now.Add(time.Second)
				what = "moved readings"
				r.snap(1 + rng.IntN(50))
			case op < 7:
				r.now = r.now.Add([]time.Duration{400 * time.Millisecond, 1050 * time.Millisecond, 59 * time.Second}[rng.IntN(3)])
				what = "tick"
				r.each(func(a *App) { a.Update(clockMsg{}) })
			case op < 9:
				w, h := 60+rng.IntN(200), 12+rng.IntN(60)
				what = fmt.Sprintf("resize %dx%d", w, h)
				r.each(func(a *App) { a.Update(tea.WindowSizeMsg{Width: w, Height: h}) })
			default:
				k := []string{"f", "a", "s", "S", "g", "G", "j", "\t"}[rng.IntN(8)]
				what = "key " + k
				r.each(func(a *App) { typeKeys(a, k) })
			}
			r.check(fmt.Sprintf("seed %d step %d (%s)", seed, step, what), rng)
		}
	}
}

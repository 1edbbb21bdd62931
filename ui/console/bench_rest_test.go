package console

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// BenchmarkViewAtRest is what a console at rest does each second: the
// NVML poll publishes a snapshot where only the telemetry moved (on every
// GPU), the console adopts it and draws the frame. Ns/op and allocs/op are
// the cost of one such second (issue 29: rebuild only what changed).
func BenchmarkViewAtRest(b *testing.B) {
	for _, c := range []struct{ gpus, kernels, w, h int }{
		{4, 0, 160, 48}, {4, 16, 160, 48}, {8, 16, 160, 48}, {8, 16, 240, 70},
	} {
		b.Run(fmt.Sprintf("%dgpu-%dk-%dx%d", c.gpus, c.kernels, c.w, c.h), func(b *testing.B) {
			s := fake.Large(c.gpus, c.kernels)
			a := testApp(b, c.w, c.h, s, Options{})
			for i := range 400 { // a full history, so the graphs draw lines
				s = fake.Tick(s, i)
				a.adopt(s)
			}
			_ = a.View()
			b.ReportAllocs()
			// The snapshots are the engine's work, not the console's: made
			// 256 at a time outside the timer.
			var next []*model.Snapshot
			n := 0
			for b.Loop() {
				if len(next) == 0 {
					b.StopTimer()
					for range 256 {
						n++
						s = fake.Tick(s, n)
						next = append(next, s)
					}
					b.StartTimer()
				}
				a.adopt(next[0])
				next = next[1:]
				_ = a.View()
			}
		})
	}
}

package console

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// BenchmarkViewAtRest is what a console at rest does each second: the
// NVML poll publishes a snapshot where only the telemetry changed, the
// console adopts it and draws the frame. Ns/op and allocs/op are the cost
// of one such second (issue 29: rebuild only what changed). "still" is an
// idle node, whose readings repeat (new values, same figures); "moving"
// has every reading of every GPU move every second.
func BenchmarkViewAtRest(b *testing.B) {
	for _, c := range []struct {
		gpus, kernels, w, h int
		moving              bool
	}{
		{4, 0, 160, 48, false}, {4, 0, 160, 48, true}, {8, 16, 160, 48, false}, {8, 16, 160, 48, true}, {8, 16, 240, 70, true},
	} {
		how := "still"
		if c.moving {
			how = "moving"
		}
		b.Run(fmt.Sprintf("%dgpu-%dk-%dx%d-%s", c.gpus, c.kernels, c.w, c.h, how), func(b *testing.B) {
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
						if c.moving {
							s = fake.Tick(s, n)
						} else {
							s = fake.Tick(s, 0)
						}
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

// BenchmarkSessionsAtRest is serve's sessions at rest: n consoles over one
// subscription, sharing one Deriver, each adopting the second's snapshot
// (readings moving on every GPU) and drawing its frame. Ns/op is per
// session and snapshot: the derivation is made once for all of them.
func BenchmarkSessionsAtRest(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			s := fake.Large(4, 16)
			dv := render.NewDeriver()
			apps := make([]*App, n)
			for i := range apps {
				apps[i] = testApp(b, 160, 48, s, Options{Deriver: dv})
			}
			adoptInTurn(b, apps, s)
		})
	}
}

// adoptInTurn is the loop of the sessions benchmarks: each snapshot, made
// from s outside the timer 256 at a time, is adopted and drawn by every
// session in turn; an op is one session and snapshot.
func adoptInTurn(b *testing.B, apps []*App, s *model.Snapshot) {
	n := len(apps)
	var next []*model.Snapshot
	k, it := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		if it%n == 0 {
			if len(next) == 0 {
				b.StopTimer()
				for range 256 {
					k++
					next = append(next, fake.Tick(s, k))
					s = next[len(next)-1]
				}
				b.StartTimer()
			}
			s, next = next[0], next[1:]
		}
		a := apps[it%n]
		it++
		a.adopt(s)
		_ = a.View()
	}
}

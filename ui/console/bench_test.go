package console

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// BenchmarkViewMain16x1000 is the DESIGN.md target (≤ 2 ms): composing the
// main screen of a 16-GPU node with 1,000 kernels, the kernels pane showing
// all of them (nothing followed), the frame cache dropped every time so
// each iteration composes a full frame.
func BenchmarkViewMain16x1000(b *testing.B) {
	for _, sz := range [][2]int{{160, 48}, {80, 24}, {240, 70}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			a := testApp(b, sz[0], sz[1], fake.Large(16, 1000), Options{})
			typeKeys(a, "f") // all kernels, not only the first device's
			b.ReportAllocs()
			for b.Loop() {
				a.Invalidate()
				_ = a.View()
			}
		})
	}
}

// BenchmarkAdopt16x1000 is the per-snapshot work: deriving rows, figures
// and bar amounts, history, the kernel view. It runs at most once per
// frame however fast snapshots come. Each snapshot differs from the one
// before beyond its telemetry (changed), so it is derived in full, with
// the kernels memoised.
func BenchmarkAdopt16x1000(b *testing.B) {
	s := fake.Large(16, 1000)
	a := testApp(b, 160, 48, s, Options{})
	typeKeys(a, "f")
	b.ReportAllocs()
	for b.Loop() {
		s = changed(s)
		a.adopt(s)
	}
}

// changed is a copy of s that is another snapshot to derive (its host
// memory moves by a byte), sharing every kernel and usage.
func changed(s *model.Snapshot) *model.Snapshot {
	c := *s
	c.Seq++
	c.HostMemBytes ^= 1
	return &c
}

// BenchmarkAdoptCold16x1000 is the same with nothing memoised: the first
// snapshot, or one where every kernel changed.
func BenchmarkAdoptCold16x1000(b *testing.B) {
	s := fake.Large(16, 1000)
	a := testApp(b, 160, 48, s, Options{})
	typeKeys(a, "f")
	b.ReportAllocs()
	for b.Loop() {
		a.deriver = render.NewDeriver()
		a.adopt(s)
	}
}

// BenchmarkSnapshotToFrame16x1000 is a new snapshot to a composed frame:
// adopt plus View.
func BenchmarkSnapshotToFrame16x1000(b *testing.B) {
	s := fake.Large(16, 1000)
	a := testApp(b, 160, 48, s, Options{})
	typeKeys(a, "f")
	b.ReportAllocs()
	for b.Loop() {
		s = changed(s)
		a.adopt(s)
		_ = a.View()
	}
}

// BenchmarkViewCached is View when nothing changed since the last frame:
// what a message that changes nothing costs.
func BenchmarkViewCached(b *testing.B) {
	a := testApp(b, 160, 48, fake.Large(16, 1000), Options{})
	a.View()
	for b.Loop() {
		_ = a.View()
	}
}

// BenchmarkViewGraphs16 is the main screen with the history graphs drawn
// from full histories (histLen samples a device, a gap in every tenth):
// at 16 GPUs × 1,000 kernels a tall terminal keeps graphMinH rows for
// them; with 16 kernels they take most of the screen.
func BenchmarkViewGraphs16(b *testing.B) {
	for _, c := range []struct {
		Kernels, W, H int
	}{{1000, 240, 70}, {16, 200, 60}, {16, 240, 70}} {
		b.Run(fmt.Sprintf("16x%d-%dx%d", c.Kernels, c.W, c.H), func(b *testing.B) {
			a := testApp(b, c.W, c.H, fake.Large(16, c.Kernels), Options{})
			fillHistory(a)
			a.Invalidate()
			if !a.layoutNow().graphOn {
				b.Fatal("no graphs at this size")
			}
			b.ReportAllocs()
			for b.Loop() {
				a.Invalidate()
				_ = a.View()
			}
		})
	}
}

// fillHistory gives every device a full history of varying readings.
func fillHistory(a *App) {
	i := 0
	for _, dh := range a.hist {
		for s := range histLen {
			v := float32((s*7+i*13)%101) / 100
			u := v
			if s%10 == 0 {
				u = float32(nan())
			}
			dh.push(sample{v, u, 1 - v})
		}
		i++
	}
}

// BenchmarkHistoryPane is the history graphs alone, from full histories
// of 16 GPUs, at the sizes the wide and compact layouts give them.
func BenchmarkHistoryPane(b *testing.B) {
	a := testApp(b, 240, 70, fake.Large(16, 16), Options{})
	fillHistory(a)
	for _, sz := range [][2]int{{240, 50}, {200, 40}, {120, 20}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			p := newHistoryPane(a.common, a.hist, nil)
			p.SetSize(sz[0], sz[1])
			p.Select(3)
			b.ReportAllocs()
			for b.Loop() {
				_ = p.View()
			}
		})
	}
}

// BenchmarkSearchAll16x10000 is the kernel table's refresh on a node of
// 16 GPUs and 10,000 kernels: every kernel listed (f: the baseline), and
// a search over every GPU that matches every kernel, with the devices
// holding a match marked: the search's extra work must stay linear.
func BenchmarkSearchAll16x10000(b *testing.B) {
	for _, filter := range []string{"", "!zzzz"} {
		name := "all-kernels"
		if filter != "" {
			name = "search-all"
		}
		b.Run(name, func(b *testing.B) {
			a := testApp(b, 160, 48, fake.Large(16, 10000), Options{})
			a.Kernels.follow = false
			a.Kernels.Filter = filter
			b.ReportAllocs()
			for b.Loop() {
				a.Kernels.refresh()
			}
		})
	}
}

package console

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// BenchmarkViewMainGrowth is BenchmarkViewMain16x1000 at 160×48 for the
// growth table of BENCHMARKS.md: 16 devices and 100 to 50,000 kernels, the
// frame alone (View) and a new snapshot adopted then drawn (Adopt+View).
//
//	go test -run '^$' -bench ViewMainGrowth ./ui/
func BenchmarkViewMainGrowth(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 50000} {
		s := fake.Large(16, n)
		b.Run(fmt.Sprintf("kernels=%d/View", n), func(b *testing.B) {
			a := testApp(b, 160, 48, s, Options{})
			typeKeys(a, "f") // all kernels, not only the first device's
			b.ReportAllocs()
			for b.Loop() {
				a.Invalidate()
				_ = a.View()
			}
		})
		b.Run(fmt.Sprintf("kernels=%d/Adopt+View", n), func(b *testing.B) {
			a := testApp(b, 160, 48, s, Options{})
			typeKeys(a, "f")
			b.ReportAllocs()
			for b.Loop() {
				a.deriver = render.NewDeriver()
				a.adopt(s)
				a.Invalidate()
				_ = a.View()
			}
		})
	}
}

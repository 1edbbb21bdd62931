package metrics

import (
	"bytes"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// BenchmarkScrape measures the server's side of one scrape of a node with
// 10,000 kernels (two agents, 5,000 real-size fixture resource.txt files
// each, the fixture's four fractional GPUs on a 32-core host): Collect over
// the latest snapshot plus the text encoding, which is what promhttp does
// per request (the handler adds only gzip when asked for). DESIGN.md's
// target is ≤ 5 ms.
func BenchmarkScrape(b *testing.B) {
	snap := partitioned(build(b, tree(b, 5000, "agent-a", "agent-b")))
	if n := snap.NumKernels(); n != 10000 {
		b.Fatalf("%d kernels, want 10000", n)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(Options{Latest: fixed(snap)}))
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	defer testfix.CPUClock(b)()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/scrape")
}

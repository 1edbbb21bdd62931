package metrics

import (
	"bytes"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/fgtop/fgtop/model"

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
	scrapeSnapOnce.Do(func() {
		// Built once: the benchmark function runs again for every b.N
		// the framework tries, and writing 10,000 files each time would
		// cost more than everything measured.
		scrapeSnap = partitioned(build(b, tree(b, 5000, "agent-a", "agent-b")))
	})
	snap := scrapeSnap
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

var (
	scrapeSnapOnce sync.Once
	scrapeSnap     *model.Snapshot
)

// BenchmarkScrapeHandler is one whole GET /metrics as the exporter serves
// it (the handler with the process and Go runtime collectors too, no
// gzip), on the same 10,000-kernel node: the server time of a scrape.
func BenchmarkScrapeHandler(b *testing.B) {
	scrapeSnapOnce.Do(func() {
		scrapeSnap = partitioned(build(b, tree(b, 5000, "agent-a", "agent-b")))
	})
	h := Handler(Registry(New(Options{Latest: fixed(scrapeSnap)})))
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	b.ResetTimer()
	defer testfix.CPUClock(b)()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("GET /metrics: %d", w.Code)
		}
	}
}

package history

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/report"
)

// BenchmarkSeek is Reader.At on a recorded directory (TestWeekBench's
// week): FGTOP_HISTORY_SEEK_DIR, at FGTOP_HISTORY_SEEK_AT (RFC 3339);
// with FGTOP_HISTORY_SEEK_REPORT=1 also the indented document, as
// `snapshot --at` writes it.
func BenchmarkSeek(b *testing.B) {
	dir, at := os.Getenv("FGTOP_HISTORY_SEEK_DIR"), os.Getenv("FGTOP_HISTORY_SEEK_AT")
	if dir == "" || at == "" {
		b.Skip("set FGTOP_HISTORY_SEEK_DIR and FGTOP_HISTORY_SEEK_AT")
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		b.Fatal(err)
	}
	c0 := cpuTime()
	for b.Loop() {
		rd, err := OpenReader(dir)
		if err != nil {
			b.Fatal(err)
		}
		res, err := rd.At(t)
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("FGTOP_HISTORY_SEEK_REPORT") == "1" {
			if err := report.WriteSnapshot(io.Discard, res.Snap, true); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

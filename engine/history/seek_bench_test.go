package history

import (
	"os"
	"testing"
	"time"
)

// BenchmarkSeek is Reader.At on a recorded directory (TestWeekBench's
// week): FGTOP_HISTORY_SEEK_DIR, at FGTOP_HISTORY_SEEK_AT (RFC 3339).
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
		if _, err := rd.At(t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

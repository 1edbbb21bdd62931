package history

import (
	"os"
	"testing"

	"github.com/fgtop/fgtop/engine/report"
)

// TestRecordStats prints, for the record in FGTOP_HISTORY_STATS, the raw
// bytes per record type (what the compression works on).
func TestRecordStats(t *testing.T) {
	dir := os.Getenv("FGTOP_HISTORY_STATS")
	if dir == "" {
		t.Skip("set FGTOP_HISTORY_STATS=DIR")
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	by := map[byte][2]int{}
	for i := range rd.segs {
		sr := rd.read(i, false)
		it := recIter{b: sr.data.Deltas}
		for {
			typ, body, ok := it.next()
			if !ok {
				break
			}
			v := by[typ]
			by[typ] = [2]int{v[0] + 1, v[1] + len(body) + 2}
		}
	}
	for typ, v := range by {
		t.Logf("%c: %d records, %d raw bytes", typ, v[0], v[1])
	}
}

// BenchmarkAt reads the record in FGTOP_HISTORY_STATS at its middle.
func BenchmarkAt(b *testing.B) {
	dir := os.Getenv("FGTOP_HISTORY_STATS")
	if dir == "" {
		b.Skip("set FGTOP_HISTORY_STATS=DIR")
	}
	for i := 0; i < b.N; i++ {
		rd, err := OpenReader(dir)
		if err != nil {
			b.Fatal(err)
		}
		from, to, _ := rd.Span()
		res, err := rd.At(from.Add(to.Sub(from) / 2))
		if err != nil {
			b.Fatal(err)
		}
		report.Marshal(report.FromSnapshot(res.Snap), true)
	}
}

// BenchmarkHistoryDevice lists cuda:3 over the record in FGTOP_HISTORY_STATS.
func BenchmarkHistoryDevice(b *testing.B) {
	dir := os.Getenv("FGTOP_HISTORY_STATS")
	if dir == "" {
		b.Skip("set FGTOP_HISTORY_STATS=DIR")
	}
	for i := 0; i < b.N; i++ {
		rd, err := OpenReader(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rd.History(Filter{Device: "cuda:3"}); err != nil {
			b.Fatal(err)
		}
	}
}

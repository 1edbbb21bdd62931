package history

import (
	"os"
	"testing"
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

package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestGapClippedToTheSpan: a gap of the record that began before the
// span was listed whole, from before the span's start.
func TestGapClippedToTheSpan(t *testing.T) {
	from := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	d := &Doc{Node: "n", From: from, To: from.Add(time.Hour),
		Missing: []MissingDoc{{From: from.Add(-3 * time.Hour), To: from.Add(10 * time.Minute), Why: "fgtop was not running"},
			{From: from.Add(-time.Hour), To: from.Add(-time.Hour), Why: "damaged"}}}
	var b bytes.Buffer
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"  2026-11-26 12:00:00 UTC to 2026-11-26 12:10:00 UTC: fgtop was not running; the gap began before the span, at 2026-11-26 09:00:00 UTC\n",
		"  from 2026-11-26 12:00:00 UTC on: damaged; the damage began before the span, at 2026-11-26 11:00:00 UTC\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

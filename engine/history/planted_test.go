package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Files named like segments that are no segment a recorder wrote (a FIFO,
// one named for 2030) are left out of the record and said: before, the
// FIFO was skipped without a word, and the 2030 segment became the
// record's end, so `history` listed a gap from 2030 back to the real
// record.
func TestPlantedSegmentsAreSkippedAndSaid(t *testing.T) {
	node := newSynth(28, 5)
	future := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, why string
		plant     func(t *testing.T, dir string) string
	}{
		{"fifo", "a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, segName(node.t.Add(time.Hour)))
			mkfifo(t, p)
			return p
		}},
		{"future", "a time still to come", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, segName(future))
			if err := os.WriteFile(p, headAndCheckpoint(t, future), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got := recordSynth(t, dir, node, 10, 2, Options{})
			planted := c.plant(t, dir)
			rd, err := OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			said := func(what string, sk []Skipped) {
				t.Helper()
				if len(sk) != 1 || sk[0].Path != planted || !strings.Contains(sk[0].Why, c.why) {
					t.Errorf("%s: skipped %v, want %s (%s)", what, sk, planted, c.why)
				}
			}
			last := got[len(got)-1].snap.Time
			res, err := rd.At(last)
			if err != nil {
				t.Fatalf("At: %v", err)
			}
			said("At", res.Skipped)
			if !res.Exact || len(res.Missing) != 0 {
				t.Errorf("At: exact %v, missing %v", res.Exact, res.Missing)
			}
			hr, err := rd.History(Filter{})
			if err != nil {
				t.Fatal(err)
			}
			said("History", hr.Skipped)
			if hr.To.After(last.Add(time.Hour)) {
				t.Errorf("History: the record ends at %s, want the real record's end (%s)", hr.To, last)
			}
			for _, m := range hr.Missing {
				if m.To.Before(m.From) || m.From.After(last.Add(time.Hour)) {
					t.Errorf("History: gap %s", m)
				}
			}
		})
	}
}

// A directory holding only a planted file says so, rather than "no
// record yet" alone.
func TestOnlyAPlantedSegmentIsSaid(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, segName(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)))
	mkfifo(t, p)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rd.History(Filter{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "a FIFO") {
		t.Fatalf("History: %v, want the FIFO named", err)
	}
}

package agentconfig

import (
	"strings"
	"testing"
	"time"
)

func TestRanAtStart(t *testing.T) {
	start := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := start.Add(d); return &v }
	rec := func(d time.Duration, old, new string, oldChanged *time.Time) JournalRecord {
		return JournalRecord{Time: start.Add(d), Action: ActionApply, OldHash: old, NewHash: new, OldChanged: oldChanged, Boot: "boot-1"}
	}
	other := func(r JournalRecord, boot string) JournalRecord { r.Boot = boot; return r }
	cases := []struct {
		name string
		recs []JournalRecord
		cur  string
		want bool
	}{
		{"applied after start, rolled back", []JournalRecord{
			rec(-time.Hour, "z", "a", at(-2*time.Hour)),
			rec(time.Hour, "a", "b", at(-time.Hour)),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", true},
		{"the apply not undone", []JournalRecord{
			rec(time.Hour, "a", "b", at(-time.Hour)),
		}, "b", false},
		{"a hand edit after start, before the apply", []JournalRecord{
			rec(time.Hour, "a", "b", at(10*time.Minute)),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", false},
		{"the version read at start was touched the second after", []JournalRecord{
			rec(time.Hour, "a", "b", at(time.Second)),
		}, "a", false},
		{"the first write after start within the read grace", []JournalRecord{
			rec(30*time.Second, "a", "b", at(-time.Hour)),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", false},
		{"no write after start: changed by hand", []JournalRecord{
			rec(-time.Hour, "z", "a", at(-2*time.Hour)),
		}, "a", false},
		{"a record before start after one past it: a clock set back", []JournalRecord{
			rec(time.Hour, "a", "b", at(-time.Hour)),
			rec(-time.Minute, "b", "a", at(time.Hour)),
		}, "a", false},
		{"a record of an older fgtop, without the status change", []JournalRecord{
			rec(time.Hour, "a", "b", nil),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", false},
		{"no journal", nil, "a", false},
		// A journal copied in with the file (cp -a of another host's
		// /etc/backend.ai), or a write by another host on a shared file
		// system: its times and status changes are not this boot's.
		{"the first write after start of another host or boot", []JournalRecord{
			other(rec(time.Hour, "a", "b", at(-time.Hour)), "boot-of-another-host"),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", false},
		{"a record of an fgtop that kept no boot", []JournalRecord{
			other(rec(time.Hour, "a", "b", at(-time.Hour)), ""),
			rec(2*time.Hour, "b", "a", at(time.Hour)),
		}, "a", false},
	}
	// Where the file holds again what the first write after start
	// replaced, the proof's failure says why (the operator rolled back and
	// is still asked to restart); elsewhere there is nothing to explain.
	whys := map[string]string{
		"a hand edit after start, before the apply":              "had changed after the agent started, outside fgtop",
		"the version read at start was touched the second after": "had changed after the agent started",
		"the first write after start within the read grace":      "within the agent's first minute",
		"a record of an older fgtop, without the status change":  "an older fgtop's",
		"the first write after start of another host or boot":    "of another boot or host",
		"a record of an fgtop that kept no boot":                 "does not say which boot",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, why, ok := RanAtStartWhy(c.recs, start, c.cur, "boot-1")
			if ok != c.want {
				t.Fatalf("RanAtStart = %v, want %v", ok, c.want)
			}
			if want := whys[c.name]; want == "" && why != "" || !strings.Contains(why, want) {
				t.Fatalf("why %q, want %q", why, want)
			}
			if ok && !w.Time.After(start) {
				t.Fatalf("w %+v is not the first write after start", w)
			}
		})
	}
}

// This host's boot unknown, nothing is proved.
func TestRanAtStartBootUnknown(t *testing.T) {
	start := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	before := start.Add(-time.Hour)
	recs := []JournalRecord{{Time: start.Add(time.Hour), Action: ActionApply, OldHash: "a", NewHash: "b", OldChanged: &before}}
	if _, ok := RanAtStart(recs, start, "a", ""); ok {
		t.Fatal("proved with no boot known")
	}
}

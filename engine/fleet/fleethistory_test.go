package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/untrusted"
)

// FuzzParseNodeHistory: whatever a node answers to `history --json`, the
// fleet reads it without panicking, and every text it keeps is safe to
// print.
func FuzzParseNodeHistory(f *testing.F) {
	f.Add(`{"schema":"fgtop.history/v1","intervals":[{"device":"cuda:0","kernel":"k","agent":"a","amounts":{"cuda.shares":"0.5"},"from":"2026-11-27T14:02:00Z","to":"2026-11-27T15:00:00Z"}],"missing":[{"from":"a","to":"b","why":"gap"}]}`)
	f.Add(`{"schema":"fgtop.history/v1","intervals":[{"device":"\u001b[31m","from":"x"}]}`)
	f.Add(`{"schema":"other"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 1<<16 {
			return
		}
		ivs, gaps, err := ParseNodeHistory("node\x1b[2J", []byte(doc))
		if err != nil {
			return
		}
		for _, iv := range ivs {
			for _, s := range []string{iv.Device, iv.Kernel, iv.Agent, iv.Session, iv.User, iv.Project, iv.From, iv.To} {
				if !untrusted.Safe(s) {
					t.Fatalf("unsafe text kept: %q", s)
				}
			}
			for k, v := range iv.Amounts {
				if !untrusted.Safe(k) || !untrusted.Safe(v) {
					t.Fatalf("unsafe amount kept: %q=%q", k, v)
				}
			}
		}
		for _, g := range gaps {
			if !untrusted.Safe(g.Why) || !untrusted.Safe(g.From) || !untrusted.Safe(g.To) {
				t.Fatalf("unsafe gap kept: %+v", g)
			}
		}
	})
}

func TestHistoryQueryCommand(t *testing.T) {
	cases := []struct {
		q    HistoryQuery
		want string
		err  string
	}{
		{HistoryQuery{Device: "cuda:0"}, "history --json --device cuda:0", ""},
		{HistoryQuery{User: "u1"}, "history --json --user u1", ""},
		// The console's name of a MIG slice, as history takes it (spaces
		// ignored): it was refused as an id with blanks.
		{HistoryQuery{Device: "MIG 4/0"}, "history --json --device MIG4/0", ""},
		{HistoryQuery{Device: "MIG\t4/0"}, "", "blanks or quotes"},
		{HistoryQuery{Kernel: "a b"}, "", "blanks or quotes"},
		{HistoryQuery{Kernel: "x'; rm -rf /"}, "", "blanks or quotes"},
	}
	for _, c := range cases {
		got, err := c.q.command()
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v: err %v, want %q", c.q, err, c.err)
		case c.err == "" && got != c.want:
			t.Errorf("%+v: %q (%v), want %q", c.q, got, err, c.want)
		}
	}
}

// TestWriteHistoryOpenEnded: a node's lost tail is said "from ... on",
// not as a stretch from a moment to the same moment.
func TestWriteHistoryOpenEnded(t *testing.T) {
	var b strings.Builder
	h := &FleetHistory{Missing: []HistoryGap{
		{Node: "n1:22", From: "2026-12-05T09:05:12Z", To: "2026-12-05T09:12:00Z", Why: "segment x: checksum at byte 5; the rest of it is lost", OpenEnded: true},
		{Node: "n2:22", From: "2026-12-05T09:00:00Z", To: "2026-12-05T09:01:00Z", Why: "not recorded"},
	}}
	if err := WriteHistory(&b, h, false, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "missing: n1:22 from 2026-12-05T09:05:12Z on: segment x") ||
		!strings.Contains(b.String(), "missing: n2:22 2026-12-05T09:00:00Z to 2026-12-05T09:01:00Z: not recorded") {
		t.Errorf("%s", b.String())
	}
}

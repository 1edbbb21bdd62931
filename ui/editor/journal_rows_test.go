package editor

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestJournalRowsKeepHashesApartFromOrigin: an apply from an SSH session
// has an origin of about 70 cells (address and key fingerprint). It ran
// into the hashes after it, gluing the fingerprint's tail to the old hash
// ("…T/yc64687688c6ca"), and the editor's view, cut at its width, lost
// the hashes. The hashes now stand in a column of their own before it.
func TestJournalRowsKeepHashesApartFromOrigin(t *testing.T) {
	st, err := kit.NewStyles(themes.MustBuiltin(themes.Mono), false)
	if err != nil {
		t.Fatal(err)
	}
	old, next := strings.Repeat("6", 64), strings.Repeat("1", 64)
	origin := "ssh:127.0.0.1:34624 SHA256:BuYErx/YL+0dEMGiMAXU1sOKa2B/6J7vJc6o7V+T/yc"
	rows := JournalRows(st, JournalView{Recs: []agentconfig.JournalRecord{{
		Time: time.Date(2026, 12, 7, 11, 8, 7, 0, time.UTC), Action: "apply", Result: "ok",
		Actor: "a-rather-long-user-name", Origin: origin, OldHash: old, NewHash: next,
	}}})
	if len(rows) < 2 {
		t.Fatalf("rows %v", rows)
	}
	var b strings.Builder
	for _, sp := range rows[1] {
		b.WriteString(sp.Text)
	}
	line := b.String()
	hashes := ShortHash(old) + " " + st.G.To + " " + ShortHash(next)
	at := strings.Index(line, hashes)
	if at < 0 || strings.Contains(line, "yc"+ShortHash(old)) || strings.Contains(line, "name"+ShortHash(old)) {
		t.Fatalf("hashes run into another column: %q", line)
	}
	// At 120 columns (the editor's view cuts rows at its width) the
	// hashes are whole.
	if end := at + len(hashes); kit.Width(line[:end]) > 118 {
		t.Errorf("the hashes end at cell %d, past a 120-column view: %q", kit.Width(line[:end]), line)
	}
	// An actor of ordinary length: up to the hashes the row fits an 80-column
	// screen (the console's :journal wraps there; "OLD →" was split from NEW).
	short := JournalRows(st, JournalView{Recs: []agentconfig.JournalRecord{{Action: "rollback", Result: "ok", Actor: "root", Origin: origin, OldHash: old, NewHash: next}}})
	var sb strings.Builder
	for _, sp := range short[1] {
		sb.WriteString(sp.Text)
	}
	if s := sb.String(); kit.Width(s[:strings.Index(s, hashes)+len(hashes)]) > 78 {
		t.Errorf("the hashes end past 78 cells: %q", s)
	}
	if !strings.Contains(line, origin) {
		t.Errorf("the origin is not whole: %q", line)
	}
}

// TestJournalRowsShowAFailedWrite: a write whose rename failed after its
// intent was journaled is completed by a failed record (it used to leave
// the intent "pending" for good). The journal view and :journal list it as
// the action it tried, failed, with nothing written and why.
func TestJournalRowsShowAFailedWrite(t *testing.T) {
	st, err := kit.NewStyles(themes.MustBuiltin(themes.Mono), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rec  agentconfig.JournalRecord
		want []string
	}{
		{"with its reason", agentconfig.JournalRecord{Action: agentconfig.ActionFailed, Intends: agentconfig.ActionRollback, Result: "failed", Failure: "replace agent config: rename: device or resource busy"},
			[]string{"nothing written: replace agent config: rename: device or resource busy"}},
		{"without one", agentconfig.JournalRecord{Action: agentconfig.ActionFailed, Intends: agentconfig.ActionApply, Result: "failed"},
			[]string{"nothing written: the write failed before it replaced the file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.Time, tc.rec.Actor = time.Date(2026, 12, 7, 11, 8, 7, 0, time.UTC), "root"
			var lines []string
			for _, r := range JournalRows(st, JournalView{Recs: []agentconfig.JournalRecord{tc.rec}}) {
				var b strings.Builder
				for _, sp := range r {
					b.WriteString(sp.Text)
				}
				lines = append(lines, b.String())
			}
			all := strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("rows\n%s\nwant %q", all, w)
				}
			}
			// ACTION is what was tried, RESULT that it failed.
			if cols := lines[1][20:]; !strings.HasPrefix(cols, kit.PadRight(tc.rec.Intends, 9)+kit.PadRight("failed", 9)) {
				t.Errorf("row %q: want ACTION %s, RESULT failed", lines[1], tc.rec.Intends)
			}
		})
	}
}

package partition

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/untrusted"
)

// TestDeskJournalEscapesPlantedText: a journal line planted with escape
// sequences in every field is shown (Desk.Journal, what the console's
// journal view lists) with each of them escaped.
func TestDeskJournalEscapesPlantedText(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.toml")
	d := NewDesk(DeskOptions{Config: cfg})
	evil := "m\x1b]52;c;eA==\x07\u009b\r\n"
	rec := agentconfig.JournalRecord{Action: agentconfig.ActionApply, Actor: evil, Origin: evil, Config: cfg + evil,
		OldHash: evil, NewHash: evil, Backup: evil, Result: evil, Mismatch: []string{evil}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.JournalPath(), append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, _, err := d.Journal(0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	n := 0
	untrusted.Apply(&recs[0], func(s string) string {
		if !untrusted.Safe(s) {
			t.Errorf("raw text shown: %q", s)
		}
		n++
		return s
	})
	if recs[0].Backup != `m\x1b]52;c;eA==\x07\u009b\x0d\x0a` || n < 8 {
		t.Fatalf("backup %q (%d strings)", recs[0].Backup, n)
	}
}

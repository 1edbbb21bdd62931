package agentconfig

import (
	"os"
	"strings"
	"testing"
)

// TestJournalRecordsTheKey: an apply and its rollback by an SSH actor carry
// the key fingerprint as a field of its own, and a journal line without
// one (written by the CLI, or by an fgtop that predates the field) still
// reads, with no key.
func TestJournalRecordsTheKey(t *testing.T) {
	c, next := setup(t)
	ssh := Actor{Name: "olga", Origin: "ssh:203.0.113.7:51234 SHA256:olgakey", Role: RoleOperator, Key: "SHA256:olgakey"}
	now := clock()
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: ssh, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: ssh, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(JournalPath(c.Path))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !strings.Contains(l, `"action":"intent"`) { // each write announces itself first
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 || !strings.Contains(lines[0], `"key":"SHA256:olgakey"`) || strings.Contains(lines[2], `"key"`) {
		t.Fatalf("journal lines:\n%s", raw)
	}
	recs, bad, err := ReadJournal(JournalPath(c.Path))
	if err != nil || bad != 0 || len(recs) != 3 {
		t.Fatalf("journal: %v, %d bad, %d records", err, bad, len(recs))
	}
	for i, want := range []struct{ action, actor, key string }{
		{"apply", "olga", "SHA256:olgakey"}, {"rollback", "olga", "SHA256:olgakey"}, {"apply", "alice", ""},
	} {
		if r := recs[i]; r.Action != want.action || r.Actor != want.actor || r.Key != want.key {
			t.Errorf("record %d: %s by %s key %q, want %+v", i, r.Action, r.Actor, r.Key, want)
		}
	}
	if recs[0].Origin != ssh.Origin {
		t.Errorf("origin %q", recs[0].Origin)
	}
}

// TestJournalOldRelativeRecords: a journal written by an fgtop that
// recorded the config path as given (relative) still rolls back: in the
// file's own journal, a relative record of the same name is that file.
func TestJournalOldRelativeRecords(t *testing.T) {
	c, next := setup(t)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	j := JournalPath(c.Path)
	raw, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(string(raw), `"config":"`+c.Path+`"`, `"config":"agent.toml"`)
	if old == string(raw) {
		t.Fatalf("the record does not name %s:\n%s", c.Path, raw)
	}
	if err := os.WriteFile(j, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(c.Raw) {
		t.Error("the bytes are not restored")
	}
}

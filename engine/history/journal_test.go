package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// The agent.toml journal's records (the partitions as applied) go into
// the record once, also across a restart of the recorder.
func TestJournalRecorded(t *testing.T) {
	dir, cfgDir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(cfgDir, "agent.toml")
	os.WriteFile(cfg, []byte("[agent]\n"), 0o644)
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var lines []byte
	for i, act := range []string{"apply", "rollback"} {
		b, _ := json.Marshal(agentconfig.JournalRecord{Time: t0.Add(time.Duration(i) * time.Minute), Action: act, Actor: "ops",
			Config: cfg, OldHash: "a", NewHash: "b", Result: "ok"})
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(agentconfig.JournalPath(cfg), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		now := t0.Add(time.Duration(10+round) * time.Minute)
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		s := &model.Snapshot{Seq: 1, Time: now, Node: "n", ConfigPath: cfg, ConfigHash: "h1"}
		rec.Observe(s)
		rec.followJournal(s)
		rec.Flush()
		rec.Close()
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := rd.Partitions(time.Time{}, time.Time{})
	if len(got) != 2 || got[0].Action != "apply" || got[1].Action != "rollback" {
		t.Fatalf("journal in the record: %+v", got)
	}
	if got := rd.Partitions(t0.Add(30*time.Second), time.Time{}); len(got) != 1 {
		t.Fatalf("from %s: %d records", t0.Add(30*time.Second), len(got))
	}
}

// A write that failed after journaling its intent leaves its intent and
// a failed record (agentconfig.ActionFailed): it put no partition in
// force, so the record of partitions as applied does not take it.
func TestJournalFailedWriteNotRecorded(t *testing.T) {
	dir, cfgDir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(cfgDir, "agent.toml")
	os.WriteFile(cfg, []byte("[agent]\n"), 0o644)
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var lines []byte
	for _, r := range []agentconfig.JournalRecord{
		{Time: t0, Action: agentconfig.ActionApply, Result: "ok", OldHash: "a", NewHash: "b"},
		{Time: t0.Add(time.Minute), Action: agentconfig.ActionIntent, Intends: agentconfig.ActionApply, Result: "pending", OldHash: "b", NewHash: "c"},
		{Time: t0.Add(time.Minute), Action: agentconfig.ActionFailed, Intends: agentconfig.ActionApply, Result: "failed", Failure: "rename: busy", OldHash: "b", NewHash: "c"},
		{Time: t0.Add(2 * time.Minute), Action: agentconfig.ActionRollback, Result: "ok", OldHash: "b", NewHash: "a"},
	} {
		r.Actor, r.Config = "ops", cfg
		b, _ := json.Marshal(r)
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(agentconfig.JournalPath(cfg), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(10 * time.Minute)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: now, Node: "n", ConfigPath: cfg, ConfigHash: "h1"}
	rec.Observe(s)
	rec.followJournal(s)
	rec.Flush()
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := rd.Partitions(time.Time{}, time.Time{})
	if len(got) != 2 || got[0].Action != agentconfig.ActionApply || got[1].Action != agentconfig.ActionRollback {
		t.Fatalf("journal in the record: %+v, want the apply and the rollback alone", got)
	}
}

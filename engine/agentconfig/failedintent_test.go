//go:build unix

package agentconfig

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFailedAfterIntentIsRecorded: a write whose rename failed after
// its intent was journaled (a bind-mounted config, a file system gone
// wrong: the common causes are refused before the intent) left that
// intent "pending" for good, read by every later reader as a write killed
// half-way. A record now completes it, saying the write failed and wrote
// nothing; it is no apply or rollback: rollback undoes the real apply
// before it, or has nothing to undo. Where the journal cannot take that
// record either, the error says both and the intent (and the backup it
// names) stays.
func TestWriteFailedAfterIntentIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prior applies a real change first.
		prior bool
		// rollback: the write that fails is a rollback of that change.
		rollback bool
		// journalBroken: the journal cannot take the failed record.
		journalBroken bool
	}{
		{name: "the first apply"},
		{name: "an apply after an apply", prior: true},
		{name: "a rollback", prior: true, rollback: true},
		{name: "the journal fails too", prior: true, journalBroken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, next := setup(t)
			now := clock()
			journal := JournalPath(c.Path)
			var priorRec JournalRecord
			before := c.Raw
			if tc.prior {
				res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				priorRec, before = res.Record, next
			}
			baks := func() []string {
				m, _ := filepath.Glob(c.Path + ".fgtop-*.bak")
				return m
			}
			baksBefore := baks()

			// At the intent the temp file is taken away: the rename that
			// follows fails (ENOENT), a real failure, not a Hooks stop.
			hooks := &Hooks{Fault: func(s Step) error {
				if s != StepIntent {
					return nil
				}
				tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(c.Path), ".agent.toml.fgtop-tmp-*"))
				for _, p := range tmps {
					if err := os.Remove(p); err != nil {
						t.Error(err)
					}
				}
				if tc.journalBroken {
					// A directory in the journal's place: the append
					// fails, the lock (held on the old file) does not.
					if err := os.Rename(journal, journal+".moved"); err != nil {
						t.Error(err)
					}
					if err := os.Mkdir(journal, 0o700); err != nil {
						t.Error(err)
					}
				}
				return nil
			}}
			intends := ActionApply
			var err error
			if tc.rollback {
				intends = ActionRollback
				_, err = Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now, Hooks: hooks})
			} else {
				third := append(append([]byte(nil), before...), "\n# third\n"...)
				_, err = Commit(CommitRequest{Path: c.Path, BaseHash: HashOf(before), Data: third, Actor: operator, Now: now, Hooks: hooks})
			}
			if err == nil {
				t.Fatal("the write did not fail")
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v does not wrap the rename's error", err)
			}
			want := []string{"nothing was written: " + c.Path + " is untouched", "the journal records the " + intends + " as failed"}
			if tc.journalBroken {
				want = []string{"nothing was written: " + c.Path + " is untouched", "could not record that the " + intends + " failed either", "shows the " + intends + " as interrupted"}
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nwants %q", err, w)
				}
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, before) {
				t.Fatal("the config changed")
			}

			if tc.journalBroken {
				// The intent stays, unanswered, and so does the backup it
				// names; it reads as before: an interrupted write.
				if err := os.Remove(journal); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(journal+".moved", journal); err != nil {
					t.Fatal(err)
				}
				recs, _, _ := ReadJournal(journal)
				last := recs[len(recs)-1]
				if last.Action != ActionIntent || last.Result != "pending" {
					t.Fatalf("journal %+v: want the intent left", recs)
				}
				if _, err := os.Stat(last.Backup); err != nil {
					t.Errorf("the backup the intent names is gone: %v", err)
				}
			} else {
				if got := baks(); len(got) != len(baksBefore) {
					t.Errorf("backups %v, want only %v: the failed write's copy of an unchanged file stays", got, baksBefore)
				}
				all, _, err := readJournal(journal)
				if err != nil || len(all) < 2 {
					t.Fatalf("journal %+v, %v", all, err)
				}
				intent, failed := all[len(all)-2], all[len(all)-1]
				if intent.Action != ActionIntent || failed.Action != ActionFailed || failed.Intends != intends || failed.Result != "failed" ||
					!strings.Contains(failed.Failure, "replace agent config") {
					t.Fatalf("the journal ends %+v\n%+v: want the intent, then its failed record", intent, failed)
				}
				if k, ok := completes(failed); !ok || k != keyOf(intent, intent.Intends) {
					t.Errorf("the failed record does not complete its intent: %+v, %+v", failed, intent)
				}
				recs, _, _ := ReadJournal(journal)
				for _, r := range recs {
					if r.Action == ActionIntent {
						t.Errorf("an intent is left pending: %+v", r)
					}
				}
				if last := recs[len(recs)-1]; last.Action != ActionFailed {
					t.Errorf("the journal's last record is %+v, want the failed one", last)
				}
			}

			// The failed write is nothing to undo, and hides nothing.
			top, err := Undoable(c.Path, "")
			if !tc.prior {
				if !errors.Is(err, ErrNothingToRollBack) {
					t.Fatalf("after a failed first apply, undoable: %+v, %v", top, err)
				}
				return
			}
			if err != nil || top.Action != ActionApply || !top.Time.Equal(priorRec.Time) || top.NewHash != priorRec.NewHash {
				t.Fatalf("undoable %+v, %v; want the apply before the failed write, %+v", top, err, priorRec)
			}
			if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now}); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
				t.Fatal("rollback did not restore the version before the real apply")
			}
			if _, err := Undoable(c.Path, ""); !errors.Is(err, ErrNothingToRollBack) {
				t.Errorf("after that rollback: %v", err)
			}
		})
	}
}

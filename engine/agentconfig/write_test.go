package agentconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

var operator = Actor{Name: "alice", Origin: "cli", Role: RoleOperator}

// setup copies the commented device-based fixture into a temp dir and
// returns it loaded, with a draft that moves a GPU.
func setup(t *testing.T) (*Config, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	d.Agents[0].Alloc.Devices["cuda"] = []model.DeviceID{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"}
	d.Agents[1].Alloc.Devices["cuda"] = append(d.Agents[1].Alloc.Devices["cuda"], "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03")
	out, _, err := Render(c, d)
	if err != nil {
		t.Fatal(err)
	}
	return c, out
}

func clock() func() time.Time {
	t := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestCommitAndRollback(t *testing.T) {
	c, next := setup(t)
	now := clock()
	res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now,
		Plan:   map[string]string{"what": "move 2d03"},
		Verify: func(got *Config) []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
		t.Fatal("the config is not the new file")
	}
	if b, err := os.ReadFile(res.Backup); err != nil || !bytes.Equal(b, c.Raw) {
		t.Fatalf("backup %s does not hold the old file: %v", res.Backup, err)
	}
	if st, _ := os.Stat(c.Path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	if !strings.HasPrefix(filepath.Base(res.Backup), "agent.toml.fgtop-20261121T101501") {
		t.Errorf("backup name %s", res.Backup)
	}
	recs, bad, err := ReadJournal(JournalPath(c.Path))
	if err != nil || bad != 0 || len(recs) != 1 {
		t.Fatalf("journal: %v %d %d", err, bad, len(recs))
	}
	r := recs[0]
	if r.Action != "apply" || r.Actor != "alice" || r.Origin != "cli" || r.OldHash != c.Hash || r.NewHash != HashOf(next) || r.Result != "ok" || !strings.Contains(string(r.Plan), "move 2d03") {
		t.Errorf("journal record %+v", r)
	}

	// A second apply on top, then two rollbacks walk back one each.
	c2, err := Load(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	third := bytes.Replace(next, []byte(`mem = "120G"                            # amount`), []byte(`mem = "100G"                            # amount`), 1)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c2.Hash, Data: third, Actor: operator, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
		t.Fatal("first rollback did not restore the second version")
	}
	rb, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
		t.Fatal("second rollback did not restore the original bytes")
	}
	if rb.Record.Action != "rollback" || rb.Record.Undoes == nil {
		t.Errorf("rollback record %+v", rb.Record)
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now}); !errors.Is(err, ErrNothingToRollBack) {
		t.Errorf("third rollback: %v, want ErrNothingToRollBack", err)
	}
}

func TestCommitRefusals(t *testing.T) {
	c, next := setup(t)
	for _, role := range []Role{RoleViewer, "", "root"} {
		_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: Actor{Name: "bob", Role: role}})
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("role %q: err = %v, want ErrNotAllowed", role, err)
		}
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: Actor{Name: "bob", Role: RoleViewer}}); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("viewer rollback: %v", err)
	}
	// Someone edits the file after it was loaded.
	edited := append(bytes.Clone(c.Raw), "# hand edit\n"...)
	if err := os.WriteFile(c.Path, edited, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator})
	if !errors.Is(err, ErrChangedOnDisk) {
		t.Fatalf("err = %v, want ErrChangedOnDisk", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, edited) {
		t.Error("a refused commit touched the file")
	}
	entries, _ := os.ReadDir(filepath.Dir(c.Path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".bak") || strings.Contains(e.Name(), "tmp") {
			t.Errorf("a refused commit left %s", e.Name())
		}
	}
}

func TestCommitReportsMismatch(t *testing.T) {
	c, next := setup(t)
	res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator,
		Verify: func(*Config) []string { return []string{"agent x: cuda differs"} }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatch) != 1 || res.Record.Result != "mismatch" {
		t.Errorf("mismatch not reported: %+v", res)
	}
}

func TestRollbackRefusesChangedFile(t *testing.T) {
	c, next := setup(t)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator}); err != nil {
		t.Fatal(err)
	}
	edited := append(bytes.Clone(next), "# later edit\n"...)
	os.WriteFile(c.Path, edited, 0o640)
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator}); !errors.Is(err, ErrChangedOnDisk) {
		t.Fatalf("err = %v, want ErrChangedOnDisk", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, edited) {
		t.Fatal("refused rollback touched the file")
	}
	res, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
		t.Fatal("forced rollback did not restore the original")
	}
	if b, _ := os.ReadFile(res.Backup); !bytes.Equal(b, edited) {
		t.Fatal("forced rollback did not keep the edited file")
	}
}

// A file put back by hand to the version before the apply (cp -p from the
// backup): the refusal says it already holds that version, not only that
// it changed.
func TestRollbackRefusalSaysPutBack(t *testing.T) {
	c, next := setup(t)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(c.Path, c.Raw, 0o640)
	_, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator})
	if !errors.Is(err, ErrChangedOnDisk) || !strings.Contains(err.Error(), "already holds the version from before that apply") {
		t.Fatalf("err = %v, want ErrChangedOnDisk saying it already holds the version before", err)
	}
	// Another edit is only a change.
	os.WriteFile(c.Path, append(bytes.Clone(next), "# later edit\n"...), 0o640)
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator}); err == nil || strings.Contains(err.Error(), "already holds") {
		t.Fatalf("err = %v, want a change that is not the version before", err)
	}
}

func TestRollbackRefusesBadBackup(t *testing.T) {
	c, next := setup(t)
	res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(res.Backup, []byte("corrupt"), 0o640)
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator}); err == nil || !strings.Contains(err.Error(), "refusing to restore") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
		t.Fatal("refused rollback touched the file")
	}
}

// TestCrashSafety stops the writer at every step, as a crash would, and
// checks that the config is always exactly the old file or the new one,
// and that a later commit or rollback still works.
func TestCrashSafety(t *testing.T) {
	errCrash := errors.New("crash")
	for _, step := range Steps {
		for _, action := range []string{"apply", "rollback"} {
			t.Run(action+"/"+string(step), func(t *testing.T) {
				c, next := setup(t)
				old := c.Raw
				hooks := &Hooks{Fault: func(s Step) error {
					if s == step {
						return errCrash
					}
					return nil
				}}
				if action == "rollback" {
					if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator}); err != nil {
						t.Fatal(err)
					}
					old, next = next, c.Raw
					_, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Hooks: hooks})
					if !errors.Is(err, errCrash) {
						t.Fatalf("err = %v", err)
					}
				} else {
					_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Hooks: hooks})
					if !errors.Is(err, errCrash) {
						t.Fatalf("err = %v", err)
					}
				}
				got, err := os.ReadFile(c.Path)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case bytes.Equal(got, old):
				case bytes.Equal(got, next):
				default:
					t.Fatalf("after a crash at %s the config is neither the old nor the new file:\n%s", step, got)
				}
				// Nothing left behind stops the next writer.
				cur, err := Load(c.Path)
				if err != nil {
					t.Fatalf("the config does not load after a crash at %s: %v", step, err)
				}
				if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: cur.Hash, Data: old, Actor: operator}); err != nil {
					t.Fatalf("commit after a crash at %s: %v", step, err)
				}
				if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, old) {
					t.Fatal("recovery commit did not write")
				}
			})
		}
	}
}

func TestCommitThroughSymlink(t *testing.T) {
	c, next := setup(t)
	link := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.Symlink(c.Path, link); err != nil {
		t.Skip(err)
	}
	if _, err := Commit(CommitRequest{Path: link, BaseHash: c.Hash, Data: next, Actor: operator}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
		t.Error("the target was not written")
	}
}

// TestRollbackRefusesPlantedBackup: a record planted in the journal (by
// whoever can write it) naming as the backup a file fgtop did not make,
// with hashes that match, restores nothing: outside the config's
// directory, beside it under another name, or with fgtop's name pattern
// in another directory. The real backup still rolls back.
func TestRollbackRefusesPlantedBackup(t *testing.T) {
	c, next := setup(t)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator}); err != nil {
		t.Fatal(err)
	}
	real, err := ResolvePath(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	evil := []byte("[agent]\nid = \"planted\"\n")
	other := t.TempDir()
	for _, planted := range []string{
		filepath.Join(other, "secret.toml"),
		real + ".evil",
		filepath.Join(filepath.Dir(real), "x.toml.fgtop-20261121T101500.000000000Z.bak"),
		filepath.Join(other, filepath.Base(real)+".fgtop-20261121T101500.000000000Z.bak"),
		filepath.Join(filepath.Dir(real), "sub", "..", filepath.Base(real)+".fgtop-20261121T101500.000000000Z.bak.x"),
		"relative/" + filepath.Base(real) + ".fgtop-20261121T101500.000000000Z.bak",
	} {
		if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
			t.Fatal(err)
		}
		if filepath.IsAbs(planted) {
			if err := os.WriteFile(planted, evil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rec := JournalRecord{Time: time.Now().Add(time.Hour), Action: ActionApply, Actor: "mallory", Origin: "cli", Role: RoleOperator,
			Config: real, OldHash: hashOf(evil), NewHash: hashOf(next), Backup: planted, Result: "ok"}
		if err := appendJournal(JournalPath(real), rec); err != nil {
			t.Fatal(err)
		}
		_, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator})
		if !errors.Is(err, ErrBadBackup) {
			t.Fatalf("backup %s: err = %v, want ErrBadBackup", planted, err)
		}
		if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
			t.Fatalf("backup %s: the refused rollback touched the file", planted)
		}
	}
}

// TestOwnBackup: the names writeBackup gives are accepted.
func TestOwnBackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.toml")
	st := statOf(t, dir)
	for i := 0; i < 3; i++ {
		name, err := writeBackup(path, []byte("x"), st, time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := ownBackup(path, name); err != nil {
			t.Fatalf("writeBackup's own %s: %v", name, err)
		}
	}
}

func statOf(t *testing.T, path string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestUndoableNothingApplied: on a config never applied to, rollback says
// there is nothing recorded (no journal, or an empty one a refused write
// left as its lock), not that a journal records no apply.
func TestUndoableNothingApplied(t *testing.T) {
	c, _ := setup(t)
	journal := JournalPath(c.Path)
	for _, tc := range []struct {
		name string
		make func()
		want string
	}{
		{"no journal", func() {}, "there is no journal beside it (" + journal + ")"},
		{"an empty journal", func() {
			if err := os.WriteFile(journal, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "its journal " + journal + " is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.make()
			_, err := Undoable(c.Path, "")
			if !errors.Is(err, ErrNothingToRollBack) {
				t.Fatalf("%v: want ErrNothingToRollBack", err)
			}
			for _, w := range []string{"nothing was applied to " + c.Path + " with fgtop here", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nwants %q", err, w)
				}
			}
		})
	}
}

// TestJournalWarning names the journal and each line it cannot read,
// counted as an editor counts them (blank lines too), and at most ten.
func TestJournalWarning(t *testing.T) {
	c, _ := setup(t)
	journal := JournalPath(c.Path)
	rec := `{"time":"2026-11-21T10:15:01Z","action":"apply","config":"` + c.Path + `"}`
	for _, tc := range []struct {
		name, text, want string
	}{
		{"every line reads", rec + "\n\n" + rec + "\n", ""},
		{"one torn", rec + "\n" + `{"time":"garbage`, "the journal " + journal + ": line 2 is not a record fgtop can read (a write torn by a crash or a full disk, or an edit?); it is skipped"},
		{"two, after a blank line", "x\n\n" + rec + "\ny\n", ": lines 1, 4 are not records fgtop can read (a write torn by a crash or a full disk, or an edit?); they are skipped"},
		{"many", strings.Repeat("x\n", 12), ": lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 (and 2 more) are not records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(journal, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got := JournalWarning(c.Path, "")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("%q\nwants %q", got, tc.want)
			}
		})
	}
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if got := JournalWarning(c.Path, ""); got != "" {
		t.Errorf("no journal: %q, want no warning", got)
	}
}

//go:build unix

package agentconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// TestSymlinkedJournalIsRefused repeats issue 16's attack on the files
// beside agent.toml: whoever may write the config's directory replaced
// the journal with a link, and root appended to (or created) the file it
// points at. The write is refused with a clear error, the link's target
// and the config are untouched.
func TestSymlinkedJournalIsRefused(t *testing.T) {
	c, next := setup(t)
	victim := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(victim, []byte("root:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	journal := JournalPath(c.Path)
	if err := os.Symlink(victim, journal); err != nil {
		t.Fatal(err)
	}
	_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("commit through a symlinked journal: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "root:secret\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
		t.Fatal("the config changed")
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator}); !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("rollback through a symlinked journal: %v", err)
	}
	if _, _, err := ReadJournal(journal); !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("reading a symlinked journal: %v", err)
	}
	// A dangling link (to a file that would be created) is refused too.
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	created := filepath.Join(t.TempDir(), "created-by-root")
	if err := os.Symlink(created, journal); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()}); err == nil {
		t.Fatal("commit through a dangling journal link")
	}
	if _, err := os.Lstat(created); err == nil {
		t.Fatal("the dangling link's target was created")
	}
	// A FIFO in the journal's place fails at once rather than hang.
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(journal, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Fatalf("commit with a FIFO journal: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("commit with a FIFO journal hangs")
	}
}

// TestBackupsAreAtMost0640: a 0666 config gave world-writable backups,
// which a rollback restores.
func TestBackupsAreAtMost0640(t *testing.T) {
	for _, tt := range []struct{ config, want os.FileMode }{{0o666, 0o640}, {0o644, 0o640}, {0o600, 0o600}, {0o640, 0o640}} {
		t.Run(tt.config.String(), func(t *testing.T) {
			c, next := setup(t)
			if err := os.Chmod(c.Path, tt.config); err != nil {
				t.Fatal(err)
			}
			res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(res.Backup)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tt.want {
				t.Fatalf("config %v: backup %v, want %v", tt.config, st.Mode().Perm(), tt.want)
			}
			// The config itself keeps its mode: that is the operator's.
			if st, _ := os.Stat(c.Path); st.Mode().Perm() != tt.config {
				t.Fatalf("config mode %v, want %v kept", st.Mode().Perm(), tt.config)
			}
		})
	}
}

// TestKillAfterRenameLeavesATrace: a kill between the rename and the
// journal record left a changed config that the journal did not know, so
// rollback had nothing to undo. The intent journaled before the rename
// now makes that write undoable; a kill before the rename leaves nothing
// to undo.
func TestKillAfterRenameLeavesATrace(t *testing.T) {
	for _, tt := range []struct {
		step    Step
		changed bool // the config is the new file after the kill
	}{
		{StepTempSynced, false}, {StepIntent, false}, {StepRenamed, true}, {StepDirSynced, true},
	} {
		t.Run(string(tt.step), func(t *testing.T) {
			c, next := setup(t)
			kill := errors.New("killed")
			_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock(),
				Hooks: &Hooks{Fault: func(s Step) error {
					if s == tt.step {
						return kill
					}
					return nil
				}}})
			if !errors.Is(err, kill) {
				t.Fatalf("commit: %v", err)
			}
			cur, _ := os.ReadFile(c.Path)
			if got := bytes.Equal(cur, next); got != tt.changed {
				t.Fatalf("config changed %v, want %v", got, tt.changed)
			}
			top, err := Undoable(c.Path, "")
			if !tt.changed {
				if !errors.Is(err, ErrNothingToRollBack) {
					t.Fatalf("nothing was written, yet undoable: %+v, %v", top, err)
				}
				return
			}
			if err != nil || top.Action != ActionApply || top.Result != "unrecorded" || top.NewHash != HashOf(next) {
				t.Fatalf("undoable after a kill at %s: %+v, %v", tt.step, top, err)
			}
			res, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
				t.Fatal("rollback did not restore the version before the killed apply")
			}
			if res.Record.Undoes == nil {
				t.Fatal("the rollback does not say what it undid")
			}
			if _, err := Undoable(c.Path, ""); !errors.Is(err, ErrNothingToRollBack) {
				t.Fatalf("after the rollback: %v", err)
			}
			// The interrupted write shows in the journal as an intent left.
			recs, _, _ := ReadJournal(JournalPath(c.Path))
			if len(recs) != 2 || recs[0].Action != ActionIntent || recs[1].Action != ActionRollback {
				t.Fatalf("journal %+v", recs)
			}
		})
	}
}

// TestUnrecordedApplyThenAnother: an apply killed after its rename, then
// another apply on top: the stack holds both, so two rollbacks walk back.
func TestUnrecordedApplyThenAnother(t *testing.T) {
	c, next := setup(t)
	now := clock()
	killed := &Hooks{Fault: func(s Step) error {
		if s == StepRenamed {
			return errors.New("killed")
		}
		return nil
	}}
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now, Hooks: killed}); err == nil {
		t.Fatal("not killed")
	}
	third := append(append([]byte(nil), next...), []byte("\n# third\n")...)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: HashOf(next), Data: third, Actor: operator, Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{next, c.Raw} {
		if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, want) {
			t.Fatalf("rollback gave %d bytes, want %d", len(b), len(want))
		}
	}
}

// TestStaleTempFilesAreRemoved: temp files a crashed write left beside
// the config are removed by the next write: only regular files of this
// config's, older than the write; a link is left alone.
func TestStaleTempFilesAreRemoved(t *testing.T) {
	c, next := setup(t)
	dir := filepath.Dir(c.Path)
	old := time.Now().Add(-time.Hour)
	stale := filepath.Join(dir, ".agent.toml.fgtop-tmp-111")
	other := filepath.Join(dir, ".other.toml.fgtop-tmp-222")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("torn"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".agent.toml.fgtop-tmp-333")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Error("the stale temp file is still there")
	}
	for _, p := range []string{other, link, target} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".agent.toml.fgtop-tmp-") && e.Name() != filepath.Base(link) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestActorNamesAreCleaned: an SSH user name with an escape sequence
// reached the terminal of whoever ran `fgtop apply` or read the journal.
func TestActorNamesAreCleaned(t *testing.T) {
	c, next := setup(t)
	evil := Actor{Name: "mallory\x1b]0;owned\x07\x1b[2J\u202e", Origin: "ssh:1.2.3.4:5 \x1b[31mSHA256:x", Role: RoleOperator, Key: "SHA256:\x9bx"}
	res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: evil, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(res.Journal)
	if bytes.Contains(raw, []byte("\x1b")) || bytes.Contains(raw, []byte(`\u001b`)) || bytes.Contains(raw, []byte(`\u202e`)) {
		t.Fatalf("the journal holds control characters:\n%s", raw)
	}
	if got := res.Record.Actor; got != "mallory?]0;owned??[2J?" {
		t.Fatalf("journaled name %q", got)
	}
	if s := evil.String(); strings.ContainsAny(s, "\x1b\x07\u202e") {
		t.Fatalf("Actor.String %q", s)
	}
	// A journal written by someone else is cleaned as it is read.
	line := `{"time":"2026-11-21T10:15:09Z","action":"apply","actor":"eve\u001b[2J","origin":"cli\u0007","role":"operator","config":"x","result":"ok"}` + "\n"
	f, err := os.OpenFile(res.Journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
	recs, _, err := ReadJournal(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Actor != "eve?[2J" || last.Origin != "cli?" {
		t.Fatalf("read back %q %q", last.Actor, last.Origin)
	}
}

func TestCleanName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"alice", "alice"},
		{"", ""},
		{"a\x1bb", "a?b"},
		{"tab\there", "tab?here"},
		{"del\x7f", "del?"},
		{"c1\u0085\u009b", "c1??"},
		{"bidi\u202ecba", "bidi?cba"},
		{"bad\xffutf8", "bad\ufffdutf8"},
		{"élodie 名前", "élodie 名前"},
		{strings.Repeat("x", 70), strings.Repeat("x", 64) + "…"},
	} {
		if got := CleanName(tt.in); got != tt.want {
			t.Errorf("CleanName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestJournalTornTail: a journal whose last write was torn before its
// newline (power lost, a full disk) must not swallow the next record: an
// apply then killed after its rename, before its own record, is still
// found from its intent and rolled back, and the torn line is counted.
// With the torn line and no readable apply, the error says lines could
// not be read.
func TestJournalTornTail(t *testing.T) {
	c, next := setup(t)
	journal := JournalPath(c.Path)
	if err := os.WriteFile(journal, []byte(`{"time":"2026-12-04T09:1`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()})
	if !errors.Is(err, ErrNothingToRollBack) || !strings.Contains(err.Error(), "1 of its line(s) cannot be read") {
		t.Fatalf("rollback with only a torn line: %v", err)
	}
	killed := errors.New("killed")
	_, err = Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock(),
		Hooks: &Hooks{Fault: func(s Step) error {
			if s == StepDirSynced {
				return killed
			}
			return nil
		}}})
	if !errors.Is(err, killed) {
		t.Fatalf("commit: %v, want it stopped after the rename", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
		t.Fatal("the config is not the new file after the rename")
	}
	recs, bad, err := ReadJournal(journal)
	if err != nil || bad != 1 || len(recs) != 1 || recs[0].Action != ActionIntent {
		t.Fatalf("journal: %+v, %d bad, %v; want the intent and the torn line", recs, bad, err)
	}
	if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()}); err != nil {
		t.Fatalf("rollback of the interrupted apply: %v", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
		t.Fatal("rollback did not restore the file")
	}
}

// TestResolvePathWords: a config path that cannot be resolved is said in
// an operator's words (not lstat's or EvalSymlinks'), and stays an
// fs.ErrNotExist where it is one (the commands' "no agent config at").
func TestResolvePathWords(t *testing.T) {
	dir := t.TempDir()
	l1, l2 := filepath.Join(dir, "l1"), filepath.Join(dir, "l2")
	if err := os.Symlink(l2, l1); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(l1, l2); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.toml")
	_, err := ResolvePath(missing)
	if !errors.Is(err, os.ErrNotExist) || err.Error() != "no such file: "+missing {
		t.Errorf("missing: %v", err)
	}
	_, err = ResolvePath(l1)
	if err == nil || err.Error() != l1+": a loop of symbolic links" {
		t.Errorf("loop: %v", err)
	}
	if _, err := Load(missing); err == nil || strings.Contains(err.Error(), "lstat") {
		t.Errorf("load of a missing file: %v", err)
	}
}

// TestCheckWarningsOfAFile: a devices slot no plugin of the node registers
// (a typo Backend.AI loads and ignores) and an empty agent id are said,
// though the file loads: a missing id already was.
func TestCheckWarningsOfAFile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Skip("no slot-based fixture here:", err)
	}
	text := strings.ReplaceAll(string(raw), `"cuda.shares" = "2.0"`, `"cuda.shares" = "2.0", "cuda.shres" = "1"`)
	text = strings.Replace(text, `id = "i-gpu-node01-b"`, `id = ""`, 1)
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "agents[1]'s id is empty") {
		t.Errorf("warnings %q: want the empty id", c.Warnings)
	}
	devs := []model.Device{{Name: "cuda", ID: "g0", Slot: model.SlotCUDAShares, Capacity: model.One}}
	got := c.UnknownSlots(devs)
	if len(got) != 2 || !strings.Contains(got[0], `unknown slot "cuda.shres": did you mean cuda.shares?`) {
		t.Errorf("unknown slots %q", got)
	}
	if c.UnknownSlots(nil) != nil {
		t.Error("slots judged without the node's devices")
	}
}

// TestRollbackChangedSaysUnreadLines: a rollback refused because the file
// changed since the apply says when journal lines cannot be read: one may
// be the record that explains the change, and --force would then restore
// the wrong version.
func TestRollbackChangedSaysUnreadLines(t *testing.T) {
	c, next := setup(t)
	if _, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(JournalPath(c.Path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-12-04T09:1`)
	f.Close()
	if err := os.WriteFile(c.Path, append(next, '\n'), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()})
	if !errors.Is(err, ErrChangedOnDisk) || !strings.Contains(err.Error(), "1 line(s) fgtop cannot read") {
		t.Fatalf("rollback of a changed file with a torn journal line: %v", err)
	}
}

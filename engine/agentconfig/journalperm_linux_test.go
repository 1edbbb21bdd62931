//go:build linux

package agentconfig

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestJournalOpenErrorWords: whatever stops the journal from being made,
// the operator reads that nothing was written and the config is
// untouched; a permission error (apply without sudo) also says where it
// needs to write and what to run it as.
func TestJournalOpenErrorWords(t *testing.T) {
	const config = "/etc/backend.ai/agent.toml"
	journal := JournalPath(config)
	open := func(errno syscall.Errno) error { return &fs.PathError{Op: "open", Path: journal, Err: errno} }
	untouched := "nothing was written: " + config + " is untouched"
	for _, tc := range []struct {
		name string
		err  error
		want []string
		not  []string
	}{
		{"no permission", open(syscall.EACCES), []string{
			"cannot write beside the config: no permission to write in /etc/backend.ai",
			"the journal agent.toml.fgtop-journal.jsonl cannot be made",
			untouched, "run fgtop as the config's owner or as root (sudo)", "permission denied",
		}, []string{"read-only"}},
		{"not permitted", open(syscall.EPERM), []string{"no permission to write in /etc/backend.ai", untouched, "as root (sudo)"}, nil},
		{"read-only file system", open(syscall.EROFS), []string{
			"cannot write beside the config: /etc/backend.ai is on a read-only file system (the journal agent.toml.fgtop-journal.jsonl cannot be made)",
			untouched,
		}, []string{"sudo"}},
		{"anything else", open(syscall.EIO), []string{"cannot open the journal " + journal, untouched, "input/output error"}, []string{"sudo", "read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := journalOpenError(journal, config, tc.err)
			if !errors.Is(err, tc.err.(*fs.PathError).Err) {
				t.Errorf("%v does not wrap %v", err, tc.err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nwants %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q\nsays %q, which is not the cause", err, n)
				}
			}
		})
	}
}

// TestCommitWithoutWriteAccess applies as a user who may read the config
// but not write its directory (fgtop run without sudo), then rolls back
// with a journal it may not read: real permission
// bits, so run as root, where they stop nothing, it re-runs itself as user
// nobody (65534), and is skipped where that is not possible.
func TestCommitWithoutWriteAccess(t *testing.T) {
	// setup reads its fixture from testdata/, which nobody may not be
	// able to read where it is: a copy goes beside the binary.
	if testfix.ReexecAsNobody(t, filepath.Join("testdata", "agent.multi-agent.device-based.toml")) {
		return
	}
	c, next := setup(t)
	dir := filepath.Dir(c.Path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if err == nil {
		t.Skip("permission bits do not stop this user")
	}
	for _, w := range []string{"no permission to write in " + dir, "nothing was written: " + c.Path + " is untouched", "as root (sudo)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q\nwants %q", err, w)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v does not wrap the permission error", err)
	}
	if b, err := os.ReadFile(c.Path); err != nil || !bytes.Equal(b, c.Raw) {
		t.Errorf("the config changed (err %v)", err)
	}

	// A journal this user may not read (root's, 0600): rollback says
	// what to run it as.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(JournalPath(c.Path), nil, 0); err != nil {
		t.Fatal(err)
	}
	_, err = Undoable(c.Path, "")
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "run fgtop as the config's owner or as root") {
		t.Errorf("rollback of an unreadable journal: %v; want the permission error and what to run fgtop as", err)
	}
}

// TestCommitRefusesConfigItCannotWrite: a user who may write the config's
// directory but not the file (its owner made it read-only) is refused
// before anything is made beside it. The write is a rename, which the
// directory alone allows: it used to replace the file, and a root-owned
// config became that user's.
func TestCommitRefusesConfigItCannotWrite(t *testing.T) {
	if testfix.ReexecAsNobody(t, filepath.Join("testdata", "agent.multi-agent.device-based.toml")) {
		return
	}
	c, next := setup(t)
	if err := os.Chmod(c.Path, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if err == nil {
		if os.Geteuid() == 0 {
			t.Skip("permission bits do not stop this user")
		}
		t.Fatal("a config this user may not write was replaced")
	}
	for _, w := range []string{"no permission to write " + c.Path + " (mode 0444", "nothing was written", "as root (sudo)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q\nwants %q", err, w)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v does not wrap the permission error", err)
	}
	if b, err := os.ReadFile(c.Path); err != nil || !bytes.Equal(b, c.Raw) {
		t.Errorf("the config changed (err %v)", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(c.Path), "agent.toml.*"))
	if len(left) > 0 {
		t.Errorf("the refusal left %v beside the config", left)
	}
}

// TestCommitRefusesImmutableConfig: an immutable agent.toml (chattr +i)
// stops even root's rename. The write used to journal its intent first,
// fail at the rename, and leave the intent "pending" for good (read as an
// interrupted write); it is now refused before anything is made beside
// it, and says why root could not write it.
func TestCommitRefusesImmutableConfig(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	c, next := setup(t)
	if out, err := exec.Command("chattr", "+i", c.Path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", c.Path).Run() })
	_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if err == nil || !strings.Contains(err.Error(), "immutable") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("commit on an immutable config: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(c.Path), "agent.toml.*"))
	if len(left) > 0 {
		t.Errorf("the refusal left %v beside the config (a pending intent in a journal?)", left)
	}
}

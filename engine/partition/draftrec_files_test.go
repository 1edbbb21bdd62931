//go:build unix

package partition

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// TestSymlinkedDraftRecordIsRefused: the draft record followed symlinks,
// so whoever may write the config's directory could make root empty and
// write any file. Taking the draft now fails with a clear error and the
// link's target is untouched.
func TestSymlinkedDraftRecordIsRefused(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	victim := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(victim, []byte("ssh-ed25519 AAAA precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, DraftRecordPath(c.Path)); err != nil {
		t.Fatal(err)
	}
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	_, err := d.Open(operator, false)
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Open through a symlinked record: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "ssh-ed25519 AAAA precious\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if _, held := DraftHolder(c.Path); held {
		t.Fatal("a symlinked record names a holder")
	}
}

// TestDraftRecordIsReplacedWhole: the record is written by a temp file
// and a rename (a reader never sees half of it), mode 0640, and leaves no
// temp file behind; stale temp files of the record are removed.
func TestDraftRecordIsReplacedWhole(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	rec := DraftRecordPath(c.Path)
	dir := filepath.Dir(rec)
	stale := filepath.Join(dir, "."+filepath.Base(rec)+".fgtop-tmp-9")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	s, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.Stat(rec)
	if err != nil {
		t.Fatal(err)
	}
	if held.Mode().Perm() != 0o640 || held.Size() == 0 {
		t.Fatalf("record mode %v size %d", held.Mode().Perm(), held.Size())
	}
	s.Close()
	free, err := os.Stat(rec)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(held, free) {
		t.Fatal("the record was rewritten in place, not replaced")
	}
	if free.Size() != 0 {
		t.Fatalf("a released record holds %d bytes", free.Size())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "fgtop-tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// The record can be taken again by another desk (another process's
	// view): the lock follows the replaced file.
	d2 := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	s2, err := d2.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	// A FIFO in the record's place fails at once rather than hang.
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(rec, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := d2.Open(operator, false); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Open with a FIFO record: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open with a FIFO record hangs")
	}
}

// TestDraftHolderNameIsCleaned: a record naming its holder with terminal
// controls (written by an SSH user name, or by hand) prints clean.
func TestDraftHolderNameIsCleaned(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	host, _ := os.Hostname()
	b, _ := json.Marshal(draftRecord{Token: "t", Actor: agentconfig.Actor{Name: "eve\x1b]0;x\x07", Origin: "ssh:\x1b[2J", Role: agentconfig.RoleOperator},
		Since: time.Now(), PID: os.Getpid(), Host: host})
	if err := os.WriteFile(DraftRecordPath(c.Path), b, 0o640); err != nil {
		t.Fatal(err)
	}
	h, held := DraftHolder(c.Path)
	if !held || h.Actor.Name != "eve?]0;x?" || strings.ContainsAny(h.String(), "\x1b\x07") {
		t.Fatalf("holder %q (%v)", h.String(), held)
	}
	// And a name with controls is cleaned before it is written.
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	if err := os.Remove(DraftRecordPath(c.Path)); err != nil {
		t.Fatal(err)
	}
	s, err := d.Open(agentconfig.Actor{Name: "mallory\x1b[31m", Role: agentconfig.RoleOperator}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, _ := os.ReadFile(DraftRecordPath(c.Path))
	if strings.Contains(string(raw), `\u001b`) {
		t.Fatalf("record %s", raw)
	}
}

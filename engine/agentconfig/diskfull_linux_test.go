//go:build linux

package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fgtop/fgtop/model"
)

const diskFullEnv = "FGTOP_DISKFULL_DIR"

// TestCommitDiskFull applies a change on a file system that is really
// full: a 256 KiB tmpfs, filled but for two pages, mounted in a private
// user and mount namespace (so it needs no privileges and cannot leak a
// mount). The write of the new file fails with ENOSPC; the config must be
// untouched, the temp file removed, the error clear and wrapping ENOSPC,
// and the journal without a record. Once space is freed the same apply
// succeeds. Skipped where namespaces are not allowed.
func TestCommitDiskFull(t *testing.T) {
	if dir := os.Getenv(diskFullEnv); dir != "" {
		diskFullChild(t, dir)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(exe, "-test.run=^TestCommitDiskFull$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), diskFullEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	switch {
	case err != nil && (strings.Contains(out, "--- FAIL") || strings.Contains(out, "panic")):
		t.Fatalf("in the namespace: %v\n%s", err, out)
	case err != nil:
		t.Skipf("cannot run in a private user+mount namespace here: %v\n%s", err, out)
	case strings.Contains(out, "--- SKIP: TestCommitDiskFull"):
		t.Skipf("skipped in the namespace:\n%s", out)
	case !strings.Contains(out, "--- PASS: TestCommitDiskFull"):
		t.Fatalf("in the namespace, the test did not pass:\n%s", out)
	}
	t.Logf("in a private namespace:\n%s", out)
}

func diskFullChild(t *testing.T, dir string) {
	// Nothing mounted here may reach the parent's namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Skipf("cannot make mounts private: %v", err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k,mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)

	raw, err := os.ReadFile(filepath.Join("testdata", "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	d.Agents[0].Alloc.Devices["cuda"] = []model.DeviceID{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"}
	small, _, err := Render(c, d)
	if err != nil {
		t.Fatal(err)
	}
	// A long comment makes the new file larger than the room left.
	next := append(slices.Clip(small), "\n# "+strings.Repeat("x", 64<<10)+"\n"...)

	// Fill the file system, then free two pages: enough for the journal
	// lock and the backup of the old file, not for the new one.
	filler := filepath.Join(dir, "filler")
	free := fill(t, filler)
	if err := os.Truncate(filler, free-2*4096); err != nil {
		t.Fatal(err)
	}

	_, err = Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if err == nil {
		t.Fatal("the apply succeeded on a full disk")
	}
	t.Logf("error: %v", err)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "write agent config") || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("error %q: want one that says the config write failed for lack of space (and wraps ENOSPC)", err)
	}
	wantUntouched(t, err, path, raw, 0,
		"(the temp file and the backup this attempt made are removed); the journal beside it, agent.toml.fgtop-journal.jsonl, is empty: it records nothing and is harmless")

	// Room for the backup and the new file, not for the journal's intent
	// record: nothing is replaced, and the words are an operator's.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	free = fill(t, filler)
	if err := os.Truncate(filler, free-2*4096); err != nil {
		t.Fatal(err)
	}
	_, err = Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: small, Actor: operator, Now: clock()})
	t.Logf("error: %v", err)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "cannot record the change in the journal "+JournalPath(path)+" before making it") || strings.Contains(err.Error(), "intent") {
		t.Errorf("error %q: want one that says the change could not be journaled, in an operator's words (and wraps ENOSPC)", err)
	}
	wantUntouched(t, err, path, raw, 0, "(the temp file and the backup this attempt made are removed); the journal beside it")

	// The same with room in the journal's last page for part of the
	// record: the torn part is taken back, not left as a line that every
	// later rollback cannot read.
	pad := bytes.Repeat([]byte("\n"), 4000)
	if err := os.WriteFile(JournalPath(path), pad, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	free = fill(t, filler)
	if err := os.Truncate(filler, free-2*4096); err != nil {
		t.Fatal(err)
	}
	_, err = Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: small, Actor: operator, Now: clock()})
	t.Logf("error: %v", err)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "cannot record the change in the journal") {
		t.Errorf("error %q: want one that says the change could not be journaled (and wraps ENOSPC)", err)
	}
	wantUntouched(t, err, path, raw, 0, "(the temp file and the backup this attempt made are removed)")
	if b, err := os.ReadFile(JournalPath(path)); err != nil || !bytes.Equal(b, pad) {
		t.Errorf("the journal is not as it was: %d bytes, %q at its end (err %v)", len(b), b[min(len(b), len(pad)):], err)
	}

	// Room again: the same apply goes through and is journaled once.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock()})
	if err != nil {
		t.Fatalf("apply with room again: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, next) {
		t.Error("the config is not the new file")
	}
	recs, bad, err := ReadJournal(res.Journal)
	if err != nil || bad != 0 || len(recs) != 1 || recs[0].Result != "ok" {
		t.Errorf("journal after the apply: %+v (bad %d, err %v)", recs, bad, err)
	}

	// A rollback on a full disk, with room for its backup of the applied
	// file but not for the file it restores: it says the applied file
	// stands.
	free = fill(t, filler)
	if err := os.Truncate(filler, free-int64(len(next)+4095)/4096*4096); err != nil {
		t.Fatal(err)
	}
	_, err = Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: clock()})
	t.Logf("rollback error: %v", err)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("rollback error %q: want ENOSPC", err)
	}
	wantUntouched(t, err, path, next, 1, "(the temp file and the backup this attempt made are removed)")
	if strings.Contains(err.Error(), "is empty") {
		t.Errorf("rollback error %q: the journal is not empty", err)
	}
}

// wantUntouched checks a write that failed for lack of room: the error
// says the config is untouched and what was cleaned up (say), the file is
// still want, no temp file is left, backups are the wantBak there were,
// and the journal records nothing more.
func wantUntouched(t *testing.T, err error, path string, want []byte, wantBak int, say string) {
	t.Helper()
	if err == nil {
		t.Fatal("the write succeeded on a full disk")
	}
	if w := "; nothing was written: " + path + " is untouched " + say; !strings.Contains(err.Error(), w) {
		t.Errorf("error %q\nwants %q", err, w)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, want) {
		t.Errorf("the config changed (err %v)", err)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	baks := 0
	for _, e := range ents {
		names = append(names, e.Name())
		if strings.Contains(e.Name(), "fgtop-tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
		if strings.HasSuffix(e.Name(), ".bak") {
			baks++
		}
	}
	t.Logf("directory after the failed write: %v", names)
	if baks != wantBak {
		t.Errorf("%d backup(s) beside the config, want %d: a failed write leaves none of its own", baks, wantBak)
	}
	recs, bad, err := ReadJournal(JournalPath(path))
	if err != nil || bad != 0 || len(recs) != wantBak {
		t.Errorf("the journal after the failed write: %+v (%d unreadable line(s), err %v); want %d record(s)", recs, bad, err, wantBak)
	}
}

// fill writes to path until the file system is full and returns the
// file's size then.
func fill(t *testing.T, path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{0xAA}, 4096)
	var n int64
	for {
		w, err := f.Write(chunk)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > 64<<20 {
			t.Fatal(fmt.Errorf("wrote %d bytes without filling a 256 KiB tmpfs", n))
		}
	}
}

// TestCommitDiskFullAtCrashPoints makes the writer stop with ENOSPC at
// each step through the Hooks (which leave things as a crash there would:
// no clean-up). Whatever the step, up to the rename the config is the old
// file and no journal record claims the apply.
func TestCommitDiskFullAtCrashPoints(t *testing.T) {
	for _, step := range []Step{StepBackup, StepTempPartial, StepTempWritten, StepTempSynced} {
		t.Run(string(step), func(t *testing.T) {
			c, next := setup(t)
			_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: clock(),
				Hooks: &Hooks{Fault: func(s Step) error {
					if s == step {
						return syscall.ENOSPC
					}
					return nil
				}}})
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), string(step)) {
				t.Fatalf("error %v: want ENOSPC at %s", err, step)
			}
			if b, err := os.ReadFile(c.Path); err != nil || !bytes.Equal(b, c.Raw) {
				t.Errorf("the config changed (err %v)", err)
			}
			if recs, _, err := ReadJournal(JournalPath(c.Path)); err == nil && len(recs) > 0 {
				t.Errorf("the journal records the failed apply: %+v", recs)
			}
		})
	}
}

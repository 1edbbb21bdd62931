package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyConfigRefused: a config chmod'ed read-only (its owner may
// not write it) was replaced all the same: the rename needs only the
// directory's permission, and root writes any file. Such a file is now
// refused, untouched and with nothing left beside it, unless the write
// is forced (ReadOnlyOK, rollback's Force), which keeps its mode and
// journals the write as forced.
func TestReadOnlyConfigRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o444, 0o440, 0o400} {
		t.Run(mode.String(), func(t *testing.T) {
			c, next := setup(t)
			if err := os.Chmod(c.Path, mode); err != nil {
				t.Fatal(err)
			}
			now := clock()
			_, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now})
			if !errors.Is(err, ErrReadOnly) {
				t.Fatalf("commit of a %04o config: %v, want ErrReadOnly", mode, err)
			}
			for _, w := range []string{"refusing to apply", c.Path + fmt.Sprintf(" is read-only (mode %04o", mode), "chmod u+w " + c.Path, "--force", "nothing was written"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
				t.Error("the read-only config was changed")
			}
			if baks, _ := filepath.Glob(c.Path + ".fgtop-*.bak"); len(baks) != 0 {
				t.Errorf("backups left: %v", baks)
			}
			if ReadOnlyWhy(c.Path) == "" {
				t.Error("ReadOnlyWhy says nothing of it")
			}
			res, err := Commit(CommitRequest{Path: c.Path, BaseHash: c.Hash, Data: next, Actor: operator, Now: now, ReadOnlyOK: true})
			if err != nil {
				t.Fatalf("forced: %v", err)
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, next) {
				t.Error("forced, the config is not the new file")
			}
			if st, _ := os.Stat(c.Path); st.Mode().Perm() != mode {
				t.Errorf("forced, the mode is %04o, want %04o kept", st.Mode().Perm(), mode)
			}
			if !res.Record.Forced {
				t.Error("the forced write is not journaled as forced")
			}
			// The rollback is a write of it too.
			if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now}); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "refusing to roll back") {
				t.Fatalf("rollback of a %04o config: %v, want ErrReadOnly", mode, err)
			}
			if _, err := Rollback(RollbackRequest{Path: c.Path, Actor: operator, Now: now, Force: true}); err != nil {
				t.Fatalf("forced rollback: %v", err)
			}
			if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
				t.Error("the forced rollback did not restore the config")
			}
			if st, _ := os.Stat(c.Path); st.Mode().Perm() != mode {
				t.Errorf("rolled back, the mode is %04o, want %04o kept", st.Mode().Perm(), mode)
			}
		})
	}
	// A writable one is not said to be read-only.
	c, _ := setup(t)
	if w := ReadOnlyWhy(c.Path); w != "" {
		t.Errorf("a 0640 config: %q", w)
	}
}

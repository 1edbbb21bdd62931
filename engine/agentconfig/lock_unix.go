//go:build unix

package agentconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fgtop/fgtop/internal/safefile"
)

// lockJournal takes an exclusive flock on the journal file (creating it),
// so that two fgtop processes never check-and-write the config at once.
// config is the file the journal is of, for the error.
func lockJournal(path, config string) (func(), error) {
	// Never through a symlink: whoever may write the config's directory
	// could otherwise make root create or lock any file.
	f, err := safefile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		return nil, journalOpenError(path, config, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock journal: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// journalOpenError says why the journal at path cannot be opened, before
// anything is written: the operator reading it must learn that the config
// is untouched and, for the common causes, what to do (a write without
// sudo is the usual one; README's Permissions paragraph).
func journalOpenError(path, config string, err error) error {
	dir, name := filepath.Dir(path), filepath.Base(path)
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cannot write beside the config: %s is on a read-only file system (the journal %s cannot be made); nothing was written: %s is untouched: %w", dir, name, config, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot write beside the config: no permission to write in %s (the journal %s cannot be made or opened); nothing was written: %s is untouched; run fgtop as the config's owner or as root (sudo): %w", dir, name, config, err)
	}
	return fmt.Errorf("cannot open the journal %s; nothing was written: %s is untouched: %w", path, config, err)
}

// mayReplace refuses a config this process could not write itself. The
// write is a rename, which needs only the directory: without this, a user
// who may write the directory but not the file (one its owner made
// read-only, or root's) would replace it, and the file would become that
// user's. A config that does not exist is left to the read that follows.
func mayReplace(path string) error {
	err := syscall.Access(path, 2) // W_OK
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cannot write the config: %s is on a read-only file system; nothing was written: it is untouched: %w", path, err)
	case errors.Is(err, syscall.EPERM):
		// Not the mode: an attribute no user may write through, root
		// included.
		return fmt.Errorf("cannot write the config: %s is immutable or append-only (lsattr shows it; chattr -i or -a lifts it); nothing was written: it is untouched: %w", path, err)
	case errors.Is(err, fs.ErrPermission):
		who := ""
		if st, serr := os.Stat(path); serr == nil {
			who = fmt.Sprintf(" (mode %04o", st.Mode().Perm())
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				who += fmt.Sprintf(", owner uid %d", sys.Uid)
			}
			who += ")"
		}
		return fmt.Errorf("no permission to write %s%s: fgtop replaces the config only where it could write the file itself; nothing was written: it is untouched; run fgtop as the config's owner or as root (sudo), or make it writable if read-only was not meant: %w", path, who, err)
	}
	return nil
}

// copyOwner gives path the owner of st when we are allowed to (root);
// otherwise the file stays ours, which is the only owner we can give it.
func copyOwner(path string, st os.FileInfo) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return
	}
	_ = os.Lchown(path, int(sys.Uid), int(sys.Gid))
}

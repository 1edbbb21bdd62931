//go:build unix

package agentconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fgtop/fgtop/internal/safefile"
)

// lockJournal takes an exclusive flock on the journal file (creating it),
// so that two fgtop processes never check-and-write the config at once.
func lockJournal(path string) (func(), error) {
	// Never through a symlink: whoever may write the config's directory
	// could otherwise make root create or lock any file.
	f, err := safefile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		if errors.Is(err, syscall.EROFS) {
			return nil, fmt.Errorf("cannot write beside the config: %s is on a read-only file system (the journal %s cannot be made): %w", filepath.Dir(path), filepath.Base(path), err)
		}
		return nil, fmt.Errorf("open journal: %w", err)
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

// copyOwner gives path the owner of st when we are allowed to (root);
// otherwise the file stays ours, which is the only owner we can give it.
func copyOwner(path string, st os.FileInfo) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return
	}
	_ = os.Lchown(path, int(sys.Uid), int(sys.Gid))
}

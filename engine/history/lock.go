package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fgtop/fgtop/internal/safefile"
)

// ErrLocked: another process records into the directory.
var ErrLocked = errors.New("another process records into this history directory")

// lockDir takes the directory's writer lock (an flock on DIR/LOCK, which
// the kernel releases when the process dies, SIGKILL included) and writes
// the pid into it for whoever finds it taken. LOCK is opened without
// following a link and without blocking, and written only when it is a
// regular file of one name: whoever may write the directory could
// otherwise make a recorder (root, often) truncate any file a link or a
// hard link names, or hang on a FIFO.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := safefile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		if errors.Is(err, safefile.ErrNotRegular) {
			return nil, fmt.Errorf("history lock: %w; fgtop writes only a LOCK of its own: remove it", err)
		}
		return nil, fmt.Errorf("history lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := safefile.ReadFileNoFollow(path, 64)
			if pid := strings.TrimSpace(string(b)); pid != "" && isDigits(pid) {
				return nil, fmt.Errorf("%s: %w (pid %s)", dir, ErrLocked, pid)
			}
			return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("history lock %s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
			f.Close()
			return nil, fmt.Errorf("history lock %s: the file has %d names (a hard link to another file?): refusing to write it; remove it", path, sys.Nlink)
		}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// writerActive reports whether some process holds the directory's
// writer lock now. A LOCK that is not a regular file (a FIFO, a link) is
// no lock fgtop holds, and is not waited on.
func writerActive(dir string) bool {
	f, err := safefile.Open(filepath.Join(dir, lockName), true)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

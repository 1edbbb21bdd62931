// Package safefile opens the files fgtop is told about by someone else: a
// theme, authorized_keys, agent.toml, a mock device file, the journal and
// draft record beside agent.toml. Every such read goes through ReadFile, so
// a path that names a device (/dev/zero), a FIFO or /dev/kmsg is refused at
// once instead of filling memory or hanging the reader, and a huge file is
// refused instead of read whole.
//
// Errors name the path and what is wrong with it, never the file's
// content.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Errors ReadFile and OpenFile wrap.
var (
	// ErrNotRegular: the path names a directory, a device, a FIFO, a
	// socket (or, for OpenFile with NoFollow, a symlink).
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the limit the caller gave.
	ErrTooLarge = errors.New("file too large")
)

// ReadFile reads a whole regular file of at most limit bytes. It follows
// symlinks (agent.toml is often one) but refuses anything that is not a
// regular file once opened: the open itself is non-blocking, so naming a
// FIFO neither hangs nor wakes a writer, and the check is made on the
// opened file (fstat), so it cannot be raced by swapping the path.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

// ReadFileNoFollow is ReadFile refusing a symlink as the last component
// of path: for the files fgtop keeps beside agent.toml, which whoever may
// write that directory could otherwise point anywhere.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	f, err := Open(path, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

// Open opens path read-only as ReadFile does (non-blocking, regular files
// only; with noFollow, a symlink is refused too).
func Open(path string, noFollow bool) (*os.File, error) {
	return OpenFile(path, os.O_RDONLY, 0, noFollow)
}

// OpenFile opens path with flag (os.O_WRONLY|os.O_APPEND|os.O_CREATE ...)
// and perm, non-blocking, and refuses it unless it is a regular file. With
// noFollow a symlink as the last component is refused (O_NOFOLLOW): a
// file fgtop creates or appends to beside a config must be that file, not
// one a link in a writable directory points at. (O_NONBLOCK changes
// nothing for a regular file, the only kind returned.)
func OpenFile(path string, flag int, perm fs.FileMode, noFollow bool) (*os.File, error) {
	flag |= oNonblock
	if noFollow {
		flag |= oNoFollow
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		if noFollow && isLinkErr(path, err) {
			return nil, fmt.Errorf("%s: %w (a symlink: refusing to follow it)", path, ErrNotRegular)
		}
		return nil, err //nolint:wrapcheck // *PathError already names the path
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err //nolint:wrapcheck // *PathError already names the path
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, Kind(st.Mode()))
	}
	return f, nil
}

func readAll(f *os.File, path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = 1
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err //nolint:wrapcheck // *PathError already names the path
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes; the limit is %d)", path, ErrTooLarge, st.Size(), limit)
	}
	// The size can grow between the stat and the read: read one byte more
	// than the limit to tell.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (more than %d bytes)", path, ErrTooLarge, limit)
	}
	return b, nil
}

// Kind names a non-regular file's type for an error ("a FIFO").
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "not a plain file"
	}
}

// isLinkErr tells whether an open with O_NOFOLLOW failed because the last
// component is a symlink (ELOOP on Linux, EMLINK on some BSDs).
func isLinkErr(path string, err error) bool {
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	st, lerr := os.Lstat(path)
	return lerr == nil && st.Mode()&fs.ModeSymlink != 0
}

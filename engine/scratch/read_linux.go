//go:build linux

package scratch

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// openat2(2) resolve flags (linux/openat2.h).
const (
	resolveNoMagicLinks = 0x02
	resolveNoSymlinks   = 0x04
	resolveBeneath      = 0x08
)

// openHow is struct open_how.
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64
}

// openat2Off is set once the kernel (or a seccomp filter) turns out not to
// offer openat2; from then on the openat chain is used.
var openat2Off atomic.Bool

// fileFlags open resource.txt: O_NONBLOCK so a FIFO planted there cannot
// block a worker (it has no effect on regular files), O_NOCTTY for the same
// reason with a terminal device.
const fileFlags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK | syscall.O_NOCTTY

// rootDir is an open scratch root: kernel files are opened relative to its
// descriptor, so a root replaced by another directory mid-scan is not mixed
// with the old one.
type rootDir struct {
	f    *os.File
	fd   int
	path string
}

// openRoot opens a root (following the root path itself if it is a
// symlink: the operator configured it). Its listing is read in chunks with
// readNames while workers already read the kernels listed.
func openRoot(path string) (*rootDir, error) {
	// O_DIRECTORY: a path that names a FIFO (a mistyped --scratch-root)
	// fails with ENOTDIR instead of blocking in open(2) for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &rootDir{f: f, fd: int(f.Fd()), path: path}, nil
}

func (d *rootDir) close() { d.f.Close() }

// readNames returns up to n more names from the root's listing; io.EOF at
// the end. Names only: a stat or a DirEntry per entry would cost more than
// the filtering it allows, since reading a name that is not a directory
// fails cheaply.
func (d *rootDir) readNames(n int) ([]string, error) { return d.f.Readdirnames(n) }

// readFile opens relz (kid/config/resource.txt followed by a NUL byte, so
// the kernel can take the string as it is) below the root refusing every
// symlink, and reads it into buf (grown if needed); with stat, also its
// modification time. Errors are the raw errno (ENOENT, ELOOP, EACCES, ...)
// or errNotRegular.
func (d *rootDir) readFile(relz string, buf []byte, stat bool) (fileRead, error) {
	fd, err := openBeneath(d.fd, relz)
	if err != nil {
		return fileRead{}, err
	}
	defer closeFD(fd)
	return readFD(fd, buf, stat)
}

func closeFD(fd int) {
	// close(2) is never retried on EINTR on Linux: the descriptor is gone.
	_ = syscall.Close(fd)
}

// openBeneath opens relz (NUL-terminated) below dirfd with no symlink
// followed.
func openBeneath(dirfd int, relz string) (int, error) {
	rel := relz[:len(relz)-1]
	if sysOpenat2 != 0 && !openat2Off.Load() {
		how := openHow{flags: fileFlags, resolve: resolveBeneath | resolveNoSymlinks | resolveNoMagicLinks}
		fd, err := openat2(dirfd, relz, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.E2BIG):
			openat2Off.Store(true)
		case errors.Is(err, syscall.EPERM):
			// Docker's older seccomp profiles answer EPERM for system calls
			// they do not know; file permissions answer EACCES. If the chain
			// works, openat2 is filtered here.
			fd, err2 := openChain(dirfd, rel)
			if err2 == nil {
				openat2Off.Store(true)
			}
			return fd, err2
		default:
			return -1, err
		}
	}
	return openChain(dirfd, rel)
}

// openat2 calls openat2(2); pathz must end with a NUL byte (and hold no
// other): it is passed to the kernel without a copy.
func openat2(dirfd int, pathz string, how *openHow) (int, error) {
	if len(pathz) == 0 || pathz[len(pathz)-1] != 0 {
		return -1, syscall.EINVAL
	}
	p := unsafe.StringData(pathz)
	for {
		r, _, e := syscall.Syscall6(sysOpenat2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

// openChain is the fallback without openat2: one openat per component, each
// with O_NOFOLLOW, so no symlink is followed and there is still no
// check-then-use window. It costs two extra opens and closes per file.
func openChain(dirfd int, rel string) (int, error) {
	cur := dirfd
	for {
		comp, rest, more := strings.Cut(rel, "/")
		flags := fileFlags | syscall.O_NOFOLLOW
		if more {
			flags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_DIRECTORY | syscall.O_NOFOLLOW
		}
		fd, err := openatRetry(cur, comp, flags)
		if cur != dirfd {
			closeFD(cur)
		}
		if err != nil {
			return -1, err
		}
		if !more {
			return fd, nil
		}
		cur, rel = fd, rest
	}
}

func openatRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}

// readFD reads an open file whole into buf (grown as needed): open, read,
// close, like the floor benchmark. A read that returns less than asked is
// taken as the end of the file, which holds for regular files on local file
// systems (scratch directories are local: the agent bind-mounts them); a
// torn read elsewhere would show as a parse error until the next change.
//
// With stat, an fstat gives the modification time. Full scans do without:
// it cost 10-15% of the bare open/read/close on the development machine.
func readFD(fd int, buf []byte, stat bool) (fileRead, error) {
	var res fileRead
	if stat {
		var st syscall.Stat_t
		if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
			return fileRead{}, err
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return fileRead{}, errNotRegular
		}
		res.modTime = time.Unix(st.Mtim.Unix())
		if st.Size > maxFileSize {
			return fileRead{}, errTooLarge
		}
	}
	sized := stat
	if cap(buf) < minReadBuf {
		buf = make([]byte, 0, minReadBuf)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxFileSize {
				return fileRead{}, errTooLarge
			}
			grow := len(buf)
			if !sized {
				// Larger than a real resource.txt: ask for the size once,
				// so that a runaway file is refused without reading it and
				// a large one is read with one allocation.
				sized = true
				var st syscall.Stat_t
				if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err == nil {
					if st.Size > maxFileSize {
						return fileRead{}, errTooLarge
					}
					grow = max(grow, int(st.Size)+1-len(buf))
				}
			}
			buf = slices.Grow(buf, grow)
		}
		want := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err == syscall.EISDIR || (err == syscall.EAGAIN && !isRegular(fd)) {
				return fileRead{}, errNotRegular
			}
			return fileRead{}, err
		}
		buf = buf[:len(buf)+max(n, 0)]
		if n < want {
			break
		}
	}
	if len(buf) == 0 && !stat && !isRegular(fd) {
		// A FIFO without a writer reads as empty (it was opened
		// O_NONBLOCK); only an empty read pays for the fstat that tells.
		return fileRead{}, errNotRegular
	}
	res.data, res.size = buf, int64(len(buf))
	return res, nil
}

// isRegular reports whether fd is a regular file (false when fstat fails).
func isRegular(fd int) bool {
	var st syscall.Stat_t
	if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return false
	}
	return st.Mode&syscall.S_IFMT == syscall.S_IFREG
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

//go:build unix && !linux

package scratch

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// rootDir is an open scratch root. Outside Linux there is no openat, so
// files are opened by path: every directory component is checked with lstat
// and the file opened with O_NOFOLLOW, which leaves a check-then-use window
// on the directories. fgtop's production target is Linux.
type rootDir struct {
	f    *os.File
	path string
}

func openRoot(path string) (*rootDir, error) {
	// O_DIRECTORY: a path that names a FIFO (a mistyped --scratch-root)
	// fails with ENOTDIR instead of blocking in open(2) for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &rootDir{f: f, path: path}, nil
}

func (d *rootDir) close() { d.f.Close() }

// readNames returns up to n more names from the root's listing; io.EOF at
// the end. Names only: a stat or a DirEntry per entry would cost more than
// the filtering it allows, since reading a name that is not a directory
// fails cheaply.
func (d *rootDir) readNames(n int) ([]string, error) { return d.f.Readdirnames(n) }

func (d *rootDir) readFile(relz string, buf []byte, stat bool) (fileRead, error) {
	rel := strings.TrimSuffix(relz, "\x00")
	comps := strings.Split(rel, "/")
	p := d.path
	for _, c := range comps[:len(comps)-1] {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return fileRead{}, unwrapErrno(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fileRead{}, syscall.ELOOP
		}
		if !fi.IsDir() {
			return fileRead{}, syscall.ENOTDIR
		}
	}
	f, err := os.OpenFile(filepath.Join(d.path, rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fileRead{}, unwrapErrno(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileRead{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileRead{}, errNotRegular
	}
	var res fileRead
	if stat {
		res.modTime = fi.ModTime()
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxFileSize {
				return fileRead{}, errTooLarge
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileRead{}, err
		}
	}
	res.data, res.size = buf, int64(len(buf))
	return res, nil
}

// unwrapErrno returns the errno inside a *PathError, so callers classify
// errors the same way on every platform.
func unwrapErrno(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

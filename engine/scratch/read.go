package scratch

import (
	"errors"
	"time"
)

// maxFileSize bounds what is read for one resource.txt. Real files are a
// few KiB; a runaway file (or a device node planted there) must not take
// the process's memory with it.
const maxFileSize = 16 << 20

// minReadBuf is the smallest read buffer: real files (~3 KB) fit in one
// read.
const minReadBuf = 8 << 10

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large for a resource.txt")
)

// fileRead is what readFile returns.
type fileRead struct {
	data    []byte
	size    int64
	modTime time.Time // zero unless asked for
}

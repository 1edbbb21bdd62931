//go:build linux

package scratch

import (
	"syscall"
	"unsafe"
)

// openRaw is openat(AT_FDCWD, pathz, O_RDONLY|O_CLOEXEC) with a
// NUL-terminated path: the least an open can cost from Go.
func openRaw(pathz []byte) (int, error) {
	for {
		fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(&pathz[0])),
			syscall.O_RDONLY|syscall.O_CLOEXEC, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(fd), nil
	}
}

// atFDCWD is AT_FDCWD (-100); a variable, because a negative constant does
// not convert to uintptr.
var atFDCWD = -0x64

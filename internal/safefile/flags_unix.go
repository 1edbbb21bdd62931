//go:build unix

package safefile

import "syscall"

const (
	oNonblock = syscall.O_NONBLOCK
	oNoFollow = syscall.O_NOFOLLOW
)

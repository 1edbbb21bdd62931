//go:build unix

package sshserve

import (
	"os"
	"syscall"
)

// ownerOf returns the uid owning a file.
func ownerOf(st os.FileInfo) (int, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}

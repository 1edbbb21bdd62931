package demo

import (
	"os"
	"syscall"
	"time"
)

// changed is fi's change time (its inode's: set by every write, chmod or
// utimes, which a program cannot set back), or the zero time.
func changed(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return time.Time{}
}

// sameOwner reports whether a and b belong to the same user: a marker
// that another user left above a node's files (in /tmp) must not turn
// the node's record off.
func sameOwner(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Uid == sb.Uid
}

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

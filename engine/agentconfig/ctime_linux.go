package agentconfig

import (
	"os"
	"syscall"
	"time"
)

// statusChanged is a file's last status change (ctime): unlike its
// modification time, no tool sets it back (cp -p, rsync -t and tar keep
// an old mtime on new bytes), and a rename into place moves it.
func statusChanged(st os.FileInfo) *time.Time {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	t := time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec).UTC()
	return &t
}

package main

import (
	"io/fs"
	"os"

	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/safefile"
)

// checkRegular refuses a file flag's path that is not a regular file (a
// FIFO, a device, a directory, a socket), by its metadata and without
// opening it: opening a FIFO blocks until someone writes to it, and
// --known-hosts is read by a library that opens plainly. flag names the
// flag in the error ("fleet: --known-hosts").
func checkRegular(flag, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if m := cliwords.MissingFile(err); m != "" {
			return usageErr("%s %s: %s", flag, path, m)
		}
		return usageErr("%s %s: %v", flag, path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return usageErr("%s %s: %s, not a regular file", flag, path, safefile.Kind(st.Mode()))
	}
	return nil
}

// unwrapPath drops the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

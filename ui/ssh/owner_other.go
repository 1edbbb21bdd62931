//go:build !unix

package sshserve

import "os"

// ownerOf cannot tell owners here: only modes are checked.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

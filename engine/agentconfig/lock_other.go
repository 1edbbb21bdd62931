//go:build !unix

package agentconfig

import "os"

// lockJournal is a no-op where flock does not exist; fgtop runs on Linux
// GPU nodes.
func lockJournal(string, string) (func(), error) { return func() {}, nil }

func copyOwner(string, os.FileInfo) {}

func mayReplace(string) error { return nil }

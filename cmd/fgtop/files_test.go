package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFileFlagsRefuseNonRegular: --known-hosts, --identity and
// --authorized-keys naming a FIFO (which nobody writes: opening it would
// block for ever) or a directory are refused at once, with exit 2 and an
// error that says what the path is.
func TestFileFlagsRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	regular := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hk := filepath.Join(dir, "hk")
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"known-hosts fifo", "--known-hosts " + fifo + ": a FIFO, not a regular file",
			[]string{"fleet", "--hosts", "127.0.0.1:1", "--known-hosts", fifo, "--once", "--timeout", "2s"}},
		// ssh's way to skip the check is refused with how to trust a node.
		{"known-hosts /dev/null", "--known-hosts /dev/null: a character device, not a regular file: fgtop checks every node's host key and cannot skip it; give a known_hosts file (ssh-keyscan",
			[]string{"fleet", "--hosts", "127.0.0.1:1", "--known-hosts", "/dev/null", "--once", "--timeout", "2s"}},
		{"known-hosts dir", "a directory, not a regular file",
			[]string{"fleet", "--hosts", "127.0.0.1:1", "--known-hosts", dir, "--once", "--timeout", "2s"}},
		{"identity fifo", "--identity " + fifo + ": a FIFO, not a regular file",
			[]string{"fleet", "--hosts", "127.0.0.1:1", "--known-hosts", regular, "--identity", fifo, "--once", "--timeout", "2s"}},
		{"identity missing", "no such file",
			[]string{"fleet", "--hosts", "127.0.0.1:1", "--known-hosts", regular, "--identity", filepath.Join(dir, "nope"), "--once"}},
		{"authorized-keys fifo", "--authorized-keys " + fifo + ": a FIFO, not a regular file",
			[]string{"serve", "--demo", "--authorized-keys", fifo, "--host-key", hk, "--listen", "127.0.0.1:0"}},
		{"host-key fifo", "--host-key " + fifo + ": a FIFO, not a regular file",
			[]string{"serve", "--demo", "--authorized-keys", regular, "--host-key", fifo, "--listen", "127.0.0.1:0"}},
		{"authorized-keys dir", "a directory, not a regular file",
			[]string{"serve", "--demo", "--authorized-keys", dir, "--host-key", hk, "--listen", "127.0.0.1:0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				stderr string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				_, e, code := runMain(t, c.args...)
				done <- result{e, code}
			}()
			select {
			case r := <-done:
				if r.code != exitBadUsage || !strings.Contains(r.stderr, c.want) {
					t.Fatalf("exit %d, stderr %q: want exit %d and %q", r.code, r.stderr, exitBadUsage, c.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("blocked on the file")
			}
		})
	}
}

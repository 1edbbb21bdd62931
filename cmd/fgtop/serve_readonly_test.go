package main

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestServeSaysReadOnly: `fgtop serve --readonly` says at start that every
// key is a viewer; without it the line does not.
func TestServeSaysReadOnly(t *testing.T) {
	for _, ro := range []bool{true, false} {
		sf, _ := demoServeFlags(t)
		stderr := &sshtest.Buffer{}
		srv := startDemoServe(t, sf, serveRun{stderr: stderr, console: &consoleFlags{readOnly: ro}})
		if err := srv.stop(t); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if got := strings.Contains(stderr.String(), "read-only: every key is a viewer"); got != ro {
			t.Fatalf("--readonly %v: stderr %q", ro, stderr.String())
		}
	}
}

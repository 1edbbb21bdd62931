package sshserve

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestHandshakeTimeoutIsLoggedInWords: a connection dropped at the
// handshake's deadline (nc, a port scan) is logged as not logged in
// within the limit, not only as Go's "i/o timeout".
func TestHandshakeTimeoutIsLoggedInWords(t *testing.T) {
	f := startServer(t, nil)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	f.srv.connFailed(a, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	want := `why="not logged in within ` + handshakeTimeout.String() + `" err="read tcp: i/o timeout"`
	if got := f.log.String(); !strings.Contains(got, want) {
		t.Fatalf("log %q lacks %q", got, want)
	}
}

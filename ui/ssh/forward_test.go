package sshserve

import (
	"errors"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// TestForwardingRefusedSayingWhy: a channel other than a session (ssh -L,
// -D, -W, a socket) is refused as prohibited, with fgtop's reason, and
// logged; the connection goes on serving sessions.
func TestForwardingRefusedSayingWhy(t *testing.T) {
	f := startServer(t, nil)
	c := f.client(t, "victor", f.viewer)
	direct := gossh.Marshal(struct {
		Host     string
		Port     uint32
		OrigHost string
		OrigPort uint32
	}{"127.0.0.1", 22, "127.0.0.1", 40000})
	for _, tc := range []struct {
		kind    string
		payload []byte
	}{
		{"direct-tcpip", direct},
		{"direct-streamlocal@openssh.com", gossh.Marshal(struct {
			Path, R1 string
			R2       uint32
		}{"/run/docker.sock", "", 0})},
		{"x11", nil},
	} {
		_, _, err := c.OpenChannel(tc.kind, tc.payload)
		var oe *gossh.OpenChannelError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: opened (%v), want a refusal", tc.kind, err)
		}
		if oe.Reason != gossh.Prohibited || oe.Message != NoForwarding {
			t.Fatalf("%s: refused with %v %q, want prohibited %q", tc.kind, oe.Reason, oe.Message, NoForwarding)
		}
	}
	waitUntil(t, "the refusal in the log", func() bool {
		return strings.Contains(f.log.String(), `msg="refused channel" user=victor`) && strings.Contains(f.log.String(), "type=direct-tcpip")
	})
	// The same connection still gets a session.
	s, err := c.NewSession()
	if err != nil {
		t.Fatalf("a session after the refusals: %v", err)
	}
	s.Close()
}

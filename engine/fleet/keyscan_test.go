package fleet

import (
	"crypto/ed25519"
	"errors"
	"net"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestUnknownHostSaysTheCommand: an unknown host is told the ssh-keyscan
// line that adds it, with the host and port dialled and the known_hosts
// file the fleet checks: it said "ssh-keyscan -p PORT HOST >>
// ~/.ssh/known_hosts" of a fleet given --known-hosts kh, a file it never
// reads then.
func TestUnknownHostSaysTheCommand(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	unknown := func(string, net.Addr, gossh.PublicKey) error { return &knownhosts.KeyError{} }
	for _, tc := range []struct{ host, want string }{
		{"localhost:3122", "ssh-keyscan -p 3122 localhost >> /tmp/fleet/kh"},
		{"node01:22", "ssh-keyscan node01 >> /tmp/fleet/kh"},
		{"[::1]:2222", "ssh-keyscan -p 2222 ::1 >> /tmp/fleet/kh"},
	} {
		err := hostKeyCheck(unknown, []string{"/tmp/fleet/kh", "/etc/ssh/ssh_known_hosts"})(tc.host, nil, key)
		var he *HostKeyError
		if !errors.As(err, &he) || he.Changed {
			t.Fatalf("%s: %v, want an unknown host", tc.host, err)
		}
		if msg := err.Error(); !strings.HasSuffix(msg, "add it after checking it: "+tc.want) {
			t.Errorf("%s: %q, want it to end with %q", tc.host, msg, tc.want)
		}
	}
}

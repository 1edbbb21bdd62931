package main

import (
	"os"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestServeWarnsWhenNoKeyIsAccepted: an authorized_keys file that holds no
// key fgtop accepts (empty, a private key pasted in, only skipped lines)
// starts the server, since keys may be added later, but stderr says that
// every login is refused and why; with usable keys it says nothing.
func TestServeWarnsWhenNoKeyIsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		want       []string // on stderr; none: no warning
	}{
		{"empty", "", []string{"holds no key fgtop accepts (it holds no key line)", "every login is refused"}},
		{"comments only", "# add keys here\n", []string{"holds no key fgtop accepts (it holds no key line)"}},
		{"garbage", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n", []string{"holds no key fgtop accepts (line 1: not an OpenSSH public key: skipped; 1 more in the log)"}},
		{"usable", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sf, keys := demoServeFlags(t)
			if tc.want != nil {
				if err := os.WriteFile(sf.authorizedKeys, []byte(tc.keys), 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				sshtest.WriteAtomic(t, sf.authorizedKeys, keys.AuthorizedKeys())
			}
			stderr := &sshtest.Buffer{}
			srv := startDemoServe(t, sf, serveRun{stderr: stderr})
			if err := srv.stop(t); err != nil {
				t.Fatalf("serve: %v", err)
			}
			got := stderr.String()
			if tc.want == nil && strings.Contains(got, "warning") {
				t.Fatalf("usable keys, yet stderr warns: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("stderr %q lacks %q", got, w)
				}
			}
		})
	}
}

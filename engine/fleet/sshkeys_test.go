package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestNoKeyNamesEveryDefault: without --identity, keys or ssh-agent, the
// error names every file ssh's defaults make fgtop look for in ~/.ssh
// (it named three of six: an operator with only id_ecdsa_sk or id_dsa
// was told those were never tried), and finding one of them logs in.
func TestNoKeyNamesEveryDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, closeFn, err := ClientConfig(SSHOptions{SSHDir: dir, DefaultIdentities: DefaultIdentityFiles(filepath.Dir(dir))})
	closeFn()
	if err == nil {
		t.Fatal("no key anywhere gave no error")
	}
	want := "no key to log in with (no --identity, none of id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk, id_dsa in " + dir + ", and SSH_AUTH_SOCK is not set)"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant it to begin %q", err, want)
	}
	for _, n := range defaultIdentityNames {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error does not name %s, which fgtop looks for: %q", n, err)
		}
	}
}

// TestIdentityPublicKey: a .pub given as --identity is named as the public
// key it is, with the private key to give instead, not "ssh: no key found".
func TestIdentityPublicKey(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "viewer.pub")
	if err := os.WriteFile(pub, gossh.MarshalAuthorizedKey(sshtest.NewKey(t).Signer.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, closeFn, err := ClientConfig(SSHOptions{Identities: []string{pub}})
	closeFn()
	want := "--identity " + pub + " is a public key; give the private key (" + strings.TrimSuffix(pub, ".pub") + ")"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

package sshserve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostKeyThatIsNotOneSaysWhat: a host key file that holds no private
// key (a .pub named by mistake, junk) or one behind a passphrase is
// refused in words that say which and what to do, not the library's "ssh:
// no key found", nor first told to chmod 600 a public key.
func TestHostKeyThatIsNotOneSaysWhat(t *testing.T) {
	dir := t.TempDir()
	pubKey := func(t *testing.T) []byte {
		pub := filepath.Join(dir, "k")
		_ = os.Remove(pub)
		_ = os.Remove(pub + ".pub")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", pub).CombinedOutput(); err != nil {
			t.Skipf("ssh-keygen: %v %s", err, out)
		}
		b, err := os.ReadFile(pub + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		mode os.FileMode
		want string
	}{
		{"junk", func(*testing.T) []byte { return []byte("junk\n") }, 0o600, "not an SSH private key"},
		{"public key", pubKey, 0o600, "not its .pub"},
		// As a .pub is: chmod 600 was the first advice, for a file that
		// is no private key at all.
		{"public key readable by all", pubKey, 0o644, "not its .pub"},
		{"passphrase", func(t *testing.T) []byte {
			k := filepath.Join(dir, "locked")
			if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", k).CombinedOutput(); err != nil {
				t.Skipf("ssh-keygen: %v %s", err, out)
			}
			b, err := os.ReadFile(k)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, 0o600, "protected by a passphrase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "hk-"+strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(path, tt.data(t), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, created, err := LoadOrCreateHostKey(path)
			if err == nil || created || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err %v (created %v), want one naming %s and saying %q", err, created, path, tt.want)
			}
		})
	}
}

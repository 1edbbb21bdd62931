//go:build unix

package sshserve

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestKeysReadErrorKeepsLiveSessions repeats issue 16's fourth attack: a
// transient read error of authorized_keys (EMFILE under a connection
// flood) cut every live session with "your key was removed". Now new
// logins are refused while it lasts, live sessions go on, and logins come
// back once the file reads again.
func TestKeysReadErrorKeepsLiveSessions(t *testing.T) {
	var failing atomic.Bool
	f := startServer(t, nil, func(s *Server) {
		read := s.readKeys
		s.readKeys = func(p string) ([]byte, error) {
			if failing.Load() {
				return nil, &os.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
			}
			return read(p)
		}
	})
	v := f.open(t, "victor", f.viewer, nil)
	v.waitScreen(t, "[read-only]")
	failing.Store(true)
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine(sshtest.OperatorOption, "olga@ops")+f.viewer.AuthLine("", "victor@watch"))
	waitUntil(t, "the read error in the log", func() bool {
		return strings.Contains(f.log.String(), "refusing new logins, keeping live sessions")
	})
	if _, err := f.dial("olga", f.operator); err == nil {
		t.Fatal("a new login was accepted while authorized_keys could not be read")
	}
	next := fake.Node(fake.Options{})
	next.Node = "gpu-node05"
	f.pub.Publish(next)
	v.waitScreen(t, "gpu-node05")
	select {
	case err := <-v.done:
		t.Fatalf("the live session ended on a read error: %v; stderr %q", err, v.stderr.raw())
	default:
	}
	failing.Store(false)
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine(sshtest.OperatorOption, "olga@ops")+f.viewer.AuthLine("", "victor@watch, again"))
	waitUntil(t, "logins back", func() bool { return strings.Contains(f.log.String(), "readable again") })
	f.open(t, "olga", f.operator, nil).waitScreen(t, "gpu-node05")
	if strings.Contains(v.stderr.raw(), "removed") {
		t.Fatalf("the viewer was told its key was removed: %q", v.stderr.raw())
	}
}

// TestKeysFileModes: like sshd's StrictModes, an authorized_keys file (or
// a directory above it) that group or others may write is refused: at
// start, and on reload (new logins refused, live sessions kept).
func TestKeysFileModes(t *testing.T) {
	keys := sshtest.NewKeys(t)
	sub := newPublisher(nil).Subscribe
	tests := []struct {
		name          string
		fileMode, dir os.FileMode
		want          string
	}{
		{"group-writable file", 0o620, 0o700, "the file is writable by group or others (mode 0620)"},
		{"world-writable file", 0o606, 0o700, "writable by group or others"},
		{"world-writable directory", 0o600, 0o777, "its directory"},
		{"group-writable directory", 0o600, 0o770, "its directory"},
		{"sticky world-writable directory", 0o600, os.ModeSticky | 0o777, ""},
		{"private", 0o600, 0o755, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "keys")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "authorized_keys")
			if err := os.WriteFile(path, []byte(keys.AuthorizedKeys()), 0o600); err != nil {
				t.Fatal(err)
			}
			for p, m := range map[string]os.FileMode{path: tt.fileMode, dir: tt.dir} {
				if err := os.Chmod(p, m); err != nil {
					t.Fatal(err)
				}
			}
			_, err := New(Config{Subscribe: sub, AuthorizedKeys: path, HostKey: filepath.Join(t.TempDir(), "hk")})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInsecureKeys) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("reload", func(t *testing.T) {
		f := startServer(t, nil)
		v := f.open(t, "victor", f.viewer, nil)
		v.waitScreen(t, "[read-only]")
		if err := os.Chmod(f.keysPath, 0o666); err != nil {
			t.Fatal(err)
		}
		f.srv.reloadKeys()
		if !strings.Contains(f.log.String(), "unsafe permissions") {
			t.Fatalf("log:\n%s", f.log.String())
		}
		if _, err := f.dial("olga", f.operator); err == nil {
			t.Fatal("a login was accepted with a world-writable authorized_keys")
		}
		if f.srv.SessionCount() != 1 {
			t.Fatal("the live session was cut")
		}
	})
}

// TestWeakRSAKeysRefused: an RSA key under 2048 bits is skipped with a
// line in the log saying why; one of 2048 bits is accepted.
func TestWeakRSAKeysRefused(t *testing.T) {
	line := func(bits int) (string, gossh.Signer) {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		s, err := gossh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + fmt.Sprintf(" rsa%d@old\n", bits), s
	}
	weak, weakSigner := line(1024)
	strong, strongSigner := line(2048)
	ks, warns := ParseAuthorizedKeys([]byte(weak + strong))
	if _, ok := ks.Lookup(weakSigner.PublicKey()); ok {
		t.Fatal("a 1024-bit RSA key was accepted")
	}
	if _, ok := ks.Lookup(strongSigner.PublicKey()); !ok {
		t.Fatal("a 2048-bit RSA key was refused")
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "line 1: RSA key SHA256:") || !strings.Contains(warns[0], "has 1024 bits, fewer than 2048: skipped") {
		t.Fatalf("warnings %q", warns)
	}
	f := startServer(t, nil)
	sshtest.WriteAtomic(t, f.keysPath, weak)
	f.srv.reloadKeys() // the watcher may not run yet: no session was opened
	if !strings.Contains(f.log.String(), "has 1024 bits, fewer than 2048") {
		t.Fatalf("the weak key is not in the log:\n%s", f.log.String())
	}
	if _, err := f.dial("old", weakSigner); err == nil {
		t.Fatal("a 1024-bit RSA key logged in")
	}
}

// TestRefusedSessionLogsItsRole: a refused session was logged as a viewer
// whatever its key's role.
func TestRefusedSessionLogsItsRole(t *testing.T) {
	f := startServer(t, func(c *Config) { c.MaxSessions = 1 })
	f.open(t, "victor", f.viewer, nil).waitScreen(t, "[read-only]")
	f.open(t, "olga", f.operator, nil).waitEnd(t)
	waitUntil(t, "the refusal in the log", func() bool {
		return strings.Contains(f.log.String(), `msg="refused session" user=olga key=`+f.operator.Fingerprint()) &&
			strings.Contains(f.log.String(), "role=operator why=\"too many sessions")
	})
}

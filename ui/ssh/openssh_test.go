package sshserve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestOpenSSHClientInTmux drives the server with the real OpenSSH client
// inside tmux, as a person would: the viewer's screen shows the read-only
// console and its help offers no editing. It is skipped where ssh or tmux
// is missing (.ci/run installs both).
func TestOpenSSHClientInTmux(t *testing.T) {
	for _, bin := range []string{"ssh", "tmux"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	f := startServer(t, nil)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_viewer")
	f.viewer.WritePrivate(t, keyFile)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(sshtest.KnownHosts(f.addr, f.hostKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(f.addr, ":")
	// A tmux server of our own, named for this process and run: t.TempDir's
	// base name alone ("002") is the same in every run, so a server left by
	// a killed run (or another checkout's tests) was found again.
	sock := fmt.Sprintf("fgtop-test-%d-%s", os.Getpid(), filepath.Base(filepath.Dir(dir)))
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	sshCmd := fmt.Sprintf("ssh -F none -t -i %s -p %s -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes victor@%s",
		keyFile, port, known, host)
	if out, err := tmux("new-session", "-d", "-s", "v", "-x", "120", "-y", "40", sshCmd); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	pane := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for {
			out, err := tmux("capture-pane", "-p", "-t", "v")
			if err == nil && strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pane never showed %q; last:\n%s (%v)", want, out, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	pane("[read-only]")
	if out, err := tmux("send-keys", "-t", "v", "?"); err != nil {
		t.Fatalf("send-keys: %v: %s", err, out)
	}
	if help := pane("role: viewer"); strings.Contains(help, "edit partition") {
		t.Fatalf("the viewer's help offers editing:\n%s", help)
	}
}

// TestOpenSSHUnknownKeyToldWhy logs in with the real OpenSSH client and a
// key the server does not know: besides OpenSSH's own "Permission denied",
// an interactive client prints fgtop's banner, once, naming the key it
// offered and what to ask for. A client in BatchMode never tries
// keyboard-interactive, so it gets OpenSSH's words alone; a known key's
// login prints no banner.
func TestOpenSSHUnknownKeyToldWhy(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh not installed")
	}
	f := startServer(t, nil)
	dir := t.TempDir()
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(sshtest.KnownHosts(f.addr, f.hostKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(f.addr, ":")
	const banner = "none of your keys is authorized"
	for _, tc := range []struct {
		name, user, batch string
		key               sshtest.Key
		refused, told     bool
	}{
		{"unknown key", "mallory", "no", f.stranger, true, true},
		{"unknown key in BatchMode", "mallory", "yes", f.stranger, true, false},
		{"known key", "victor", "no", f.viewer, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyFile := filepath.Join(dir, "id_"+tc.user+tc.batch)
			tc.key.WritePrivate(t, keyFile)
			out, err := exec.Command("ssh", "-F", "none", "-T", "-i", keyFile, "-p", port, "-o", "IdentitiesOnly=yes",
				"-o", "BatchMode="+tc.batch, "-o", "UserKnownHostsFile="+known, "-o", "StrictHostKeyChecking=yes",
				tc.user+"@"+host, "snapshot").CombinedOutput()
			got := string(out)
			if refused := strings.Contains(got, "Permission denied"); refused != tc.refused || (err == nil) == tc.refused {
				t.Fatalf("refused %v (%v), want %v:\n%s", refused, err, tc.refused, got)
			}
			if n := strings.Count(got, banner); n != map[bool]int{true: 1, false: 0}[tc.told] {
				t.Fatalf("the banner printed %d times, want it told %v:\n%s", n, tc.told, got)
			}
			if tc.told {
				for _, want := range []string{gossh.FingerprintSHA256(tc.key.PublicKey()), "KEY.pub"} {
					if !strings.Contains(got, want) {
						t.Fatalf("the banner says no %q:\n%s", want, got)
					}
				}
			}
		})
	}
}

package sshserve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

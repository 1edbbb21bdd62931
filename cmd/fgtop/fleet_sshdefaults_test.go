package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/sshtest"
)

// fakeHome makes a HOME with an empty ~/.ssh for the test and clears
// SSH_AUTH_SOCK, so only what the test puts there is used.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	return home
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startSSHAgent runs a real ssh-agent on a socket in a temp dir, adds key
// to it with ssh-add, and returns the socket.
func startSSHAgent(t *testing.T, key string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent is not installed (openssh-client)")
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 200 {
			t.Fatal("ssh-agent made no socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v: %s", err, out)
	}
	return sock
}

// fleetOnce runs `fleet --hosts ADDR --once --json` with no key or
// known_hosts flag and returns the node's state and error, and the exit
// code.
func fleetOnce(t *testing.T, addr string) (fleet.JSONNode, string, int) {
	t.Helper()
	out, stderr, code := runFleetCmd(t, "--hosts", addr, "--once", "--json", "--timeout", "8s")
	var got fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Nodes) != 1 {
		return fleet.JSONNode{}, stderr, code
	}
	return got.Nodes[0], stderr, code
}

// TestFleetKeysLikeSSH: with no --identity and no --known-hosts the fleet
// logs in as ssh would: with ~/.ssh/id_ed25519, else with the key held by
// a real ssh-agent (SSH_AUTH_SOCK), checking the host against
// ~/.ssh/known_hosts. Without any key it says where it looked; a key the
// node does not accept and a node that is down are reported in fgtop's
// words, naming what to do.
func TestFleetKeysLikeSSH(t *testing.T) {
	nodes, id, kh := startFleet(t, 1)
	addr := nodes[0].addr
	home := fakeHome(t)
	ssh := filepath.Join(home, ".ssh")
	copyFile(t, kh, filepath.Join(ssh, "known_hosts"))

	// No key anywhere: a usage error naming the places looked at.
	_, stderr, code := fleetOnce(t, addr)
	if code != exitBadUsage || !strings.Contains(stderr, "no key to log in with") || !strings.Contains(stderr, "SSH_AUTH_SOCK") || !strings.Contains(stderr, "in "+ssh) {
		t.Fatalf("no key: exit %d, %q", code, stderr)
	}

	// ~/.ssh/id_ed25519.
	copyFile(t, id, filepath.Join(ssh, "id_ed25519"))
	n, stderr, code := fleetOnce(t, addr)
	if code != exitOK || n.State != fleet.Live || len(n.Devices) == 0 {
		t.Fatalf("~/.ssh/id_ed25519: exit %d, node %+v, %s", code, n, stderr)
	}

	// The key only in ssh-agent.
	if err := os.Remove(filepath.Join(ssh, "id_ed25519")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", startSSHAgent(t, id))
	n, stderr, code = fleetOnce(t, addr)
	if code != exitOK || n.State != fleet.Live {
		t.Fatalf("ssh-agent: exit %d, node %+v, %s", code, n, stderr)
	}

	// A key the node does not know (revoked, or never added).
	t.Setenv("SSH_AUTH_SOCK", "")
	stranger := filepath.Join(ssh, "id_ecdsa")
	sshtest.NewKeys(t).Stranger.WritePrivate(t, stranger)
	n, _, code = fleetOnce(t, addr)
	if code != exitProblem || n.State != fleet.Unreachable || !strings.Contains(n.Error, "refused the key") ||
		!strings.Contains(n.Error, stranger) || !strings.Contains(n.Error, "authorized_keys") {
		t.Fatalf("refused key: exit %d, node %+v", code, n)
	}
	if strings.Contains(n.Error, "ssh: ssh:") {
		t.Errorf("library text leaks: %q", n.Error)
	}

	// The node stopped: nothing listens on its port.
	nodes[0].stop(t)
	n, _, code = fleetOnce(t, addr)
	if code != exitProblem || !strings.Contains(n.Error, "not listening (connection refused)") || !strings.Contains(n.Error, "fgtop serve") {
		t.Fatalf("stopped node: exit %d, node %+v", code, n)
	}
}

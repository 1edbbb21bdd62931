package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// TestRollbackThroughRetargetedLink: agent.toml is a link a deploy
// switched to another release after the agent started. Rolling back an
// apply of the new release restores the bytes that release held at the
// agent's start, but the agent read the old release: a restart is needed,
// and the restart state is judged on the path as given (its link), not the
// file it resolves to.
func TestRollbackThroughRetargetedLink(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to stand for the agent process")
	}
	config, args := slotNode(t)
	dir := filepath.Dir(config)
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	older, newer := filepath.Join(dir, "release-1.toml"), filepath.Join(dir, "release-2.toml")
	if err := os.Rename(config, newer); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(older, append(append([]byte{}, raw...), "\n# release 1\n"...), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("release-1.toml", config); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// The agent: a process whose command line runs ai.backend.agent with
	// -f the link (bash stays, running two commands).
	agent := exec.Command("bash", "-c", "sleep 60; :", "ai.backend.agent.server", "-f", config)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	time.Sleep(100 * time.Millisecond)

	op := agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}
	if _, err := agentconfig.Commit(agentconfig.CommitRequest{Path: newer, BaseHash: agentconfig.HashOf(raw),
		Data: append(append([]byte{}, raw...), "\n# moved\n"...), Actor: op,
		Now: func() time.Time { return time.Now().Add(5 * time.Minute) }}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("release-2.toml", config); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ")
	if strings.Contains(out, "no restart needed") {
		t.Errorf("the agent read release-1, yet:\n%s", out)
	}
}

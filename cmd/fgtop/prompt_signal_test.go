//go:build linux

package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fgtop/fgtop/internal/ptytest"
)

// TestPromptEndsOnSignal: apply and rollback asking [y/N] on the
// operator's terminal (this test executable as fgtop, on a pty). Ctrl-C
// typed there, or a SIGTERM, is a no at once: exit 1, "not confirmed:
// nothing written", the file as it was, the terminal cooked. The
// commands caught both signals into a context the prompt did not watch:
// ^C was echoed and the prompt took the next line typed as the answer.
func TestPromptEndsOnSignal(t *testing.T) {
	n := newNode(t)
	move := []string{"--move", "cuda:" + gpu3 + "=" + agentB}
	ask := func(t *testing.T, stop func(t *testing.T, master *os.File, pid int), args ...string) {
		t.Helper()
		before := n.current(t)
		cmd := fgtopChild(args...)
		master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
		if err != nil {
			t.Skipf("no pseudo-terminal here: %v", err)
		}
		defer master.Close()
		defer func() { _ = cmd.Process.Kill() }()
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		out := ptytest.Read(master)
		out.WaitFor(t, "the prompt", 20*time.Second, func(s string) bool { return strings.Contains(s, "[y/N] ") })
		stop(t, master, cmd.Process.Pid)
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still asks 10s after the signal:\n%s", args[0], out.String())
		}
		// Its last words are read once its side of the pty is gone.
		select {
		case <-out.Done():
		case <-time.After(2 * time.Second):
		}
		if c := cmd.ProcessState.ExitCode(); c != exitProblem || !strings.Contains(out.String(), "not confirmed: nothing written") {
			t.Errorf("%s: exit %d, want %d not confirmed:\n%s", args[0], c, exitProblem, out.String())
		}
		if !bytes.Equal(n.current(t), before) {
			t.Errorf("%s wrote the file", args[0])
		}
		if !ptytest.Canonical(t, master) {
			t.Errorf("%s left the terminal raw", args[0])
		}
	}
	signals := []struct {
		name string
		stop func(t *testing.T, master *os.File, pid int)
	}{
		{"ctrl-c", func(t *testing.T, master *os.File, _ int) {
			if _, err := master.Write([]byte{3}); err != nil {
				t.Fatal(err)
			}
		}},
		{"SIGTERM", func(t *testing.T, _ *os.File, pid int) {
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, sig := range signals {
		t.Run("apply "+sig.name, func(t *testing.T) {
			ask(t, sig.stop, n.args("apply", move...)...)
		})
	}
	code, out := runCLI(t, n.args("apply", append(move, "--yes")...)...)
	wantCode(t, code, exitOK, out)
	for _, sig := range signals {
		t.Run("rollback "+sig.name, func(t *testing.T) {
			ask(t, sig.stop, n.args("rollback")...)
		})
	}
}

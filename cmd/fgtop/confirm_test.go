package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfirmRefusesWithoutTerminal: apply and rollback without --yes,
// run as cron or `ssh -n` run them, refuse with exit 2 and write nothing,
// whatever stdin is: /dev/null (a character device, which the prompt once
// took for a terminal: it asked [y/N], read nothing and exited 1), a
// regular file or a pipe, even one that says y.
func TestConfirmRefusesWithoutTerminal(t *testing.T) {
	n := newNode(t)
	answer := filepath.Join(n.dir, "answer")
	if err := os.WriteFile(answer, []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdins := []struct {
		name string
		open func(t *testing.T, cmd *exec.Cmd)
	}{
		{"/dev/null", func(t *testing.T, cmd *exec.Cmd) {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			cmd.Stdin = f
		}},
		{"a regular file saying y", func(t *testing.T, cmd *exec.Cmd) {
			f, err := os.Open(answer)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			cmd.Stdin = f
		}},
		{"a pipe saying y", func(_ *testing.T, cmd *exec.Cmd) { cmd.Stdin = strings.NewReader("y\n") }},
	}
	run := func(t *testing.T, open func(*testing.T, *exec.Cmd), args ...string) (int, string) {
		t.Helper()
		cmd := fgtopProc(args...)
		open(t, cmd)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return ee.ExitCode(), out.String()
		case err != nil:
			t.Fatal(err)
		}
		return 0, out.String()
	}
	for _, in := range stdins {
		code, out := run(t, in.open, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB)...)
		if code != exitBadUsage || !strings.Contains(out, "refusing to write without --yes") || strings.Contains(out, "[y/N]") {
			t.Errorf("apply, stdin %s: exit %d, want %d refusing:\n%s", in.name, code, exitBadUsage, out)
		}
		if !bytes.Equal(n.current(t), n.original) {
			t.Fatalf("apply, stdin %s: the file was written", in.name)
		}
	}
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitOK, out)
	applied := n.current(t)
	for _, in := range stdins {
		code, out := run(t, in.open, n.args("rollback")...)
		if code != exitBadUsage || !strings.Contains(out, "refusing to write without --yes") || strings.Contains(out, "[y/N]") {
			t.Errorf("rollback, stdin %s: exit %d, want %d refusing:\n%s", in.name, code, exitBadUsage, out)
		}
		if !bytes.Equal(n.current(t), applied) {
			t.Fatalf("rollback, stdin %s: the file was written", in.name)
		}
	}
}

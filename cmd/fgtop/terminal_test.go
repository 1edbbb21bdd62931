//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestConsoleWithoutTerminal starts each console command as a child in a
// new session (no controlling terminal, so no /dev/tty), with stdin
// /dev/null and stdout a pipe, as cron or `ssh host fgtop watch` would:
// it must exit 2 and say what to run instead, in fgtop's words.
func TestConsoleWithoutTerminal(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"watch", []string{"watch", "--scratch-root", root}, []string{"fgtop watch is an interactive console", "fgtop snapshot --json", "ssh -t HOST fgtop watch"}},
		{"console", []string{"--scratch-root", root}, []string{"fgtop is an interactive console", "fgtop snapshot --json", "ssh -t HOST fgtop"}},
		{"demo", []string{"demo"}, []string{"fgtop demo is an interactive console", "fgtop demo --headless", "ssh -t HOST fgtop demo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, tt.args...)...)
			cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1", "TMPDIR="+t.TempDir())
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitBadUsage {
				t.Fatalf("fgtop %s: %v, want exit %d\nstderr: %s", strings.Join(tt.args, " "), err, exitBadUsage, stderr.String())
			}
			msg := stderr.String()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(strings.ToLower(msg), "bubbletea") || strings.Contains(msg, "TTY") {
				t.Errorf("stderr shows the library's error:\n%s", msg)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout got %q, want nothing", stdout.String())
			}
		})
	}
}

// TestArgumentErrorsBeforeTerminal: run as TestConsoleWithoutTerminal
// runs them (no terminal), a console command with a bad argument says
// the argument's error, exit 2, not that there is no terminal: `fgtop
// demo --partition slotbased` was told of the terminal, and of the typo
// only once it had one. A typo of a --partition value names the one meant.
func TestArgumentErrorsBeforeTerminal(t *testing.T) {
	root := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--partition", "slotbased"}, `--partition "slotbased": did you mean slot-based? want slot-based`},
		{[]string{"demo", "--partition", "bep"}, `--partition "bep": want slot-based (Backend.AI main's form) or device-based`},
		{[]string{"demo", "--speed", "0"}, "--speed 0: want a number above 0"},
		{[]string{"demo", "--restart-after", "-1s"}, "--restart-after -1s: want a duration of 0 or more"},
		{[]string{"demo", "--theme", "lite"}, "--theme lite: "},
		{[]string{"watch", "--scratch-root", root, "--theme", "lite"}, "--theme lite: "},
		{[]string{"--scratch-root", root, "--theme", "lite"}, "--theme lite: "},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, tt.args...)...)
			cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1", "TMPDIR="+t.TempDir())
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitBadUsage {
				t.Fatalf("%v, want exit %d\nstderr: %s", err, exitBadUsage, stderr.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "interactive console") {
				t.Errorf("stderr:\n%s\nwant %q, and no word of the terminal", msg, tt.want)
			}
		})
	}
}

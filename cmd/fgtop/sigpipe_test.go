package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestClosedStdoutKeepsExitStatus: `fgtop check | head -1` exits with
// check's own status, not killed by SIGPIPE (141 in a shell, which a
// script reads as a crash and `set -o pipefail` reports in place of the
// finding).
func TestClosedStdoutKeepsExitStatus(t *testing.T) {
	cfg := filepath.Join("..", "..", "engine", "partition", "testdata", "agent.multi-agent.slot-based.toml")
	// Scratch roots that do not exist: the live state is not checked.
	dir := t.TempDir()
	roots := []string{"--scratch-root", "i-gpu-node01-a=" + filepath.Join(dir, "a"), "--scratch-root", "i-gpu-node01-b=" + filepath.Join(dir, "b")}
	arrivals := filepath.Join(dir, "arrivals.csv")
	if err := os.WriteFile(arrivals, []byte("start,end,agent,slots\n2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,,cpu=999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, kh := filepath.Join(dir, "id"), filepath.Join(dir, "known_hosts")
	sshtest.NewKey(t).WritePrivate(t, id)
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	node := append([]string{"--config", cfg, "--host-cpus", "0-63", "--host-mem", "512g", "--devices", "auto"}, roots...)
	tests := []struct {
		name string
		args []string
		want int
	}{
		// The live state not checked is a finding (1), reported on
		// stdout first.
		{"check finding", append([]string{"check"}, node...), exitProblem},
		// An invalid plan is printed on stdout, then refused (2).
		{"invalid plan", append([]string{"plan", "--mem", "nobody=4G"}, node...), exitBadUsage},
		// A request that cannot be placed stays a finding though its
		// table could not be printed.
		{"simulate refusal", []string{"simulate", "--cpus", "4", "--mem", "8g", "--request", "cpu=9"}, exitProblem},
		{"simulate refusal json", []string{"simulate", "--cpus", "4", "--mem", "8g", "--request", "cpu=9", "--json"}, exitProblem},
		{"arrivals refusal", []string{"plan", "--config", cfg, "--host-cpus", "0-63", "--host-mem", "512g", "--devices", "auto",
			"--scratch-root", "i-gpu-node01-a=" + dir, "--scratch-root", "i-gpu-node01-b=" + t.TempDir(), "--arrivals", arrivals}, exitProblem},
		// A node that does not answer (nothing listens on port 1).
		{"fleet unreachable json", []string{"fleet", "--hosts", "127.0.0.1:1", "--identity", id, "--known-hosts", kh,
			"--once", "--json", "--timeout", "5s"}, exitProblem},
		// What was asked was printed up to where the reader stopped
		// reading: a normal end, as for demo --headless, not bad usage.
		{"snapshot", []string{"snapshot", "--json", "--config", cfg, "--host-cpus", "0-63", "--host-mem", "512g", "--devices", "auto",
			"--scratch-root", "i-gpu-node01-a=" + dir, "--scratch-root", "i-gpu-node01-b=" + t.TempDir()}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, tt.args...)...)
			cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			// The reader is gone before fgtop writes a byte, as with
			// `| head -0` or a reader that stopped after its first line.
			_ = r.Close()
			cmd.Stdout = w
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			_ = w.Close()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.want {
				t.Errorf("exit %d (%v), want %d; stderr:\n%s", code, err, tt.want, stderr.String())
			}
			if strings.Contains(stderr.String(), "broken pipe") {
				t.Errorf("a reader that went away is no error of fgtop's; stderr:\n%s", stderr.String())
			}
		})
	}
}

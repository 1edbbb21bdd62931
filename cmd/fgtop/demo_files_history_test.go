//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/internal/ptytest"
)

// segmentsIn reports whether a history segment appears in dir within d.
func segmentsIn(dir string, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if segs, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(segs) > 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// fgtopOnDemoFiles starts fgtop ARGS (this test executable as fgtop)
// with FGTOP_HISTORY=host and its default history directory def; tty
// runs it on a pseudo-terminal of 160x40, whose output it returns.
func fgtopOnDemoFiles(t *testing.T, host, def string, tty bool, args ...string) (*exec.Cmd, *ptytest.Output, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "FGTOP_HISTORY=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "FGTOP_DEMO_HELPER=1", "FGTOP_HISTORY="+host, "FGTOP_TEST_DEFAULT_HISTORY="+def, "TERM=xterm-256color", "NO_COLOR=1")
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	if !tty {
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, nil, &errb
	}
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	return cmd, ptytest.Read(master), nil
}

// stopChild ends a child started by fgtopOnDemoFiles with SIGTERM.
func stopChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not end after SIGTERM", strings.Join(cmd.Args, " "))
	}
}

// fgtop watch (and the exporter, the console, serve) pointed at the
// files fgtop demo prints recorded the demo's made-up kernels into the
// host's history (FGTOP_HISTORY, else the default directory), where
// history, snapshot --at, plan --replay and the fleet read them as this
// node's. Now the demo's marker keeps them out: nothing is recorded there,
// the console's header and stderr say so and how to record anyway, and
// --history DIR, named, still records them.
func TestDemoFilesNotRecordedIntoHostHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fgtop on the demo node for several seconds")
	}
	t.Setenv("TMPDIR", t.TempDir())
	node, err := demo.Start(context.Background(), demo.Options{Seed: 1, Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	base := t.TempDir()
	host, def := filepath.Join(base, "host"), filepath.Join(base, "default")

	cmd, out, _ := fgtopOnDemoFiles(t, host, def, true, append([]string{"watch"}, node.CommandFlags()...)...)
	out.WaitFor(t, "the console's frame", 20*time.Second, func(s string) bool { return strings.Contains(s, "Devices") })
	if segmentsIn(host, 5*time.Second) {
		t.Errorf("watch on the demo's files recorded into FGTOP_HISTORY (%s)", host)
	}
	stopChild(t, cmd)
	if s := out.String(); !strings.Contains(s, "not recording: the node's files are fgtop demo's") ||
		!strings.Contains(s, "--history DIR") || !strings.Contains(s, "demo's files: not recorded") {
		t.Errorf("watch did not say it records nothing, and how to record anyway:\n%q", s[max(0, len(s)-3000):])
	}

	// The exporter, FGTOP_HISTORY unset: not into the default directory.
	cmd, _, errb := fgtopOnDemoFiles(t, "", def, false, append([]string{"exporter", "--listen", "127.0.0.1:0"}, node.CommandFlags()...)...)
	if segmentsIn(def, 5*time.Second) {
		t.Errorf("the exporter on the demo's files recorded into the default directory (%s)", def)
	}
	stopChild(t, cmd)
	if !strings.Contains(errb.String(), "not recording: the node's files are fgtop demo's") {
		t.Errorf("the exporter did not say it records nothing:\n%s", errb)
	}

	// Named, a directory takes the record: the check can fail.
	named := filepath.Join(base, "named")
	cmd, _, errb = fgtopOnDemoFiles(t, host, def, false, append([]string{"exporter", "--listen", "127.0.0.1:0", "--history", named}, node.CommandFlags()...)...)
	if !segmentsIn(named, 10*time.Second) {
		t.Errorf("--history %s on the demo's files recorded nothing\n%s", named, errb)
	}
	stopChild(t, cmd)
}

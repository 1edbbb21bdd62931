//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/ui/screen"
)

// TestConsoleSignalsRestoreTerminal runs the console (this test
// executable as fgtop, on a mock node) on a real pty, stops it with a
// signal and checks that it left the terminal as it found it: the
// alternate screen left, the cursor shown, mouse reporting off, the line
// discipline cooked. SIGHUP is what `kill -HUP` sends a console whose
// terminal is still there; uncaught, it ended the process on the
// alternate screen with the mouse still reporting into the shell.
func TestConsoleSignalsRestoreTerminal(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	// SIGTERM thrice: with Bubble Tea's own handler of it beside
	// notifyStop, about one start in four hung until notifyStop's forced
	// exit, the terminal left raw on the alternate screen.
	for i, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGTERM, syscall.SIGTERM} {
		t.Run(fmt.Sprintf("%d-%s", i, sig), func(t *testing.T) {
			tmp := t.TempDir()
			scratch := filepath.Join(tmp, "scratch")
			if err := os.Mkdir(scratch, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestDemoHelperProcess$", "--",
				"--scratch-root", "a="+scratch, "--history", "off",
				"--devices", filepath.Join(fix, "mock-accelerator.toml"),
				"--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"))
			cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1", "TMPDIR="+tmp, "TERM=xterm-256color")
			master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer master.Close()
			var mu sync.Mutex
			var out bytes.Buffer
			read := make(chan struct{})
			go func() {
				defer close(read)
				b := make([]byte, 32<<10)
				for {
					n, err := master.Read(b)
					mu.Lock()
					out.Write(b[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			shown := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(shown(), "Devices") {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no console frame after 20 s: %q", shown())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The child's terminal is raw while the console runs: a cooked
			// one afterwards is the console's restoring, not the pty's.
			if cooked(t, master) {
				t.Fatal("the terminal is cooked while the console runs")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case <-waited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the console did not end after %s", sig)
			}
			// The pty's output is read until the child is gone; what it
			// wrote last is in by then or soon after.
			time.Sleep(100 * time.Millisecond)
			s := shown()
			enter := strings.LastIndex(s, "\x1b[?1049h")
			rest := s[max(enter, 0):]
			if enter < 0 || !strings.Contains(rest, "\x1b[?1049l") || !strings.Contains(rest, "\x1b[?25h") ||
				!strings.Contains(rest, "\x1b[?1002l") {
				t.Logf("%v; the last words: %q", cmd.ProcessState, s[max(0, strings.LastIndex(s, "fgtop:")):])
				t.Errorf("after %s: alternate screen entered at %d, then left %v, cursor shown %v, mouse off %v; the end: %q",
					sig, enter, strings.Contains(rest, "\x1b[?1049l"), strings.Contains(rest, "\x1b[?25h"),
					strings.Contains(rest, "\x1b[?1002l"), rest[max(0, len(rest)-300):])
			}
			if !cooked(t, master) {
				t.Errorf("after %s the terminal is left raw", sig)
			}
			_, _ = io.Copy(io.Discard, master)
		})
	}
}

// cooked reports whether the pty's line discipline is canonical again.
func cooked(t *testing.T, f *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ICANON != 0
}

// TestConsoleFailed: a panic ends the console with an error (and a
// drawing panic's stack on stderr), though Bubble Tea calls it killed;
// a quit, a kill or a stop does not.
func TestConsoleFailed(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	draw := &screen.DrawPanicError{Value: "broken", Stack: []byte("goroutine 7 [running]: draw")}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		want      bool
		wantStack bool
	}{
		{"quit", live, nil, false, false},
		{"killed", live, tea.ErrProgramKilled, false, false},
		{"stopped", stopped, errors.New("read: input closed"), false, false},
		{"failed", live, errors.New("read: input closed"), true, false},
		{"model panic", live, fmt.Errorf("%w: %w", tea.ErrProgramKilled, tea.ErrProgramPanic), true, false},
		{"model panic while stopping", stopped, fmt.Errorf("%w: %w", tea.ErrProgramKilled, tea.ErrProgramPanic), true, false},
		{"drawing panic", live, draw, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := consoleFailed(tc.ctx, tc.err, &stderr); got != tc.want {
				t.Errorf("consoleFailed(%v) = %v; want %v", tc.err, got, tc.want)
			}
			if got := strings.Contains(stderr.String(), "goroutine 7"); got != tc.wantStack {
				t.Errorf("stack on stderr %v, want %v: %q", got, tc.wantStack, stderr.String())
			}
		})
	}
}

package shjob

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether process pid exists and is no zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// pidOf waits for the pid a command wrote into path.
func pidOf(t *testing.T, path string) int {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no pid written")
	return 0
}

// TestRun: the command's output and failure come back as they are; one
// past its time, or stopped by the context, is stopped with what it
// started; one that ends by itself keeps what it started in the
// background.
func TestRun(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := Run(ctx, Options{Cmd: "echo restarted", Timeout: 5 * time.Second, Stdout: &out, Stderr: &out}); err != nil || out.String() != "restarted\n" {
		t.Errorf("echo: %v %q", err, out.String())
	}
	var ee interface{ ExitCode() int }
	if err := Run(ctx, Options{Cmd: "exit 7", Timeout: 5 * time.Second}); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit 7: %v", err)
	}
	if err := Run(ctx, Options{Cmd: "true"}); err == nil {
		t.Error("a zero timeout ran the command")
	}

	dir := t.TempDir()
	bg := filepath.Join(dir, "bg")
	if err := Run(ctx, Options{Cmd: "sleep 30 & echo $! > " + bg, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, bg)
	time.Sleep(100 * time.Millisecond)
	if !alive(pid) {
		t.Error("what a command that ended by itself started was killed")
	}
	syscall.Kill(pid, syscall.SIGKILL)

	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"timeout", func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }, ErrTimeout},
		{"stopped", func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 300*time.Millisecond) }, ErrStopped},
	} {
		t.Run(c.name, func(t *testing.T) {
			cctx, cancel := c.ctx()
			defer cancel()
			timeout := 300 * time.Millisecond
			if c.want == ErrStopped {
				timeout = time.Minute
			}
			child := filepath.Join(t.TempDir(), "child")
			start := time.Now()
			err := Run(cctx, Options{Cmd: "sleep 60 & echo $! > " + child + "; wait", Timeout: timeout, Grace: time.Second})
			if !errors.Is(err, c.want) || time.Since(start) > 10*time.Second {
				t.Fatalf("%v after %s, want %v", err, time.Since(start), c.want)
			}
			pid := pidOf(t, child)
			for i := 0; i < 50 && alive(pid); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Error("what the stopped command started outlived it")
			}
		})
	}
}

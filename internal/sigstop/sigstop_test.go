//go:build unix

package sigstop

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is stderr written by Notify's goroutine and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// say is Notify's say, a line at a time.
func (b *lockedBuffer) say(line string) { b.Write([]byte(line + "\n")) }

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestNotifyForcesExit: the first signal ends the context, and the
// process exits after the deadline if the command is still stopping, with
// 128 plus the signal; a second signal exits at once. The same signal again
// right after the first (GNU timeout sends it to the child, then to its
// process group) is the first one: it exited at once, skipping the cleanup.
func TestNotifyForcesExit(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration // the deadline
		// again, when set, is when the second signal comes after the
		// first was taken.
		again time.Duration
		// soon: the exit comes within 200 ms of the second signal; else at
		// the deadline.
		soon bool
		want string
	}{
		{name: "one signal", after: 300 * time.Millisecond, want: "not stopped after 300ms"},
		{name: "the same again at once", after: 300 * time.Millisecond, again: time.Millisecond, want: "not stopped after 300ms"},
		{name: "the same again later", after: 3 * time.Second, again: SameSignal + 200*time.Millisecond, soon: true, want: "again: exiting now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out lockedBuffer
			exited := make(chan int, 1)
			ctx, stop := Notify(context.Background(), out.say, tt.after, func(code int) { exited <- code }, syscall.SIGUSR1)
			defer stop()
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the signal did not end the context")
			}
			first, sent := time.Now(), time.Now()
			if tt.again > 0 {
				time.Sleep(tt.again)
				sent = time.Now()
				if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case code := <-exited:
				if code != 128+int(syscall.SIGUSR1) {
					t.Fatalf("exit %d", code)
				}
				if took := time.Since(sent); tt.soon && took > 200*time.Millisecond {
					t.Fatalf("a second signal exited after %s", took)
				}
				if took := time.Since(first); !tt.soon && took < tt.after-50*time.Millisecond {
					t.Fatalf("exit after %s, before the deadline (%s); stderr %q", took, tt.after, out.String())
				}
				if !strings.Contains(out.String(), tt.want) {
					t.Fatalf("stderr %q, want %q", out.String(), tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no forced exit")
			}
		})
	}
	// Stopped before any signal: nothing happens later.
	exited := make(chan int, 1)
	_, stop := Notify(context.Background(), (&lockedBuffer{}).say, 50*time.Millisecond, func(code int) { exited <- code }, syscall.SIGUSR1)
	stop()
	select {
	case code := <-exited:
		t.Fatalf("exit %d without a signal", code)
	case <-time.After(200 * time.Millisecond):
	}
}

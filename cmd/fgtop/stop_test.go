//go:build unix

package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNotifyStopForcesExit: the first signal ends the context, and the
// process exits forceAfter later if the command is still stopping, with
// 128 plus the signal; a second signal exits at once.
func TestNotifyStopForcesExit(t *testing.T) {
	for _, twice := range []bool{false, true} {
		var out lockedBuffer
		exited := make(chan int, 1)
		ctx, stop := notifyStopTo(context.Background(), &out, 300*time.Millisecond, func(code int) { exited <- code }, syscall.SIGUSR1)
		defer stop()
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the signal did not end the context")
		}
		sent := time.Now()
		if twice {
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case code := <-exited:
			took := time.Since(sent)
			if code != 128+int(syscall.SIGUSR1) {
				t.Fatalf("exit %d", code)
			}
			if twice && took > 200*time.Millisecond {
				t.Fatalf("a second signal exited after %s", took)
			}
			if !twice && took < 250*time.Millisecond {
				t.Fatalf("forced exit after %s, before the grace", took)
			}
			want := "not stopped after 300ms"
			if twice {
				want = "again: exiting now"
			}
			if !strings.Contains(out.String(), want) {
				t.Fatalf("stderr %q, want %q", out.String(), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no forced exit")
		}
		stop()
	}
	// Stopped before any signal: nothing happens later.
	exited := make(chan int, 1)
	_, stop := notifyStopTo(context.Background(), &lockedBuffer{}, 50*time.Millisecond, func(code int) { exited <- code }, syscall.SIGUSR1)
	stop()
	select {
	case code := <-exited:
		t.Fatalf("exit %d without a signal", code)
	case <-time.After(200 * time.Millisecond):
	}
}

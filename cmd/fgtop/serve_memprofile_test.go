package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestServeMemProfileWithSessionsOpen: FGTOP_SERVE_MEMPROFILE is the heap
// as the stop finds it, the viewer's console still open (its program's
// allocations in it); FGTOP_MEMPROFILE, at the end of the run, comes after
// every session is gone, which made the idle viewers' heap unmeasurable.
func TestServeMemProfileWithSessionsOpen(t *testing.T) {
	sf, keys := demoServeFlags(t)
	path := filepath.Join(t.TempDir(), "heap.txt") // the text form: live bytes per stack
	t.Setenv("FGTOP_SERVE_MEMPROFILE", path)
	// One session's allocations, sampled at the default rate (one a
	// 512 KiB on average), may all be missed: sample one a 4 KiB.
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 4096
	t.Cleanup(func() { runtime.MemProfileRate = rate })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, serveRun{src: &sourceFlags{}, console: &consoleFlags{ascii: true, theme: "dark"}, serve: sf,
			stderr: io.Discard, ready: func(a string) { addrc <- a }})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	c, err := sshtest.Dial(addr, "t", keys.Viewer, sshtest.HostKey(t, sf.hostKey), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out := &sshtest.Buffer{}
	sess.Stdout = out
	if err := sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "[read-only]"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the viewer's console never showed; got %q", out.String())
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no heap profile at the stop: %v", err)
	}
	// Each record: "live objects: live bytes [allocated: bytes] @ pcs",
	// then its stack, a "#" line a frame. Allocations since freed are
	// records too, with no live bytes: only live ones count.
	live := false
	for _, rec := range strings.Split(string(text), "\n\n") {
		var objs, bytes int64
		if _, err := fmt.Sscanf(rec, "%d: %d [", &objs, &bytes); err != nil || bytes == 0 {
			continue
		}
		if strings.Contains(rec, "ui/screen.(*Program).Run") {
			live = true
			break
		}
	}
	if !live {
		t.Error("the heap profile at the stop holds nothing live of the open session's console")
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

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
	srv := startDemoServe(t, sf, serveRun{})
	c, err := sshtest.Dial(srv.addr, "t", keys.Viewer, sshtest.HostKey(t, sf.hostKey), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	viewConsole(t, c, "[read-only]")
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v", err)
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

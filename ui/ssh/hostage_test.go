package sshserve

import (
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// hostage is issue 23's attack on one connection: a viewer asks for a
// 500x200 pty and a shell, never reads the output, sends 200 window
// changes 20 ms apart and disconnects. It returns once it disconnected.
func hostage(t *testing.T, f *fixture, user string, key gossh.Signer) {
	t.Helper()
	c, err := f.dial(user, key)
	if err != nil {
		t.Errorf("dial: %v", err)
		return
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Errorf("session: %v", err)
		return
	}
	// Pipes nobody reads: the client's window closes once its buffer is
	// full, and stays closed.
	if _, err := sess.StdoutPipe(); err != nil {
		t.Error(err)
		return
	}
	if _, err := sess.StderrPipe(); err != nil {
		t.Error(err)
		return
	}
	if err := sess.RequestPty("xterm-256color", MaxHeight, MaxWidth, gossh.TerminalModes{}); err != nil {
		t.Errorf("pty: %v", err)
		return
	}
	if err := sess.Shell(); err != nil {
		t.Errorf("shell: %v", err)
		return
	}
	for i := range 200 {
		// Sizes that change every time, so each one redraws everything.
		_ = sess.WindowChange(MaxHeight-i%7, MaxWidth-i%11)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHostageViewerFreesItsSlot repeats issue 23's first attack: each
// such connection kept its --max-sessions slot forever (the renderer's
// flush waited for the client's window while holding the renderer's lock,
// and the resize handler and the connection's request loop waited behind
// it), so a few of them locked the operators out. Now the slots come back,
// an operator logs in, and Close ends the server promptly.
func TestHostageViewerFreesItsSlot(t *testing.T) {
	f := startServer(t, func(c *Config) {
		c.MaxSessions = 6
		c.MaxViewerSessions = 4
		c.StuckTimeout = 2 * time.Second
	})
	attack := func() {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hostage(t, f, "mallory"+string(rune('a'+i)), f.viewer)
			}()
		}
		wg.Wait()
		waitUntil(t, "the hostages' slots to free", func() bool { return f.srv.SessionCount() == 0 })
	}
	// The first round warms the console's caches; the second must cost
	// nothing more once its sessions are gone.
	attack()
	before := heapInUse()
	attack()
	log := f.log.String()
	if n := strings.Count(log, "msg=connect user=mallory"); n != 8 {
		t.Fatalf("%d hostage sessions admitted, want 8:\n%s", n, log)
	}
	if !strings.Contains(log, "stopped reading its output") && !strings.Contains(log, "took no output") {
		t.Fatalf("no hostage was dropped for not reading:\n%s", log)
	}
	grew := int64(heapInUse()) - int64(before)
	t.Logf("heap in use grew by %.1f MB after the second round of 4 hostages", float64(grew)/(1<<20))
	if grew > 48<<20 {
		t.Fatalf("the hostages left %d MB behind", grew>>20)
	}
	op := f.open(t, "olga", f.operator, nil)
	op.waitScreen(t, "gpu-node01")
	if strings.Contains(op.stderr.raw(), "too many sessions") {
		t.Fatalf("operator refused: %q", op.stderr.raw())
	}
	start := time.Now()
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %s", d)
	}
}

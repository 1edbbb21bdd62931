package sshserve

import (
	"bufio"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/model"
	uiconsole "github.com/fgtop/fgtop/ui/console"
)

// spySizes starts a server whose consoles report every window size they
// are told.
func spySizes(t *testing.T, tweak func(*Config)) (*fixture, chan tea.WindowSizeMsg) {
	sizes := make(chan tea.WindowSizeMsg, 64)
	f := startServer(t, tweak, func(s *Server) {
		next := s.newModel
		s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
			return sizeSpy{sessionModel: next(sub, o), sizes: sizes}
		}
	})
	return f, sizes
}

func waitSize(t *testing.T, sizes <-chan tea.WindowSizeMsg, w, h int) {
	t.Helper()
	deadline := time.After(waitFor)
	var seen []string
	for {
		select {
		case m := <-sizes:
			if m.Width == w && m.Height == h {
				return
			}
			seen = append(seen, fmt.Sprintf("%dx%d", m.Width, m.Height))
		case <-deadline:
			t.Fatalf("the console was never told %dx%d; it was told %v", w, h, seen)
		}
	}
}

// client dials the server, closing the connection when the test ends.
func (f *fixture) client(t *testing.T, user string, key gossh.Signer) *gossh.Client {
	t.Helper()
	c, err := f.dial(user, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// session dials the server and opens a session with nothing requested
// yet.
func (f *fixture) session(t *testing.T, user string, key gossh.Signer) (*gossh.Client, *gossh.Session) {
	t.Helper()
	c := f.client(t, user, key)
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	return c, sess
}

// ptySession is session with a pty of the console's size (termW x termH)
// requested.
func (f *fixture) ptySession(t *testing.T, user string, key gossh.Signer) (*gossh.Client, *gossh.Session) {
	t.Helper()
	c, sess := f.session(t, user, key)
	if err := sess.RequestPty("xterm-256color", termH, termW, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	return c, sess
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestHugeWindowIsCapped repeats issue 16's second attack: a viewer asking
// for a 100000x100000 pty crashed the server out of memory. The session
// now works at MaxWidth x MaxHeight, at the pty request and at every
// resize, and costs a bounded amount of memory.
func TestHugeWindowIsCapped(t *testing.T) {
	f, sizes := spySizes(t, nil)
	before := heapInUse()
	_, sess := f.session(t, "victor", f.viewer)
	scr := newTerm(MaxWidth, MaxHeight)
	sess.Stdout, sess.Stderr = scr, scr
	if _, err := sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 100000, 100000, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitSize(t, sizes, MaxWidth, MaxHeight)
	if err := sess.WindowChange(150, 300); err != nil {
		t.Fatal(err)
	}
	waitSize(t, sizes, 300, 150)
	if err := sess.WindowChange(100000, 100000); err != nil {
		t.Fatal(err)
	}
	waitSize(t, sizes, MaxWidth, MaxHeight)
	waitUntil(t, "a frame at the capped size", func() bool { return strings.Contains(scr.screen(), "gpu-node01") })
	// A frame at the cap is drawn: what the session holds now is what one
	// costs at most.
	time.Sleep(300 * time.Millisecond)
	grew := int64(heapInUse()) - int64(before)
	t.Logf("heap in use grew by %.1f MB for one session at %dx%d", float64(grew)/(1<<20), MaxWidth, MaxHeight)
	if grew > 200<<20 {
		t.Fatalf("one capped session costs %d MB", grew>>20)
	}
	if l := f.log.String(); !strings.Contains(l, "msg=connect") || strings.Contains(l, "100000") || strings.Contains(l, "99999") {
		t.Fatalf("the connect line does not log a capped size:\n%s", l)
	}
}

// TestEnvRequestsAreBounded: 20,000 env requests of 30 kB took the server
// to 879 MB; a session now gets maxEnv of them, within maxEnvBytes.
func TestEnvRequestsAreBounded(t *testing.T) {
	f := startServer(t, nil)
	c, sess := f.session(t, "victor", f.viewer)
	ok := 0
	for i := range 3 * maxEnv {
		if sess.Setenv(fmt.Sprintf("V%d", i), "x") == nil {
			ok++
		}
	}
	if ok != maxEnv {
		t.Fatalf("%d env requests accepted, want %d", ok, maxEnv)
	}
	// Big values hit the byte limit first, on a fresh session.
	sess2, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	ok = 0
	for i := range 10 {
		if sess2.Setenv(fmt.Sprintf("BIG%d", i), strings.Repeat("x", 30<<10)) == nil {
			ok++
		}
	}
	if ok != 0 {
		t.Fatalf("%d env requests of 30 kB accepted, want none", ok)
	}
}

// TestChannelsPerConnectionAreBounded: one connection held 20,000
// channels; it now holds MaxChannels, and gets another once one closes.
func TestChannelsPerConnectionAreBounded(t *testing.T) {
	f := startServer(t, nil)
	c := f.client(t, "victor", f.viewer)
	var open []*gossh.Session
	for range MaxChannels {
		s, err := c.NewSession()
		if err != nil {
			t.Fatalf("session %d of %d: %v", len(open)+1, MaxChannels, err)
		}
		open = append(open, s)
	}
	_, err := c.NewSession()
	var oce *gossh.OpenChannelError
	if !errors.As(err, &oce) || oce.Reason != gossh.ResourceShortage {
		t.Fatalf("session %d: err %v, want a refusal", MaxChannels+1, err)
	}
	_ = open[0].Close()
	waitUntil(t, "a channel to free", func() bool {
		s, err := c.NewSession()
		if err == nil {
			_ = s.Close()
		}
		return err == nil
	})
}

// TestConnectionWithoutSessionIsClosed: an authenticated connection that
// opens no session escaped both the session limit and the idle timeout.
func TestConnectionWithoutSessionIsClosed(t *testing.T) {
	f := startServer(t, func(c *Config) { c.NoSessionTimeout = 300 * time.Millisecond })
	idle := f.client(t, "victor", f.viewer)
	gone := make(chan error, 1)
	go func() { gone <- idle.Wait() }()
	// A connection with a console is not closed, however long it lasts.
	live := f.open(t, "olga", f.operator, nil)
	live.waitScreen(t, "gpu-node01")
	select {
	case <-gone:
	case <-time.After(waitFor):
		t.Fatal("a connection without a session was not closed")
	}
	waitUntil(t, "the close in the log", func() bool { return strings.Contains(f.log.String(), "no console for 300ms") })
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-live.done:
		t.Fatalf("the live session ended: %v", err)
	default:
	}
	live.press(t, "q")
	live.waitEnd(t)
	// Once its console ended, the connection is closed too.
	done := make(chan error, 1)
	go func() { done <- live.client.Wait() }()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatal("a connection whose console ended was kept open")
	}
}

// TestNoConsoleClockStopsWithItsConnection: a session that ended after its
// connection had closed (a killed client, a fleet ending its stream)
// re-armed the connection's no-console clock, so a minute later the log
// said "closing connection ... no console for 1m0s" about a connection long
// gone, after every such session. A connection kept open without a console
// is still closed, and logged.
func TestNoConsoleClockStopsWithItsConnection(t *testing.T) {
	const noConsole = 300 * time.Millisecond
	f := startServer(t, func(c *Config) { c.NoSessionTimeout = noConsole })
	tests := []struct {
		name string
		// end ends the session and returns its client, still connected.
		end func(t *testing.T) *gossh.Client
		// stays keeps the client connected: the server closes it.
		stays bool
	}{
		{name: "quit, then the client leaves", end: func(t *testing.T) *gossh.Client {
			c := f.open(t, "olga", f.operator, nil)
			c.waitScreen(t, "gpu-node01")
			c.press(t, "q")
			c.waitEnd(t)
			return c.client
		}},
		{name: "client killed", end: func(t *testing.T) *gossh.Client {
			c := f.open(t, "olga", f.operator, nil)
			c.waitScreen(t, "gpu-node01")
			return c.client
		}},
		{name: "follow stream left by its fleet", end: func(t *testing.T) *gossh.Client {
			c, sess := f.session(t, "victor", f.viewer)
			out, err := sess.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := sess.Start("snapshot --follow --json"); err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatalf("no snapshot line: %v", err)
			}
			return c
		}},
		{name: "quit, the client stays", stays: true, end: func(t *testing.T) *gossh.Client {
			c := f.open(t, "olga", f.operator, nil)
			c.waitScreen(t, "gpu-node01")
			c.press(t, "q")
			c.waitEnd(t)
			return c.client
		}},
	}
	closing := func(remote string) string { return `msg="closing connection" remote=` + remote + " " }
	var gone, kept []string
	for _, tt := range tests {
		c := tt.end(t)
		remote := c.LocalAddr().String()
		if tt.stays {
			kept = append(kept, remote)
			continue
		}
		_ = c.Close()
		gone = append(gone, remote)
		waitUntil(t, tt.name+": the server to see the connection end", func() bool {
			return f.srv.SessionCount() == 0
		})
	}
	for _, remote := range kept {
		waitUntil(t, "the close of a connection kept without a console", func() bool {
			return strings.Contains(f.log.String(), closing(remote)+`why="no console for 300ms"`)
		})
	}
	// Every clock re-armed by mistake has run out by now.
	time.Sleep(3 * noConsole)
	var again []string
	for i, remote := range gone {
		if strings.Contains(f.log.String(), closing(remote)) {
			again = append(again, tests[i].name)
		}
	}
	if len(again) > 0 {
		t.Fatalf("closed connections logged as closed for want of a console (%s):\n%s", strings.Join(again, "; "), f.log.String())
	}
}

// TestMaxConnTimeClosesSessionsCleanly: the connection's lifetime ends its
// session with a reason, not a dropped connection.
func TestMaxConnTimeClosesSessionsCleanly(t *testing.T) {
	f := startServer(t, func(c *Config) { c.MaxConnTime = 5 * time.Second })
	c := f.open(t, "victor", f.viewer, nil)
	c.waitScreen(t, "gpu-node01")
	c.waitEnd(t)
	if got := c.stderr.raw(); !strings.Contains(got, "connections last at most 5s") {
		t.Fatalf("stderr %q", got)
	}
}

// TestRefusedSessionsLeakNothing: a refused session's resizes were never
// read, so the library's request loop blocked for good and each refused
// session left goroutines behind. Resizes before the shell request (which
// hung the session itself) are part of it.
func TestRefusedSessionsLeakNothing(t *testing.T) {
	f := startServer(t, func(c *Config) { c.MaxSessions = 1 })
	first := f.open(t, "olga", f.operator, nil)
	first.waitScreen(t, "gpu-node01")
	settle := func() int {
		time.Sleep(200 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	base := settle()
	const n = 20
	for i := range n {
		c, sess := f.session(t, "victor", f.viewer)
		if err := sess.RequestPty("xterm", 24, 80, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			_ = sess.WindowChange(25+j, 81)
		}
		var stderr strings.Builder
		sess.Stderr = &stderr
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			_ = sess.WindowChange(30+j, 90)
		}
		if err := sess.Wait(); err == nil {
			t.Fatalf("session %d was not refused", i)
		}
		_ = c.Close()
	}
	var now int
	deadline := time.Now().Add(waitFor)
	for now = settle(); now > base+5 && time.Now().Before(deadline); now = settle() {
	}
	if now > base+5 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after %d refused sessions, %d before:\n%s", now, n, base, buf[:runtime.Stack(buf, true)])
	}
	if !strings.Contains(f.log.String(), "too many sessions") {
		t.Fatal("the sessions were not refused for the limit")
	}
}

// TestResizesBeforeTheShellAreKept: resizes sent before the shell request
// are folded into the pty request, so the console starts at the newest
// size (capped) and the session does not hang.
func TestResizesBeforeTheShellAreKept(t *testing.T) {
	f, sizes := spySizes(t, nil)
	_, sess := f.session(t, "victor", f.viewer)
	sess.Stdout = newTerm(MaxWidth, MaxHeight)
	if err := sess.RequestPty("xterm", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	for _, hw := range [][2]int{{30, 100}, {100000, 99999}, {45, 130}} {
		if err := sess.WindowChange(hw[0], hw[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitSize(t, sizes, 130, 45)
	if err := sess.WindowChange(100000, 99999); err != nil {
		t.Fatal(err)
	}
	waitSize(t, sizes, MaxWidth, MaxHeight)
}

// TestConnIdleTimeout: a connection on which nothing moves is closed; one
// with a console is kept moving even when its screen never changes (the
// tests' clock is fixed, so nothing is redrawn).
func TestConnIdleTimeout(t *testing.T) {
	f := startServer(t, func(c *Config) {
		// 1.5 s, keepalives every 0.5 s: at 600 ms, a loaded 2-core
		// machine under -race once let a keepalive slip past the timeout.
		c.ConnIdleTimeout = 1500 * time.Millisecond
		c.NoSessionTimeout = time.Hour
	})
	live := f.open(t, "olga", f.operator, nil)
	live.waitScreen(t, "gpu-node01")
	idle := f.client(t, "victor", f.viewer)
	gone := make(chan error, 1)
	go func() { gone <- idle.Wait() }()
	select {
	case <-gone:
	case <-time.After(waitFor):
		t.Fatal("an idle connection was not closed")
	}
	time.Sleep(2 * time.Second)
	select {
	case err := <-live.done:
		t.Fatalf("a live console's connection was closed as idle: %v", err)
	default:
	}
	if f.srv.SessionCount() != 1 {
		t.Fatal("the live session is gone")
	}
}

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/internal/sshtest"
	sshserve "github.com/fgtop/fgtop/ui/ssh"
)

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hk := filepath.Join(dir, "hk")
	tests := []struct {
		name string
		args []string
	}{
		{"no keys", []string{"serve", "--demo", "--host-key", hk}},
		{"no host key", []string{"serve", "--demo", "--authorized-keys", keys}},
		{"bad listen", []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", hk, "--listen", "nowhere"}},
		{"zero sessions", []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", hk, "--max-sessions", "0"}},
		{"demo and config", []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", hk, "--config", "agent.toml"}},
		{"seed without demo", []string{"serve", "--authorized-keys", keys, "--host-key", hk, "--seed", "3"}},
		{"missing keys file", []string{"serve", "--demo", "--authorized-keys", filepath.Join(dir, "nope"), "--host-key", hk, "--listen", "127.0.0.1:0"}},
		{"missing theme dir", []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", hk, "--theme-dir", filepath.Join(dir, "nope")}},
		{"theme dir a file", []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", hk, "--theme-dir", keys}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := run(tt.args); code != exitBadUsage {
				t.Fatalf("exit %d, want %d", code, exitBadUsage)
			}
		})
	}
}

// TestServeSharesLeaveOperatorsASlot: --max-sessions 2 gave viewers' consoles
// and the streams a slot each, and --max-sessions 4 took shares of 4 and 4,
// so a viewer and a fleet locked every operator out, silently. Shares that
// leave operators no slot are refused, saying what to change; the defaults
// leave them one from --max-sessions 3 on.
func TestServeSharesLeaveOperatorsASlot(t *testing.T) {
	tests := []struct {
		name                     string
		sessions, viewers, strms int
		want                     string // "": accepted
	}{
		{name: "defaults", sessions: sshserve.DefaultMaxSessions},
		{name: "the fewest sessions", sessions: 3},
		{name: "shares given", sessions: 8, viewers: 3, strms: 4},
		{name: "one session", sessions: 1, want: "--max-sessions 1 leaves operators no slot: viewers' consoles and the snapshot streams have one each at least, so want 3 or more"},
		{name: "two sessions", sessions: 2, want: "--max-sessions 2 leaves operators no slot"},
		{name: "shares of every session", sessions: 4, viewers: 4, strms: 4,
			want: "--max-viewer-sessions 4 and --max-stream-sessions 4 leave operators no slot of --max-sessions 4: lower the shares, or raise --max-sessions to 9 or more"},
		{name: "shares of every session but one", sessions: 9, viewers: 4, strms: 5, want: "raise --max-sessions to 10 or more"},
		{name: "a given share and a default one", sessions: 4, viewers: 3,
			want: "--max-viewer-sessions 3 and --max-stream-sessions 1 (a quarter of --max-sessions, at least 1) leave operators no slot of --max-sessions 4: lower the shares, or raise --max-sessions to 5 or more"},
		{name: "a default share that grows", sessions: 8, strms: 6, want: "raise --max-sessions to 9 or more"},
	}
	// Through the command line, as the operator met it. The listen
	// address is refused after the shares are checked, so that a share
	// accepted by mistake opens no port.
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if tt.want == "" {
			continue
		}
		t.Run("command line/"+tt.name, func(t *testing.T) {
			args := []string{"serve", "--demo", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "hk"), "--listen", "nowhere",
				"--max-sessions", strconv.Itoa(tt.sessions), "--max-viewer-sessions", strconv.Itoa(tt.viewers), "--max-stream-sessions", strconv.Itoa(tt.strms)}
			code, out := runCLIQuiet(t, args...)
			if code != exitBadUsage || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d saying %q; output:\n%s", code, exitBadUsage, tt.want, out)
			}
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sf := serveFlags{maxSessions: tt.sessions, maxViewerSessions: tt.viewers, maxStreamSessions: tt.strms}
			err := sf.checkShares()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			var ee *exitError
			if tt.want != "" && (!errors.As(err, &ee) || ee.code != exitBadUsage) {
				t.Fatalf("%v: not bad usage (exit %d)", err, exitBadUsage)
			}
			if err == nil {
				// What the server then holds back for operators.
				v, s := sshserve.Shares(tt.sessions, tt.viewers, tt.strms)
				if tt.sessions-v-s < 1 {
					t.Fatalf("accepted, operators have %d slots", tt.sessions-v-s)
				}
			}
		})
	}
}

// demoServeFlags are the flags of `fgtop serve --demo` on a loopback
// port, with an operator and a viewer key and a log file, all in a temp
// dir.
func demoServeFlags(t *testing.T) (*serveFlags, sshtest.Keys) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	keys := sshtest.NewKeys(t)
	keysPath := filepath.Join(dir, "authorized_keys")
	sshtest.WriteAtomic(t, keysPath, keys.AuthorizedKeys())
	return &serveFlags{listen: "127.0.0.1:0", authorizedKeys: keysPath, hostKey: filepath.Join(dir, "host_key"),
		maxSessions: 4, logPath: filepath.Join(dir, "serve.log"), demo: true, seed: 1}, keys
}

// demoServer is `fgtop serve` run in process by startDemoServe.
type demoServer struct {
	addr   string
	cancel context.CancelFunc
	ended  chan struct{} // closed when runServe returns
	err    error         // runServe's, once ended is closed
}

// startDemoServe runs `fgtop serve` with sf (demoServeFlags) on the demo
// node, r giving the hooks besides ready, and returns once it listens.
// A test that ends without stopping it has it stopped.
func startDemoServe(t *testing.T, sf *serveFlags, r serveRun) *demoServer {
	t.Helper()
	ro := r.console != nil && r.console.readOnly
	r.src, r.console, r.serve = &sourceFlags{}, &consoleFlags{ascii: true, theme: "dark", readOnly: ro}, sf
	if r.stderr == nil {
		r.stderr = io.Discard
	}
	addrc := make(chan string, 1)
	r.ready = func(a string) { addrc <- a }
	ctx, cancel := context.WithCancel(context.Background())
	s := &demoServer{cancel: cancel, ended: make(chan struct{})}
	go func() {
		s.err = runServe(ctx, r)
		close(s.ended)
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.addr = <-addrc:
	case <-s.ended:
		t.Fatalf("serve ended: %v", s.err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return s
}

// stop ends the server and returns runServe's error; the test fails
// when it does not end within 15 s.
func (s *demoServer) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case <-s.ended:
		return s.err
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
		return nil
	}
}

// viewConsole opens a console on c as a viewer's terminal would (a
// 120x40 pty and a shell) and waits, 20 s at most, until its output
// holds every mark.
func viewConsole(t *testing.T, c *gossh.Client, marks ...string) *sshtest.Buffer {
	t.Helper()
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
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		missing := slices.DeleteFunc(slices.Clone(marks), func(m string) bool { return strings.Contains(out.String(), m) })
		if len(missing) == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the viewer's console never showed %q; got %q", missing, out.String())
		}
	}
}

// TestServeDemo is the check, in process: `fgtop serve --demo` on
// a loopback port with an operator key and a viewer key; a third key is
// refused, the viewer gets the read-only console of the demo node, every
// session shares one partition desk on the demo's agent.toml, and the log
// file records the refusal and the connect.
func TestServeDemo(t *testing.T) {
	sf, keys := demoServeFlags(t)
	logPath, hostKeyPath := sf.logPath, sf.hostKey
	sf.themeDir = t.TempDir()
	cfgc := make(chan sshserve.Config, 1)
	srv := startDemoServe(t, sf, serveRun{configured: func(c sshserve.Config) { cfgc <- c }})
	defer func() {
		if err := srv.stop(t); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	cfg := <-cfgc
	if cfg.ThemeDir != sf.themeDir {
		t.Fatalf("the server's theme dir %q, want --theme-dir %q", cfg.ThemeDir, sf.themeDir)
	}
	if d := cfg.UI.Desk; d == nil || filepath.Base(d.Path()) != "agent.toml" {
		t.Fatalf("the server's desk %v: want one on the demo node's agent.toml", d)
	} else if _, err := os.Stat(d.Path()); err != nil {
		t.Fatalf("the desk's config: %v", err)
	}
	// An operator's session over SSH restarts the demo's agents as the
	// local demo console does (R): an apply there would otherwise leave
	// them "restart pending" for good.
	if cfg.UI.DemoRestart == nil {
		t.Error("the served demo has no restart hook: its operators cannot restart the agents after an apply")
	} else if _, err := cfg.UI.DemoRestart(); err != nil {
		t.Errorf("restarting the demo's agents with nothing pending: %v", err)
	}
	hostKey := sshtest.HostKey(t, hostKeyPath)
	dial := func(k gossh.Signer) (*gossh.Client, error) {
		return sshtest.Dial(srv.addr, "t", k, hostKey, 10*time.Second)
	}
	if _, err := dial(keys.Stranger); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("third key: %v, want permission denied", err)
	}
	c, err := dial(keys.Viewer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The window title names the demo node; the header carries the mark.
	viewConsole(t, c, "fgtop fgtop-demo", "[read-only]")
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refused key", keys.Stranger.Fingerprint(), "msg=connect", "role=viewer", keys.Viewer.Fingerprint()} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("the log lacks %q:\n%s", want, logged)
		}
	}
	if strings.Contains(string(logged), "\x1b") {
		t.Error("the log holds terminal output")
	}
}

// TestServeDemoOutlivesItsNode: when the demo's simulated agents stop on
// an error of their own (issue 16: too many open files under a connection
// flood), `fgtop serve --demo` used to exit, dropping every session. It
// now logs the error and goes on serving the node's last state.
func TestServeDemoOutlivesItsNode(t *testing.T) {
	sf, _ := demoServeFlags(t)
	logPath := sf.logPath
	nodec := make(chan *demo.Node, 1)
	srv := startDemoServe(t, sf, serveRun{demoNode: func(n *demo.Node) { nodec <- n }})
	var node *demo.Node
	select {
	case node = <-nodec:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start its demo node")
	}
	// Every scratch root becomes a file: the agents' next write fails.
	// The root is moved aside, not removed: RemoveAll raced the agents'
	// writes into it ("directory not empty" on a busy machine).
	for _, r := range node.Roots {
		if err := os.Rename(r.Path, r.Path+".gone"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r.Path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-node.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the demo node did not stop")
	}
	if node.Err() == nil {
		t.Fatal("the demo node stopped without an error")
	}
	select {
	case <-srv.ended:
		t.Fatalf("serve exited when its demo node stopped: %v", srv.err)
	case <-time.After(time.Second):
	}
	logged, _ := os.ReadFile(logPath)
	if !strings.Contains(string(logged), "demo node stopped: serving its last state") {
		t.Fatalf("the log does not say the node stopped:\n%s", logged)
	}
	srv.stop(t)
}

package sshserve

import (
	"bytes"
	"context"
	"errors"
	"github.com/fsnotify/fsnotify"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/internal/sshtest"
	"github.com/fgtop/fgtop/model"
	uiconsole "github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// waitFor bounds every wait of these tests: generous for a loaded 2-core
// machine, short enough that a hang fails fast.
const waitFor = 10 * time.Second

// publisher is a stand-in for the engine: latest-wins subscriptions, one
// per session, closed when the session's context ends.
type publisher struct {
	mu     sync.Mutex
	latest *model.Snapshot
	subs   map[chan *model.Snapshot]bool
}

func newPublisher(first *model.Snapshot) *publisher {
	return &publisher{latest: first, subs: map[chan *model.Snapshot]bool{}}
}

func (p *publisher) Subscribe(ctx context.Context) <-chan *model.Snapshot {
	ch := make(chan *model.Snapshot, 1)
	p.mu.Lock()
	p.subs[ch] = true
	if p.latest != nil {
		ch <- p.latest
	}
	p.mu.Unlock()
	go func() {
		<-ctx.Done()
		p.mu.Lock()
		delete(p.subs, ch)
		close(ch)
		p.mu.Unlock()
	}()
	return ch
}

func (p *publisher) Publish(s *model.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latest = s
	for ch := range p.subs {
		select { // latest wins: drop what the session has not taken yet
		case <-ch:
		default:
		}
		ch <- s
	}
}

func (p *publisher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subs)
}

// fixture is a running server with an operator key, a viewer key and a
// key nobody authorized.
type fixture struct {
	srv                        *Server
	addr                       string
	pub                        *publisher
	log                        *sshtest.Buffer
	keysPath, hostKeyPath      string
	operator, viewer, stranger sshtest.Key
	hostKey                    gossh.PublicKey
}

// startServer starts a server on a loopback port; tweak changes its
// config, and hooks the server before it serves.
func startServer(t *testing.T, tweak func(*Config), hooks ...func(*Server)) *fixture {
	t.Helper()
	dir := t.TempDir()
	keys := sshtest.NewKeys(t)
	f := &fixture{
		pub: newPublisher(fake.Node(fake.Options{})), log: &sshtest.Buffer{},
		keysPath: filepath.Join(dir, "authorized_keys"), hostKeyPath: filepath.Join(dir, "host_ed25519"),
		operator: keys.Operator, viewer: keys.Viewer, stranger: keys.Stranger,
	}
	sshtest.WriteAtomic(t, f.keysPath, keys.AuthorizedKeys())
	// The notification path is under test; where this machine has no
	// inotify instance left (other processes hold the 128 a user may
	// have), the server polls instead, and so must the test, or a reload
	// test would wait for an hour.
	keysPoll := time.Hour
	if w, err := fsnotify.NewWatcher(); err != nil {
		t.Logf("no inotify instance (%v): authorized_keys reloads are tested through polling", err)
		keysPoll = 200 * time.Millisecond
	} else {
		w.Close()
	}
	cfg := Config{
		Subscribe: f.pub.Subscribe, AuthorizedKeys: f.keysPath, HostKey: f.hostKeyPath,
		IdleTimeout: -1, KeysPoll: keysPoll,
		Logger: slog.New(slog.NewTextHandler(f.log, nil)),
		UI:     uiconsole.Options{ASCII: true, Background: "dark", Now: func() time.Time { return fake.T0 }},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		h(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	f.srv, f.addr = srv, ln.Addr().String()
	f.hostKey = sshtest.HostKey(t, f.hostKeyPath)
	return f
}

func (f *fixture) dial(user string, key gossh.Signer) (*gossh.Client, error) {
	return sshtest.Dial(f.addr, user, key, f.hostKey, waitFor)
}

// console is one client session with a terminal.
type console struct {
	client *gossh.Client
	sess   *gossh.Session
	scr    *term
	stderr *term
	in     io.WriteCloser
	done   chan error
}

const termW, termH = 120, 40

func (f *fixture) open(t *testing.T, user string, key gossh.Signer, env map[string]string) *console {
	t.Helper()
	c, sess := f.session(t, user, key)
	for k, v := range env {
		if err := sess.Setenv(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.RequestPty("xterm-256color", termH, termW, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	con := &console{client: c, sess: sess, scr: newTerm(termW, termH), stderr: newTerm(termW, termH), done: make(chan error, 1)}
	sess.Stdout, sess.Stderr = con.scr, con.stderr
	var err error
	if con.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { con.done <- sess.Wait() }()
	return con
}

// waitScreen waits until the screen shows every want, or fails the test
// with the screen it saw last.
func (c *console) waitScreen(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		scr := c.scr.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return scr
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q; last screen:\n%s", missing, scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEnd waits for the server to end the session.
func (c *console) waitEnd(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(waitFor):
		t.Fatalf("the session did not end; stderr %q", c.stderr.raw())
		return nil
	}
}

func (c *console) press(t *testing.T, keys string) {
	t.Helper()
	if _, err := io.WriteString(c.in, keys); err != nil {
		t.Fatal(err)
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestUnknownKeyRefused(t *testing.T) {
	f := startServer(t, nil)
	_, err := f.dial("mallory", f.stranger)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("a key not in authorized_keys: got %v, want an authentication failure", err)
	}
	fp := gossh.FingerprintSHA256(f.stranger.PublicKey())
	waitUntil(t, "the refusal in the log", func() bool {
		l := f.log.String()
		return strings.Contains(l, "refused key") && strings.Contains(l, fp) && strings.Contains(l, "refused connection")
	})
	if f.srv.SessionCount() != 0 {
		t.Fatal("a refused key holds a session")
	}
}

func TestRolesShapeTheConsole(t *testing.T) {
	f := startServer(t, nil)
	tests := []struct {
		name    string
		key     sshtest.Key
		header  []string // on the main screen
		help    []string // in the help overlay
		helpNot string
		roleLog string
	}{
		{name: "viewer", key: f.viewer, header: []string{"[read-only]"},
			help: []string{"read-only: no key changes the node"}, helpNot: "edit partition", roleLog: "role=viewer"},
		{name: "operator", key: f.operator, header: []string{"gpu-node01"},
			// Not the viewer's words: ":journal ... (read-only)" is in
			// every role's command list.
			help: []string{"edit partition"}, helpNot: "read-only: no key changes the node", roleLog: "role=operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.open(t, tt.name, tt.key, nil)
			scr := c.waitScreen(t, append([]string{"gpu-node01"}, tt.header...)...)
			if tt.name == "operator" && strings.Contains(scr, "[read-only]") {
				t.Fatalf("the operator's console is read-only:\n%s", scr)
			}
			c.press(t, "?")
			scr = c.waitScreen(t, tt.help...)
			if strings.Contains(scr, tt.helpNot) {
				t.Fatalf("%s help shows %q:\n%s", tt.name, tt.helpNot, scr)
			}
			// q is a letter of the help's filter: ? closes the help first.
			c.press(t, "?")
			c.press(t, "q")
			if err := c.waitEnd(t); err != nil {
				t.Fatalf("quit: %v", err)
			}
			fp := tt.key.Fingerprint()
			waitUntil(t, "connect and disconnect in the log", func() bool {
				l := f.log.String()
				return strings.Contains(l, "msg=connect user="+tt.name+" key="+fp) &&
					strings.Contains(l, tt.roleLog) && strings.Contains(l, "msg=disconnect user="+tt.name) &&
					strings.Contains(l, "end=quit")
			})
		})
	}
	if strings.Contains(f.log.String(), "\x1b") {
		t.Fatal("the log holds terminal output")
	}
}

func TestTwoSessionsSeeTheSameLiveChange(t *testing.T) {
	f := startServer(t, nil)
	a := f.open(t, "olga", f.operator, nil)
	b := f.open(t, "victor", f.viewer, nil)
	a.waitScreen(t, "gpu-node01")
	b.waitScreen(t, "gpu-node01")
	if n := f.pub.count(); n != 2 {
		t.Fatalf("%d subscriptions, want one per session", n)
	}
	next := fake.Node(fake.Options{})
	next.Seq++
	next.Node = "gpu-node77"
	f.pub.Publish(next)
	a.waitScreen(t, "gpu-node77")
	b.waitScreen(t, "gpu-node77", "[read-only]")
	// A client that goes away without quitting is logged as such; its
	// neighbour goes on.
	_ = a.client.Close()
	waitUntil(t, "the client's departure in the log", func() bool {
		return strings.Contains(f.log.String(), `msg=disconnect user=olga`) && strings.Contains(f.log.String(), `end="client gone"`)
	})
	last := fake.Node(fake.Options{})
	last.Node = "gpu-node78"
	f.pub.Publish(last)
	b.waitScreen(t, "gpu-node78")
}

func TestRevokedKeyIsCutOff(t *testing.T) {
	f := startServer(t, nil)
	op := f.open(t, "olga", f.operator, nil)
	v := f.open(t, "victor", f.viewer, nil)
	op.waitScreen(t, "gpu-node01")
	v.waitScreen(t, "[read-only]")
	// The viewer's line goes; the operator's stays.
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine(`environment="FGTOP_ROLE=operator"`, "olga@ops"))
	err := v.waitEnd(t)
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
		t.Fatalf("revoked session ended with %v, want exit status 1", err)
	}
	if got := v.stderr.raw(); !strings.Contains(got, "your key was removed from authorized_keys") {
		t.Fatalf("the revoked session was not told why: %q", got)
	}
	if _, err := f.dial("victor", f.viewer); err == nil {
		t.Fatal("a removed key can still connect")
	}
	// The operator's session goes on, live.
	next := fake.Node(fake.Options{})
	next.Node = "gpu-node02"
	f.pub.Publish(next)
	op.waitScreen(t, "gpu-node02")
	if n := f.srv.SessionCount(); n != 1 {
		t.Fatalf("%d sessions, want the operator's only", n)
	}
	waitUntil(t, "the cut in the log", func() bool {
		return strings.Contains(f.log.String(), `why="your key was removed from authorized_keys"`)
	})
}

func TestDemotedOperatorIsCutOff(t *testing.T) {
	f := startServer(t, nil)
	op := f.open(t, "olga", f.operator, nil)
	op.waitScreen(t, "gpu-node01")
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine("", "olga@ops"))
	op.waitEnd(t)
	if got := op.stderr.raw(); !strings.Contains(got, "role changed to viewer") {
		t.Fatalf("stderr %q", got)
	}
	// Reconnecting gives the viewer's console.
	again := f.open(t, "olga", f.operator, nil)
	again.waitScreen(t, "[read-only]")
}

func TestLimits(t *testing.T) {
	t.Run("no pty", func(t *testing.T) {
		f := startServer(t, nil)
		_, sess := f.session(t, "victor", f.viewer)
		var stderr bytes.Buffer
		sess.Stderr = &stderr
		err := sess.Run("")
		var exit *gossh.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 2 || !strings.Contains(stderr.String(), "the console needs a terminal") {
			t.Fatalf("no pty: err %v, stderr %q", err, stderr.String())
		}
		waitUntil(t, "the refusal in the log", func() bool {
			return strings.Contains(f.log.String(), `msg="refused session" user=victor`)
		})
	})
	t.Run("max sessions", func(t *testing.T) {
		f := startServer(t, func(c *Config) { c.MaxSessions = 1 })
		first := f.open(t, "olga", f.operator, nil)
		first.waitScreen(t, "gpu-node01")
		second := f.open(t, "victor", f.viewer, nil)
		second.waitEnd(t)
		if got := second.stderr.raw(); !strings.Contains(got, "too many sessions (the limit is 1)") {
			t.Fatalf("stderr %q", got)
		}
		first.press(t, "q")
		first.waitEnd(t)
		waitUntil(t, "the slot to free", func() bool { return f.srv.SessionCount() == 0 })
		f.open(t, "victor", f.viewer, nil).waitScreen(t, "[read-only]")
	})
	t.Run("idle timeout", func(t *testing.T) {
		f := startServer(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
		c := f.open(t, "victor", f.viewer, nil)
		c.waitEnd(t)
		if got := c.stderr.raw(); !strings.Contains(got, "no input for 300ms") {
			t.Fatalf("stderr %q", got)
		}
	})
	t.Run("command", func(t *testing.T) {
		f := startServer(t, nil)
		_, sess := f.ptySession(t, "victor", f.viewer)
		out, err := sess.CombinedOutput("cat /etc/passwd")
		if err == nil || !strings.Contains(string(out), "fgtop serve: \"cat\" is not a command here; read-only commands only: the snapshot stream") || !strings.Contains(string(out), "history --json (--device ID") {
			t.Fatalf("a command: err %v, output %q", err, out)
		}
	})
}

// TestExecExitStatus: a command the asker got wrong exits 2, as the same
// mistake on the command line does; what the node cannot answer exits 1.
func TestExecExitStatus(t *testing.T) {
	f := startServer(t, nil)
	cases := []struct {
		name, cmd string
		code      int
		says      string
	}{
		{"a relative --since", "history --json --device GPU1 --since -5s", 2, `--since "-5s": want an RFC 3339 time`},
		{"a relative --at", "snapshot --at -1h --json", 2, `--at "-1h": want an RFC 3339 time`},
		{"an unknown command", "cat /etc/passwd", 2, "read-only commands only"},
		{"a console without a terminal", "", 2, "the console needs a terminal"},
		{"a history query on a node with no record", "history --json --device GPU1", 1, "this node keeps no record"},
		// The local command's words: a leading fgtop is the command's name.
		{"fgtop before the command", "fgtop history --json --device GPU1", 1, "this node keeps no record"},
		{"fgtop by its path", "/usr/local/bin/fgtop snapshot --at -1h --json", 2, `--at "-1h": want an RFC 3339 time`},
		{"fgtop alone without a terminal", "fgtop", 2, "the console needs a terminal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, sess := f.session(t, "victor", f.viewer)
			var stderr bytes.Buffer
			sess.Stderr = &stderr
			err := sess.Run(c.cmd)
			var exit *gossh.ExitError
			if !errors.As(err, &exit) || exit.ExitStatus() != c.code || !strings.Contains(stderr.String(), c.says) {
				t.Fatalf("%q: err %v, stderr %q; want exit status %d saying %q", c.cmd, err, stderr.String(), c.code, c.says)
			}
		})
	}
}

// TestNoRecordNamesFGTOP_HISTORYOff: a node whose record is off because
// FGTOP_HISTORY=off is set in fgtop serve's environment says so to the
// asker (a fleet at a past moment), not "run fgtop serve with --history
// DIR" as if a flag were missing; exit 1 either way.
func TestNoRecordNamesFGTOP_HISTORYOff(t *testing.T) {
	f := startServer(t, func(c *Config) { c.UI.HistoryOffByEnv = true })
	for _, cmd := range []string{"history --json --device GPU1", "snapshot --at 2026-11-20T10:00:00Z --json"} {
		_, sess := f.session(t, "victor", f.viewer)
		var stderr bytes.Buffer
		sess.Stderr = &stderr
		err := sess.Run(cmd)
		var exit *gossh.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "FGTOP_HISTORY=off is set in fgtop serve's environment") {
			t.Errorf("%q: err %v, stderr %q", cmd, err, stderr.String())
		}
	}
}

// TestNoRecordNamesTheDemosFiles: serve on fgtop demo's files keeps no
// record (the console's Unrecorded mark); a fleet asking its past is told
// that, and how to record anyway, not sent to look for a missing flag.
func TestNoRecordNamesTheDemosFiles(t *testing.T) {
	f := startServer(t, func(c *Config) { c.UI.Unrecorded = "demo's files: not recorded" })
	_, sess := f.session(t, "victor", f.viewer)
	var stderr bytes.Buffer
	sess.Stderr = &stderr
	err := sess.Run("history --json --device GPU1")
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "its files are fgtop demo's") {
		t.Errorf("err %v, stderr %q", err, stderr.String())
	}
}

func TestNoColorFromTheClient(t *testing.T) {
	f := startServer(t, nil)
	plain := f.open(t, "victor", f.viewer, map[string]string{"NO_COLOR": "1"})
	colour := f.open(t, "olga", f.operator, map[string]string{"COLORTERM": "truecolor"})
	plain.waitScreen(t, "gpu-node01")
	colour.waitScreen(t, "gpu-node01")
	// Each program has its own profile: the NO_COLOR session gets no
	// colour sequences at all, its neighbour gets 24-bit ones.
	// Only SGR sequences count: a cursor move to row 38 ("\x1b[38;13H")
	// is no colour.
	sgr := regexp.MustCompile(`\x1b\[([0-9;:]*)m`)
	colourAt := func(s string) int {
		for _, m := range sgr.FindAllStringSubmatchIndex(s, -1) {
			for _, p := range strings.FieldsFunc(s[m[2]:m[3]], func(r rune) bool { return r == ';' || r == ':' }) {
				n, err := strconv.Atoi(p)
				if err == nil && (n == 38 || n == 48 || (n >= 30 && n <= 37) || (n >= 40 && n <= 47) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107)) {
					return m[0]
				}
			}
		}
		return -1
	}
	waitUntil(t, "colour in the COLORTERM session", func() bool { return colourAt(colour.scr.raw()) >= 0 })
	if raw := plain.scr.raw(); colourAt(raw) >= 0 {
		i := colourAt(raw)
		t.Fatalf("NO_COLOR session got colours: %q", raw[max(i-20, 0):min(i+20, len(raw))])
	}
}

func TestHostKeyCreatedOnceAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostkey")
	first, created, err := LoadOrCreateHostKey(path)
	if err != nil || !created {
		t.Fatalf("first start: created %v, err %v", created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key mode %04o, want 0600", fi.Mode().Perm())
	}
	again, created, err := LoadOrCreateHostKey(path)
	if err != nil || created || !bytes.Equal(first, again) {
		t.Fatalf("second start: created %v, err %v, same key %v", created, err, bytes.Equal(first, again))
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateHostKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable host key: err %v", err)
	}
}

func TestNewRefusesMissingInputs(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := newPublisher(nil).Subscribe
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no source", Config{AuthorizedKeys: keys, HostKey: filepath.Join(dir, "hk")}, "no snapshot source"},
		{"no keys file", Config{Subscribe: sub, AuthorizedKeys: filepath.Join(dir, "missing"), HostKey: filepath.Join(dir, "hk")}, "no such file"},
		{"no host key path", Config{Subscribe: sub, AuthorizedKeys: keys}, "no host key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReadOnlyServerMakesOperatorsViewers(t *testing.T) {
	f := startServer(t, func(c *Config) { c.UI.ReadOnly = true })
	c := f.open(t, "olga", f.operator, nil)
	c.waitScreen(t, "[read-only]")
	ids := f.srv.Sessions()
	if len(ids) != 1 || ids[0].Role != "viewer" || ids[0].Actor().CanWrite() {
		t.Fatalf("sessions %+v: want one viewer", ids)
	}
	// A reload that leaves the key's role alone does not cut the session.
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine(`environment="FGTOP_ROLE=operator"`, "olga@ops, renamed"))
	waitUntil(t, "the reload", func() bool { return strings.Contains(f.log.String(), "operators=1 viewers=0") })
	select {
	case err := <-c.done:
		t.Fatalf("the session ended on a reload that kept its role: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}

// panicky is a console that fails while drawing.
type panicky struct{}

func (panicky) Init() tea.Cmd                         { return nil }
func (p panicky) Update(tea.Msg) (tea.Model, tea.Cmd) { return p, nil }
func (panicky) View() tea.View                        { panic("the console broke") }
func (panicky) Close()                                {}

// TestConsoleFailureIsLoggedNotShown: a console that fails ends its own
// session only; the failure is one line in the server's log, and the
// other session goes on. (Bubble Tea itself prints the panic's stack to
// the process's stderr: the service's journal, not a session.)
func TestConsoleFailureIsLoggedNotShown(t *testing.T) {
	f := startServer(t, nil, func(s *Server) {
		next := s.newModel
		s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
			if o.Actor.Name == "crash" {
				return panicky{}
			}
			return next(sub, o)
		}
	})
	ok := f.open(t, "olga", f.operator, nil)
	ok.waitScreen(t, "gpu-node01")
	bad := f.open(t, "crash", f.viewer, nil)
	bad.waitEnd(t)
	waitUntil(t, "the failure in the log", func() bool {
		l := f.log.String()
		return strings.Contains(l, `msg="console failed" user=crash key=`+f.viewer.Fingerprint()) && strings.Contains(l, "panic")
	})
	if strings.Contains(bad.scr.raw()+bad.stderr.raw(), "the console broke") {
		t.Fatal("the failure was shown in the session")
	}
	next := fake.Node(fake.Options{})
	next.Node = "gpu-node03"
	f.pub.Publish(next)
	ok.waitScreen(t, "gpu-node03")
}

// sizeSpy passes everything to the console and notes the window sizes it
// is told.
type sizeSpy struct {
	sessionModel
	sizes chan<- tea.WindowSizeMsg
}

func (s sizeSpy) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if w, ok := msg.(tea.WindowSizeMsg); ok {
		select {
		case s.sizes <- w:
		default:
		}
	}
	m, cmd := s.sessionModel.Update(msg)
	return sizeSpy{sessionModel: m.(sessionModel), sizes: s.sizes}, cmd
}

func TestWindowFollowsTheClient(t *testing.T) {
	sizes := make(chan tea.WindowSizeMsg, 16)
	f := startServer(t, nil, func(s *Server) {
		next := s.newModel
		s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
			return sizeSpy{sessionModel: next(sub, o), sizes: sizes}
		}
	})
	c := f.open(t, "victor", f.viewer, nil)
	c.waitScreen(t, "gpu-node01")
	if err := c.sess.WindowChange(30, 100); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(waitFor)
	for {
		select {
		case w := <-sizes:
			if w.Width == 100 && w.Height == 30 {
				return
			}
		case <-deadline:
			t.Fatal("the console was never told the new window size 100x30")
		}
	}
}

// TestSessionsDeriveEachSnapshotOnce: every session's console gets the
// server's one Deriver, so a snapshot all sessions show is derived once,
// not once a session (issue 29: each session's cost is its own frame).
func TestSessionsDeriveEachSnapshotOnce(t *testing.T) {
	derivers := make(chan *render.Deriver, 4)
	f := startServer(t, nil, func(s *Server) {
		next := s.newModel
		s.newModel = func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel {
			derivers <- o.Deriver
			return next(sub, o)
		}
	})
	a := f.open(t, "olga", f.operator, nil)
	b := f.open(t, "victor", f.viewer, nil)
	a.waitScreen(t, "gpu-node01")
	b.waitScreen(t, "gpu-node01")
	da, db := <-derivers, <-derivers
	if da == nil || da != db {
		t.Fatalf("the sessions got derivers %p and %p, want the server's one", da, db)
	}
	before := da.Made()
	for i := range 3 {
		next := fake.Node(fake.Options{})
		next.Node = "gpu-node" + strconv.Itoa(10+i)
		f.pub.Publish(next)
		a.waitScreen(t, next.Node)
		b.waitScreen(t, next.Node)
	}
	if got := da.Made() - before; got != 3 {
		t.Errorf("two sessions showed 3 snapshots: %d derivations, want 3", got)
	}
}

// TestViewersShareFrameChanges: viewers that draw the same frames write
// each frame change as one of them computed it (screen.Transitions), and
// each still sees its own console: the one that opens the help sees it,
// the others do not, and all follow the node.
func TestViewersShareFrameChanges(t *testing.T) {
	var srv *Server
	f := startServer(t, nil, func(s *Server) { srv = s })
	cs := []*console{
		f.open(t, "victor", f.viewer, nil),
		f.open(t, "vera", f.viewer, nil),
		f.open(t, "vlad", f.viewer, nil),
	}
	for _, c := range cs {
		c.waitScreen(t, "gpu-node01")
	}
	for i := range 3 {
		next := fake.Node(fake.Options{})
		next.Node = "gpu-node" + strconv.Itoa(20+i)
		f.pub.Publish(next)
		for _, c := range cs {
			c.waitScreen(t, next.Node)
		}
	}
	hits, misses := srv.frames.Stats()
	t.Logf("%d frame changes written as another session computed them, %d computed", hits, misses)
	if hits == 0 {
		t.Fatalf("three viewers of one node shared no frame change (%d computed)", misses)
	}
	const help = "read-only: no key changes the node"
	cs[0].press(t, "?")
	cs[0].waitScreen(t, help)
	last := fake.Node(fake.Options{})
	last.Node = "gpu-node29"
	f.pub.Publish(last)
	for _, c := range cs[1:] {
		if scr := c.waitScreen(t, "gpu-node29"); strings.Contains(scr, help) {
			t.Fatalf("a viewer that pressed nothing shows the help another opened:\n%s", scr)
		}
	}
	cs[0].press(t, "?")
	waitUntil(t, "the help closed on the viewer that opened it, over the newest node", func() bool {
		scr := cs[0].scr.screen()
		return strings.Contains(scr, "gpu-node29") && !strings.Contains(scr, help)
	})
}

// TestCloseRightAfterServe: a server closed while the goroutine that
// serves it has not begun (serve stopped within a moment of its start)
// does not race Serve's start against Close's wait (the race detector
// caught it in cmd/fgtop's serve tests), and Serve after Close returns.
func TestCloseRightAfterServe(t *testing.T) {
	for i := range 20 {
		dir := t.TempDir()
		keys := sshtest.NewKeys(t)
		path := filepath.Join(dir, "authorized_keys")
		sshtest.WriteAtomic(t, path, keys.AuthorizedKeys())
		srv, err := New(Config{Subscribe: newPublisher(fake.Node(fake.Options{})).Subscribe, AuthorizedKeys: path,
			HostKey: filepath.Join(dir, "hk"), IdleTimeout: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		if i%2 == 0 {
			runtime.Gosched()
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after Close")
		}
		ln.Close()
	}
}

// TestShutdownTellsSessions: Close ends every open session with the
// reason, said once in fgtop's words, and exit status 1.
func TestShutdownTellsSessions(t *testing.T) {
	f := startServer(t, nil)
	v := f.open(t, "victor", f.viewer, nil)
	v.waitScreen(t, "[read-only]")
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	err := v.waitEnd(t)
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
		t.Fatalf("session ended with %v, want exit status 1", err)
	}
	got := v.stderr.raw()
	if !strings.Contains(got, "fgtop serve: the server is shutting down") || strings.Count(got, "fgtop serve") != 1 {
		t.Fatalf("the session was told %q, want \"fgtop serve: the server is shutting down\" once", got)
	}
}

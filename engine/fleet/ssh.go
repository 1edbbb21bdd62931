package fleet

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/internal/untrusted"
)

// SSHOptions configure the SSH source: how to log in to each node's
// `fgtop serve` and read its snapshot stream.
type SSHOptions struct {
	// User is the login name (the server identifies people by key; the
	// name only shows in its log).
	User string
	// Identities are private key files (unencrypted; a key with a
	// passphrase goes through ssh-agent).
	Identities []string
	// DefaultIdentities are tried as ssh tries ~/.ssh/id_*: used when
	// they are unencrypted keys, skipped otherwise (ssh-agent may hold
	// them). DefaultIdentityFiles lists them.
	DefaultIdentities []string
	// SSHDir is where DefaultIdentities were looked for (~/.ssh), so that
	// a fleet without any key can say where it looked; "" when --identity
	// named the keys.
	SSHDir string
	// AgentSocket is ssh-agent's socket (SSH_AUTH_SOCK); "" for none.
	AgentSocket string
	// KnownHosts are known_hosts files; a host key must be in one of them.
	KnownHosts []string
	// Warn, when not nil, is told once what ClientConfig leaves out and
	// goes on without (known_hosts lines no ssh can read), for stderr:
	// the operator should know which of their lines fgtop does not use.
	Warn func(string)
	// Heartbeat is the heartbeat the stream is asked for.
	Heartbeat time.Duration
	// DialTimeout bounds the TCP connect and the SSH handshake.
	DialTimeout time.Duration
	// Silence closes a connection that sent no line for this long (a
	// node that hangs, a network that drops packets) and dials again.
	Silence time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts (doubling
	// from the first to the second, back to the first after a snapshot).
	MinBackoff, MaxBackoff time.Duration
	// Settings are the fleet-wide allocator settings for summaries.
	Settings Settings
	// MaxLines is the most lines a second read from one node (default
	// DefaultMaxLines); a burst of twice as many passes.
	MaxLines int

	// handshake, when not nil, is told of each SSH handshake as it
	// starts (h) and once it is done (nil): FollowSSH tells its tracker,
	// so that a run whose time ends in one says how far the node got.
	handshake func(addr string, h *heardConn)
}

// MaxStreamLine is the longest line read from a node's stream: a
// 10,000-kernel node's snapshot is about 6 MB; decoding a longer one is
// what a hostile node would make the fleet spend its memory on.
const MaxStreamLine = 16 << 20

// DefaultMaxLines is SSHOptions.MaxLines's default: a node sends a line
// per change (ten a second at most, as the engine publishes) and a
// heartbeat while nothing changes.
const DefaultMaxLines = 20

// lineLimiter is a token bucket over a connection's lines.
type lineLimiter struct {
	rate   float64 // tokens a second
	burst  float64
	tokens float64
	last   time.Time
}

func newLineLimiter(perSecond int, now time.Time) *lineLimiter {
	r := float64(perSecond)
	return &lineLimiter{rate: r, burst: 2 * r, tokens: 2 * r, last: now}
}

// take takes a token and returns how long to wait before the line it
// pays for may be read (0: now).
func (l *lineLimiter) take(now time.Time) time.Duration {
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens--
	if l.tokens >= 0 {
		return 0
	}
	return time.Duration(-l.tokens / l.rate * float64(time.Second))
}

// maxIdentityFile bounds what is read as a private key.
const maxIdentityFile = 1 << 20

// ClientConfig builds the SSH client configuration: public-key auth from
// the identity files and ssh-agent, host keys checked against known_hosts
// as OpenSSH does (an unknown or changed key is refused; a line no ssh can
// read is left out, told to o.Warn, rather than stop the fleet). close
// releases the agent connection.
func ClientConfig(o SSHOptions) (cfg *gossh.ClientConfig, closeFn func(), err error) {
	closeFn = func() {}
	var signers []gossh.Signer
	for _, path := range o.Identities {
		data, err := safefile.ReadFile(path, maxIdentityFile)
		if err != nil {
			return nil, closeFn, fmt.Errorf("--identity %s: %w", path, err)
		}
		s, err := gossh.ParsePrivateKey(data)
		var pp *gossh.PassphraseMissingError
		if errors.As(err, &pp) {
			return nil, closeFn, fmt.Errorf("--identity %s: the key has a passphrase: add it to ssh-agent (ssh-add %s) and leave --identity out", path, path)
		}
		if _, _, _, _, perr := gossh.ParseAuthorizedKey(data); err != nil && perr == nil {
			// The .pub beside the key: ssh -i takes only the private one too.
			return nil, closeFn, fmt.Errorf("--identity %s is a public key; give the private key (%s)", path, privateKeyName(path))
		}
		if err != nil {
			return nil, closeFn, fmt.Errorf("--identity %s: %w", path, err)
		}
		signers = append(signers, s)
	}
	for _, path := range o.DefaultIdentities {
		data, err := safefile.ReadFile(path, maxIdentityFile)
		if err != nil {
			continue
		}
		if s, err := gossh.ParsePrivateKey(data); err == nil {
			signers = append(signers, s)
		}
	}
	auth := []gossh.AuthMethod{}
	if len(signers) > 0 {
		auth = append(auth, gossh.PublicKeys(signers...))
	}
	if o.AgentSocket != "" {
		conn, err := net.Dial("unix", o.AgentSocket)
		if err == nil {
			ag := agent.NewClient(conn)
			auth = append(auth, gossh.PublicKeysCallback(ag.Signers))
			closeFn = func() { _ = conn.Close() }
		} else if len(signers) == 0 {
			return nil, closeFn, fmt.Errorf("ssh-agent (SSH_AUTH_SOCK=%s): %w; give a key with --identity", o.AgentSocket, err)
		}
	}
	if len(auth) == 0 {
		looked := "no --identity"
		if o.SSHDir != "" {
			looked = "no --identity, none of " + strings.Join(defaultIdentityNames, ", ") + " in " + o.SSHDir
		}
		if len(o.DefaultIdentities) > 0 {
			looked = "none of " + strings.Join(o.DefaultIdentities, ", ") + " is an unencrypted key"
		}
		return nil, closeFn, fmt.Errorf("no key to log in with (%s, and SSH_AUTH_SOCK is not set): give --identity FILE, or run ssh-agent and ssh-add your key", looked)
	}
	var files []string
	for _, f := range o.KnownHosts {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			closeFn()
			return nil, func() {}, fmt.Errorf("--known-hosts %s: %w", f, err)
		}
	}
	if len(files) == 0 {
		closeFn()
		return nil, func() {}, fmt.Errorf("no known_hosts file (%s): host keys cannot be checked; add the nodes' keys, e.g. ssh-keyscan -p PORT HOST >> ~/.ssh/known_hosts", strings.Join(o.KnownHosts, ", "))
	}
	hk, err := loadKnownHosts(files, o.Warn)
	if err != nil {
		closeFn()
		return nil, func() {}, err
	}
	user := o.User
	if user == "" {
		user = "fgtop"
	}
	return &gossh.ClientConfig{User: user, Auth: auth, HostKeyCallback: hostKeyCheck(hk, files), Timeout: o.DialTimeout}, closeFn, nil
}

// privateKeyName is the private key beside a public key file: its name
// without .pub (ssh-keygen's pair), or what to look for.
func privateKeyName(pub string) string {
	if p, ok := strings.CutSuffix(pub, ".pub"); ok {
		return p
	}
	return "the file whose .pub this is"
}

// HostKeyError is a host key that known_hosts does not vouch for.
type HostKeyError struct {
	Host    string
	Changed bool
	// Where is the known_hosts line of the key it has on file (Changed).
	Where string
	Key   string // the fingerprint the host offered
	// File is the known_hosts file the host's key is added to (the first
	// checked), for the command an unknown host is told to run.
	File string
}

func (e *HostKeyError) Error() string {
	if e.Changed {
		return fmt.Sprintf("REMOTE HOST IDENTIFICATION HAS CHANGED for %s: it offered %s, which differs from the key in %s; refusing (someone may be intercepting; if the node's key really changed, remove that line)", e.Host, e.Key, e.Where)
	}
	return fmt.Sprintf("host key verification failed: %s is not in known_hosts (it offered %s); add it after checking it: %s", e.Host, e.Key, keyscanLine(e.Host, e.File))
}

// keyscanLine is the command that adds host's key to file: the host and
// port dialled, the file checked, ready to paste (it said "ssh-keyscan -p
// PORT HOST >> ~/.ssh/known_hosts" of a fleet given --known-hosts).
func keyscanLine(hostport, file string) string {
	file = cmp.Or(file, "~/.ssh/known_hosts")
	host, port, err := net.SplitHostPort(hostport)
	switch {
	case err != nil:
		return "ssh-keyscan " + hostport + " >> " + file
	case port == "22":
		return "ssh-keyscan " + host + " >> " + file
	}
	return "ssh-keyscan -p " + port + " " + host + " >> " + file
}

// hostKeyCheck words knownhosts' refusals the way ssh does.
func hostKeyCheck(hk gossh.HostKeyCallback, files []string) gossh.HostKeyCallback {
	return func(host string, remote net.Addr, key gossh.PublicKey) error {
		err := hk(host, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			he := &HostKeyError{Host: host, Changed: len(ke.Want) > 0, Key: gossh.FingerprintSHA256(key), File: files[0]}
			if he.Changed {
				he.Where = fmt.Sprintf("%s:%d", ke.Want[0].Filename, ke.Want[0].Line)
			}
			return he
		}
		if err != nil {
			return fmt.Errorf("known_hosts (%s): %w", strings.Join(files, ", "), err)
		}
		return nil
	}
}

// DefaultKnownHosts is ~/.ssh/known_hosts ("" when there is no home).
func DefaultKnownHosts() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".ssh", "known_hosts")
}

// FollowSSH follows one node's snapshot stream until ctx is done,
// reconnecting with backoff, and reports to t.
func FollowSSH(ctx context.Context, t *Tracker, addr string, cfg *gossh.ClientConfig, o SSHOptions) {
	o = o.withDefaults()
	o.handshake = t.handshaking
	wait := o.MinBackoff
	for ctx.Err() == nil {
		got, err := streamOnce(ctx, t, addr, cfg, o)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the stream ended")
		}
		t.Send(ctx, Event{Addr: addr, Err: err})
		if got {
			wait = o.MinBackoff
		}
		var tl *TooLargeError
		if errors.As(err, &tl) {
			// It will be as large next time: no point asking soon.
			wait = o.MaxBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, o.MaxBackoff)
	}
}

func (o SSHOptions) withDefaults() SSHOptions {
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.Silence <= 0 {
		o.Silence = max(4*o.Heartbeat, DefaultStaleAfter)
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMaxLines
	}
	return o
}

// streamOnce dials the node, reads its stream until it fails, and says
// whether any snapshot came.
func streamOnce(ctx context.Context, t *Tracker, addr string, cfg *gossh.ClientConfig, o SSHOptions) (got bool, err error) {
	rc, err := startCmd(ctx, addr, cfg, o, fmt.Sprintf("snapshot --follow --json --heartbeat %s", o.Heartbeat))
	if err != nil {
		return false, err
	}
	defer rc.close()
	// A connection that says nothing for Silence is dropped: the node hangs
	// or packets vanish, and TCP alone would wait for hours.
	var silent bool
	var mu sync.Mutex
	watchdog := time.AfterFunc(o.Silence, func() {
		mu.Lock()
		silent = true
		mu.Unlock()
		rc.close()
	})
	defer watchdog.Stop()
	r := bufio.NewReaderSize(rc.out, 64<<10)
	lines := newLineLimiter(o.MaxLines, time.Now())
	flooding := false
	for {
		// A node that sends more lines than asked for is read no faster
		// than MaxLines a second: the wait holds the SSH window closed, so
		// the flood slows down at its source, and the node is marked.
		if wait := lines.take(time.Now()); wait > 0 {
			if !flooding {
				flooding = true
				note := fmt.Sprintf("floods lines (asked for a heartbeat every %s): read at most %d a second", o.Heartbeat, o.MaxLines)
				if !t.Send(ctx, Event{Addr: addr, Alive: true, Note: note}) {
					return got, ctx.Err()
				}
			}
			select {
			case <-ctx.Done():
				return got, ctx.Err()
			case <-time.After(wait):
			}
			watchdog.Reset(o.Silence)
		}
		line, err := readLine(r, MaxStreamLine)
		if err != nil {
			mu.Lock()
			s := silent
			mu.Unlock()
			if !s && errors.Is(err, io.EOF) && rc.stderr.String() == "" {
				// Stdout and stderr are two channels: a refusal ("too
				// many snapshot streams ...") may come just after the
				// end of stdout. Wait, briefly, for the session's end.
				waitSession(rc.sess, refusalWait)
			}
			switch {
			case s:
				return got, fmt.Errorf("no line for %s: connection dropped", o.Silence)
			case rc.stderr.String() != "":
				return got, errors.New(strings.TrimSpace(rc.stderr.String()))
			case errors.Is(err, io.EOF):
				return got, errors.New("the node closed the stream")
			}
			var long *longLineError
			if errors.As(err, &long) {
				return got, fmt.Errorf("the node sent a line longer than %d MiB: no fgtop serve sends one (a snapshot of %d devices fits well within it)", long.limit>>20, MaxNodeDevices)
			}
			return got, fmt.Errorf("read: %w", err)
		}
		watchdog.Reset(o.Silence)
		doc, hb, err := report.ParseLine(line)
		if err != nil {
			return got, fmt.Errorf("the node sent a line that is not an fgtop snapshot (%s): %w", untrusted.Text(lineStart(line, 40)), err)
		}
		if hb != nil {
			if !t.Send(ctx, Event{Addr: addr, Alive: true}) {
				return got, ctx.Err()
			}
			continue
		}
		if len(doc.Devices) > MaxNodeDevices {
			return got, &TooLargeError{Devices: len(doc.Devices)}
		}
		snap, err := doc.Model()
		if err != nil {
			return got, fmt.Errorf("bad snapshot from the node: %w", err)
		}
		got = true
		// The node's silence is not counted while its snapshot is
		// summarized, and a node whose snapshots are costly to summarize
		// (up to MaxNodeDevices devices, settings of its choosing) is read
		// no faster than a quarter of a core's time goes to it.
		watchdog.Stop()
		start := time.Now()
		sum := Summarize(snap, o.Settings)
		busy := time.Since(start)
		if !t.Send(ctx, Event{Addr: addr, Snap: snap, Sum: sum}) {
			return got, ctx.Err()
		}
		if busy > summarizeFree {
			select {
			case <-ctx.Done():
				return got, ctx.Err()
			case <-time.After(3 * busy):
			}
		}
		watchdog.Reset(o.Silence)
	}
}

// summarizeFree is how long a snapshot's summary may take before the
// node's stream is held back for three times as long.
const summarizeFree = 50 * time.Millisecond

// readLine reads one line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > limit {
			return nil, &longLineError{limit: limit}
		}
		if err == nil {
			return buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err //nolint:wrapcheck // io.EOF must stay itself
		}
	}
}

// limitedBuffer keeps the first 4 KiB written to it (the server's refusal
// on stderr is one line).
type limitedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.ReplaceAll(string(l.b), "\r", "")
}

// refusalWait is how long a stream that ended waits for the node's words
// on stderr.
const refusalWait = time.Second

// waitSession waits for sess to end, at most d.
func waitSession(sess *gossh.Session, d time.Duration) {
	done := make(chan struct{})
	go func() {
		_ = sess.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// longLineError is a line past readLine's limit.
type longLineError struct{ limit int }

func (e *longLineError) Error() string { return fmt.Sprintf("a line longer than %d bytes", e.limit) }

// lineStart is a line's first n bytes, quoted, "…" where it goes on: what
// a peer sent, to name it by.
func lineStart(b []byte, n int) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

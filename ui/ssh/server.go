package sshserve

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/fsnotify/fsnotify"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	uiconsole "github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/screen"
)

// Defaults of Config.
const (
	DefaultMaxSessions = 32
	// DefaultMaxSessionsPerKey is how many sessions one key may hold at
	// once, consoles and streams together.
	DefaultMaxSessionsPerKey = 4
	// resizeEvery is the shortest time between two window sizes a
	// session's console is told: a burst of resizes is coalesced into
	// the last one, so a client cannot make the console redraw a
	// 500x200 screen as fast as it can send requests.
	resizeEvery        = 100 * time.Millisecond
	DefaultIdleTimeout = 30 * time.Minute
	DefaultKeysPoll    = 2 * time.Second
	// handshakeTimeout bounds how long a connection may sit unauthenticated,
	// so half-open connections cannot pile up.
	handshakeTimeout = 20 * time.Second
	// keysSettle lets a burst of writes to authorized_keys (an editor
	// truncating, then writing) end before the file is read.
	keysSettle = 100 * time.Millisecond
	// cutGrace is how long a session that is being closed gets to restore
	// the client's terminal and print why, before its connection is closed
	// regardless (a client that stopped reading cannot hold it open).
	cutGrace = 2 * time.Second
)

// Config configures a Server.
type Config struct {
	// Subscribe returns a new subscription to the engine's snapshots, ended
	// when ctx is done (engine.Engine.Subscribe). It is called once per
	// session. Required.
	Subscribe func(ctx context.Context) <-chan *model.Snapshot
	// SnapshotAt answers `snapshot --at TIME --json` from the node's own
	// record: the fgtop.snapshot/v1 document at that moment, one line, or
	// an error saying why not (the record lacks the moment). nil: the node
	// keeps no record, and says so.
	SnapshotAt func(ctx context.Context, at time.Time) ([]byte, error)
	// History answers the history command from the node's own record: the
	// fgtop.history/v1 document, and what the record lacks of the span
	// (sent as the reason, exit 1) beside it. nil: the node keeps no
	// record, and says so.
	History func(ctx context.Context, q HistoryQuery) ([]byte, error)
	// AuthorizedKeys is the path of the OpenSSH authorized_keys file.
	// Required; it must exist at start.
	AuthorizedKeys string
	// HostKey is the path of the host key, created (mode 0600) when missing.
	// Required.
	HostKey string
	// MaxSessions is the most sessions at once; 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxViewerSessions is the most consoles at once of viewer keys, so that viewers cannot take the slots operators
	// need; 0 means a quarter of MaxSessions (at least 1). It is capped at
	// MaxSessions.
	MaxViewerSessions int
	// MaxStreamSessions is the most exec commands at once (snapshot
	// --follow streams, one-shot snapshots, snapshot --at, history), any
	// key's: the fleet's machine queries have a share of their own,
	// so viewers' consoles cannot lock a fleet out, nor streams the
	// consoles. 0 means a quarter of MaxSessions (at least 1); capped at
	// MaxSessions. Operators' consoles have the slots the two shares
	// leave (Shares); New takes shares that leave them none, as a load
	// test gives one viewer key every slot, and fgtop serve refuses them.
	MaxStreamSessions int
	// MaxSessionsPerKey is the most sessions one key holds at once; 0
	// means DefaultMaxSessionsPerKey.
	MaxSessionsPerKey int
	// MaxStartups and PerSourceMaxStartups limit the connections that
	// have not authenticated yet, in total and per source address (see
	// Startups); zero means DefaultMaxStartups and
	// DefaultPerSourceMaxStartups.
	MaxStartups, PerSourceMaxStartups Startups
	// StuckTimeout drops a session whose client has not taken its output
	// (its SSH window stayed closed) for this long; 0 means
	// DefaultStuckTimeout.
	StuckTimeout time.Duration
	// IdleTimeout closes a session that sent no input for this long; 0
	// means DefaultIdleTimeout, a negative value none. Output does not
	// count: the console redraws every second by itself.
	IdleTimeout time.Duration
	// NoSessionTimeout closes a connection that holds no console for this
	// long (it authenticated and opened none, or all of its sessions were
	// refused or ended); 0 means DefaultNoSessionTimeout.
	NoSessionTimeout time.Duration
	// ConnIdleTimeout closes a connection on which nothing moved for this
	// long; 0 means DefaultConnIdleTimeout, a negative value none.
	ConnIdleTimeout time.Duration
	// MaxConnTime is the longest a connection lives; its sessions are
	// told and closed a moment before. 0 means DefaultMaxConnTime, a
	// negative value none.
	MaxConnTime time.Duration
	// KeysPoll is how often authorized_keys is re-read besides file-change
	// notifications (which miss changes behind a symlink, or fail when the
	// inotify limit is reached); 0 means DefaultKeysPoll.
	KeysPoll time.Duration
	// ThemeDir is a directory of theme files (NAME.toml) the server's
	// owner offers to sessions: `:theme NAME` takes a built-in theme or
	// one of these, and never a path ("" offers the built-in ones only).
	ThemeDir string
	// Logger receives connects, refusals, reloads and session ends; nil
	// discards them. Nothing is ever logged into a session.
	Logger *slog.Logger
	// UI is the template of every session's console options. Each session
	// gets its own copy with its own Actor (UI.Actor is ignored); UI.Desk,
	// when set, is shared by every session, so the draft is lent to one
	// operator at a time and an apply by one makes the others' drafts
	// stale. A viewer's session is always read-only; UI.ReadOnly makes
	// every session a viewer, in the engine too, whatever its key says.
	UI uiconsole.Options
	// StartOnSecond starts each session's program at the wall clock's
	// next whole second (at most a second after the session opened):
	// Bubble Tea's own once-a-second ticker takes its phase from the
	// program's start, and with every session's on the whole second, as
	// the console's clock (UI.ClockOnSecond) and the engine's poll
	// (engine.AlignPoll), the process wakes once a second for all of
	// them rather than once per session at its own phase.
	StartOnSecond bool
}

// Identity is who a session is: what the engine's journal records about
// it.
type Identity struct {
	// User is the SSH user name the client gave. The client chooses it
	// freely: the key fingerprint is what identifies the person.
	User        string
	Fingerprint string
	// Comment is the authorized_keys comment of the key.
	Comment string
	// Remote is the client's address (host:port).
	Remote string
	Role   agentconfig.Role
}

// Actor is the identity as the engine's desk, apply and rollback paths
// take it: the name the client gave, an origin that carries the address
// and the key (what others see next to the name while this session holds
// the draft), and the key again as a field of its own for the journal.
// The engine refuses a viewer's actor itself.
func (id Identity) Actor() agentconfig.Actor {
	origin := "ssh:" + id.Remote
	if id.Fingerprint != "" {
		origin += " " + id.Fingerprint
	}
	return agentconfig.Actor{Name: id.User, Origin: origin, Role: id.Role, Key: id.Fingerprint}
}

// Server serves the console over SSH.
type Server struct {
	cfg  Config
	log  *slog.Logger
	srv  *ssh.Server
	idle time.Duration
	// stuck is Config.StuckTimeout with its default applied.
	stuck time.Duration
	// Connection limits (see limits.go).
	noSession, connIdle, maxConn time.Duration
	// startups counts the connections not authenticated yet; refused
	// bounds the log lines of refused keys and connections (startups.go).
	startups *startups
	refused  *logLimit

	ctx    context.Context // ends when the server closes
	cancel context.CancelFunc
	start  sync.Once
	wg     sync.WaitGroup
	// lns are the listeners Serve was given (under mu): Close closes
	// them, since the library keeps accepting on a listener it is given
	// after its own Close.
	lns []net.Listener

	// frames holds the frame changes the sessions' drawers computed:
	// idle viewers draw the same frames, and each change is then diffed
	// once for all of them, not once each (screen.Transitions).
	frames *screen.Transitions
	// programStarted, when set, is told when each session's program
	// started (tests: StartOnSecond).
	programStarted func(time.Time)

	// newModel builds a session's console (uiconsole.New); tests look at the
	// options each session gets through it.
	newModel func(<-chan *model.Snapshot, uiconsole.Options) sessionModel

	// readKeys reads authorized_keys (ReadAuthorizedKeys); tests make it
	// fail.
	readKeys func(string) ([]byte, error)

	mu       sync.Mutex
	keys     *KeySet
	keysData []byte
	// keysErr is why authorized_keys cannot be read now (nil when it
	// can): new logins are refused until it can, live sessions go on.
	keysErr  error
	sessions map[ssh.Session]*session
	closed   bool
}

// session is one live console.
type session struct {
	id      Identity
	wire    string           // the key's wire form, to find it in a new KeySet
	keyRole agentconfig.Role // the role authorized_keys gives the key
	start   time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	conn    *gossh.ServerConn

	lastInput atomic.Int64 // unix nanoseconds
	idle      *time.Timer
	maxTimer  *time.Timer // the connection's lifetime
	cs        *connState  // the connection's counts
	stream    bool        // a snapshot stream, not a console
	// viewerShare says the session counts against MaxViewerSessions,
	// streamShare against MaxStreamSessions.
	viewerShare, streamShare bool
	// out is the session's output (see outQueue): the console and the
	// stream write there, never to the channel itself.
	out *outQueue

	mu     sync.Mutex
	prog   *tea.Program
	reason string // why the server ends the session; "" while it does not
	ended  string // how the console ended, for the log: quit, client gone, failed
	// usage: the reason is the query's own fault (a name the node's
	// record does not know): exit status 2, as the command line's.
	usage bool
}

// New checks the configuration, loads the keys and the host key (creating
// it on first start) and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Subscribe == nil {
		return nil, errors.New("sshserve: no snapshot source (Config.Subscribe)")
	}
	if cfg.AuthorizedKeys == "" {
		return nil, errors.New("sshserve: no authorized_keys file")
	}
	if cfg.HostKey == "" {
		return nil, errors.New("sshserve: no host key file")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.KeysPoll <= 0 {
		cfg.KeysPoll = DefaultKeysPoll
	}
	cfg.MaxViewerSessions, cfg.MaxStreamSessions = Shares(cfg.MaxSessions, cfg.MaxViewerSessions, cfg.MaxStreamSessions)
	if cfg.MaxSessionsPerKey <= 0 {
		cfg.MaxSessionsPerKey = DefaultMaxSessionsPerKey
	}
	// One derivation of each snapshot for every session (sessionOptions
	// copies the template), not one per session.
	cfg.UI = cfg.UI.ShareDerivations()
	if cfg.MaxStartups == (Startups{}) {
		cfg.MaxStartups = DefaultMaxStartups
	}
	if cfg.PerSourceMaxStartups == (Startups{}) {
		cfg.PerSourceMaxStartups = DefaultPerSourceMaxStartups
	}
	s := &Server{cfg: cfg, log: cfg.Logger, sessions: map[ssh.Session]*session{}, readKeys: ReadAuthorizedKeys,
		frames:   screen.NewTransitions(),
		newModel: func(sub <-chan *model.Snapshot, o uiconsole.Options) sessionModel { return uiconsole.New(sub, o) }}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.startups = newStartups(cfg.MaxStartups, cfg.PerSourceMaxStartups)
	s.refused = &logLimit{burst: refusedBurst, window: refusedWindow, log: s.log}
	switch {
	case cfg.IdleTimeout == 0:
		s.idle = DefaultIdleTimeout
	case cfg.IdleTimeout > 0:
		s.idle = cfg.IdleTimeout
	}
	s.stuck = cmp.Or(max(cfg.StuckTimeout, 0), DefaultStuckTimeout)
	s.noSession = cmp.Or(max(cfg.NoSessionTimeout, 0), DefaultNoSessionTimeout)
	s.connIdle = orDefault(cfg.ConnIdleTimeout, DefaultConnIdleTimeout)
	s.maxConn = orDefault(cfg.MaxConnTime, DefaultMaxConnTime)
	// These errors name their file already ("authorized keys: ...",
	// "host key PATH: ..."): the command line says them as they are.
	data, err := s.readKeys(cfg.AuthorizedKeys)
	if err != nil {
		return nil, err
	}
	s.setKeys(data)
	pem, created, err := LoadOrCreateHostKey(cfg.HostKey)
	if err != nil {
		return nil, err
	}
	if created {
		s.log.Info("host key created", "path", cfg.HostKey)
	}
	s.srv, err = wish.NewServer(
		wish.WithHostKeyPEM(pem),
		wish.WithPublicKeyAuth(s.authorize),
		// The first middleware listed runs last: the gate decides, then the
		// console runs.
		wish.WithMiddleware(s.console, s.gate),
		func(srv *ssh.Server) error {
			srv.HandshakeTimeout = handshakeTimeout
			srv.IdleTimeout = s.connIdle
			srv.MaxTimeout = s.maxConn
			srv.ConnCallback = s.onConn
			srv.ConnectionFailedCallback = s.connFailed
			srv.ServerConfigCallback = s.serverConfig
			// Only sessions, behind the limits; every other channel type
			// (forwarding) is refused, saying so: the library's own
			// refusal read "unknown channel type: unsupported channel
			// type" on the client, which does not say that fgtop forwards
			// nothing at all.
			srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.sessionChannel, "default": s.otherChannel}
			return nil
		},
	)
	if err != nil {
		return nil, fmt.Errorf("sshserve: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// ListenAndServe listens on addr and serves until Close.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sshserve: %w", err)
	}
	return s.Serve(ln)
}

// Serve serves on ln until Close. It starts following the authorized_keys
// file. After Close it returns nil.
func (s *Server) Serve(ln net.Listener) error {
	s.start.Do(func() {
		s.wg.Add(1)
		go s.watchKeys()
	})
	s.mu.Lock()
	if s.closed {
		// Closed before it served: the library would accept for ever.
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	s.log.Info("listening", "addr", ln.Addr().String(), "max_sessions", s.cfg.MaxSessions,
		"max_viewer_sessions", s.cfg.MaxViewerSessions, "max_stream_sessions", s.cfg.MaxStreamSessions, "max_sessions_per_key", s.cfg.MaxSessionsPerKey, "idle_timeout", s.idle.String(),
		"max_startups", s.cfg.MaxStartups.String(), "per_source_max_startups", s.cfg.PerSourceMaxStartups.String())
	err := s.srv.Serve(ln)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if err != nil && closed {
		// Close closed ln before the library's Serve took it (it knew
		// of no listener to close): its Accept says the listener is
		// closed, which is the server closing, not a fault.
		return nil
	}
	if err != nil {
		return fmt.Errorf("sshserve: %w", err)
	}
	return nil
}

// Close tells every session the server is going away, gives them a moment
// to restore their terminals, then closes the listener and all
// connections.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hits, misses := s.frames.Stats()
	taken, composed := int64(0), int64(0)
	if f := s.cfg.UI.Frames; f != nil {
		taken, composed = f.Stats()
	}
	s.log.Info("shutting down", "sessions", len(s.sessions), "frames_shared", hits, "frames_diffed", misses,
		"compositions_taken", taken, "compositions_made", composed)
	live := make([]*session, 0, len(s.sessions))
	for _, ls := range s.sessions {
		live = append(live, ls)
	}
	s.mu.Unlock()
	for _, ls := range live {
		// The client is told "fgtop serve: " before the reason: the
		// server's name again read "fgtop serve: fgtop serve is ...".
		s.cut(ls, "the server is shutting down")
	}
	deadline := time.Now().Add(cutGrace)
	for s.SessionCount() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.cancel()
	err := s.srv.Close()
	s.mu.Lock()
	lns := s.lns
	s.lns = nil
	s.mu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
	// A Serve that has not started yet must not Add to wg while Wait
	// runs (the race detector caught a serve stopped within a moment of
	// its start): this Do either waits for Serve's Add or takes its place.
	s.start.Do(func() {})
	s.wg.Wait()
	s.refused.stop()
	if err != nil {
		return fmt.Errorf("sshserve: %w", err)
	}
	return nil
}

// SessionCount returns the number of live sessions.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Sessions returns who is connected now.
func (s *Server) Sessions() []Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Identity, 0, len(s.sessions))
	for _, ls := range s.sessions {
		out = append(out, ls.id)
	}
	return out
}

// authorize is the public-key callback. It runs once per key the client
// offers, on state shared by the connection, so it only answers "is this
// key known"; the role is looked up when the session starts.
func (s *Server) authorize(ctx ssh.Context, pub ssh.PublicKey) bool {
	s.mu.Lock()
	_, ok := s.keys.Lookup(pub)
	keysErr := s.keysErr
	s.mu.Unlock()
	user := agentconfig.CleanName(ctx.User())
	if keysErr != nil {
		// The file cannot be read now: whether this key is still in it is
		// unknown, so it gets no new login.
		connStateOf(ctx).noteOffered(gossh.FingerprintSHA256(pub), true)
		if s.refused.allow() {
			s.log.Info("refused key", "user", user, "remote", addrString(ctx.RemoteAddr()), "key", gossh.FingerprintSHA256(pub),
				"why", "authorized keys cannot be read now")
		}
		return false
	}
	if !ok {
		fp := gossh.FingerprintSHA256(pub)
		connStateOf(ctx).noteOffered(fp, false)
		if s.refused.allow() {
			s.log.Info("refused key", "user", user, "remote", addrString(ctx.RemoteAddr()), "key", fp)
		}
	}
	return ok
}

// connFailed logs a connection that did not get through the handshake:
// no authorized key, wrong protocol, handshake timeout.
func (s *Server) connFailed(conn net.Conn, err error) {
	if !s.refused.allow() {
		return
	}
	args := []any{"remote", addrString(conn.RemoteAddr())}
	// The handshake's deadline reads "read tcp A->B: i/o timeout" in
	// Go's words: say what it means (a client that never logged in, such
	// as nc or a port scan), keeping the error beside it.
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		args = append(args, "why", "not logged in within "+handshakeTimeout.String())
	}
	s.log.Info("refused connection", append(args, "err", err.Error())...)
}

// refuse ends a session before any console starts, telling the client
// why on its stderr. usage: the asker's own mistake (see exitCode).
func (s *Server) refuse(sess ssh.Session, id Identity, why string, usage bool) {
	s.log.Info("refused session", "user", id.User, "key", id.Fingerprint, "remote", id.Remote, "role", string(id.Role), "why", why)
	fmt.Fprintf(sess.Stderr(), "fgtop serve: %s\r\n", why)
	_ = sess.Exit(exitCode(usage))
}

// exitCode is a session's exit status when the server ends it, as the
// command line's table has it: 2 when the asker's command was at fault (a
// command or value it cannot read, a name the record does not know, a
// console without a terminal), 1 for every other refusal or cut (limits,
// keys, what the record lacks). fleet history reads 2 as "the asker's to
// fix".
func exitCode(usage bool) int {
	if usage {
		return 2
	}
	return 1
}

// gate is the middleware that admits a session: a terminal, a key still
// authorized, room under the session limit. It registers the session for
// the console (next) and unregisters it when the console ends.
func (s *Server) gate(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		// However the session ends, its window changes are read until the
		// library is done with them (see drainWindows).
		_, winch, _ := sess.Pty()
		defer drainWindows(winch)
		defer resizesReady(sess) // refused, or the console failed to start
		id := Identity{User: agentconfig.CleanName(sess.User()), Remote: addrString(sess.RemoteAddr()), Role: agentconfig.RoleViewer}
		pub := sess.PublicKey()
		if pub != nil {
			id.Fingerprint = gossh.FingerprintSHA256(pub)
			// The role the key has, so that a refusal is logged with the
			// role it refused (admit looks again, under its lock).
			id.Role, id.Comment = s.keyRole(pub)
		}
		if sess.Subsystem() != "" {
			s.refuse(sess, id, streamUsage, true)
			return
		}
		cmdline := commandOf(sess.Command())
		if len(cmdline) > 0 && cmdline[0] == HistoryCommand {
			q, err := parseHistory(cmdline)
			if err != nil {
				s.refuse(sess, id, err.Error(), true)
				return
			}
			ls, why := s.admit(sess, pub, id, true, false)
			if ls == nil {
				s.refuse(sess, id, why, false)
				return
			}
			s.log.Info("history", "user", ls.id.User, "key", ls.id.Fingerprint, "remote", ls.id.Remote, "role", string(ls.id.Role))
			defer s.release(sess, ls)
			s.history(ls, q)
			return
		}
		if len(cmdline) > 0 {
			// The read-only snapshot stream: any authorized key, no
			// terminal needed, the same limits as a console.
			sp, err := parseStream(cmdline)
			if err != nil {
				s.refuse(sess, id, err.Error(), true)
				return
			}
			ls, why := s.admit(sess, pub, id, true, sp.follow)
			if ls == nil {
				s.refuse(sess, id, why, false)
				return
			}
			s.log.Info("stream", "user", ls.id.User, "key", ls.id.Fingerprint, "comment", ls.id.Comment,
				"remote", ls.id.Remote, "role", string(ls.id.Role), "follow", sp.follow)
			defer s.release(sess, ls)
			if !sp.at.IsZero() {
				s.recordAt(sess, ls, sp.at)
				return
			}
			s.stream(sess, ls, sp)
			return
		}
		if _, _, ok := sess.Pty(); !ok {
			s.refuse(sess, id, "the console needs a terminal: connect with `ssh -t` (no command, no -T)", true)
			return
		}
		ls, why := s.admit(sess, pub, id, false, false)
		if ls == nil {
			s.refuse(sess, id, why, false)
			return
		}
		pty, _, _ := sess.Pty()
		s.log.Info("connect", "user", ls.id.User, "key", ls.id.Fingerprint, "comment", ls.id.Comment,
			"remote", ls.id.Remote, "role", string(ls.id.Role), "term", pty.Term,
			"size", fmt.Sprintf("%dx%d", pty.Window.Width, pty.Window.Height))
		defer s.release(sess, ls)
		next(sess)
	}
}

// keyRole returns the role and comment a key has now (a viewer when the
// key is unknown or the server read-only).
func (s *Server) keyRole(pub ssh.PublicKey) (agentconfig.Role, string) {
	s.mu.Lock()
	k, ok := s.keys.Lookup(pub)
	s.mu.Unlock()
	if !ok {
		return agentconfig.RoleViewer, ""
	}
	if s.cfg.UI.ReadOnly {
		return agentconfig.RoleViewer, k.Comment
	}
	return k.Role, k.Comment
}

// Shares is what the viewers' consoles and the exec commands hold of
// maxSessions when asked for viewers and streams (0: a quarter of it, at
// least 1; capped at maxSessions): operators' consoles have the rest.
// fgtop serve refuses flags that leave operators no slot, and needs the
// very shares New will use to tell.
func Shares(maxSessions, viewers, streams int) (int, int) {
	share := func(n int) int {
		if n <= 0 {
			n = max(maxSessions/4, 1)
		}
		return min(n, maxSessions)
	}
	return share(viewers), share(streams)
}

// admit registers a session if its key is still authorized and the limit
// allows, under the same lock a key reload takes, so a key removed at the
// same moment either refuses this session or closes it.
// A stream has no idle timeout: it gets no input by design, and its
// heartbeats keep the connection moving.
//
// Viewers' consoles share MaxViewerSessions, so that viewers cannot take
// the slots operators need, and every follow stream (a fleet's) shares
// MaxStreamSessions, so that viewers' consoles cannot lock a fleet out:
// two viewer keys holding 8 consoles refused an operator's fleet stream,
// and every fleet console showed the node unreachable. Each key holds at
// most MaxSessionsPerKey.
func (s *Server) admit(sess ssh.Session, pub ssh.PublicKey, id Identity, stream, follow bool) (*session, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, "the server is shutting down"
	}
	if s.keysErr != nil {
		return nil, "authorized keys cannot be read now: try again later"
	}
	k, ok := s.keys.Lookup(pub)
	if !ok {
		return nil, "this key is not (or no longer) authorized"
	}
	if len(s.sessions) >= s.cfg.MaxSessions {
		return nil, fmt.Sprintf("too many sessions (the limit is %d): try again later", s.cfg.MaxSessions)
	}
	id.Role, id.Comment = k.Role, k.Comment
	if s.cfg.UI.ReadOnly {
		id.Role = agentconfig.RoleViewer
	}
	wire := string(pub.Marshal())
	// A viewer's console counts against the viewers' share; every exec
	// command (a follow stream, a one-shot snapshot, snapshot --at, a
	// history query: a fleet's) against the streams' own, so that viewers'
	// consoles cannot lock a fleet out of a node's past either.
	share := id.Role == agentconfig.RoleViewer && !stream
	follow = stream
	viewers, streams, byKey := 0, 0, 0
	for _, o := range s.sessions {
		if o.viewerShare {
			viewers++
		}
		if o.streamShare {
			streams++
		}
		if o.wire == wire {
			byKey++
		}
	}
	if byKey >= s.cfg.MaxSessionsPerKey {
		return nil, fmt.Sprintf("this key holds %d sessions already (the limit per key is %d): try again later", byKey, s.cfg.MaxSessionsPerKey)
	}
	if share && viewers >= s.cfg.MaxViewerSessions {
		return nil, fmt.Sprintf("too many viewer sessions (the limit is %d of %d sessions): try again later",
			s.cfg.MaxViewerSessions, s.cfg.MaxSessions)
	}
	if follow && streams >= s.cfg.MaxStreamSessions {
		return nil, fmt.Sprintf("too many snapshot streams and queries (the limit is %d of %d sessions): try again later",
			s.cfg.MaxStreamSessions, s.cfg.MaxSessions)
	}
	ls := &session{id: id, wire: wire, keyRole: k.Role, start: time.Now(), stream: stream, viewerShare: share, streamShare: follow}
	ls.ctx, ls.cancel = context.WithCancel(sess.Context())
	ls.conn, _ = sess.Context().Value(ssh.ContextKeyConn).(*gossh.ServerConn)
	ls.lastInput.Store(time.Now().UnixNano())
	if s.idle > 0 && !stream {
		ls.idle = time.AfterFunc(s.idle, func() { s.checkIdle(ls) })
	}
	ls.cs = connStateOf(sess.Context())
	ls.cs.admitted()
	if s.maxConn > 0 && ls.cs != nil {
		// Closed cleanly (terminal restored, reason shown) before the
		// connection's hard deadline closes it.
		left := time.Until(ls.cs.start.Add(s.maxConn)) - 2*cutGrace
		ls.maxTimer = time.AfterFunc(max(left, 0), func() {
			s.cut(ls, fmt.Sprintf("connections last at most %s: reconnect", s.maxConn))
		})
	}
	ls.out = newOutQueue(sess, MaxQueued, func(why string) {
		if why == "client gone" {
			ls.cancel()
			return
		}
		s.drop(ls, "your client stopped reading its output ("+why+"): session closed")
	})
	go s.watchOutput(ls)
	s.sessions[sess] = ls
	return ls, ""
}

// watchOutput drops a session whose client has left its output untaken
// for the stuck timeout: its SSH window stayed closed, so nothing written
// to it gets anywhere, and only closing the connection ends the wait.
func (s *Server) watchOutput(ls *session) {
	tick := time.NewTicker(max(s.stuck/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ls.ctx.Done():
			return
		case <-tick.C:
			if since := ls.out.waitingSince(); !since.IsZero() && time.Since(since) >= s.stuck {
				s.drop(ls, fmt.Sprintf("your client took no output for %s: session closed", s.stuck))
				return
			}
		}
	}
}

// drop ends a session whose client cannot be told anything: cut as usual
// (logged, the reason kept), and its connection closed now rather than
// after the grace period, since waiting for the client is what it does.
func (s *Server) drop(ls *session, reason string) {
	s.cut(ls, reason)
	ls.cancel()
	if ls.conn != nil {
		_ = ls.conn.Close()
	}
}

// release unregisters a session that ended and says why it ended, on the
// client's terminal (after the console restored it) and in the log.
func (s *Server) release(sess ssh.Session, ls *session) {
	// Counted until the client has its reason and exit status: Close
	// waits for the count to reach 0 before it closes the connections,
	// and a session deleted first was closed before its exit status
	// went out ("exited without exit status" under load).
	defer func() {
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
	}()
	if ls.idle != nil {
		ls.idle.Stop()
	}
	if ls.maxTimer != nil {
		ls.maxTimer.Stop()
	}
	ls.cs.released()
	ls.cancel()
	// What the console wrote last (restoring the client's terminal) goes
	// before the reason, if the client takes it in time.
	ls.out.flush(cutGrace)
	ls.out.Close()
	ls.mu.Lock()
	reason, end, usage := ls.reason, ls.ended, ls.usage
	ls.mu.Unlock()
	if end == "" {
		end = "quit"
	}
	if reason != "" {
		end = reason
		fmt.Fprintf(sess.Stderr(), "\r\nfgtop serve: %s\r\n", reason)
		_ = sess.Exit(exitCode(usage))
	}
	s.log.Info("disconnect", "user", ls.id.User, "key", ls.id.Fingerprint, "remote", ls.id.Remote,
		"role", string(ls.id.Role), "duration", time.Since(ls.start).Round(time.Millisecond).String(), "end", end)
}

// console runs an admitted session's console, as wish's bubbletea
// middleware does (the window follows the client's size changes; the
// program is killed on the way out so the client's terminal is restored),
// except that how a console failed goes to the server's log: wish's would
// go to the process's stderr, past --log.
func (s *Server) console(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		p, m := s.program(sess)
		if p == nil {
			next(sess)
			return
		}
		// The console may hold the partition draft: it is given back
		// however the session ends (quit, client gone, idle or revoked cut,
		// shutdown, a panic in the console), before the session is released.
		// A dropped client never sends its program another message, so only
		// this can give the draft back.
		var closeOnce sync.Once
		release := func() { closeOnce.Do(func() { s.closeModel(sess, m) }) }
		defer release()
		_, winch, _ := sess.Pty()
		// Every read of the pty's size is done: resizes may come now.
		resizesReady(sess)
		ctx, cancel := context.WithCancel(sess.Context())
		go func() {
			// Its own goroutine: a panic here must end this session, not
			// the server.
			defer func() {
				if r := recover(); r != nil {
					s.log.Error("panic in a session's window handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					p.Quit()
				}
			}()
			coalesceResizes(ctx, winch, resizeEvery, func(w ssh.Window) {
				p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
			})
			p.Quit()
		}()
		// A program killed because its session ended (the client went
		// away, or the server cut it) is a normal end: the disconnect line
		// says why. A panic is reported as killed too, and is not one.
		if s.cfg.StartOnSecond {
			untilWholeSecond(ctx)
		}
		_, err := p.Run()
		ended := "quit"
		switch {
		case err != nil && (!errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, tea.ErrProgramPanic)):
			ended = "console failed"
			fp := ""
			if pub := sess.PublicKey(); pub != nil {
				fp = gossh.FingerprintSHA256(pub)
			}
			attrs := []any{"user", sess.User(), "key", fp, "remote", addrString(sess.RemoteAddr()), "err", err.Error()}
			if dp := (*screen.DrawPanicError)(nil); errors.As(err, &dp) {
				// No one else reports it: the server runs on.
				attrs = append(attrs, "stack", string(dp.Stack))
			}
			s.log.Error("console failed", attrs...)
		case err != nil:
			ended = "client gone"
		}
		s.mu.Lock()
		ls := s.sessions[sess]
		s.mu.Unlock()
		if ls != nil {
			ls.mu.Lock()
			ls.ended = ended
			ls.mu.Unlock()
		}
		p.Kill()
		cancel()
		release()
		next(sess)
	}
}

// sessionModel is a session's console: uiconsole.App, or what a test wraps it in. It
// holds things outside itself (the partition draft) that Close gives back.
type sessionModel interface {
	tea.Model
	Close()
}

// closeModel gives back what a session's console holds outside itself
// (uiconsole.App.Close: the partition draft). It runs after the program ended,
// so no Update runs beside it. A console broken enough to panic here
// must not take the server down.
func (s *Server) closeModel(sess ssh.Session, c sessionModel) {
	if c == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic closing a session's console", "user", sess.User(), "remote", addrString(sess.RemoteAddr()),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	c.Close()
}

// program builds the console of an admitted session, and returns it with
// its model (to Close once it ended): its own
// subscription, its own options (read-only for a viewer), the size and
// colour profile of the client's terminal, and input that counts toward
// the idle timeout. It is drawn when what it shows changed (package
// screen), so an idle session costs nothing between its console's
// once-a-second changes.
func (s *Server) program(sess ssh.Session) (*screen.Program, sessionModel) {
	s.mu.Lock()
	ls := s.sessions[sess]
	s.mu.Unlock()
	if ls == nil {
		return nil, nil
	}
	m := s.newModel(s.cfg.Subscribe(ls.ctx), s.sessionOptions(ls.id))
	pty, _, _ := sess.Pty()
	env := append(slices.Clip(sess.Environ()), "TERM="+pty.Term)
	p := screen.NewProgram(m, screen.Options{
		// The console never writes to the channel itself (see outQueue).
		Out:   ls.out,
		In:    inputClock{r: sess, ls: ls},
		Width: pty.Window.Width, Height: pty.Window.Height,
		// The client's terminal is not ours to ask: its colours are what
		// its environment says, as wish's bubbletea middleware takes them.
		Profile: colorprofile.Env(env),
		Environ: env,
		// The session's emulated pty turns "\n" into "\r\n".
		MapNewline: true,
		Share:      s.frames,
		Started:    s.programStarted,
	},
		tea.WithContext(ls.ctx),
		// The server's signals are not the session's business.
		tea.WithoutSignalHandler(),
	)
	ls.mu.Lock()
	ls.prog = p.Program
	cut := ls.reason != ""
	ls.mu.Unlock()
	if cut {
		p.Quit() // cut between admission and now
	}
	return p, m
}

// untilWholeSecond waits until the wall clock's next whole second, or
// until ctx is done.
func untilWholeSecond(ctx context.Context) {
	now := time.Now()
	t := time.NewTimer(now.Truncate(time.Second).Add(time.Second).Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// sessionOptions are the console options of one session: the template,
// with the session's actor, read-only unless the actor may write. The
// desk is the template's, the same for every session.
func (s *Server) sessionOptions(id Identity) uiconsole.Options {
	opts := s.cfg.UI
	opts.Actor = id.Actor()
	opts.ReadOnly = !opts.Actor.CanWrite()
	// Whatever the template says: over SSH a theme is a name, so nothing
	// a session types makes the server read a file of its choice.
	dir := s.cfg.ThemeDir
	opts.LoadTheme = func(arg string) (*themes.Theme, error) { return themes.LoadNamed(arg, dir) }
	return opts
}

// inputClock passes a session's input to its console and notes when the
// person last typed (or the terminal last answered a query).
type inputClock struct {
	r  io.Reader
	ls *session
}

func (c inputClock) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.ls.lastInput.Store(time.Now().UnixNano())
	}
	return n, err //nolint:wrapcheck // the reader's own errors, unchanged
}

// checkIdle ends a session idle for the timeout, or looks again when the
// rest of the timeout has passed.
func (s *Server) checkIdle(ls *session) {
	idleFor := time.Since(time.Unix(0, ls.lastInput.Load()))
	if idleFor >= s.idle {
		s.cut(ls, fmt.Sprintf("no input for %s: session closed", s.idle))
		return
	}
	ls.idle.Reset(s.idle - idleFor)
}

// cut ends a session for a reason: the console quits (restoring the
// client's terminal), the reason is shown after it, and the connection is
// closed after a grace period whatever the client does.
func (s *Server) cut(ls *session, reason string) {
	ls.mu.Lock()
	if ls.reason != "" {
		ls.mu.Unlock()
		return
	}
	ls.reason = reason
	p := ls.prog
	ls.mu.Unlock()
	s.log.Info("closing session", "user", ls.id.User, "key", ls.id.Fingerprint, "remote", ls.id.Remote, "why", reason)
	if p != nil {
		// Quit waits for the console's event loop to take it: a busy
		// console must not hold up the others' cuts (shutdown, a key
		// reload).
		go p.Quit()
	} else if ls.stream {
		// A stream has no terminal to restore: it ends now, and release
		// tells the client why.
		ls.cancel()
	}
	time.AfterFunc(cutGrace, func() {
		ls.cancel()
		if ls.conn != nil {
			_ = ls.conn.Close()
		}
	})
}

// setKeys parses a new authorized_keys content and makes it current.
// Sessions whose key is gone, or whose key's role changed, are cut: a
// removed key must not keep watching, and a demoted operator must not keep
// an operator's console.
func (s *Server) setKeys(data []byte) {
	ks, warns := ParseAuthorizedKeys(data)
	for _, w := range warns {
		s.log.Warn("authorized keys", "path", s.cfg.AuthorizedKeys, "problem", w)
	}
	ops, viewers := ks.Counts()
	s.log.Info("authorized keys loaded", "path", s.cfg.AuthorizedKeys, "operators", ops, "viewers", viewers)
	var cuts []*session
	var whys []string
	s.mu.Lock()
	s.keys, s.keysData = ks, data
	for _, ls := range s.sessions {
		k, ok := ks.byWire[ls.wire]
		switch {
		case !ok:
			cuts, whys = append(cuts, ls), append(whys, "your key was removed from authorized_keys")
		case k.Role != ls.keyRole:
			cuts, whys = append(cuts, ls), append(whys, fmt.Sprintf("your key's role changed to %s: reconnect", k.Role))
		}
	}
	s.mu.Unlock()
	for i, ls := range cuts {
		s.cut(ls, whys[i])
	}
}

// reloadKeys re-reads authorized_keys and applies it if it changed. A
// file that is gone counts as empty: every key is refused and every
// session closed, as someone removing the file means. A file that is there
// but cannot be read now (too many open files under a connection flood,
// an I/O error, unsafe permissions) refuses new logins until it can be,
// and leaves live sessions alone: cutting them would tell their owners
// their key was removed, which nobody did.
func (s *Server) reloadKeys() {
	data, err := s.readKeys(s.cfg.AuthorizedKeys)
	switch {
	case err == nil:
		s.mu.Lock()
		was := s.keysErr
		s.keysErr = nil
		s.mu.Unlock()
		if was != nil {
			s.log.Info("authorized keys readable again: accepting logins", "path", s.cfg.AuthorizedKeys)
		}
	case errors.Is(err, fs.ErrNotExist):
		if len(s.currentKeysData()) > 0 {
			s.log.Error("authorized keys removed: refusing every key", "path", s.cfg.AuthorizedKeys, "err", err.Error())
		}
		s.mu.Lock()
		s.keysErr = nil
		s.mu.Unlock()
		data = []byte{}
	default:
		s.mu.Lock()
		was := s.keysErr
		s.keysErr = err
		s.mu.Unlock()
		if was == nil || was.Error() != err.Error() {
			s.log.Error("authorized keys unreadable: refusing new logins, keeping live sessions", "path", s.cfg.AuthorizedKeys, "err", err.Error())
		}
		return
	}
	if bytes.Equal(data, s.currentKeysData()) {
		return
	}
	s.setKeys(data)
}

func (s *Server) currentKeysData() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keysData
}

// watchKeys follows authorized_keys: notifications on its directory (so
// an editor's or `mv`'s replacement is seen too) settled for a moment,
// plus a periodic re-read as a safety net.
func (s *Server) watchKeys() {
	defer s.wg.Done()
	path := filepath.Clean(s.cfg.AuthorizedKeys)
	var events <-chan fsnotify.Event
	var errs <-chan error
	w, err := fsnotify.NewWatcher()
	if err == nil {
		err = w.Add(filepath.Dir(path))
	}
	if err != nil {
		s.log.Warn("authorized keys: no change notifications, polling only", "path", path, "every", s.cfg.KeysPoll.String(), "err", err.Error())
	} else {
		events, errs = w.Events, w.Errors
	}
	if w != nil {
		defer w.Close()
	}
	poll := time.NewTicker(s.cfg.KeysPoll)
	defer poll.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Clean(ev.Name) == path {
				settle.Reset(keysSettle)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			s.log.Warn("authorized keys: change notifications", "err", err.Error())
		case <-settle.C:
			s.reloadKeys()
		case <-poll.C:
			s.reloadKeys()
		}
	}
}

// orDefault maps a duration setting onto its value: 0 is the default, a
// negative value none (0 to the SSH library).
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// coalesceResizes reads a session's window changes until ctx ends and
// tells send the newest one at most once per every: a burst comes out
// as its last size, every apart. It never blocks the reader of winch for
// longer than send takes.
func coalesceResizes(ctx context.Context, winch <-chan ssh.Window, every time.Duration, send func(ssh.Window)) {
	var pending *ssh.Window
	var last time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	armed := false
	for {
		select {
		case <-ctx.Done():
			return
		case w, ok := <-winch:
			if !ok {
				return
			}
			pending = &w
			if armed {
				continue
			}
			if wait := every - time.Since(last); wait > 0 {
				timer.Reset(wait)
				armed = true
				continue
			}
			send(*pending)
			pending, last = nil, time.Now()
		case <-timer.C:
			armed = false
			if pending != nil {
				send(*pending)
				pending, last = nil, time.Now()
			}
		}
	}
}

package sshserve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// Limits on what one client may make the server hold. Every one of them
// was an attack in issue 16: a 100000x100000 pty ran the server out of
// memory in the screen buffer, 20,000 env requests of 30 kB took it to
// 879 MB, 20,000 channels on one connection, and authenticated
// connections that open no session held their place forever.
const (
	// MaxWidth and MaxHeight cap a session's window, at the pty request
	// and at every resize: the console renders at most this many cells,
	// whatever the client claims. 500x200 is more than a 4K screen shows
	// with a readable font (3840x2160 in 8x16 cells is 480x135), so no
	// real terminal is cut; it bounds the screen buffers of one session
	// (see TestHugeWindowIsCapped for what one costs).
	MaxWidth, MaxHeight = 500, 200
	// MaxChannels is the most session channels one connection may hold
	// open at once; each is a console or its refusal.
	MaxChannels = 4
	// maxEnv and maxEnvBytes bound a session's env requests: the
	// console reads a handful (TERM, COLORTERM, NO_COLOR); more are
	// refused.
	maxEnv      = 64
	maxEnvBytes = 16 << 10
	// DefaultNoSessionTimeout closes a connection that holds no console
	// for this long: one that authenticated and opened nothing, or whose
	// sessions were all refused or ended.
	DefaultNoSessionTimeout = time.Minute
	// DefaultConnIdleTimeout closes a connection on which nothing at all
	// moved for this long. A connection with a live console is kept
	// moving (a keepalive every third of it), so only one with no console,
	// or a client that stopped reading (its writes block), reaches it.
	DefaultConnIdleTimeout = 5 * time.Minute
	// DefaultMaxConnTime is the longest any connection lives. Sessions are
	// told, and closed cleanly, a little before.
	DefaultMaxConnTime = 24 * time.Hour
)

// connStateKey finds a connection's connState in its ssh.Context.
type connStateKey struct{}

// connState is what the server counts per connection.
type connState struct {
	conn    net.Conn
	start   time.Time
	timeout time.Duration

	// authed uncounts the connection from the unauthenticated ones.
	authed func()

	mu       sync.Mutex
	channels int
	live     int // admitted sessions
	idle     *time.Timer
	// ended is set once the connection closed: a session released after
	// that (a killed client's, a fleet's stream) re-armed idle, and a
	// minute later the log said a connection long gone was closed for
	// want of a console.
	ended bool
	// offered are the fingerprints of the keys the client offered that
	// were refused (at most maxOffered), and told whether the client was
	// shown why (refusalBanner): once a connection.
	offered []string
	told    bool
	// unchecked says a key was refused because the authorized keys file
	// could not be read then: whether it is in it is not known.
	unchecked bool
}

// onConn registers a new connection (before its handshake), or drops it
// at once when too many wait for their handshake (startups.go): it is
// closed when it holds no console for the no-session timeout.
func (s *Server) onConn(ctx ssh.Context, c net.Conn) net.Conn {
	leave, why := s.startups.enter(sourceOf(c.RemoteAddr()))
	if leave == nil {
		if s.refused.allow() {
			s.log.Info("refused connection", "remote", addrString(c.RemoteAddr()), "why", why)
		}
		return nil // the library closes it
	}
	c = &startupConn{Conn: c, leave: leave}
	cs := &connState{conn: c, start: time.Now(), timeout: s.noSession, authed: leave}
	cs.idle = time.AfterFunc(s.noSession, func() {
		// Stop does not wait for a clock that already ran out: one that
		// did as the connection closed or a console started says nothing.
		cs.mu.Lock()
		stale := cs.ended || cs.live > 0
		cs.mu.Unlock()
		if stale {
			return
		}
		s.log.Info("closing connection", "remote", addrString(c.RemoteAddr()), "why",
			fmt.Sprintf("no console for %s", s.noSession))
		_ = c.Close()
	})
	ctx.SetValue(connStateKey{}, cs)
	go s.keepAlive(ctx, cs)
	return c
}

// keepAlive runs for a connection's life. While it holds a console, it
// sends a keepalive request now and then, so that a console whose screen
// does not change (and whose user does not type) is not taken for an
// idle connection; a client that stopped reading still is, as the write
// blocks.
func (s *Server) keepAlive(ctx ssh.Context, cs *connState) {
	defer cs.end()
	if s.connIdle <= 0 {
		<-ctx.Done()
		return
	}
	tick := time.NewTicker(s.connIdle / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done(): // the connection closed
			return
		case <-tick.C:
			cs.mu.Lock()
			live := cs.live > 0
			cs.mu.Unlock()
			if sc, ok := ctx.Value(ssh.ContextKeyConn).(*gossh.ServerConn); ok && live {
				// No reply wanted: the write alone moves the idle clock.
				_, _, _ = sc.SendRequest("keepalive@openssh.com", false, nil)
			}
		}
	}
}

// serverConfig is a connection's SSH configuration, before the library
// adds its own: a connection that authenticates stops counting against
// the limits on unauthenticated ones.
//
// It offers keyboard-interactive after publickey, and refuses it always:
// OpenSSH's client tries it only once every key it has was refused, so
// that refusal is where the client is told why, in a banner it prints
// (refusalBanner). A banner sent with a key's refusal would be printed
// for every key the client tries before the one that works.
func (s *Server) serverConfig(ctx ssh.Context) *gossh.ServerConfig {
	return &gossh.ServerConfig{
		AuthLogCallback: func(_ gossh.ConnMetadata, _ string, err error) {
			// Called after each attempt; nil only for the one that succeeded
			// (a key's query, "would this key do", does not come here).
			if cs := connStateOf(ctx); err == nil && cs != nil && cs.authed != nil {
				cs.authed()
			}
		},
		KeyboardInteractiveCallback: func(gossh.ConnMetadata, gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
			refused := errors.New("fgtop serve: no password or keyboard login, keys only")
			cs := connStateOf(ctx)
			if cs == nil {
				return nil, refused
			}
			cs.mu.Lock()
			defer cs.mu.Unlock()
			if cs.told {
				return nil, refused
			}
			cs.told = true
			return nil, &gossh.BannerError{Err: refused, Message: refusalBanner(cs.offered, cs.unchecked)}
		},
	}
}

// maxOffered is how many refused keys' fingerprints a connection keeps for
// its banner: a client that offers more is told the first ones.
const maxOffered = 8

// noteOffered keeps a refused key's fingerprint for the connection's
// banner, once; unchecked when the authorized keys could not be read.
func (cs *connState) noteOffered(fp string, unchecked bool) {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.unchecked = cs.unchecked || unchecked
	if len(cs.offered) < maxOffered && !slices.Contains(cs.offered, fp) {
		cs.offered = append(cs.offered, fp)
	}
}

// refusalBanner is what a client none of whose keys was let in is told:
// which keys it offered (their SHA256 fingerprints, as ssh-keygen -l and
// the server's log print them) and what to ask for. It names no file or
// key of the server's: the client is not authenticated. unchecked: a key
// was refused only because the authorized keys could not be read; told
// its keys are not authorized and to have them added, an operator whose
// key is in the file would ask for the wrong fix.
func refusalBanner(offered []string, unchecked bool) string {
	var b strings.Builder
	if unchecked {
		b.WriteString("fgtop serve cannot check keys now: its authorized keys cannot be read, so every key is refused until they can.\r\n")
		b.WriteString("Try again later, or tell the node's operator (fgtop serve's log says why).\r\n")
		return b.String()
	}
	b.WriteString("fgtop serve: none of your keys is authorized on this node.\r\n")
	if len(offered) == 0 {
		b.WriteString("Your client offered no key: give one with ssh -i KEY.\r\n")
	} else {
		b.WriteString("Keys offered and refused:\r\n")
		for _, fp := range offered {
			b.WriteString("  " + fp + "\r\n")
		}
	}
	b.WriteString("Ask the node's operator to add your public key (KEY.pub) to the authorized keys file fgtop serve reads.\r\n")
	return b.String()
}

func connStateOf(ctx ssh.Context) *connState {
	cs, _ := ctx.Value(connStateKey{}).(*connState)
	return cs
}

// admitted notes a console started on the connection.
func (cs *connState) admitted() {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	cs.live++
	cs.idle.Stop()
	cs.mu.Unlock()
}

// released notes a console ended; the last one restarts the no-session
// clock, unless the connection is gone already: its sessions end after it.
func (cs *connState) released() {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	cs.live--
	if cs.live == 0 && !cs.ended {
		cs.idle.Reset(cs.timeout)
	}
	cs.mu.Unlock()
}

// end notes the connection closed and stops its no-session clock for
// good, under the lock released takes, so that no session ending later
// restarts it.
func (cs *connState) end() {
	cs.mu.Lock()
	cs.ended = true
	cs.idle.Stop()
	cs.mu.Unlock()
}

// sessionChannel is the "session" channel handler: the library's own,
// behind a limit on channels per connection and a filter on the channel's
// requests.
func (s *Server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	cs := connStateOf(ctx)
	if cs != nil {
		cs.mu.Lock()
		over := cs.channels >= MaxChannels
		if !over {
			cs.channels++
		}
		cs.mu.Unlock()
		if over {
			s.log.Info("refused channel", "user", agentconfig.CleanName(conn.User()), "remote", addrString(conn.RemoteAddr()),
				"why", fmt.Sprintf("more than %d sessions on one connection", MaxChannels))
			_ = nc.Reject(gossh.ResourceShortage, fmt.Sprintf("at most %d sessions per connection", MaxChannels))
			return
		}
		defer func() {
			cs.mu.Lock()
			cs.channels--
			cs.mu.Unlock()
		}()
	}
	ssh.DefaultSessionHandler(srv, conn, filteredChannel{NewChannel: nc}, ctx)
}

// NoForwarding is what a client opening any channel but a session (ssh
// -L, -D, -W: forwarding) is told.
const NoForwarding = "fgtop serve forwards nothing: it serves the console (ssh -t) and read-only commands"

// otherChannel refuses every channel type but "session", naming why.
func (s *Server) otherChannel(_ *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, _ ssh.Context) {
	if s.refused.allow() {
		s.log.Info("refused channel", "user", agentconfig.CleanName(conn.User()), "remote", addrString(conn.RemoteAddr()),
			"type", agentconfig.CleanName(nc.ChannelType()), "why", "forwarding")
	}
	_ = nc.Reject(gossh.Prohibited, NoForwarding)
}

// filteredChannel hands the session handler its channel's requests
// through limitRequests.
type filteredChannel struct{ gossh.NewChannel }

func (c filteredChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err //nolint:wrapcheck // the library's own error, for the library
	}
	out := make(chan *gossh.Request)
	lc := &limitedChannel{Channel: ch, ready: make(chan struct{})}
	go limitRequests(reqs, out, lc.ready)
	return lc, out, nil
}

// readyRequest is the request a session's handler "sends" on its own
// channel (ssh.Session passes SendRequest to the channel) to say it has
// read the pty's size: limitedChannel takes it, it never reaches the
// client.
const readyRequest = "fgtop-ready@fgtop"

// limitedChannel is a session's channel, which takes readyRequest.
type limitedChannel struct {
	gossh.Channel
	once  sync.Once
	ready chan struct{}
}

func (c *limitedChannel) SendRequest(name string, wantReply bool, payload []byte) (bool, error) {
	if name == readyRequest {
		c.once.Do(func() { close(c.ready) })
		return true, nil
	}
	return c.Channel.SendRequest(name, wantReply, payload) //nolint:wrapcheck // the channel's own error
}

// resizesReady tells a session's request filter that its handler is done
// reading the pty's size (ssh.Session.Pty), so resizes may pass now: the
// library writes the size of each resize without a lock, while Pty reads
// it.
func resizesReady(sess ssh.Session) {
	_, _ = sess.SendRequest(readyRequest, false, nil)
}

// limitRequests passes a session's requests on, capping every window size
// and refusing env requests beyond the limits. It ends, closing out, when
// the channel's requests end.
//
// The pty request is held back (answered here) until the shell or exec
// request comes, and resizes before then are folded into it; resizes after
// it are held (the newest only) until ready is closed: the library keeps
// the pty's size in a one-slot buffer nobody reads before the console
// starts, so a second resize blocked its request loop for good (the
// session hung, and its goroutines stayed after the client left), and it
// writes a resize's size while the starting console reads it.
func limitRequests(in <-chan *gossh.Request, out chan<- *gossh.Request, ready <-chan struct{}) {
	defer close(out)
	envs, envBytes := 0, 0
	started := false
	var pty, held *gossh.Request
	var readyCh <-chan struct{} // ready, once the shell request is passed on
	answer := func(req *gossh.Request, ok bool) {
		if req.WantReply {
			_ = req.Reply(ok, nil)
			req.WantReply = false
		}
	}
	for {
		var req *gossh.Request
		select {
		case r, ok := <-in:
			if !ok {
				return
			}
			req = r
		case <-readyCh:
			readyCh = nil
			if held != nil {
				out <- held
				held = nil
			}
			continue
		}
		switch req.Type {
		case "auth-agent-req@openssh.com":
			// Nothing is forwarded (no agent channel is served): a yes
			// would tell the client its agent was.
			answer(req, false)
			continue
		case "env":
			envs++
			envBytes += len(req.Payload)
			if envs > maxEnv || envBytes > maxEnvBytes {
				answer(req, false)
				continue
			}
		case "pty-req":
			req.Payload = capPtyRequest(req.Payload)
			if !started {
				if pty != nil { // one terminal per session, as the library says
					answer(req, false)
					continue
				}
				answer(req, true)
				pty = req
				continue
			}
		case "window-change":
			req.Payload = capWindowPayload(req.Payload)
			switch {
			case !started && pty != nil:
				pty.Payload = setPtyWindow(pty.Payload, req.Payload)
				answer(req, true) // RFC 4254 says no reply; answer one who asks
				continue
			case started && readyCh != nil:
				answer(req, true)
				held = req
				continue
			}
		case "shell", "exec":
			if !started {
				started = true
				if pty != nil {
					out <- pty
					pty = nil
					readyCh = ready
				}
			}
		}
		out <- req
	}
}

// setPtyWindow returns a pty-req payload with the size of a window-change
// payload, in a copy; either one too short leaves it as it is.
func setPtyWindow(p, win []byte) []byte {
	off, ok := ptyWindowAt(p)
	if !ok || len(win) < 16 {
		return p
	}
	q := append([]byte(nil), p...)
	copy(q[off:off+16], win[:16])
	return q
}

// ptyWindowAt returns where the window size starts in a pty-req payload.
func ptyWindowAt(p []byte) (int, bool) {
	if len(p) < 4 {
		return 0, false
	}
	n := uint64(binary.BigEndian.Uint32(p))
	if uint64(len(p)) < 4+n+16 {
		return 0, false
	}
	return 4 + int(n), true
}

// capPtyRequest caps the size in a pty-req payload (RFC 4254 6.2: string
// TERM, uint32 columns, rows, width and height in pixels, string modes).
// A payload too short to hold them is passed as is: the library refuses
// it.
func capPtyRequest(p []byte) []byte {
	off, ok := ptyWindowAt(p)
	if !ok {
		return p
	}
	return setPtyWindow(p, capWindowPayload(p[off:off+16]))
}

// capWindowPayload caps a window-change payload (RFC 4254 6.7: uint32
// columns, rows, width and height in pixels), in a copy. Pixel sizes are
// zeroed when the cells are capped: they no longer describe the window.
func capWindowPayload(p []byte) []byte {
	if len(p) < 16 {
		return p
	}
	w, h := binary.BigEndian.Uint32(p), binary.BigEndian.Uint32(p[4:])
	if w <= MaxWidth && h <= MaxHeight {
		return p
	}
	q := append([]byte(nil), p...)
	binary.BigEndian.PutUint32(q, min(w, MaxWidth))
	binary.BigEndian.PutUint32(q[4:], min(h, MaxHeight))
	binary.BigEndian.PutUint32(q[8:], 0)
	binary.BigEndian.PutUint32(q[12:], 0)
	return q
}

// drainWindows reads a session's window changes until the library closes
// the channel. Without a reader the library's request loop blocks on the
// next resize (its buffer holds one), and that session's goroutines and
// buffers stay forever: a refused session, or one whose console ended
// while the client still sent resizes, leaked them.
func drainWindows(winch <-chan ssh.Window) {
	if winch == nil {
		return
	}
	go func() {
		for range winch { //nolint:revive // draining
		}
	}()
}

package sshserve

import (
	"encoding/binary"
	"fmt"
	"net"
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
	// moved for this long. A live console writes every second, so only a
	// connection with no console, or a client that stopped reading (its
	// writes block), reaches it.
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

	mu       sync.Mutex
	channels int
	live     int // admitted sessions
	idle     *time.Timer
}

// onConn registers a new connection (before its handshake): it is closed
// when it holds no console for the no-session timeout.
func (s *Server) onConn(ctx ssh.Context, c net.Conn) net.Conn {
	cs := &connState{conn: c, start: time.Now(), timeout: s.noSession}
	cs.idle = time.AfterFunc(s.noSession, func() {
		s.log.Info("closing connection", "remote", addrString(c.RemoteAddr()), "why",
			fmt.Sprintf("no console for %s", s.noSession))
		_ = c.Close()
	})
	ctx.SetValue(connStateKey{}, cs)
	go func() {
		<-ctx.Done() // the connection closed
		cs.idle.Stop()
	}()
	return c
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
// clock.
func (cs *connState) released() {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	cs.live--
	if cs.live == 0 {
		cs.idle.Reset(cs.timeout)
	}
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

// filteredChannel hands the session handler its channel's requests
// through limitRequests.
type filteredChannel struct{ gossh.NewChannel }

func (c filteredChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err //nolint:wrapcheck // the library's own error, for the library
	}
	out := make(chan *gossh.Request)
	go limitRequests(reqs, out)
	return ch, out, nil
}

// limitRequests passes a session's requests on, capping every window size
// and refusing env requests beyond the limits. It ends, closing out, when
// the channel's requests end.
//
// Resizes that come before the console starts are held back, the newest
// only, until the shell (or exec) request has been passed on: the library
// keeps the pty's first size in a one-slot buffer that nobody reads
// before then, and a second resize would block its request loop for good
// (the session hung, and its goroutines stayed after the client left).
func limitRequests(in <-chan *gossh.Request, out chan<- *gossh.Request) {
	defer close(out)
	envs, envBytes := 0, 0
	started := false
	var held *gossh.Request
	for req := range in {
		switch req.Type {
		case "env":
			envs++
			envBytes += len(req.Payload)
			if envs > maxEnv || envBytes > maxEnvBytes {
				if req.WantReply {
					_ = req.Reply(false, nil)
				}
				continue
			}
		case "pty-req":
			req.Payload = capPtyRequest(req.Payload)
		case "window-change":
			req.Payload = capWindowPayload(req.Payload)
			if !started {
				if req.WantReply { // RFC 4254 says false; answer a client that asks anyway
					_ = req.Reply(true, nil)
					req.WantReply = false
				}
				held = req
				continue
			}
		case "shell", "exec":
			out <- req
			if !started {
				started = true
				if held != nil {
					out <- held
					held = nil
				}
			}
			continue
		}
		out <- req
	}
}

// capPtyRequest caps the size in a pty-req payload (RFC 4254 6.2: string
// TERM, uint32 columns, rows, width and height in pixels, string modes).
// A payload too short to hold them is passed as is: the library refuses
// it.
func capPtyRequest(p []byte) []byte {
	if len(p) < 4 {
		return p
	}
	n := binary.BigEndian.Uint32(p)
	if uint64(len(p)) < 4+uint64(n)+16 {
		return p
	}
	off := 4 + int(n)
	return append(append(p[:off:off], capWindowPayload(p[off:off+16])...), p[off+16:]...)
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

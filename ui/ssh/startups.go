package sshserve

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Connections that have not authenticated yet cost the server a
// descriptor, a goroutine and the handshake's buffers until the handshake
// timeout, whoever opens them: 15,000 connections that sent only a banner
// held 469 MB and 15,013 descriptors for 20 s, and with a limit of 1,024
// descriptors 1,500 of them kept an operator out (issue 31). So, as sshd's
// MaxStartups and PerSourceMaxStartups, the server counts them, in total
// and per source address, and drops new ones beyond a limit at once.

// Startups is a limit on unauthenticated connections in sshd's
// MaxStartups form start:rate:full: up to Start of them are let in; from
// Start on, a new one is dropped with probability Rate percent, rising
// linearly to 100 % at Full, and every one is dropped at Full or more.
type Startups struct{ Start, Rate, Full int }

// Defaults of Config.MaxStartups and Config.PerSourceMaxStartups. A
// connection waiting for its handshake costs about 31 KB and a descriptor:
// 256 of them are 8 MB, far from the 1,024 descriptors a default limit
// allows. A source (one client, one NAT) rarely opens more than a few at
// once: fleet consoles dial each node once.
var (
	DefaultMaxStartups          = Startups{Start: 64, Rate: 30, Full: 256}
	DefaultPerSourceMaxStartups = Startups{Start: 10, Rate: 30, Full: 20}
)

// String is the limit as ParseStartups reads it.
func (m Startups) String() string { return fmt.Sprintf("%d:%d:%d", m.Start, m.Rate, m.Full) }

// ParseStartups reads "start:rate:full" or a single "N" (no random drop:
// every connection beyond N is dropped).
func ParseStartups(s string) (Startups, error) {
	bad := func(why string) (Startups, error) {
		return Startups{}, fmt.Errorf("%q: %s (want start:rate:full such as %s, or one number)", truncate(s, 32), why, DefaultMaxStartups)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 1 && len(parts) != 3 {
		return bad("not one or three numbers")
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 1_000_000 {
			return bad(fmt.Sprintf("%q is not a whole number from 0 to 1000000", truncate(p, 16)))
		}
		n[i] = v
	}
	if len(parts) == 1 {
		if n[0] < 1 {
			return bad("want at least 1")
		}
		return Startups{Start: n[0], Rate: 100, Full: n[0]}, nil
	}
	m := Startups{Start: n[0], Rate: n[1], Full: n[2]}
	switch {
	case m.Start < 1:
		return bad("start must be at least 1")
	case m.Rate < 1 || m.Rate > 100:
		return bad("rate is a percentage from 1 to 100")
	case m.Full < m.Start:
		return bad("full must be at least start")
	}
	return m, nil
}

// drop says whether a new connection is dropped when n are waiting
// already; roll returns a number from 0 to 99.
func (m Startups) drop(n int, roll func() int) bool {
	switch {
	case m.Full <= 0 || n < m.Start:
		return false
	case n >= m.Full:
		return true
	}
	p := m.Rate + (100-m.Rate)*(n-m.Start)/max(m.Full-m.Start, 1)
	return roll() < p
}

// startups counts the connections waiting for their handshake.
type startups struct {
	total, perSource Startups
	roll             func() int

	mu    sync.Mutex
	n     int
	bySrc map[string]int
}

func newStartups(total, perSource Startups) *startups {
	return &startups{total: total, perSource: perSource, bySrc: map[string]int{}, roll: func() int { return rand.IntN(100) }}
}

// sourceOf is the address a connection is counted under: its IP, without
// the port.
func sourceOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// enter counts a new connection from src, or says why it is dropped. The
// returned func uncounts it (once, however often it is called): when it
// authenticates, fails or closes.
func (st *startups) enter(src string) (leave func(), why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.perSource.drop(st.bySrc[src], st.roll) {
		return nil, fmt.Sprintf("%d unauthenticated connections from %s already (per source %s)", st.bySrc[src], src, st.perSource)
	}
	if st.total.drop(st.n, st.roll) {
		return nil, fmt.Sprintf("%d unauthenticated connections already (max startups %s)", st.n, st.total)
	}
	st.n++
	st.bySrc[src]++
	var once sync.Once
	return func() {
		once.Do(func() {
			st.mu.Lock()
			st.n--
			if st.bySrc[src]--; st.bySrc[src] <= 0 {
				delete(st.bySrc, src)
			}
			st.mu.Unlock()
		})
	}, ""
}

// waiting returns how many connections wait for their handshake.
func (st *startups) waiting() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.n
}

// startupConn is a connection counted by startups until it closes.
type startupConn struct {
	net.Conn
	leave func()
}

func (c *startupConn) Close() error {
	c.leave()
	return c.Conn.Close() //nolint:wrapcheck // the connection's own error, for the library
}

// Refusals are logged one line each up to refusedBurst a minute; beyond
// that a line a minute says how many more there were. Each refused key
// logged about 287 bytes with no limit: a client trying keys as fast as
// it can filled the log.
const (
	refusedBurst  = 20
	refusedWindow = time.Minute
)

// logLimit lets burst lines through per window and counts the rest,
// which one summary line reports when the window ends.
type logLimit struct {
	burst  int
	window time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	start time.Time
	n     int
	held  int
	timer *time.Timer
}

// allow reports whether one more refusal may be logged now; when not, it
// is counted for the window's summary.
func (l *logLimit) allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.held == 0 && now.Sub(l.start) >= l.window {
		l.start, l.n = now, 0
	}
	l.n++
	if l.n <= l.burst {
		return true
	}
	l.held++
	if l.timer == nil {
		l.timer = time.AfterFunc(max(time.Until(l.start.Add(l.window)), 0), l.summarize)
	}
	return false
}

// summarize logs how many refusals the window held back, and starts a new
// window.
func (l *logLimit) summarize() {
	l.mu.Lock()
	held := l.held
	l.held, l.n, l.start, l.timer = 0, 0, time.Now(), nil
	l.mu.Unlock()
	if held > 0 {
		l.log.Info(fmt.Sprintf("%d more refused in the last %s (not logged one by one)", held, fmtWindow(l.window)),
			"refused", held)
	}
}

// stop ends the window now, saying what it held back.
func (l *logLimit) stop() {
	l.mu.Lock()
	t := l.timer
	l.mu.Unlock()
	if t != nil && t.Stop() {
		l.summarize()
	}
}

func fmtWindow(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}

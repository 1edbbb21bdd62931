package sshserve

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseStartups(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Startups
		err  string
	}{
		{in: "10:30:100", want: Startups{10, 30, 100}},
		{in: "64:30:256", want: DefaultMaxStartups},
		{in: "20", want: Startups{20, 100, 20}},
		{in: "5:100:5", want: Startups{5, 100, 5}},
		{in: "", err: "not a whole number"},
		{in: "10:30", err: "not one or three numbers"},
		{in: "0:30:100", err: "start must be at least 1"},
		{in: "10:0:100", err: "rate is a percentage"},
		{in: "10:101:100", err: "rate is a percentage"},
		{in: "10:30:5", err: "full must be at least start"},
		{in: "10:x:100", err: `"x" is not a whole number`},
		{in: "0", err: "want at least 1"},
	} {
		got, err := ParseStartups(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "want start:rate:full") {
				t.Errorf("%q: error %v, want one saying %q and the form", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := ParseStartups(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), back, err)
		}
	}
}

// TestStartupsDrop: sshd's MaxStartups curve: none dropped below start,
// rate percent at start rising to all at full.
func TestStartupsDrop(t *testing.T) {
	m := Startups{Start: 10, Rate: 30, Full: 20}
	for _, tc := range []struct {
		n, roll int
		drop    bool
	}{
		{n: 9, roll: 0, drop: false},
		{n: 10, roll: 29, drop: true},
		{n: 10, roll: 30, drop: false},
		{n: 15, roll: 64, drop: true}, // 30 + 70*5/10 = 65 %
		{n: 15, roll: 65, drop: false},
		{n: 19, roll: 92, drop: true}, // 93 %
		{n: 20, roll: 99, drop: true},
		{n: 500, roll: 99, drop: true},
	} {
		if got := m.drop(tc.n, func() int { return tc.roll }); got != tc.drop {
			t.Errorf("%d waiting, roll %d: drop %v, want %v", tc.n, tc.roll, got, tc.drop)
		}
	}
}

// openIdle opens a TCP connection from src that sends only a client
// banner, and reports whether the server kept it (sent its own banner) or
// dropped it at once.
func openIdle(t *testing.T, addr, src string) (net.Conn, bool) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	_, _ = io.WriteString(c, "SSH-2.0-idle\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	_ = c.SetReadDeadline(time.Time{})
	if n > 0 && strings.HasPrefix(string(buf[:n]), "SSH-") {
		return c, true
	}
	if err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("a connection from %s got neither a banner nor a close: %d bytes, %v", src, n, err)
	}
	c.Close()
	return nil, false
}

// TestUnauthenticatedConnectionsAreCapped: hundreds of connections that
// never authenticate (a banner, then nothing) are held only up to the
// limits: from one source beyond its own limit, and beyond the total
// limit from any, a new one is dropped at once; an operator's key still
// logs in while hundreds wait, and the refusals' log lines are bounded,
// with a line saying how many more there were. Before, 15,000 such
// connections held 469 MB and 15,013 descriptors, and 1,500 of them kept
// an operator out under a 1,024-descriptor limit (issue 31).
func TestUnauthenticatedConnectionsAreCapped(t *testing.T) {
	f := startServer(t, func(c *Config) {
		c.MaxStartups = Startups{Start: 300, Rate: 100, Full: 300}
		c.PerSourceMaxStartups = Startups{Start: 20, Rate: 100, Full: 20}
	}, func(s *Server) { s.refused.window = time.Hour })
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	kept, dropped := 0, 0
	open := func(src string) bool {
		c, ok := openIdle(t, f.addr, src)
		mu.Lock()
		defer mu.Unlock()
		if ok {
			held = append(held, c)
			kept++
		} else {
			dropped++
		}
		return ok
	}
	// One source opens 200: 20 are held, the rest dropped at once.
	for range 200 {
		open("127.0.0.2")
	}
	if kept != 20 || dropped != 180 {
		t.Fatalf("one source's 200 connections: %d held, %d dropped (want 20 and 180)", kept, dropped)
	}
	// Fourteen more sources open 20 each: 300 wait then, the total.
	for i := range 14 {
		for range 20 {
			if !open(fmt.Sprintf("127.0.0.%d", 3+i)) {
				t.Fatalf("connection %d from 127.0.0.%d dropped under the limits (%d waiting)", kept, 3+i, f.srv.startups.waiting())
			}
		}
	}
	if w := f.srv.startups.waiting(); w != 300 {
		t.Fatalf("%d connections waiting, want 300", w)
	}
	// At the total, any new one is dropped, from a new source too.
	if _, ok := openIdle(t, f.addr, "127.0.0.40"); ok {
		t.Fatal("a connection beyond the total limit was held")
	}
	// Room for one: an operator logs in while 299 wait, and once in,
	// no longer counts.
	held[0].Close()
	held = held[1:]
	waitUntil(t, "the closed connection to be uncounted", func() bool { return f.srv.startups.waiting() == 299 })
	c := f.open(t, "olga", f.operator, nil)
	c.waitScreen(t, "gpu-node01")
	if w := f.srv.startups.waiting(); w != 299 {
		t.Fatalf("with the operator logged in, %d connections count as waiting (want 299)", w)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	waitUntil(t, "every closed connection to be uncounted", func() bool { return f.srv.startups.waiting() == 0 })

	// The log: refusedBurst lines, then one that counts the rest: the
	// 181 dropped and the 300 held that closed without a handshake.
	refusals := func() int {
		f.srv.refused.mu.Lock()
		defer f.srv.refused.mu.Unlock()
		return strings.Count(f.log.String(), `msg="refused connection"`) + f.srv.refused.held
	}
	waitUntil(t, "every refusal counted", func() bool { return refusals() == 481 })
	f.srv.refused.stop() // the window's end
	log := f.log.String()
	lines := strings.Count(log, `msg="refused connection"`)
	m := regexp.MustCompile(`msg="(\d+) more refused in the last 1h0m0s \(not logged one by one\)"`).FindStringSubmatch(log)
	if m == nil || lines != refusedBurst {
		t.Fatalf("%d refusal lines (want %d), then a summary %v:\n%s", lines, refusedBurst, m, log)
	}
	if more, _ := strconv.Atoi(m[1]); lines+more != 481 {
		t.Fatalf("%d lines and %d summed up, want 481 in all", lines, more)
	}
}

// TestRefusalLogIsRateLimited: beyond the burst, refusals are counted and
// one line a window says how many.
func TestRefusalLogIsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	l := &logLimit{burst: 2, window: 50 * time.Millisecond, log: slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))}
	var allowed int
	for range 7 {
		if l.allow() {
			allowed++
		}
	}
	if allowed != 2 {
		t.Fatalf("%d of 7 allowed in one window (burst 2)", allowed)
	}
	waitUntil(t, "the summary", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(buf.String(), `msg="5 more refused in the last 50ms (not logged one by one)" refused=5`)
	})
	time.Sleep(60 * time.Millisecond)
	if !l.allow() {
		t.Fatal("a new window does not let the first refusal through")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// FuzzParseStartups: a --max-startups value never crashes the parser; one
// it takes is a sane limit that reads back as itself, and an error stays
// short whatever the input.
func FuzzParseStartups(f *testing.F) {
	for _, s := range []string{"10:30:100", "20", "0:0:0", "1:100:1", "10:30", "9999999999:1:1", ":::", "1:2:3:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		m, err := ParseStartups(s)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if m.Start < 1 || m.Full < m.Start || m.Rate < 1 || m.Rate > 100 {
			t.Fatalf("%q: took %+v", s, m)
		}
		if back, err := ParseStartups(m.String()); err != nil || back != m {
			t.Fatalf("%q: %+v reads back as %+v, %v", s, m, back, err)
		}
	})
}

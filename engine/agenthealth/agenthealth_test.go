package agenthealth

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/model"
)

// serve starts a real HTTP server on 127.0.0.1 answering /health with h,
// and returns its HOST:PORT.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func answer(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func TestCheck(t *testing.T) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	for _, tc := range []struct {
		name    string
		addr    string
		state   model.AgentHealthState
		status  string
		version string
		detail  string
	}{
		{"up", serve(t, answer(200, `{"status":"ok","version":"26.4.1","component":"agent","connectivity":{"etcd":"ok"}}`)),
			model.AgentUp, "ok", "26.4.1", ""},
		{"up but degraded", serve(t, answer(200, `{"status":"degraded","version":"25.15.0"}`)),
			model.AgentUp, "degraded", "25.15.0", ""},
		{"no version", serve(t, answer(200, `{"status":"ok"}`)), model.AgentUp, "ok", "", ""},
		{"escape codes stripped", serve(t, answer(200, `{"status":"ok","version":"1\u001b[2J2"}`)), model.AgentUp, "ok", "1[2J2", ""},
		{"nothing listens", closed, model.AgentDown, "", "", "connection refused"},
		{"HTTP error", serve(t, answer(503, `{"status":"error"}`)), model.AgentUnreachable, "", "", "HTTP 503"},
		{"not JSON", serve(t, answer(200, `<html>hi</html>`)), model.AgentUnreachable, "", "", "not the agent's health JSON"},
		{"no status", serve(t, answer(200, `{"version":"1"}`)), model.AgentUnreachable, "", "", `no "status"`},
		{"too large", serve(t, answer(200, `{"status":"ok","pad":"`+strings.Repeat("x", MaxBody)+`"}`)), model.AgentUnreachable, "", "", "more than"},
		{"hangs", serve(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}), model.AgentUnreachable, "", "", "no answer within"},
		{"bad address", "no-port", model.AgentUnreachable, "", "", "service address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(300 * time.Millisecond)
			defer c.Close()
			t0 := time.Now()
			h := c.Check(context.Background(), tc.addr)
			if took := time.Since(t0); took > 2*time.Second {
				t.Errorf("check took %s, past its 300ms bound", took)
			}
			if h.State != tc.state || h.Status != tc.status || h.Version != tc.version || !strings.Contains(h.Detail, tc.detail) {
				t.Errorf("got %+v, want state %s status %q version %q detail ~%q", h, tc.state, tc.status, tc.version, tc.detail)
			}
		})
	}
}

func TestURL(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:6003":   "http://127.0.0.1:6003/health",
		":6003":          "http://127.0.0.1:6003/health",
		"[::]:6003":      "http://[::1]:6003/health",
		"10.1.2.3:6011":  "http://10.1.2.3:6011/health",
		"[fe80::1]:6003": "http://[fe80::1]:6003/health",
	} {
		got, err := URL(addr)
		if err != nil || got != want {
			t.Errorf("URL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := URL("6003"); err == nil {
		t.Error("URL(6003): want an error")
	}
}

func TestCheckReusesConnection(t *testing.T) {
	conns := 0
	srv := httptest.NewUnstartedServer(answer(200, `{"status":"ok","version":"1"}`))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns++
		}
	}
	srv.Start()
	defer srv.Close()
	c := NewChecker(time.Second)
	defer c.Close()
	for range 5 {
		if h := c.Check(context.Background(), strings.TrimPrefix(srv.URL, "http://")); h.State != model.AgentUp {
			t.Fatalf("%+v", h)
		}
	}
	if conns != 1 {
		t.Errorf("%d connections for 5 checks, want 1 (kept alive)", conns)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"status":"ok","version":"26.4.1","component":"agent","connectivity":{}}`))
	f.Add([]byte(`{"status":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"status":"\u0000\u001b","version":"` + strings.Repeat("é", 100) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Parse(b)
		if err != nil {
			return
		}
		for _, s := range []string{a.Status, a.Version, a.Component} {
			if utf8.RuneCountInString(s) > maxField+1 {
				t.Fatalf("field of %d runes kept", utf8.RuneCountInString(s))
			}
			for _, r := range s {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("control character %q kept", r)
				}
			}
		}
	})
}

// TestCheckOnAPortThatSpeaksFirst: the agent's health address given as an
// SSH port (fgtop serve's, sshd's). net/http read the greeting before the
// request was written, in 1 run of a few, logged "Unsolicited response
// received on idle HTTP channel" over the console and said a bare
// "readLoopPeekFailLocked"; it says what the port sent, every time (the
// request here waits 100 ms between its connection and its write).
func TestCheckOnAPortThatSpeaksFirst(t *testing.T) {
	addr := hostile.Greeter(t, "SSH-2.0-OpenSSH_9.2\r\n", time.Second)
	c := NewChecker(5 * time.Second)
	defer c.Close()
	h := c.Check(hostile.LateWrite(context.Background(), 100*time.Millisecond), addr)
	want := `not an HTTP server, so not the agent's health: it sent "SSH-2.0-OpenSSH_9.2"`
	if h.State != model.AgentUnreachable || h.Detail != want {
		t.Errorf("%s %q, want unreachable %q", h.State, h.Detail, want)
	}
}

package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// healthNode writes a two-agent agent.toml whose agents serve on addr1 and
// addr2, and returns the engine options for it.
func healthNode(t *testing.T, addr1, addr2 string) Options {
	t.Helper()
	dir := t.TempDir()
	r1, r2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	for _, r := range []string{r1, r2} {
		if err := os.Mkdir(r, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host2, port2, _ := net.SplitHostPort(addr2)
	cfg := fmt.Sprintf(`[agent]
id = "main"
[[agents]]
[agents.agent]
id = "a1"
service-addr = %q
[agents.container]
scratch-root = %q
[[agents]]
[agents.agent]
id = "a2"
service-addr = { host = %q, port = %s }
[agents.container]
scratch-root = %q
`, addr1, r1, host2, port2, r2)
	path := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := LoadConfigView(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Roots: v.Roots, Inventory: mockSource(t), Node: "t", Watch: scratchOpts(),
		ProcRoot: t.TempDir(), HealthEvery: 50 * time.Millisecond, HealthTimeout: 300 * time.Millisecond}
	v.Apply(&opts)
	return opts
}

// agentServer is a real HTTP server on 127.0.0.1 answering /health as a
// Backend.AI agent does.
func agentServer(t *testing.T, version string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"ok","version":%q,"component":"agent","connectivity":{}}`, version)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func healthOf(s *model.Snapshot) string {
	if s == nil {
		return "no snapshot"
	}
	var parts []string
	for _, a := range s.Agents {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", a.ID, a.Health.State, a.Health.Version))
	}
	return strings.Join(parts, " ")
}

func TestAgentHealthLive(t *testing.T) {
	srv := agentServer(t, "26.4.1")
	opts := healthNode(t, strings.TrimPrefix(srv.URL, "http://"), closedAddr(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := New(opts)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	want := func(w string) func() error {
		return func() error {
			if got := healthOf(eng.Latest()); got != w {
				return fmt.Errorf("health %s, want %s", got, w)
			}
			return nil
		}
	}
	waitFor(t, "first check", 5*time.Second, want("a1=up/26.4.1 a2=down/"))
	if s := eng.Latest(); s.Agents[0].Health.URL != srv.URL+"/health" || s.Agents[0].ServiceAddr == "" {
		t.Errorf("a1 health %+v addr %q", s.Agents[0].Health, s.Agents[0].ServiceAddr)
	}
	srv.Close()
	waitFor(t, "agent a1 stopped", 5*time.Second, want("a1=down/ a2=down/"))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAgentHealthBuild(t *testing.T) {
	srv := agentServer(t, "25.15.2")
	opts := healthNode(t, closedAddr(t), strings.TrimPrefix(srv.URL, "http://"))
	s, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := healthOf(s); got != "a1=down/ a2=up/25.15.2" {
		t.Errorf("health %s", got)
	}
	opts.NoHealth = true
	s, err = Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := healthOf(s); got != "a1=/ a2=/" {
		t.Errorf("with NoHealth: %s", got)
	}
}

// TestAgentHealthDoesNotBlock: an agent that never answers delays neither
// the first snapshot nor the kernels; its row turns unreachable when its
// check times out.
func TestAgentHealthDoesNotBlock(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	opts := healthNode(t, strings.TrimPrefix(srv.URL, "http://"), closedAddr(t))
	opts.HealthTimeout = 3 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := New(opts)
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
	case <-time.After(2 * time.Second):
		t.Fatal("engine not ready within 2s while an agent hangs")
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("ready after %s", took)
	}
	waitFor(t, "hung agent times out", 8*time.Second, func() error {
		s := eng.Latest()
		if s == nil || s.Agents[0].Health.State != model.AgentUnreachable || !strings.Contains(s.Agents[0].Health.Detail, "no answer within 3s") {
			return fmt.Errorf("%s", healthOf(s))
		}
		return nil
	})
	cancel()
	<-done
}

// TestAgentUpIsNotNotRunning: an agent that answers GET /health runs, even
// when no process of it is visible in /proc (a containerised agent lives
// in another PID namespace); "not running" beside "up" would contradict
// itself, so whether it runs the file on disk is "cannot tell".
func TestAgentUpIsNotNotRunning(t *testing.T) {
	srv := agentServer(t, "26.4.1")
	opts := healthNode(t, strings.TrimPrefix(srv.URL, "http://"), closedAddr(t))
	// A readable /proc with no agent process in it (init only).
	for name, text := range map[string]string{
		"stat":      "cpu 1 2 3\nbtime 1700000000\n",
		"1/stat":    "1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 10 100 10 18446744073709551615",
		"1/cmdline": "/sbin/init\x00",
	} {
		p := filepath.Join(opts.ProcRoot, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[model.AgentID]model.Restart{}
	for _, a := range s.Agents {
		got[a.ID] = a.Restart
	}
	if r := got["a1"]; r.State != model.RestartUnknown || !strings.Contains(r.Detail, "/health") {
		t.Errorf("a1 (up, no process in /proc): restart %+v, want cannot-tell naming /health", r)
	}
	if r := got["a2"]; r.State != model.RestartNotRunning {
		t.Errorf("a2 (down, no process in /proc): restart %+v, want not-running", r)
	}
}

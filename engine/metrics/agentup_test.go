package metrics

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

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/internal/promtest"
)

// TestAgentUp: fgtop_agent_up follows the agent's GET /health, asked of a
// real HTTP server on 127.0.0.1 (up) and of a closed port (down).
func TestAgentUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok","version":"26.4.1"}`)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("[agent]\nid = \"main\"\n")
	for i, addr := range []string{strings.TrimPrefix(srv.URL, "http://"), closed} {
		root := filepath.Join(dir, fmt.Sprint("s", i))
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "[[agents]]\n[agents.agent]\nid = \"a%d\"\nservice-addr = %q\n[agents.container]\nscratch-root = %q\n", i, addr, root)
	}
	path := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := engine.LoadConfigView(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{Roots: v.Roots, Node: "n", ProcRoot: t.TempDir()}
	v.Apply(&opts)
	snap, err := engine.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ss := samples(t, exposition(t, New(Options{Latest: fixed(snap)})))
	for agent, want := range map[string]float64{"a0": 1, "a1": 0} {
		got := promtest.Select(ss, "fgtop_agent_up", "agent", agent, "node", "n")
		if len(got) != 1 || got[0].Value != want {
			t.Errorf("fgtop_agent_up{agent=%q}: %v, want %v", agent, got, want)
		}
	}
}

package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

func TestListenServesAndShutsDown(t *testing.T) {
	s, err := Listen("127.0.0.1:0", "--listen", Options{Node: "n1", Latest: func() *model.Snapshot { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "fgtop_build_info") {
		t.Fatalf("GET /metrics: %d %.200s", resp.StatusCode, b)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Fatal("served after Shutdown")
	}
	select {
	case err := <-s.Err():
		t.Fatalf("a stopped server said %v", err)
	default:
	}
}

func TestListenErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{taken.Addr().String(), "127.0.0.1:99999", "no-such-host.invalid:1"} {
		_, err := Listen(addr, "--listen", Options{})
		var le *ListenError
		if !errors.As(err, &le) || le.Addr != addr || le.Err == nil {
			t.Errorf("Listen(%s) = %v, want a *ListenError of it", addr, err)
		}
	}
}

func TestRunExporter(t *testing.T) {
	inv := enginetest.MockSource(t)
	defer inv.Close()
	root := []scratch.Root{{Path: t.TempDir(), Agent: "a0"}}
	for _, tt := range []struct {
		name   string
		roots  []scratch.Root
		addr   string
		listen bool
		err    string
	}{
		{"serves until stopped", root, "127.0.0.1:0", true, ""},
		{"an address it cannot listen on", root, "127.0.0.1:99999", false, "listen on 127.0.0.1:99999"},
		{"an engine that cannot start", nil, "127.0.0.1:0", true, "engine: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := engine.Options{Node: "n1", Inventory: inv, Roots: tt.roots}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			recorded, stopped := false, false
			var got string
			err := RunExporter(ctx, ExporterOptions{Engine: opts, Addr: tt.addr, Name: "--listen",
				Record: func(context.Context, *engine.Engine) func() {
					recorded = true
					return func() { stopped = true }
				},
				Listening: func(addr string) {
					got = addr
					resp, err := http.Get("http://" + addr + "/metrics")
					if err != nil {
						t.Error(err)
					} else {
						resp.Body.Close()
					}
					if tt.err == "" {
						cancel()
					}
				}})
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)) {
				t.Fatalf("RunExporter = %v, want %q", err, tt.err)
			}
			if (got != "") != tt.listen || !recorded || !stopped {
				t.Fatalf("listening %q, recorded %v, stopped %v", got, recorded, stopped)
			}
		})
	}
}

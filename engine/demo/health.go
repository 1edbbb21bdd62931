package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// AgentVersion is the Backend.AI version the simulated agents say they
// run when asked GET /health.
const AgentVersion = "26.4.1"

// healthService is the simulated agents' own HTTP service: GET /health on
// a free loopback port, written into agent.toml as [agent] service-addr,
// answered as a healthy agent answers it. Backend.AI main's agents on one
// node are one process with one such service ([agents.agent] takes no
// service-addr), so one answers for both. Without it fgtop asked the
// default 0.0.0.0:6003, where nothing listens, and a command pointed at the
// demo node (CommandFlags) showed both agents down.
type healthService struct {
	srv  *http.Server
	port int
	done chan struct{}
}

// startHealth starts answering on 127.0.0.1.
func startHealth() (*healthService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: the simulated agents' health service: %w", err)
	}
	body, err := json.Marshal(map[string]string{"status": "ok", "version": AgentVersion, "component": "agent"})
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("demo: health answer: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	h := &healthService{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		port: ln.Addr().(*net.TCPAddr).Port, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = ln.Close()
		}
	}()
	return h, nil
}

// close stops answering; nil is a no-op.
func (h *healthService) close() {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
	<-h.done
}

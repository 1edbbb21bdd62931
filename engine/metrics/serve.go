package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/fgtop/fgtop/engine"
)

// ShutdownGrace is how long in-flight scrapes may take to finish once the
// server is told to stop: under the command's forced exit after a signal,
// so that a stop on a signal ends by Shutdown and not by that exit.
const ShutdownGrace = 2 * time.Second

// ListenError is an address the server could not listen on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen on %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }

// Server is a running /metrics endpoint (Listen).
type Server struct {
	addr string
	srv  *http.Server
	errc chan error
}

// Listen listens on addr and serves the collector of o (Registry,
// Handler) from a goroutine, with the timeouts and header limit an
// endpoint open to a network wants. name is what addr is called in the
// server's errors (the flag that gave it). An address it cannot listen on
// is a *ListenError.
func Listen(addr, name string, o Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Err: err}
	}
	srv := &http.Server{
		Handler:           Handler(Registry(New(o))),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	s := &Server{addr: ln.Addr().String(), srv: srv, errc: make(chan error, 1)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errc <- fmt.Errorf("%s %s: %w", name, addr, err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on (the port chosen for :0).
func (s *Server) Addr() string { return s.addr }

// Err receives the error that stopped the server serving, if one does.
func (s *Server) Err() <-chan error { return s.errc }

// Shutdown stops accepting scrapes and waits ShutdownGrace at most for
// those in flight; then it closes them.
func (s *Server) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
		return fmt.Errorf("metrics server shutdown: %w", err)
	}
	return nil
}

// ExporterOptions say what RunExporter serves.
type ExporterOptions struct {
	// Engine is the node's engine options; RunExporter runs the engine.
	Engine engine.Options
	// Addr is where to listen; Name what it is called in errors.
	Addr, Name string
	Build      BuildInfo
	// Record, if set, starts recording the engine's snapshots and
	// returns what stops it; RunExporter calls the stop before it
	// returns.
	Record func(ctx context.Context, eng *engine.Engine) (stop func())
	// Listening, if set, is told the address once the server listens.
	Listening func(addr string)
}

// RunExporter runs an engine on o.Engine and serves its metrics on
// o.Addr until ctx is done, the engine fails or the server does: the
// exporter, less its flags and signals. In-flight scrapes finish first
// (Shutdown).
func RunExporter(ctx context.Context, o ExporterOptions) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng := engine.New(o.Engine)
	engineErr := make(chan error, 1)
	go func() { engineErr <- eng.Run(ctx) }()
	if o.Record != nil {
		defer o.Record(ctx, eng)()
	}
	s, err := Listen(o.Addr, o.Name, Options{Latest: eng.Latest, Node: o.Engine.Node, Build: o.Build})
	if err != nil {
		return err
	}
	if o.Listening != nil {
		o.Listening(s.Addr())
	}
	select {
	case <-ctx.Done():
	case e := <-engineErr:
		if e != nil && !errors.Is(e, context.Canceled) {
			err = fmt.Errorf("engine: %w", e)
		}
	case e := <-s.errc:
		err = e
	}
	if serr := s.Shutdown(); serr != nil && err == nil {
		err = serr
	}
	cancel()
	return err
}

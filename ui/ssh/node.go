package sshserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/metrics"
	"github.com/fgtop/fgtop/engine/partition"
)

// NodeOptions say what ServeNode serves.
type NodeOptions struct {
	// Engine is the node's engine options; ServeNode runs the engine.
	Engine engine.Options
	// Config is the server's configuration less what ServeNode fills in
	// from the engine: Subscribe, StartOnSecond, the consoles' desk and
	// clock (UI.Desk, UI.ClockOnSecond), and, when UI.History names the
	// node's record, the answers from it (SnapshotAt, History).
	Config Config
	// Listen is the address to listen on, HOST:PORT.
	Listen string
	// Self are the names the node's record gives it (fleet.RecordNames).
	Self []string
	// Log receives connects, refusals, reloads and session ends (unless
	// Config.Logger is set), and is slog's default logger while the
	// server serves; nil discards them.
	Log io.Writer
	// Record, if set, starts recording the engine's snapshots and returns
	// what stops it; ServeNode calls the stop before it returns.
	Record func(ctx context.Context, eng *engine.Engine) (stop func())
	// MetricsListen, when set, also serves the engine's Prometheus
	// metrics there (metrics.Listen; MetricsName is what it is called in
	// errors, MetricsBuild is fgtop_build_info); MetricsListening is told
	// the address.
	MetricsListen, MetricsName string
	MetricsBuild               metrics.BuildInfo
	MetricsListening           func(addr string)
	// Demo is the demo node when it is the one served: operators restart
	// its agents (R), and a node that stops on an error of its own is
	// logged and served as it was.
	Demo *demo.Node
	// Configured, if set, is shown the server's configuration (tests).
	Configured func(Config)
	// Listening, if set, is told the address once the server listens.
	Listening func(addr net.Addr)
	// Stopping, if set, is called once serving stops, the sessions still
	// open (a heap profile of what they hold), with the server's logger.
	Stopping func(log *slog.Logger)
}

// ConfigError is a server configuration New refused.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ListenError is an address the server could not listen on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen on %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }

// ServeNode runs an engine on o.Engine and serves its console over SSH
// on o.Listen until ctx is done, the engine fails or the server does:
// fgtop serve, less its flags, signals and log file. A configuration New
// refuses is a *ConfigError; an address it cannot listen on, a
// *ListenError (a *metrics.ListenError for MetricsListen).
func ServeNode(ctx context.Context, o NodeOptions) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := o.Config
	if cfg.Logger == nil && o.Log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(o.Log, nil))
	}
	if cfg.Logger != nil {
		// The SSH library reports what it recovers from (a panicking
		// handler, a channel it could not accept) through slog's default
		// logger: to the server's log as well, not to the terminal the
		// server was started from.
		prev := slog.Default()
		slog.SetDefault(cfg.Logger)
		defer slog.SetDefault(prev)
	}
	if n := o.Demo; n != nil {
		// Operators restart the demo's agents (R) as in fgtop demo.
		cfg.UI.DemoRestart = n.RestartSaid
	}
	eng := engine.New(o.Engine)
	if o.Engine.ConfigPath != "" {
		// One desk for the whole server: every session edits the same
		// agent.toml, so the draft is lent to one operator at a time and an
		// apply through one session makes the others' drafts stale.
		cfg.UI.Desk = partition.NewDesk(partition.DeskOptions{Config: o.Engine.ConfigPath, Snapshot: eng.Latest})
	}
	// Every session's clock, every session program's ticker and the
	// engine's poll on the whole second: the sessions compose at one
	// instant from one snapshot, so they draw the same frames and share
	// their changes, and the process wakes once a second for all of them.
	cfg.UI.ClockOnSecond, cfg.StartOnSecond = true, true
	eng.AlignPoll(time.Now().Truncate(time.Second))
	engineErr := make(chan error, 1)
	go func() { engineErr <- eng.Run(ctx) }()
	if o.Record != nil {
		defer o.Record(ctx, eng)()
	}
	var metricsErr <-chan error
	if o.MetricsListen != "" {
		ms, err := metrics.Listen(o.MetricsListen, o.MetricsName, metrics.Options{Latest: eng.Latest, Node: o.Engine.Node, Build: o.MetricsBuild})
		if err != nil {
			return err
		}
		defer ms.Shutdown() //nolint:errcheck // the server's own end is what ServeNode reports
		metricsErr = ms.Err()
		if o.MetricsListening != nil {
			o.MetricsListening(ms.Addr())
		}
	}
	cfg.Subscribe = eng.Subscribe
	if dir := cfg.UI.History; dir != "" {
		// fgtop fleet --hosts --at asks each node's own record.
		self := o.Self
		cfg.SnapshotAt = func(_ context.Context, at time.Time) ([]byte, error) { return fleet.RecordAt(dir, self, at) }
		cfg.History = func(_ context.Context, q HistoryQuery) ([]byte, error) { return RecordHistory(dir, self, q) }
	}
	if o.Configured != nil {
		o.Configured(cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		return &ConfigError{Err: err}
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &ListenError{Addr: o.Listen, Err: err}
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if o.Listening != nil {
		o.Listening(ln.Addr())
	}
	var nodeDone <-chan struct{}
	var nodeErr func() error
	if o.Demo != nil {
		nodeDone, nodeErr = o.Demo.Done(), o.Demo.Err
	}
	err = waitNode(ctx, nodeDone, nodeErr, srv.log, engineErr, serveErr, metricsErr)
	if o.Stopping != nil {
		o.Stopping(srv.log)
	}
	if cerr := srv.Close(); cerr != nil && err == nil {
		err = cerr
	}
	cancel()
	return err
}

// waitNode waits for ServeNode's end: ctx done, or the error of the
// engine, the server or the metrics endpoint. A demo node that stops on
// an error of its own (nodeDone, nodeErr) is logged on log, and its last
// state served on.
func waitNode(ctx context.Context, nodeDone <-chan struct{}, nodeErr func() error, log *slog.Logger, engineErr, serveErr, metricsErr <-chan error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-nodeDone:
			// The simulated agents stopped on an error of their own (too
			// many open files under a connection flood, a full disk): the
			// sessions keep the node as it was, and the server stays up
			// for them.
			if e := nodeErr(); e != nil && ctx.Err() == nil {
				log.Error("demo node stopped: serving its last state", "err", e.Error())
				nodeDone = nil
				continue
			}
			return nil
		case e := <-engineErr:
			if e != nil && !errors.Is(e, context.Canceled) {
				return fmt.Errorf("engine: %w", e)
			}
			return nil
		case e := <-serveErr:
			return e
		case e := <-metricsErr:
			return e
		}
	}
}

// RecordHistory is `fgtop history --json` for fgtop fleet history over
// SSH, from the node's record in dir (self: the names it gives the
// node): the document, and what the record lacks of the span beside it.
func RecordHistory(dir string, self []string, q HistoryQuery) ([]byte, error) {
	return fleet.RecordHistory(dir, self, history.Filter{Device: q.Device, Kernel: q.Kernel, User: q.User, Since: q.Since, Until: q.Until})
}

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/gcpolicy"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/profiling"
	"github.com/fgtop/fgtop/ui/console"
	sshserve "github.com/fgtop/fgtop/ui/ssh"
	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/internal/safefile"
)

const serveLong = `Serve the console over SSH: one engine for the node, one console per session.

Who may connect is decided by an OpenSSH authorized_keys file. A key whose line carries
environment="FGTOP_ROLE=operator" is an operator; every other key is a viewer, whose console is
read-only (the engine refuses a viewer's apply or rollback as well). The file is reloaded when it
changes: a removed key is refused at once and its open sessions are closed; a key whose role
changes is closed too and gets its new role when it reconnects. Options that would restrict a
key in ways fgtop does not enforce (from=, command=, no-pty, ...) make it skip that key.

With an agent config (--config, found in Backend.AI's usual places, or the demo node's), operators
can edit the partition: one at a time; the others see who holds the draft and since when, and an
apply by one makes another's draft stale. The journal beside agent.toml records each apply and
rollback with the SSH user, the key's fingerprint and the remote address.

The host key is created (ed25519, mode 0600) on first start and reused after. Sessions need a
terminal (ssh -t). Read-only commands exist, for any key: the snapshot stream
` + "`ssh -p PORT node snapshot --follow --json [--heartbeat DUR]`" + ` (fgtop.snapshot/v1, one line per
change, heartbeat lines while nothing changes; snapshot --json prints one; snapshot --at
RFC3339 --json prints the one the node's --history record holds then, for fgtop fleet --at;
history --json --device|--kernel|--user ID [--since/--until RFC3339] prints fgtop history's
document from that record, for fgtop fleet history), which fgtop fleet reads; it counts as a
session. Other commands are refused. Connects, refusals, key reloads and disconnects are
logged to --log (default: stderr), never into a session.

Colours follow each client: TERM from its terminal, COLORTERM and NO_COLOR when the client sends
them (ssh -o SetEnv=NO_COLOR=1, or SendEnv COLORTERM); --theme light|dark overrides detection.
In a session, :theme NAME picks a built-in theme or one of --theme-dir: never a path, so nothing a
viewer types makes the server read a file.

Limits: --max-sessions is shared out so that viewers cannot lock operators out: viewer keys'
consoles hold at most --max-viewer-sessions (default a quarter of --max-sessions; with
--readonly every key's console is a viewer's), the exec commands (snapshot --follow streams,
one-shot snapshots, snapshot --at, history: any key's, a fleet's) a share of their own,
--max-stream-sessions (default a quarter too), and one key at most --max-sessions-per-key
(default 4). Shares that leave operators no slot, or a --max-sessions under 3, are refused.
A session's output never waits on its client: a client that takes none of it for --stuck-timeout
(default 30s) once its SSH window is full (at a console's rate, minutes after it stops reading),
or lets 4 MiB pile up, is dropped and its slot freed; window changes reach the
console at most ten times a second (the newest wins). SIGTERM or SIGINT closes every session and
stops the server; what has not stopped after 3 seconds is ended then (a second signal: at once).
A session's window is capped at 500x200 cells; a connection holds at most 4 sessions and
64 environment variables per session; one with no console is closed after a minute, one where
nothing moves after 5 minutes, and any after 24 hours (its sessions are told first).
Connections not authenticated yet are limited as by sshd's MaxStartups: --max-startups
(default 64:30:256) in total and --per-source-max-startups (default 10:30:20) per address;
beyond start a new one is dropped at once with rate % chance, rising to every one at full.
Refused keys and connections are logged 20 a minute; one line then says how many more.
authorized_keys is refused, as by sshd's StrictModes, when group or others may write it or a
directory above it; RSA keys under 2048 bits are skipped. When the file cannot be read for a
moment (too many open files), new logins are refused and live sessions go on.

--metrics-listen HOST:PORT also serves the engine's Prometheus metrics there (GET /metrics), the
series of fgtop exporter, from the same engine as the sessions.`

// serveFlags are the flags of `fgtop serve` beyond the source and console
// flags.
type serveFlags struct {
	listen         string
	authorizedKeys string
	hostKey        string
	maxSessions    int
	// maxViewerSessions is the viewers' and streams' share of
	// maxSessions (0: a quarter of it); maxPerKey caps one key.
	maxViewerSessions int
	maxStreamSessions int
	maxPerKey         int
	stuckTimeout      time.Duration
	idleTimeout       time.Duration
	logPath           string
	themeDir          string
	demo              bool
	seed              int64
	node              string
	// metricsListen, when set, also serves the engine's Prometheus
	// metrics there (fgtop exporter's endpoint).
	metricsListen string
	// maxStartups and perSourceMaxStartups limit unauthenticated
	// connections (sshd's MaxStartups form); check parses them.
	maxStartups, perSourceMaxStartups string
	startups, perSourceStartups       sshserve.Startups
}

func newServeCmd() *cobra.Command {
	var src sourceFlags
	var cf consoleFlags
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The console over SSH, with operator and viewer roles per key",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sf.check(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			defer gcpolicy.Serve()()
			return runServe(ctx, serveRun{src: &src, console: &cf, serve: &sf, stderr: cmd.ErrOrStderr()})
		},
	}
	src.register(cmd)
	src.registerLiveDemo(cmd)
	cf.register(cmd, true)
	demoHistoryUsage(cmd.Flags(), "--demo")
	fl := cmd.Flags()
	fl.StringVar(&sf.listen, "listen", "127.0.0.1:2222", "address to listen on (HOST:PORT; 0.0.0.0:2222 for every interface)")
	fl.StringVar(&sf.authorizedKeys, "authorized-keys", "", "OpenSSH authorized_keys file: who may connect, and as what (required)")
	fl.StringVar(&sf.hostKey, "host-key", "", "host key file, created with mode 0600 when missing (required)")
	fl.IntVar(&sf.maxSessions, "max-sessions", sshserve.DefaultMaxSessions, "most sessions at once (3 or more: operators keep what the viewers' and the streams' shares leave)")
	fl.IntVar(&sf.maxViewerSessions, "max-viewer-sessions", 0, "most consoles at once of viewer keys, so operators keep the rest (default: a quarter of --max-sessions, at least 1)")
	fl.IntVar(&sf.maxStreamSessions, "max-stream-sessions", 0, "most exec commands at once (snapshot --follow streams, one-shot snapshots, snapshot --at, history: any key's, fleets'), a share of their own (default: a quarter of --max-sessions, at least 1)")
	fl.IntVar(&sf.maxPerKey, "max-sessions-per-key", sshserve.DefaultMaxSessionsPerKey, "most sessions one key holds at once (consoles and streams)")
	fl.StringVar(&sf.maxStartups, "max-startups", sshserve.DefaultMaxStartups.String(), "unauthenticated connections at once, as sshd's MaxStartups start:rate:full: from start on a new one is dropped with rate % chance, rising to all at full")
	fl.StringVar(&sf.perSourceMaxStartups, "per-source-max-startups", sshserve.DefaultPerSourceMaxStartups.String(), "the same limit per source address (start:rate:full, or N)")
	fl.DurationVar(&sf.stuckTimeout, "stuck-timeout", sshserve.DefaultStuckTimeout, "drop a session whose client takes none of its output for this long once its SSH window is full")
	fl.DurationVar(&sf.idleTimeout, "idle-timeout", sshserve.DefaultIdleTimeout, "close a session after this long without input (0: never)")
	fl.StringVar(&sf.themeDir, "theme-dir", "", "directory of theme files (NAME.toml) sessions may pick with :theme NAME (default: built-in themes only; a session never names a path)")
	fl.StringVar(&sf.logPath, "log", "", "append connects and refusals to this file (default: stderr)")
	fl.BoolVar(&sf.demo, "demo", false, "serve the embedded demo node instead of this node")
	fl.Int64Var(&sf.seed, "seed", 1, "with --demo: seed of the simulated workload")
	fl.StringVar(&sf.node, "node", "", "the node's name in its snapshots (default: the host name; the demo's own name with --demo): what fgtop fleet shows")
	fl.StringVar(&sf.metricsListen, "metrics-listen", "", "also serve Prometheus metrics (GET /metrics, as fgtop exporter) on this HOST:PORT")
	return cmd
}

// check validates the flags that need more than their types.
func (f *serveFlags) check(cmd *cobra.Command) error {
	switch {
	case f.authorizedKeys == "":
		return usageErr("serve: --authorized-keys FILE is required")
	case f.hostKey == "":
		return usageErr("serve: --host-key FILE is required (it is created on first start)")
	case f.maxSessions < 1:
		return usageErr("serve: --max-sessions %d: want 3 or more (a slot each at least for viewers' consoles, the snapshot streams and operators)", f.maxSessions)
	case f.maxViewerSessions < 0 || f.maxViewerSessions > f.maxSessions:
		return usageErr("serve: --max-viewer-sessions %d: want 1 to --max-sessions (%d), or 0 for a quarter of it", f.maxViewerSessions, f.maxSessions)
	case f.maxStreamSessions < 0 || f.maxStreamSessions > f.maxSessions:
		return usageErr("serve: --max-stream-sessions %d: want 1 to --max-sessions (%d), or 0 for a quarter of it", f.maxStreamSessions, f.maxSessions)
	case f.maxPerKey < 1:
		return usageErr("serve: --max-sessions-per-key %d: want at least 1", f.maxPerKey)
	}
	if err := f.checkShares(); err != nil {
		return err
	}
	switch {
	case f.stuckTimeout < time.Second:
		return usageErr("serve: --stuck-timeout %s: want 1s or more", f.stuckTimeout)
	case f.idleTimeout < 0:
		return usageErr("serve: --idle-timeout %s: want 0 (never) or more", f.idleTimeout)
	}
	var err error
	if f.startups, err = sshserve.ParseStartups(f.maxStartups); err != nil {
		return usageErr("serve: --max-startups %v", err)
	}
	if f.perSourceStartups, err = sshserve.ParseStartups(f.perSourceMaxStartups); err != nil {
		return usageErr("serve: --per-source-max-startups %v", err)
	}
	if f.themeDir != "" {
		if st, err := os.Stat(f.themeDir); err != nil || !st.IsDir() {
			return usageErr("serve: --theme-dir %s: not a directory", f.themeDir)
		}
	}
	if err := checkListen("serve: --listen", f.listen, "127.0.0.1:2222"); err != nil {
		return err
	}
	if f.metricsListen != "" {
		if err := checkListen("serve: --metrics-listen", f.metricsListen, "127.0.0.1:9477"); err != nil {
			return err
		}
	}
	if err := checkDemoFlags(cmd, "serve", f.demo, "config", "scratch-root", "devices", "mock-etcd"); err != nil {
		return err
	}
	// The host key may not exist yet (it is created on first start); one
	// that does must be a regular file, or reading it would block on a FIFO.
	if st, err := os.Stat(f.hostKey); err == nil && !st.Mode().IsRegular() {
		return usageErr("serve: --host-key %s: %s, not a regular file", f.hostKey, safefile.Kind(st.Mode()))
	}
	if _, err := os.Stat(f.authorizedKeys); errors.Is(err, fs.ErrNotExist) {
		return usageErr("serve: --authorized-keys %s: %s; create it with the public keys that may connect, one per line as in ~/.ssh/authorized_keys (environment=\"FGTOP_ROLE=operator\" before a key makes it an operator)",
			f.authorizedKeys, cliwords.MissingFile(err))
	}
	return checkRegular("serve: --authorized-keys", f.authorizedKeys)
}

// checkShares refuses viewers' and streams' shares that leave operators
// no slot of --max-sessions: a viewer console and a fleet stream under
// --max-sessions 2 locked every operator out, which the shares exist to
// prevent, and the server said nothing about it until an operator was
// refused.
func (f *serveFlags) checkShares() error {
	viewers, streams := sshserve.Shares(f.maxSessions, f.maxViewerSessions, f.maxStreamSessions)
	if f.maxSessions-viewers-streams >= 1 {
		return nil
	}
	if f.maxViewerSessions == 0 && f.maxStreamSessions == 0 {
		return usageErr("serve: --max-sessions %d leaves operators no slot: viewers' consoles and the snapshot streams have one each at least, so want 3 or more", f.maxSessions)
	}
	enough := sshserve.LeastMaxSessions(f.maxSessions, f.maxViewerSessions, f.maxStreamSessions)
	return usageErr("serve: %s and %s leave operators no slot of --max-sessions %d: lower the shares, or raise --max-sessions to %d or more",
		shareFlag("--max-viewer-sessions", f.maxViewerSessions, viewers), shareFlag("--max-stream-sessions", f.maxStreamSessions, streams),
		f.maxSessions, enough)
}

// shareFlag names a share as checkShares says it: a share not given is
// the default's, which the person did not write.
func shareFlag(name string, given, share int) string {
	if given == 0 {
		return fmt.Sprintf("%s %d (a quarter of --max-sessions, at least 1)", name, share)
	}
	return fmt.Sprintf("%s %d", name, share)
}

// serveRun is one `fgtop serve` invocation.
type serveRun struct {
	src     *sourceFlags
	console *consoleFlags
	serve   *serveFlags
	stderr  io.Writer
	// ready, when set, is told the address once the server listens
	// (tests listen on port 0).
	ready func(addr string)
	// configured, when set, is shown the server's configuration (tests).
	configured func(sshserve.Config)
	// metricsReady, when set, is told the metrics address (tests).
	metricsReady func(addr string)
	// demoNode, when set, is shown the demo node (tests).
	demoNode func(*demo.Node)
}

// runServe starts the engine on the node (or the demo node) and serves
// the console (sshserve.ServeNode) until ctx is done or a signal arrives.
func runServe(ctx context.Context, r serveRun) (err error) {
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	logOut := r.stderr
	if r.serve.logPath != "" {
		f, err := os.OpenFile(r.serve.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return usageErr("serve: --log: %v", err)
		}
		defer f.Close()
		logOut = f
	}
	sn, err := openServedNode(ctx, r.serve.demo, r.serve.seed, r.src, r.serve.node)
	if err != nil {
		return err
	}
	defer closeInto(&err, closeServed(sn))
	node := sn.Options.Node
	if sn.Demo != nil && r.demoNode != nil {
		r.demoNode(sn.Demo)
	}
	uopts, err := r.console.uiOptions(node)
	if err != nil {
		return err
	}
	onDemo := sn.Demo != nil
	if onDemo {
		uopts.History = demoHistoryDir(r.console.history, sn.Demo)
	} else {
		onDemo = r.console.historyDir(&uopts, sn.Options, r.stderr)
	}
	err = sshserve.ServeNode(ctx, sshserve.NodeOptions{Engine: sn.Options, Demo: sn.Demo, Config: r.serve.config(uopts), Log: logOut,
		Listen: r.serve.listen, Self: fleet.RecordNames(node, sn.Demo != nil), Configured: r.configured,
		Record: func(ctx context.Context, eng *engine.Engine) func() {
			return startRecording(ctx, eng, uopts.History, node, onDemo, r.stderr)
		},
		MetricsListen: r.serve.metricsListen, MetricsName: "serve: --metrics-listen", MetricsBuild: metricsBuild(),
		MetricsListening: func(addr string) {
			fmt.Fprintf(r.stderr, "fgtop serve: metrics on http://%s/metrics\n", addr)
			if r.metricsReady != nil {
				r.metricsReady(addr)
			}
		},
		Listening: func(addr net.Addr) {
			// Else an operator learns it only when the console will not edit.
			ro := ""
			if r.console.readOnly {
				ro = "; read-only: every key is a viewer"
			}
			fmt.Fprintf(r.stderr, "fgtop serve: listening on %s (node %s%s); stop with Ctrl-C\n", addr, node, ro)
			if w := sshserve.NoKeysWarning(r.serve.authorizedKeys); w != "" {
				fmt.Fprintln(r.stderr, "fgtop serve: warning: "+w)
			}
			if r.ready != nil {
				r.ready(addr.String())
			}
		},
		Stopping: func(logger *slog.Logger) {
			if path := os.Getenv("FGTOP_SERVE_MEMPROFILE"); path != "" {
				// FGTOP_MEMPROFILE is written as the process ends, after
				// every session is gone: this one is the heap with the
				// sessions still open (what an idle viewer holds).
				if perr := profiling.WriteHeap(path); perr != nil {
					logger.Error("FGTOP_SERVE_MEMPROFILE not written", "err", perr.Error())
				}
			}
		}})
	cancel()
	var ce *sshserve.ConfigError
	var le *sshserve.ListenError
	switch {
	case errors.As(err, &ce):
		return usageErr("serve: %v", ce.Err)
	case errors.As(err, &le):
		return listenErr("serve: --listen", le.Addr, le.Err)
	}
	return metricsErr("serve: --metrics-listen", err)
}

// config is the server's configuration of the flags, each session's
// console made from uopts.
func (f *serveFlags) config(uopts console.Options) sshserve.Config {
	return sshserve.Config{
		AuthorizedKeys: f.authorizedKeys, HostKey: f.hostKey,
		MaxSessions: f.maxSessions, MaxViewerSessions: f.maxViewerSessions, MaxStreamSessions: f.maxStreamSessions,
		MaxSessionsPerKey: f.maxPerKey, MaxStartups: f.startups, PerSourceMaxStartups: f.perSourceStartups,
		StuckTimeout: f.stuckTimeout, IdleTimeout: idleConfig(f.idleTimeout), ThemeDir: f.themeDir, UI: uopts,
	}
}

// idleConfig maps the flag (0: never) onto the server's setting (0:
// default, negative: never).
func idleConfig(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

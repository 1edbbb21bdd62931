package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/safefile"
	fleetui "github.com/fgtop/fgtop/ui/fleet"
	"github.com/fgtop/fgtop/ui/local"
	"github.com/spf13/cobra"
	gossh "golang.org/x/crypto/ssh"
)

const fleetLong = `One console for many nodes: a table of nodes (GPUs, held/capacity, free shares, the
largest request that fits, fragmentation, kernels, issues, last seen), read from each node's
` + "`fgtop serve`" + ` over SSH. Enter opens a node's own device view, read-only, from its stream.

Sources:
  --prometheus URL          PromQL over Prometheus's HTTP API: every node whose fgtop exporter (or
                            serve --metrics-listen) it scrapes, queried every --refresh. A node whose
                            target went down (its series are no longer current) stays listed while
                            it was scraped within --lookback (default 15m), with its last scrape's
                            figures and time: stale, then unreachable once that scrape is
                            --unreachable-after old. Kernels are not per-kernel
                            series: a node opened from Prometheus shows each agent's holdings as one
                            row. Amounts come back exact, with trailing zeros dropped ("1" for "1.00").
  --hosts H:P,H:P | @FILE   each node's fgtop serve (FILE: one host per line, # comments; a host
                            without a port gets 2222). The fleet execs the read-only snapshot stream
                            (snapshot --follow --json): any key in the node's authorized_keys will
                            do, viewer or operator.
Keys work as with ssh: --identity FILE (repeatable; unencrypted keys, others through
ssh-agent), else ~/.ssh/id_* (the unencrypted ones), and ssh-agent through SSH_AUTH_SOCK; host
keys are checked against --known-hosts (default ~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts):
an unknown or changed host key is refused. Add a node's key after
checking it: ssh-keyscan -p 2222 node01 >> ~/.ssh/known_hosts.

A node that stops answering turns stale (after --stale-after), then unreachable (after
--unreachable-after), and stays in the table with the reason; the fleet keeps reconnecting
with backoff.

  --once --json        wait for every node's first snapshot (at most --timeout), print
                       {"nodes": [{"node", "address", "state", "error", "devices": [{"device",
                       "slot", "held", "capacity", "free"}], "held", "capacity", "free",
                       "largest_fit", "free_pieces", "kernels", "issues", ...}]} with amounts
                       as exact decimal strings, and exit. Unreachable nodes are listed with
                       their error.
  --fit SLOTS          where would this request fit (cuda.shares=2.5,cpu=8,mem=64g)? Backend.AI's
                       allocators run on each node's live state, per agent, as fgtop simulate
                       does: "fits" lists the live nodes that take it, each node says where
                       (agent, devices, amounts) or why not (which resource, how much is short,
                       on the closest agent, or fragmentation). A stale or unreachable node is
                       "unknown", never a fit: its last figures are not the node's now. With
                       --json, or in the console as :fit SLOTS.

Peers are bounded: --once and --fit end within --timeout whatever the nodes do; a node with more
than 1024 devices is "too large" (refused over SSH; through Prometheus shown without a largest
fit); a node's lines are read at most 20 a second (one that sends more is marked "floods
lines"); a stream line is at most 16 MiB and a Prometheus answer 8 MiB per query. q, Ctrl-C
and SIGTERM end the fleet at once (within 3 s whatever the peers do).

  --at TIME            the fleet as it was at TIME (as snapshot --at: RFC 3339, 14:02, -2h), with
                       --prometheus: every query is made at TIME, against Prometheus or a store
                       that serves its query API (VictoriaMetrics). A node is aged from TIME, not
                       now; one with no sample near TIME (scraped --unreachable-after or more
                       before it, or only after it) is "no data at TIME", with no figures (never
                       free, never zero). Prints the table, or JSON with --json; --fit SLOTS
                       --at TIME says where the request would have fitted then. Exit status 1
                       when a node had no data then. With --hosts, each node answers from its
                       own record (serve --history DIR) over SSH: snapshot --at TIME; a node
                       whose record lacks TIME, or that keeps none, says so. In the console:
                       :at TIME, [ and ] a minute earlier or later, :live.

The allocator flags (--strategy, --quantum, --no-fragmentation, --allocation-order,
--affinity) apply to every node where the node's snapshot does not say.

Exit status: 0; with --once, 1 when a node is unreachable, stale or marked (the JSON lists it); with --fit, 1
when the request fits on no live node; 2 on bad usage.`

// fleetFlags are fgtop fleet's flags.
type fleetFlags struct {
	hosts       string
	prometheus  string
	refresh     time.Duration
	lookback    time.Duration
	identities  []string
	knownHosts  []string
	user        string
	once        bool
	asJSON      bool
	compact     bool
	timeout     time.Duration
	fit         string
	at          string
	noFollow    bool // dial nothing: the caller asks the nodes itself (fleet history)
	staleAfter  time.Duration
	unreachable time.Duration
	heartbeat   time.Duration
	alloc       allocFlags
	console     consoleFlags
}

func newFleetCmd() *cobra.Command {
	f := &fleetFlags{}
	cmd := &cobra.Command{
		Use:   "fleet --hosts H:P,H:P|@FILE | --prometheus URL [--once --json] [--fit SLOTS]",
		Short: "Many nodes in one console: from Prometheus, or each node's fgtop serve over SSH",
		Long:  fleetLong,
		Example: `  fgtop fleet --hosts node01:2222,node02:2222 --identity ~/.ssh/id_ed25519
  fgtop fleet --hosts @fleet.txt --once --json
  fgtop fleet --prometheus http://prometheus:9090
  fgtop fleet --hosts @fleet.txt --fit cuda.shares=2.5,cpu=8,mem=64g --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return f.run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.hosts, "hosts", "", "nodes: H:P,H:P or @FILE (one per line, # comments)")
	fl.StringVar(&f.prometheus, "prometheus", "", "read the fleet from this Prometheus (http://HOST:9090), which scrapes each node's fgtop exporter")
	fl.DurationVar(&f.refresh, "refresh", 2*time.Second, "with --prometheus: how often the fleet is queried")
	fl.DurationVar(&f.lookback, "lookback", fleet.DefaultLookback, "with --prometheus: a node scraped within this long is listed, its target down or not")
	fl.StringArrayVar(&f.identities, "identity", nil, "private key file to log in with (repeatable; default: ~/.ssh/id_* as ssh; ssh-agent is used too)")
	fl.StringArrayVar(&f.knownHosts, "known-hosts", nil, "known_hosts file(s) to check host keys against (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)")
	fl.StringVar(&f.user, "user", "", "login name (default: $USER)")
	fl.BoolVar(&f.once, "once", false, "wait for every node's first snapshot, print and exit")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (with --once or --fit)")
	fl.BoolVar(&f.compact, "compact", false, "with --json: one-line JSON")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "with --once/--fit: the longest to wait for the nodes")
	fl.StringVar(&f.at, "at", "", "the fleet as it was at TIME (as snapshot --at: RFC 3339, 14:02, yesterday 14:02, -2h), from --prometheus, or over SSH from each node's --history record")
	fl.StringVar(&f.fit, "fit", "", "where would this request fit: SLOTS such as cuda.shares=2.5,cpu=8,mem=64g")
	fl.DurationVar(&f.staleAfter, "stale-after", fleet.DefaultStaleAfter, "a node that sent nothing for this long is stale")
	fl.DurationVar(&f.unreachable, "unreachable-after", fleet.DefaultUnreachableAfter, "a node that sent nothing for this long is unreachable")
	fl.DurationVar(&f.heartbeat, "heartbeat", 2*time.Second, "the heartbeat each node's stream is asked for")
	f.alloc.register(cmd, "the accelerator maps", "the node's", "the node's agent config")
	f.console.registerLook(cmd)
	cmd.AddCommand(newFleetHistoryCmd())
	return cmd
}

// fleetSource is a started fleet: its tracker, running until ctx ends.
type fleetSource struct {
	tracker  *fleet.Tracker
	settings fleet.Settings
	wait     func()
	prom     *fleet.PromClient // the Prometheus source, nil over SSH
	// hosts, sshCfg and sshOpts ask each node's record (--hosts --at).
	hosts   []string
	sshCfg  *gossh.ClientConfig
	sshOpts fleet.SSHOptions
	desc    string // "ssh: 3 hosts", "prometheus: URL"
}

func (f *fleetFlags) check() error {
	switch {
	case f.hosts == "" && f.prometheus == "":
		return usageErr("fleet: a source is required: --hosts H:P,H:P, --hosts @FILE or --prometheus URL")
	case f.hosts != "" && f.prometheus != "":
		return usageErr("fleet: --hosts and --prometheus are exclusive")
	case f.prometheus != "" && !httpURL(f.prometheus):
		return usageErr("fleet: --prometheus %q: want Prometheus's URL, e.g. http://prometheus:9090", f.prometheus)
	case f.prometheus != "" && f.refresh < 100*time.Millisecond:
		return usageErr("fleet: --refresh %s: want at least 100ms", f.refresh)
	case f.prometheus != "" && f.lookback < time.Second:
		return usageErr("fleet: --lookback %s: want at least 1s", f.lookback)
	case f.asJSON && !f.once && f.fit == "" && f.at == "":
		return usageErr("fleet: --json needs --once, --fit or --at")
	case f.timeout <= 0:
		return usageErr("fleet: --timeout %s: want a positive duration", f.timeout)
	case f.staleAfter <= 0 || f.unreachable < f.staleAfter:
		return usageErr("fleet: want 0 < --stale-after (%s) <= --unreachable-after (%s)", f.staleAfter, f.unreachable)
	case f.heartbeat < 100*time.Millisecond || f.heartbeat > time.Minute:
		return usageErr("fleet: --heartbeat %s: want 100ms to 1m", f.heartbeat)
	}
	return nil
}

// hostList reads --hosts.
func (f *fleetFlags) hostList() ([]string, error) {
	text := f.hosts
	if path, ok := strings.CutPrefix(text, "@"); ok {
		data, err := safefile.ReadFile(path, 1<<20)
		if err != nil {
			return nil, usageErr("--hosts @%s: %v", path, err)
		}
		text = string(data)
	}
	hosts, err := fleet.ParseHosts(text)
	if err != nil {
		return nil, usageErr("--hosts %s: %v", f.hosts, err)
	}
	return hosts, nil
}

// start dials every node and follows its stream until ctx ends. What it
// goes on without (known_hosts lines no ssh can read) is said on stderr.
func (f *fleetFlags) start(ctx context.Context, stderr io.Writer) (*fleetSource, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	ps, err := f.alloc.settings()
	if err != nil {
		return nil, err
	}
	settings := fleet.Settings{Settings: ps, PolicySet: f.alloc.affinity != ""}
	if f.prometheus != "" {
		return f.startPrometheus(ctx, settings)
	}
	hosts, err := f.hostList()
	if err != nil {
		return nil, err
	}
	known := f.knownHosts
	if len(known) == 0 {
		// As ssh: the user's known_hosts, then the system's; either may be
		// missing, but one that exists must still be a regular file.
		known = []string{fleet.DefaultKnownHosts(), "/etc/ssh/ssh_known_hosts"}
		for _, p := range known {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			if err := checkRegular("fleet: known_hosts", p); err != nil {
				return nil, err
			}
		}
	} else {
		for _, p := range known {
			if err := checkRegular("fleet: --known-hosts", p); err != nil {
				// ssh users skip the check with /dev/null; say that fgtop
				// has no such way, and how to trust a node instead.
				return nil, usageErr("%v: fgtop checks every node's host key and cannot skip it; give a known_hosts file (ssh-keyscan -p 2222 NODE >> FILE, after checking the key)", err)
			}
		}
	}
	for _, p := range f.identities {
		if err := checkRegular("fleet: --identity", p); err != nil {
			return nil, err
		}
	}
	user := f.user
	if user == "" {
		user = os.Getenv("USER")
	}
	o := fleet.SSHOptions{User: user, Identities: f.identities, AgentSocket: os.Getenv("SSH_AUTH_SOCK"), KnownHosts: known,
		Heartbeat: f.heartbeat, Settings: settings, Silence: f.staleAfter + f.heartbeat,
		Warn: func(s string) { fmt.Fprintf(stderr, "fgtop fleet: %s\n", s) }}
	if len(f.identities) == 0 {
		// As ssh: ~/.ssh/id_* when no key is named.
		home, _ := os.UserHomeDir()
		o.DefaultIdentities = fleet.DefaultIdentityFiles(home)
		if home != "" {
			o.SSHDir = filepath.Join(home, ".ssh")
		}
	}
	cfg, closeAgent, err := fleet.ClientConfig(o)
	if err != nil {
		return nil, usageErr("fleet: %v", err)
	}
	t := fleet.NewTracker(hosts, "ssh", fleet.Options{StaleAfter: f.staleAfter, UnreachableAfter: f.unreachable})
	if f.at != "" || f.noFollow {
		return &fleetSource{tracker: t, settings: settings, wait: closeAgent, hosts: hosts, sshCfg: cfg, sshOpts: o}, nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = t.Run(ctx) }()
	for _, h := range hosts {
		wg.Add(1)
		go func() { defer wg.Done(); fleet.FollowSSH(ctx, t, h, cfg, o) }()
	}
	return &fleetSource{tracker: t, settings: settings, wait: func() { wg.Wait(); closeAgent() }, desc: fmt.Sprintf("ssh: %d hosts", len(hosts)),
		hosts: hosts, sshCfg: cfg, sshOpts: o}, nil
}

// promOptions are the Prometheus client's options from the flags.
func (f *fleetFlags) promOptions(settings fleet.Settings) fleet.PromOptions {
	return fleet.PromOptions{URL: f.prometheus, Interval: f.refresh, Timeout: f.timeout, Lookback: f.lookback, Settings: settings}
}

// startPrometheus follows the fleet through Prometheus's HTTP API: the
// nodes are whatever fgtop exporters it scrapes.
func (f *fleetFlags) startPrometheus(ctx context.Context, settings fleet.Settings) (*fleetSource, error) {
	c, err := fleet.NewPromClient(f.promOptions(settings))
	if err != nil {
		return nil, usageErr("fleet: %v", err)
	}
	t := fleet.NewTracker(nil, "prometheus", fleet.Options{StaleAfter: f.staleAfter, UnreachableAfter: f.unreachable, Dynamic: true})
	src := &fleetSource{tracker: t, settings: settings, prom: c, desc: "prometheus: " + f.prometheus}
	if f.once || f.fit != "" || f.at != "" {
		src.wait = func() {}
		return src, nil
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = t.Run(ctx) }()
	go func() { defer wg.Done(); fleet.FollowPrometheus(ctx, t, c) }()
	src.wait = wg.Wait
	return src, nil
}

func (f *fleetFlags) run(ctx context.Context, stdout, stderr io.Writer) error {
	var req alloc.Request
	if f.fit != "" {
		var err error
		if req, err = fleet.ParseRequest(f.fit); err != nil {
			return usageErr("--fit %q: %v", f.fit, err)
		}
	}
	var at time.Time
	if f.at != "" {
		var err error
		now := time.Now()
		if at, err = history.ParseWhen(f.at, now); err != nil {
			return usageErr("--at: %v", err)
		}
		if at.After(now) {
			return usageErr("--at %s is in the future: the fleet's past only (leave --at out for now)", f.at)
		}
	}
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	oneShot := f.once || f.fit != "" || f.at != ""
	if oneShot {
		// --timeout bounds the whole run, whatever the nodes or
		// Prometheus do (issue 23: --once --timeout 100s still ran after
		// 21 minutes).
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, f.timeout)
		defer cancelT()
	}
	src, err := f.start(ctx, stderr)
	if err != nil {
		return err
	}
	// The sources end with ctx; one busy with a node's answer gets a
	// moment, not the process's life (q, Ctrl-C and SIGTERM end it now).
	defer waitAtMost(src.wait, sourceGrace)
	defer cancel()
	if !oneShot {
		return runFleetConsole(ctx, src, f)
	}
	var fl *fleet.Fleet
	if src.prom != nil && f.at != "" {
		if fl, err = src.prom.At(ctx, at, f.unreachable); err != nil {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet --at %s: %w", fleet.AtStamp(at), err)}
		}
		if len(fl.Nodes) == 0 {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet: %s has no fgtop series near %s (within --lookback %s before it, or after it)", f.prometheus, fleet.AtStamp(at), f.lookback)}
		}
	} else if f.at != "" {
		fl = fleet.HostsAt(ctx, src.hosts, src.sshCfg, src.sshOpts, at)
	} else if src.prom != nil {
		// Nodes whose exporter has published no snapshot yet are given
		// --timeout for it, as --once over SSH waits for first snapshots.
		nodes, err := src.prom.RefreshAnswered(ctx, f.timeout)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet: %s did not answer within --timeout %s", f.prometheus, f.timeout)}
		}
		if err != nil && ctx.Err() != nil {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet: stopped before %s answered", f.prometheus)}
		}
		if err != nil {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet: %w", err)}
		}
		if len(nodes) == 0 {
			return &exitError{code: exitProblem, err: fmt.Errorf("fleet: %s has no fgtop series (does it scrape fgtop exporter or serve --metrics-listen?)", f.prometheus)}
		}
		fl = fleet.PromFleet(nodes, time.Now(), f.unreachable)
	} else {
		fl = waitAnswered(ctx, src.tracker, f.timeout)
	}
	if f.fit != "" {
		if err := fl.CheckSlots(req); err != nil {
			return usageErr("--fit %q: %v", f.fit, err)
		}
	}
	a := fleet.NewAnswer(fl, f.fit != "", req, f.fit, src.settings)
	if a.Fit != nil && f.at != "" {
		a.Fit.At = fleet.AtStamp(at)
	}
	if f.asJSON {
		b, err := report.Marshal(a.Value(), !f.compact)
		if err != nil {
			return err
		}
		if _, err := stdout.Write(b); err != nil {
			return err
		}
	} else {
		a.WriteText(stdout, func(s string) string { return paintRed(stdout, s) })
	}
	for _, l := range a.NodeLines {
		fmt.Fprintf(stderr, "fgtop fleet: %s\n", l)
	}
	if a.Failure != "" {
		return &exitError{code: exitProblem, err: errors.New(a.Failure)}
	}
	return nil
}

// sourceGrace is how long the fleet waits for its sources to end once it
// is done with them.
const sourceGrace = time.Second

// waitAtMost runs wait for at most d, and returns then whether it
// returned or not.
func waitAtMost(wait func(), d time.Duration) {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// waitAnswered is fleet.WaitAnswered.
func waitAnswered(ctx context.Context, t *fleet.Tracker, timeout time.Duration) *fleet.Fleet {
	return fleet.WaitAnswered(ctx, t, timeout)
}

// runFleetConsole runs the fleet console until the user quits.
func runFleetConsole(ctx context.Context, src *fleetSource, f *fleetFlags) error {
	if err := requireTerminal("fgtop fleet", "fgtop fleet --once --json"); err != nil {
		return err
	}
	uo, err := f.console.uiOptions("")
	if err != nil {
		return err
	}
	m := fleetui.New(src.tracker.Subscribe(ctx), fleetui.Options{Theme: uo.Theme, Background: uo.Background, ASCII: uo.ASCII,
		Settings: src.settings, Source: src.desc, At: f.consoleAt(ctx, src), Step: fleetui.DefaultStep})
	// The terminal went away, or someone said so: end as on SIGTERM,
	// with the terminal restored (fleet's one-shot runs keep SIGHUP's
	// default, for nohup).
	ctx, stop := notifyStop(ctx, syscall.SIGHUP)
	defer stop()
	p, done, err := local.Program(ctx, m, nil)
	if err != nil {
		return fmt.Errorf("fleet console: %w", err)
	}
	defer done()
	if _, err := p.Run(); local.Failed(ctx, err, os.Stderr) {
		return fmt.Errorf("fleet console: %w", err)
	}
	return nil
}

// consoleAt is the console's :at, [ and ]: the fleet at a moment, read as
// fleet --at reads it, bounded by --timeout and ended with the console
// (ctx) or when a newer read replaces it (rctx).
func (f *fleetFlags) consoleAt(ctx context.Context, src *fleetSource) func(context.Context, time.Time) (*fleet.Fleet, error) {
	var prom *fleet.PromClient
	if src.prom != nil {
		// A client of its own: the live one's cache of down nodes is the
		// present's, and its lock is held across the live refresh.
		var err error
		if prom, err = fleet.NewPromClient(f.promOptions(src.settings)); err != nil {
			prom = src.prom
		}
	}
	return func(rctx context.Context, at time.Time) (*fleet.Fleet, error) {
		rctx, cancel := context.WithTimeout(rctx, f.timeout)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		if prom != nil {
			fl, err := prom.At(rctx, at, f.unreachable)
			if err != nil {
				return nil, err
			}
			if len(fl.Nodes) == 0 {
				return nil, fmt.Errorf("%s has no fgtop series near %s (within --lookback %s before it, or after it)", f.prometheus, fleet.AtStamp(at), f.lookback)
			}
			return fl, nil
		}
		return fleet.HostsAt(rctx, src.hosts, src.sshCfg, src.sshOpts, at), nil
	}
}

// httpURL reports whether s is an http or https URL with a host, as
// --prometheus wants (the client would say "unsupported protocol scheme").
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

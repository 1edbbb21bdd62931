package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/ui/console"
	fleetui "github.com/fgtop/fgtop/ui/fleet"
	"github.com/fgtop/fgtop/ui/local"
	"github.com/spf13/cobra"
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
                            --unreachable-after old. One still current but scraped no more
                            (Prometheus down) is stale once its last scrape is 3 of its own
                            intervals (learnt from the store) and --unreachable-after old, then
                            unreachable (docs/fleet.md). Kernels are not per-kernel
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
			if fl := cmd.Flags(); (fl.Changed("fit") && f.fit == "") || (fl.Changed("at") && f.at == "") { // "$EMPTY": not the live fleet
				return usageErr("fleet: --fit and --at need a value (--fit cuda.shares=2.5, --at -2h), not an empty one")
			}
			if n, src := fleet.ForeignFlag(cmd.Flags().Changed, f.prometheus != ""); n != "" && (f.hosts == "") != (f.prometheus == "") {
				return usageErr("fleet: --%s applies only with %s: drop it", n, src)
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
	fl.StringVar(&f.user, "user", "", "login name (default: $USER, else the OS user name)")
	fl.BoolVar(&f.once, "once", false, "wait for every node's first snapshot, print and exit")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (with --once, --fit or --at)")
	fl.BoolVar(&f.compact, "compact", false, "with --json: one-line JSON")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "with --once, --fit or --at: the longest to wait for the nodes")
	fl.StringVar(&f.at, "at", "", "the fleet as it was at TIME (as snapshot --at: RFC 3339, 14:02, yesterday 14:02, -2h), from --prometheus, or over SSH from each node's --history record")
	fl.StringVar(&f.fit, "fit", "", "where would this request fit: SLOTS such as cuda.shares=2.5,cpu=8,mem=64g")
	fl.DurationVar(&f.staleAfter, "stale-after", fleet.DefaultStaleAfter, "a node that sent nothing for this long is stale")
	fl.DurationVar(&f.unreachable, "unreachable-after", fleet.DefaultUnreachableAfter, "a node that sent nothing for this long is unreachable")
	fl.DurationVar(&f.heartbeat, "heartbeat", 2*time.Second, "the heartbeat each node's stream is asked for")
	f.alloc.register(cmd, "the accelerator maps", "the node's; where it is unknown, shares are placed nowhere", "the node's agent config")
	f.console.registerLook(cmd)
	cmd.AddCommand(newFleetHistoryCmd())
	return cmd
}

func (f *fleetFlags) check() error {
	switch {
	case f.hosts == "" && f.prometheus == "":
		return usageErr("fleet: a source is required: --hosts H:P,H:P, --hosts @FILE or --prometheus URL")
	case f.hosts != "" && f.prometheus != "":
		return usageErr("fleet: --hosts and --prometheus are exclusive")
	case f.prometheus != "" && !fleet.HTTPURL(f.prometheus):
		return usageErr("fleet: --prometheus %q: want Prometheus's URL, e.g. http://prometheus:9090", f.prometheus)
	case f.prometheus != "" && f.refresh < 100*time.Millisecond:
		return usageErr("fleet: --refresh %s: want at least 100ms", f.refresh)
	case f.prometheus != "" && f.lookback < time.Second:
		return usageErr("fleet: --lookback %s: want at least 1s", f.lookback)
	case f.asJSON && !f.once && f.fit == "" && f.at == "":
		return usageErr("fleet: --json needs --once, --fit or --at")
	case f.compact && !f.asJSON:
		return usageErr("fleet: --compact needs --json")
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
	hosts, err := fleet.LoadHosts(f.hosts)
	if fe, ok := errors.AsType[*fleet.HostsFileError](err); ok {
		// A file not there is said as --identity's is, not as open(2)'s
		// "open fleet.txt: no such file or directory".
		if why := cliwords.MissingFile(fe.Err); why != "" {
			return nil, usageErr("--hosts @%s: %s", fe.Path, why)
		}
		return nil, usageErr("--hosts @%s: %v", fe.Path, fe.Err)
	} else if _, ok := errors.AsType[*fleet.ItemsError](err); ok {
		// The error names and quotes the bad items.
		return nil, usageErr("--hosts %v", err)
	} else if err != nil {
		return nil, usageErr("--hosts %s: %v", f.hosts, err)
	}
	return hosts, nil
}

// start starts the fleet's source (fleet.StartSSH, fleet.StartPrometheus)
// until ctx ends. What it goes on without (known_hosts lines no ssh can
// read) is said on stderr.
func (f *fleetFlags) start(ctx context.Context, stderr io.Writer) (*fleet.Source, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	ps, err := f.alloc.settings()
	if err != nil {
		return nil, err
	}
	settings := fleet.Settings{Settings: ps, PolicySet: f.alloc.affinity != ""}
	to := fleet.Options{StaleAfter: f.staleAfter, UnreachableAfter: f.unreachable}
	if f.prometheus != "" {
		src, err := fleet.StartPrometheus(ctx, f.promOptions(settings), to, !(f.once || f.fit != "" || f.at != ""))
		if err != nil {
			return nil, usageErr("fleet: %v", err)
		}
		return src, nil
	}
	hosts, err := f.hostList()
	if err != nil {
		return nil, err
	}
	known := f.knownHosts
	if len(known) == 0 {
		// As ssh: the user's known_hosts, then the system's; either may be
		// missing, but one that exists must still be a regular file.
		known = fleet.DefaultKnownHostsFiles()
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
	o := fleet.SSHOptions{User: f.user, Identities: f.identities, KnownHosts: known,
		Heartbeat: f.heartbeat, Settings: settings, Silence: f.staleAfter + f.heartbeat,
		Warn: func(s string) { fmt.Fprintf(stderr, "fgtop fleet: %s\n", s) }}
	o.LoginDefaults()
	src, err := fleet.StartSSH(ctx, hosts, o, to, f.at == "" && !f.noFollow)
	if err != nil {
		return nil, usageErr("fleet: %v", err)
	}
	return src, nil
}

// promOptions are the Prometheus client's options from the flags.
func (f *fleetFlags) promOptions(settings fleet.Settings) fleet.PromOptions {
	return fleet.PromOptions{URL: f.prometheus, Interval: f.refresh, Timeout: f.timeout, Lookback: f.lookback, UnreachableAfter: f.unreachable, Settings: settings}
}

func (f *fleetFlags) run(ctx context.Context, stdout, stderr io.Writer) error {
	uo, err := f.console.uiOptions("") // --theme, whatever the run: --once took a typo and exited 0
	if err != nil {
		return err
	}
	var req alloc.Request
	if f.fit != "" {
		if req, err = fleet.ParseRequest(f.fit); err != nil {
			return usageErr("--fit %q: %v", f.fit, err)
		}
	}
	var at time.Time
	if f.at != "" {
		if at, err = fleet.ParseAt(f.at, time.Now()); err != nil {
			return usageErr("%v", err)
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
	defer src.WaitAtMost(fleet.SourceGrace)
	defer cancel()
	if !oneShot {
		return runFleetConsole(ctx, src, f, uo)
	}
	fl, err := src.Read(ctx, f.promOptions(src.Settings), at, f.unreachable)
	if err != nil {
		return &exitError{code: exitProblem, err: err}
	}
	if f.fit != "" {
		if err := fl.CheckSlots(req); err != nil {
			return usageErr("--fit %q: %v", f.fit, err)
		}
	}
	a := fleet.NewAnswer(fl, f.fit != "", req, f.fit, src.Settings)
	if f.at != "" {
		a.AsAt(fleet.AtStamp(at))
	}
	if err := written(a.Write(stdout, f.asJSON, !f.compact, func(s string) string { return paintRed(stdout, s) })); err != nil {
		return err
	}
	for _, l := range a.NodeLines {
		fmt.Fprintf(stderr, "fgtop fleet: %s\n", l)
	}
	if a.Failure != "" {
		return &exitError{code: exitProblem, err: errors.New(a.Failure)}
	}
	return nil
}

// runFleetConsole runs the fleet console until the user quits.
func runFleetConsole(ctx context.Context, src *fleet.Source, f *fleetFlags, uo console.Options) error {
	if err := requireTerminal("fgtop fleet", "fgtop fleet --once --json"); err != nil {
		return err
	}
	m := fleetui.New(src.Tracker.Subscribe(ctx), fleetui.Options{Theme: uo.Theme, Background: uo.Background, ASCII: uo.ASCII,
		Settings: src.Settings, Source: src.Desc, At: f.consoleAt(ctx, src), Step: fleetui.DefaultStep})
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

// consoleAt is the console's :at, [ and ] (fleet.Source.AtFunc), bounded
// by --timeout.
func (f *fleetFlags) consoleAt(ctx context.Context, src *fleet.Source) func(context.Context, time.Time) (*fleet.Fleet, error) {
	return src.AtFunc(ctx, f.promOptions(src.Settings), f.unreachable)
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/spf13/cobra"
)

func newFleetHistoryCmd() *cobra.Command {
	f := &fleetFlags{staleAfter: fleet.DefaultStaleAfter, unreachable: fleet.DefaultUnreachableAfter, heartbeat: 2 * time.Second, noFollow: true,
		alloc: allocFlags{strategy: "evenly"}}
	var q struct{ device, kernel, user, since, until string }
	var asJSON, noTrunc bool
	cmd := &cobra.Command{
		Use:   "history --hosts H:P,H:P|@FILE (--device ID|--kernel ID|--user ID) [--since T] [--until T] [--json]",
		Short: "Who held what across the fleet: each node's own record, merged by time",
		Long: `Ask every node's own record (fgtop serve --history DIR) over SSH, as ` + "`fgtop history`" + ` asks one
node's, and merge the answers by time, each row naming its node (host:port).

  --device ID    a device as fgtop history names it: GPU0, MIG 4/0, cuda:0, an id or a unique prefix
  --kernel ID    a kernel id or a unique prefix
  --user ID      an owner user id (recovery.json owner_user_id) or a unique prefix
  --since/--until TIME   RFC 3339, 14:02, 2026-11-27 14:02, or -2h (sent to the nodes as RFC 3339)
  --login NAME   the SSH login (default: $USER, else the OS user name); --identity and --known-hosts as fgtop fleet

Nodes that did not answer, and the stretches of the span a node's record lacks, are listed
after the table (and in --json's "problems" and "missing").

Exit status: 0; 1 when a node did not answer or its record lacks part of the asked span;
2 on bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hq, err := fleet.NewHistoryQuery(q.device, q.kernel, q.user)
			if err != nil {
				return usageErr("%v", err)
			}
			if f.hosts == "" {
				return usageErr("fleet history: --hosts H:P,H:P or --hosts @FILE is required (each node's record is read over SSH)")
			}
			if err := hq.SetSpan(q.since, q.until, time.Now()); err != nil {
				return usageErr("%v", err)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, f.timeout)
			defer cancel()
			src, err := f.start(ctx, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer src.Wait()
			fh, err := fleet.HistoryHosts(ctx, src.Hosts, src.SSHConfig, src.SSH, hq)
			if err != nil {
				return usageErr("fleet history: %v", err)
			}
			return printFleetHistory(cmd.OutOrStdout(), cmd.ErrOrStderr(), fh, asJSON, noTrunc)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.hosts, "hosts", "", "nodes: H:P,H:P or @FILE (one per line, # comments)")
	fl.StringArrayVar(&f.identities, "identity", nil, "private key file to log in with (repeatable; default: ~/.ssh/id_* as ssh; ssh-agent is used too)")
	fl.StringArrayVar(&f.knownHosts, "known-hosts", nil, "known_hosts file(s) to check host keys against (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)")
	fl.StringVar(&f.user, "login", "", "SSH login name (default: $USER, else the OS user name)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "the longest to wait for the nodes")
	fl.StringVar(&q.device, "device", "", "a device: GPU0, MIG 4/0, cuda:0, an id or a unique prefix (as fgtop history)")
	fl.StringVar(&q.kernel, "kernel", "", "a kernel id or a unique prefix")
	fl.StringVar(&q.user, "user", "", "an owner user id or a unique prefix")
	fl.StringVar(&q.since, "since", "", "from this time (RFC 3339, 2026-11-27 14:02, 14:02, yesterday, -2h, -1d)")
	fl.StringVar(&q.until, "until", "", "up to this time")
	fl.BoolVar(&asJSON, "json", false, "print JSON (schema "+fleet.FleetHistorySchema+")")
	fl.BoolVar(&noTrunc, "no-trunc", false, "print kernel, session and user ids whole in the table")
	return cmd
}

// printFleetHistory prints the fleet's answer, names the nodes that did
// not answer on stderr, and exits 1 when part of the span is not known.
func printFleetHistory(w, stderr io.Writer, fh *fleet.FleetHistory, asJSON, full bool) error {
	if err := fleet.WriteHistory(w, fh, asJSON, full); err != nil {
		return err
	}
	for _, p := range fh.Problems {
		fmt.Fprintf(stderr, "fgtop fleet history: %s: %s\n", p.Node, p.Error)
	}
	if err := fh.Shortfall(); err != nil {
		return &exitError{code: exitProblem, err: err}
	}
	return nil
}

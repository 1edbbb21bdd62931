package main

import (
	"fmt"
	"github.com/fgtop/fgtop/internal/gcpolicy"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

func newSnapshotCmd() *cobra.Command {
	var src sourceFlags
	var asJSON, follow, compact, useDemo bool
	var seed int64
	var allocMap string
	var heartbeat time.Duration
	var at, histDir string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Print the node's allocation once (--json, --alloc-map) or as one JSON line per change (--follow)",
		Long: `Print the node's allocation account.

  --json                 the whole snapshot, schema "fgtop.snapshot/v1" (decimals as
                         strings in Python's str(Decimal) form, stable order)
  --alloc-map            Backend.AI's gpu_alloc_map as agents report it since September
                         2026 (PR #14327; 26.4 and 26.8 backports): device id -> the sum,
                         over every slot under the cuda device (shares, whole devices, MIG
                         slots), of the amount held divided by that device's capacity for
                         the slot (the raw amount on a device the inventory lacks),
                         quantized to four places ("0.2500"); a GPU whose fractional
                         capacity cannot be known (plugin settings never read) is left out
                         and named on stderr
  --alloc-map=absolute   the map older agents report: device id -> cuda.shares +
                         cuda.device, unnormalised
                         With either map, a file that does not parse is skipped and
                         reported on stderr instead of truncating the map.
  --follow               keep watching; one JSON line per real change, nothing while
                         nothing changes (with --json or --alloc-map)
  --heartbeat DUR        with --follow: also a line {"heartbeat":true,...} after DUR
                         without a change, so a reader can tell a quiet node from a
                         dead pipe; its seq is the engine's latest snapshot number,
                         which also counts changes that printed no line
  --at TIME              the snapshot as the history recorded it at TIME (RFC 3339, 14:02,
                         2026-11-27 14:02, yesterday 14:02, mon 09:30, -2h); --history DIR names the record
                         (default $FGTOP_HISTORY, else /var/lib/fgtop/history). Exit 1, with the
                         reason on stderr, when TIME is outside the record or where it lacks data
                         (the node as last recorded before that is printed then)

  --demo [--seed N]      the embedded demo node (synthetic telemetry, source kind
                         "demo") instead of this node: try the formats without a node

Exit status: 0 on success, even when issues are reported; 1 with --at where the record lacks
the moment; 2 on bad usage, and when a --scratch-root does not exist or a root cannot be read
(without --follow: the report would leave its kernels out).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == allocAbsolute || args[0] == allocRatio) && cmd.Flags().Changed("alloc-map") {
				// pflag takes an optional value only after '='.
				return usageErr("write --alloc-map=%s, with '='", args[0])
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch allocMap {
			case "", allocRatio, allocAbsolute:
			default:
				return usageErr("--alloc-map=%s: want --alloc-map (the current ratio) or --alloc-map=absolute", allocMap)
			}
			if asJSON && allocMap != "" {
				return usageErr("--json and --alloc-map are exclusive")
			}
			if heartbeat != 0 && !follow {
				return usageErr("--heartbeat needs --follow")
			}
			if heartbeat < 0 {
				return usageErr("--heartbeat %s: want a positive duration", heartbeat)
			}
			if !asJSON && allocMap == "" {
				asJSON = true
			}
			if at == "" && cmd.Flags().Changed("at") {
				return usageErr("--at is empty: give a time (RFC 3339, 14:02, 2026-11-27 14:02, -2h)")
			}
			if at != "" {
				if follow {
					return usageErr("--at and --follow are exclusive")
				}
				return snapshotAt(at, histDir, allocMap, compact, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if histDir != "" && histDir != "off" {
				// "off" (no record, as the console takes it) asks for
				// nothing a snapshot of now would read.
				return usageErr("--history needs --at")
			}
			if err := checkDemoFlags(cmd, "snapshot", useDemo, "config", "scratch-root", "devices", "mock-etcd", "host-cpus", "host-mem"); err != nil {
				return err
			}
			src.oneShot = !follow
			ctx, stop := notifyStop(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sn, err := openServedNode(ctx, useDemo, seed, &src, "")
			if err != nil {
				return err
			}
			defer func() { _ = closeServed(sn)() }()
			opts := sn.Options
			if !follow {
				gcpolicy.OneShot()
				s, err := engine.Build(ctx, opts)
				if err != nil {
					return err
				}
				reportProblems(cmd.ErrOrStderr(), s)
				if allocMap == allocRatio {
					reportRatioUnknown(cmd.ErrOrStderr(), s)
				}
				// Only the form asked for is built: the full report costs
				// as much as the scan's state folding at 10,000 kernels.
				return report.WriteValue(cmd.OutOrStdout(), s, allocMap, !compact)
			}
			return engine.FollowForm(ctx, opts, cmd.OutOrStdout(), allocMap, heartbeat)
		},
	}
	src.register(cmd)
	src.registerLiveDemo(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the whole snapshot (schema fgtop.snapshot/v1); the default")
	fl.StringVar(&allocMap, "alloc-map", "", "print Backend.AI's gpu_alloc_map JSON: the current per-device ratio, or =absolute for older agents")
	fl.Lookup("alloc-map").NoOptDefVal = allocRatio
	fl.DurationVar(&heartbeat, "heartbeat", 0, "with --follow: a marked heartbeat line after this long without a change")
	fl.BoolVar(&follow, "follow", false, "keep watching and print one JSON line per change")
	fl.BoolVar(&compact, "compact", false, "one-line JSON")
	fl.BoolVar(&useDemo, "demo", false, "the embedded demo node instead of this node (as fgtop demo, exporter --demo and serve --demo)")
	fl.Int64Var(&seed, "seed", 1, "with --demo: seed of the simulated workload")
	fl.StringVar(&at, "at", "", "the snapshot as recorded at this time (RFC 3339, 14:02, -2h)")
	fl.StringVar(&histDir, "history", "", "with --at: the history directory ("+historyDefaultUsage()+")")
	return cmd
}

// The --alloc-map forms.
const (
	allocRatio    = report.FormAllocRatio
	allocAbsolute = report.FormAllocAbsolute
)

// reportProblems lists on stderr the device flags that match no device,
// the files that were skipped and those counted with a warning
// (report.Problems).
func reportProblems(stderr io.Writer, s *model.Snapshot) {
	for _, p := range report.Problems(s) {
		fmt.Fprintf(stderr, "fgtop: %s\n", p)
	}
}

// reportRatioUnknown names on stderr the GPUs that --alloc-map leaves out
// (report.RatioLeftOut).
func reportRatioUnknown(stderr io.Writer, s *model.Snapshot) {
	if msg := report.RatioLeftOut(s); msg != "" {
		fmt.Fprintf(stderr, "fgtop: %s\n", msg)
	}
}

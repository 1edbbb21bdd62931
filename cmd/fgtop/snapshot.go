package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
	"github.com/spf13/cobra"
)

func newSnapshotCmd() *cobra.Command {
	var src sourceFlags
	var asJSON, allocMap, follow, compact bool
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Print the node's allocation once (--json, --alloc-map) or as one JSON line per change (--follow)",
		Long: `Print the node's allocation account.

  --json        the whole snapshot, schema "fgtop.snapshot/v1" (decimals as strings
                in Python's str(Decimal) form, stable order)
  --alloc-map   exactly what Backend.AI's scan_gpu_alloc_map returns: device id ->
                cuda.shares + cuda.device; a file that does not parse is skipped and
                reported on stderr instead of truncating the map
  --follow      keep watching; one JSON line per change (with --json or --alloc-map)

Exit status: 0 on success, even when issues are reported; 2 on bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && allocMap {
				return usageErr("--json and --alloc-map are exclusive")
			}
			if !asJSON && !allocMap {
				asJSON = true
			}
			opts, err := src.options()
			if err != nil {
				return err
			}
			defer closeSource(opts)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			render := func(s *model.Snapshot, indent bool) error {
				var v any = report.FromSnapshot(s)
				if allocMap {
					v = report.AllocMap(s)
				}
				b, err := report.Marshal(v, indent)
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(b)
				return err
			}
			if !follow {
				s, err := engine.Build(ctx, opts)
				if err != nil {
					return err
				}
				reportProblems(s)
				return render(s, !compact)
			}
			return followSnapshots(ctx, opts, func(s *model.Snapshot) error { return render(s, false) })
		},
	}
	src.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the whole snapshot (schema fgtop.snapshot/v1); the default")
	fl.BoolVar(&allocMap, "alloc-map", false, "print Backend.AI's gpu_alloc_map JSON")
	fl.BoolVar(&follow, "follow", false, "keep watching and print one JSON line per change")
	fl.BoolVar(&compact, "compact", false, "one-line JSON")
	return cmd
}

// reportProblems lists, on stderr, the files that were skipped.
func reportProblems(s *model.Snapshot) {
	for _, k := range s.Kernels {
		if k.Problem != nil && (k.State == model.KernelBroken || k.State == model.KernelStale) {
			fmt.Fprintf(os.Stderr, "fgtop: skipped %s\n", k.Problem)
		}
	}
}

// followSnapshots runs the live engine and calls emit for every snapshot it
// publishes after the initial scan.
func followSnapshots(ctx context.Context, opts engine.Options, emit func(*model.Snapshot) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng := engine.New(opts)
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	sub := eng.Subscribe(ctx)
	for {
		select {
		case err := <-errc:
			return err
		case s, ok := <-sub:
			if !ok {
				return nil
			}
			if err := emit(s); err != nil {
				return err
			}
		}
	}
}

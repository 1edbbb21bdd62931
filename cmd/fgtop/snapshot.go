package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
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
				// Only the form asked for is built: the full report costs
				// as much as the scan's state folding at 10,000 kernels.
				var v any
				if allocMap {
					v = report.AllocMap(s)
				} else {
					v = report.FromSnapshot(s)
				}
				b, err := report.Marshal(v, indent)
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(b)
				return err
			}
			if !follow {
				oneShotGC()
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

// oneShotHeap is the heap a one-shot snapshot may grow to before its first
// collection. A scan allocates about 3.5 KB per kernel of which it keeps
// about 2 KB, so up to ~10,000 kernels the scan finishes before this and
// collecting would be pure cost (at the default GOGC=100 it is about 15% of
// the process's CPU time there). With the binary's own pages the process
// stays under DESIGN.md's 64 MiB then.
const oneShotHeap = 40 << 20

// oneShotGC sets the garbage collector up for a process that scans once,
// prints and exits: no collection until the heap reaches oneShotHeap, then
// the default policy (GOGC=100, no limit) from the first collection on, so
// a tree larger than that costs what it always did and a heap that lives
// beyond the limit can never make the collector run back to back. It does
// nothing when the user set GOGC or GOMEMLIMIT. The live commands (console,
// watch, --follow, serve) never call it: they keep the default policy.
func oneShotGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeap)
	// The cleanup of an object nobody holds runs after the first
	// collection, whatever triggered it.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}

// reportProblems lists, on stderr, the files that were skipped.
func reportProblems(s *model.Snapshot) {
	for _, k := range s.Kernels() {
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

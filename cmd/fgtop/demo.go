package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/internal/shword"
	"github.com/spf13/cobra"
)

// maxDemoSpeed bounds --speed: beyond it the simulated agents write files
// faster than a 2-core machine can follow, which demonstrates nothing.
const maxDemoSpeed = 1000

const demoLong = `Open the console on a demo node embedded in fgtop: no GPU and no Backend.AI needed.

The node has 32 cores on 2 NUMA nodes, 256 GiB, and five A100-SXM4-40GB from Backend.AI's
mock accelerator plugin: four shared as fGPU (fractional mode, 1.00 share each) and one with
MIG enabled, cut into four slices. Two agents split it with a manual partition in the
slot-based form Backend.AI main loads: each agent is given amounts (cpu = 15, mem = "120G",
devices = { "cuda.shares" = "2.0", ... }) and allocates from every device, not seeing the
other agent's kernels, as main's agents do. --partition device-based runs the BEP-1044
draft's device lists instead (which main cannot load).

Simulated agents create and destroy kernels with Backend.AI's own allocators and write real
resource.txt files into temporary scratch roots, which fgtop watches as it watches a real
node. Like real agents they read agent.toml only when they start: after an apply in the
console's editor (e) the changed agents show "restart pending" until R (or
--restart-after) restarts them; then they place with the new partition.

The agent.toml, mock-accelerator.toml and etcd settings are in the same temporary
directory while the demo runs (printed on stderr with --headless; the editor, e, shows the
agent.toml path); everything is removed on exit, on
Ctrl-C (SIGINT), SIGTERM and SIGHUP.

  --partition F  slot-based (default, Backend.AI main's form) or device-based (the draft)
  --restart-after D  restart the simulated agents D after an apply changed their
                 partition (default: only when asked, with R in the console)
  --seed N       the same seed gives the same kernels, requests and placements
  --speed X      simulated seconds per real second (default 1)
  --idle-after D mark a kernel holding but idle after D at 0 % GPU (default 30s here,
                 as demo kernels live seconds to a minute; 10m elsewhere)
  --headless     no console: print the snapshot stream as NDJSON on stdout (schema
                 fgtop.snapshot/v1, one line per published snapshot); allocation
                 failures of the simulated agents are logged on stderr`

func newDemoCmd() *cobra.Command {
	var cf consoleFlags
	var seed int64
	var speed float64
	var headless bool
	var idleAfter, restartAfter time.Duration
	var part string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "The console on an embedded demo node (no GPU, no Backend.AI needed)",
		Long:  demoLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Every argument's error first: without a terminal one was
			// told of the terminal, fixed that, and only then of a typo.
			if speed <= 0 || speed > maxDemoSpeed {
				return usageErr("--speed %v: want a number above 0 and at most %d", speed, maxDemoSpeed)
			}
			// A typo'd --theme went unread, and the demo ran (the tour).
			for _, n := range []string{"theme", "ascii"} {
				if headless && cmd.Flags().Changed(n) {
					return usageErr("demo: --headless draws no console: --%s does not apply", n)
				}
			}
			idle, err := idleAfterOption(idleAfter)
			if err != nil {
				return err
			}
			format, err := agentconfig.ParseFormat(part)
			if err != nil {
				return usageErr("--partition %v", err)
			}
			if format == "" {
				format = agentconfig.FormatSlotBased
			}
			if restartAfter < 0 {
				return usageErr("--restart-after %v: want a duration of 0 or more", restartAfter)
			}
			if !headless {
				if _, err := cf.uiOptions(demo.NodeName); err != nil {
					return err
				}
				if err := requireTerminal("fgtop demo", "fgtop demo --headless (snapshots as NDJSON)"); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runDemo(ctx, demoRun{seed: seed, speed: speed, headless: headless, console: &cf, idleAfter: idle,
				partition: format, restartAfter: restartAfter, restartAfterSet: cmd.Flags().Changed("restart-after"),
				stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()})
		},
	}
	cf.register(cmd, true)
	demoHistoryUsage(cmd.Flags(), "")
	fl := cmd.Flags()
	fl.Int64Var(&seed, "seed", 1, "seed of the simulated workload")
	fl.Float64Var(&speed, "speed", 1, "simulated seconds per real second")
	fl.BoolVar(&headless, "headless", false, "no console: print snapshots as NDJSON on stdout")
	fl.StringVar(&part, "partition", "slot-based", "the demo agent.toml's partition: slot-based (Backend.AI main's form) or device-based (the BEP-1044 draft, which main cannot load)")
	fl.DurationVar(&restartAfter, "restart-after", 0, "restart the simulated agents this long after an apply changed their partition (default: only with R in the console)")
	registerIdleAfter(fl, &idleAfter, demoIdleAfter)
	return cmd
}

// demoIdleAfter is --idle-after's default in the demo.
const demoIdleAfter = demo.DefaultIdleAfter

// demoRun is one `fgtop demo` invocation.
type demoRun struct {
	idleAfter      time.Duration
	seed           int64
	speed          float64
	headless       bool
	console        *consoleFlags
	stdout, stderr io.Writer
	partition      agentconfig.Format
	// restartAfter restarts the changed agents this long after a change
	// (when restartAfterSet).
	restartAfter    time.Duration
	restartAfterSet bool
}

// runDemo starts the demo node, shows it (console or NDJSON) until ctx is
// done, a signal arrives or the viewer ends, and removes the node's files
// on every one of those paths (demo.Run).
func runDemo(ctx context.Context, r demoRun) error {
	// SIGHUP: the terminal went away. SIGPIPE: stdout was closed under
	// --headless; with the signal caught, the write fails with EPIPE
	// instead of killing the process before the files are removed.
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer stop()
	o := demo.RunOptions{Options: demo.Options{Seed: r.seed, Speed: r.speed, Partition: r.partition},
		RestartAfter: r.restartAfter, RestartAfterSet: r.restartAfterSet,
		Show: func(ctx context.Context, node *demo.Node) error {
			return runDemoConsole(ctx, node, r.idleAfter, r.console)
		}}
	if r.headless {
		o.Say = func(text string) { fmt.Fprintf(r.stderr, "fgtop demo: %s\n", text) }
		o.Show = func(ctx context.Context, node *demo.Node) error {
			fmt.Fprintf(r.stderr, "fgtop demo: node files in %s (seed %d, speed %g); %s; stop with Ctrl-C\n",
				node.Dir, r.seed, r.speed, demoPointers(node))
			return node.WriteSnapshots(ctx, r.idleAfter, r.stdout)
		}
	}
	return demo.Run(ctx, o) //nolint:wrapcheck // demo.Run's words are the command's
}

// demoPointers says how to point other commands at the demo node: the
// flags most of them take, and simulate's, which names its host another
// way.
func demoPointers(node *demo.Node) string {
	return fmt.Sprintf("point commands at it with: %s (fgtop simulate: %s)",
		shword.Join(node.CommandFlags()), shword.Join(node.SimulateFlags()))
}

// runDemoConsole runs the interactive console on the demo node.
func runDemoConsole(ctx context.Context, node *demo.Node, idleAfter time.Duration, cf *consoleFlags) error {
	uopts, err := cf.uiOptions(demo.NodeName)
	if err != nil {
		return err
	}
	opts := node.EngineOptions()
	opts.IdleAfter = idleAfter
	uopts.DemoRestart = node.RestartSaid
	// The demo records beside its node, so :at works after a minute.
	uopts.History = demoHistoryDir(cf.history, node)
	return runConsoleUI(ctx, opts, uopts, true)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/metrics"
	"github.com/fgtop/fgtop/internal/buildinfo"
	"github.com/fgtop/fgtop/internal/listenaddr"
	"github.com/spf13/cobra"
)

const exporterLong = `Serve this node's allocation account as Prometheus metrics: GET /metrics (and a small
index page at /). The values come from the live engine's latest snapshot (the same account as
the console and snapshot --json); a scrape never scans the scratch roots.

Series (prefix fgtop_, base units, ratios 0-1, no per-kernel labels): per device its capacity,
what is held per slot, what is free, Backend.AI's alloc-map ratio and its owners; per agent its
kernels and holdings (per device too, for fleet placement) and whether it answers GET /health on
its service-addr (fgtop_agent_up); kernels by state; issues by code and
severity; drift; the allocator settings (fractional or discrete, quantum_size, affinity policy,
allocation order); NVML telemetry with dcgm-exporter's label names (gpu, UUID, hostname; its
modelName is model_name here, as promtool's lint wants); fgtop_build_info. Every series carries node (--node).

The source flags are snapshot's. --demo serves the embedded demo node instead.
Stop with Ctrl-C or SIGTERM: in-flight scrapes finish first (at most 2 seconds; the process
exits 3 seconds after the signal whatever they do, or at a second Ctrl-C). At most 4 scrapes
are served at once; a fifth is answered 503 at once.`

// exporterFlags are the flags of `fgtop exporter` beyond the source flags.
type exporterFlags struct {
	listen  string
	node    string
	demo    bool
	seed    int64
	history string
}

func newExporterCmd() *cobra.Command {
	var src sourceFlags
	var ef exporterFlags
	cmd := &cobra.Command{
		Use:   "exporter --listen ADDR",
		Short: "Prometheus metrics of this node (GET /metrics)",
		Long:  exporterLong,
		Example: `  fgtop exporter --listen 127.0.0.1:9477
  fgtop exporter --listen :9477 --config /etc/backend.ai/agent.toml --node gpu-07
  fgtop exporter --listen 127.0.0.1:9477 --demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ef.check(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runExporter(ctx, exporterRun{src: &src, flags: &ef, stderr: cmd.ErrOrStderr()})
		},
	}
	src.register(cmd)
	src.registerLiveDemo(cmd)
	fl := cmd.Flags()
	fl.StringVar(&ef.listen, "listen", "", "address to serve /metrics on, HOST:PORT (required; e.g. 127.0.0.1:9477, or :9477 for every interface)")
	fl.StringVar(&ef.node, "node", "", "node name in every series (default: this host's name; the demo node's with --demo)")
	fl.BoolVar(&ef.demo, "demo", false, "serve the embedded demo node instead of this node")
	fl.Int64Var(&ef.seed, "seed", 1, "with --demo: seed of the simulated workload")
	registerHistoryFlag(fl, &ef.history, "record the node's history into DIR")
	demoHistoryUsage(fl, "--demo")
	return cmd
}

// check validates the flags that need more than their types.
func (f *exporterFlags) check(cmd *cobra.Command) error {
	if f.listen == "" {
		return usageErr("exporter: --listen HOST:PORT is required (e.g. --listen 127.0.0.1:9477)")
	}
	if err := checkListen("--listen", f.listen, "127.0.0.1:9477"); err != nil {
		return err
	}
	if cmd.Flags().Changed("node") && !metrics.ValidNode(f.node) {
		return usageErr("exporter: --node %q: want a non-empty name of printable characters", f.node)
	}
	return checkDemoFlags(cmd, "exporter", f.demo, "config", "scratch-root", "devices", "mock-etcd", "host-cpus", "host-mem")
}

// checkDemoFlags refuses, for a command with --demo and --seed, the
// source flags that --demo replaces, and --seed without --demo.
func checkDemoFlags(cmd *cobra.Command, command string, demo bool, source ...string) error {
	if !demo {
		if cmd.Flags().Changed("seed") {
			return usageErr("%s: --seed applies only with --demo", command)
		}
		return nil
	}
	// The CUDA plugin flags apply to NVML's GPUs only (docs/plugins.md).
	for _, name := range append(source, "cuda-plugin", "plugin-config", "fgpu-capacity") {
		if cmd.Flags().Changed(name) {
			return usageErr("%s: --demo serves the embedded node: --%s does not apply", command, name)
		}
	}
	return nil
}

// checkListen is listenaddr.Check of a flag's value, bad usage.
func checkListen(flag, v, eg string) error {
	if err := listenaddr.Check(v, eg); err != nil {
		return usageErr("%s %w", flag, err)
	}
	return nil
}

// exporterRun is one `fgtop exporter` invocation.
type exporterRun struct {
	src    *sourceFlags
	flags  *exporterFlags
	stderr io.Writer
	// ready, when set, is told the address once the server listens
	// (tests listen on port 0).
	ready func(addr string)
}

// runExporter starts the engine on the node (or the demo node) and serves
// its metrics (metrics.RunExporter) until ctx is done or SIGINT/SIGTERM
// arrives.
func runExporter(ctx context.Context, r exporterRun) (err error) {
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	sn, err := openServedNode(ctx, r.flags.demo, r.flags.seed, r.src, r.flags.node)
	if err != nil {
		return err
	}
	defer closeInto(&err, closeServed(sn))
	node := sn.Options.Node
	hdir, onDemo := "", sn.Demo != nil
	if onDemo {
		hdir = demoHistoryDir(r.flags.history, sn.Demo)
	} else {
		var note string
		if hdir, note, onDemo = historyDir(r.flags.history, sn.Options); note != "" {
			fmt.Fprintln(r.stderr, "fgtop exporter:", note)
		}
	}
	err = metrics.RunExporter(ctx, metrics.ExporterOptions{Engine: sn.Options, Addr: r.flags.listen, Name: "--listen", Build: metricsBuild(),
		Record: func(ctx context.Context, eng *engine.Engine) func() {
			return startRecording(ctx, eng, hdir, node, onDemo, r.stderr)
		},
		Listening: func(addr string) {
			fmt.Fprintf(r.stderr, "fgtop exporter: serving http://%s/metrics (node %s); stop with Ctrl-C\n", addr, node)
			if r.ready != nil {
				r.ready(addr)
			}
		}})
	cancel()
	return metricsErr("--listen", err)
}

// metricsBuild is this binary's fgtop_build_info.
func metricsBuild() metrics.BuildInfo {
	b := buildinfo.Read()
	bi := metrics.BuildInfo{Version: b.Version, GoVersion: b.Go}
	if b.Revision != nil {
		bi.Revision = *b.Revision
	}
	return bi
}

// metricsErr words an address the metrics server could not listen on
// (flag names it); other errors pass through.
func metricsErr(flag string, err error) error {
	if le := (*metrics.ListenError)(nil); errors.As(err, &le) {
		return listenErr(flag, le.Addr, le.Err)
	}
	return err
}

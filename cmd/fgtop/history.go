package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histdir"
	"github.com/fgtop/fgtop/engine/history/histread"
	"github.com/fgtop/fgtop/engine/history/histtext"
	"github.com/fgtop/fgtop/engine/metrics"
	"github.com/fgtop/fgtop/engine/recording"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model/names"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultHistoryDir is where the long-running commands record when it
// exists or can be made, and is writable; FGTOP_HISTORY overrides it,
// "off" turns recording off. A variable only so that a test can point it
// at a directory of its own (the demo must never touch it).
var defaultHistoryDir = "/var/lib/fgtop/history"

// historyDefaultUsage is how a --history flag's help names the directory
// used without it: FGTOP_HISTORY comes first (histdir), so naming only
// the default directory sent an operator who set it to the wrong place.
func historyDefaultUsage() string {
	return "default $" + histdir.Env + ", else " + defaultHistoryDir
}

// historyOff is the --history value that records nothing.
const historyOff = histdir.Off

// registerHistoryFlag adds --history DIR.
func registerHistoryFlag(fl *pflag.FlagSet, dir *string, what string) {
	fl.StringVar(dir, "history", "", what+" ("+historyDefaultUsage()+" where writable; \"off\" for none)")
}

// demoHistoryUsage is --history's description where the demo node is
// shown: the demo records beside its node (demoHistoryDir), never into the
// default directory, so the usual default would tell the user the wrong
// place. whenDemo is "" for the demo command itself, else the flag that
// makes the command show the demo ("--demo").
func demoHistoryUsage(fl *pflag.FlagSet, whenDemo string) {
	f := fl.Lookup("history")
	if f == nil {
		return
	}
	if whenDemo == "" {
		f.Usage = "the console records the demo node's history into DIR and reads the past from it (default: beside the demo node, removed on exit; \"off\" for none; --headless records nothing)"
		return
	}
	f.Usage = strings.TrimSuffix(f.Usage, ")") + "; with " + whenDemo + ": beside the demo node, removed on exit)"
}

// historyDir resolves --history for a command that records the node o
// describes (histdir.ForRecording with the default directory); onDemo:
// the node's files are the demo's (demo.FilesOf), recorded as the demo's
// only where histdir.ForDemoFiles says.
func historyDir(flag string, o engine.Options) (dir, note string, onDemo bool) {
	d := demo.FilesOf(o)
	dir, note = histdir.ForDemoFiles(flag, defaultHistoryDir, d)
	return dir, note, d != ""
}

// demoHistoryDir resolves --history for a command on the demo node
// (histdir.ForDemo).
func demoHistoryDir(flag string, node *demo.Node) string {
	return histdir.ForDemo(flag, node.Dir)
}

// readHistoryDir resolves --history for a command that reads; what is
// wrong with it is bad usage.
func readHistoryDir(flag string) (string, error) {
	dir, err := histdir.ForReading(flag, defaultHistoryDir)
	if err != nil {
		return "", usageErr("%v", err)
	}
	return dir, nil
}

// startRecording records eng's snapshots into dir on the side
// (recording.Start); node is the name the node's snapshots go by, demo
// says it is the demo's (recordNames).
func startRecording(ctx context.Context, eng *engine.Engine, dir, node string, demo bool, stderr io.Writer) func() {
	return recording.Start(ctx, eng, dir, fleet.RecordNames(node, demo), !demo, sayOn(stderr))
}

type recordFlags struct {
	node    string
	dir     string
	history string
	keep    string
	maxSize string
}

func (f *recordFlags) options() (history.Options, error) {
	o, err := histdir.RecordOptions(f.dir, f.history, f.keep, f.maxSize)
	if err != nil {
		return o, usageErr("%v", err)
	}
	return o, nil
}

func newRecordCmd() *cobra.Command {
	var src sourceFlags
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Keep the node's history in a directory: who held what, when (for `snapshot --at` and `history`)",
		Long: `Follow the node like the console does and append every change to a history directory:
each kernel's appearance, change and disappearance with its allocations, owner, session, agent,
state and issues; the agents' partitions as applied; a per-minute summary of each device's
utilisation and memory and each kernel's use. Writes are batched once a second into compressed,
checksummed segments (format: docs/history.md); a crash loses at most the last second.

Only one process writes a directory (a lock); serve, exporter and the console record too
(--history DIR) unless another process already does. Oldest segments are dropped first
beyond --keep or --max-size.

A directory whose record last named another node is refused: this node's kernels would be
taken for that node's by every reader (a copy of another node's record, the demo's).

Exit status: 0 when stopped by a signal; 2 on bad usage, when the directory is taken, or when it
holds another node's record.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hopts, err := rf.options()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("node") && !metrics.ValidNode(rf.node) {
				return usageErr("record: --node %q: want a non-empty name of printable characters", rf.node)
			}
			opts, err := src.options()
			if err != nil {
				return err
			}
			defer closeSource(opts)
			if rf.node != "" {
				opts.Node = rf.node
			}
			ctx, stop := notifyStop(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Straight to the process's stderr (main's writer is flushed at
			// exit; a recorder runs for days), made safe for a terminal.
			hopts.Logf = func(format string, a ...any) {
				fmt.Fprintln(os.Stderr, untrusted.Lines(fmt.Sprintf("fgtop record: "+format, a...)))
			}
			hopts.Names, hopts.KernelsVouch = fleet.RecordNames(opts.Node, false), true
			err = recording.Record(ctx, opts, hopts, func() {
				fmt.Fprintf(os.Stderr, "fgtop record: recording into %s (keep %s, at most %s); stop with Ctrl-C\n",
					hopts.Dir, rf.keep, rf.maxSize)
			})
			if errors.Is(err, history.ErrLocked) || errors.Is(err, history.ErrOtherNode) {
				return &exitError{code: exitBadUsage, err: err}
			}
			return err
		},
	}
	src.register(cmd)
	src.registerLive(cmd)
	fl := cmd.Flags()
	fl.StringVar(&rf.dir, "dir", "", "the history directory to write (created if missing)")
	// Every other command names the directory --history: an operator
	// types it here too.
	fl.StringVar(&rf.history, "history", "", "the same as --dir")
	fl.StringVar(&rf.keep, "keep", "7d", "drop what is older than this (7d, 36h)")
	fl.StringVar(&rf.maxSize, "max-size", "100MiB", "drop the oldest segments beyond this size")
	fl.StringVar(&rf.node, "node", "", "the node's name in its record (default: the host name; serve's --node, to record under the name serve gives it)")
	return cmd
}

// snapshotAt prints the snapshot as the record has it at the asked time.
func snapshotAt(at, dirFlag, allocMap string, compact bool, stdout, stderr io.Writer) error {
	dir, err := readHistoryDir(dirFlag)
	if err != nil {
		return err
	}
	now := time.Now()
	t, err := history.ParseWhen(at, now)
	if err != nil {
		return usageErr("--at: %v", err)
	}
	res, err := histread.At(dir, t, now)
	if err != nil {
		if re, ok := errors.AsType[*histread.ReadError](err); ok {
			for _, sk := range re.Skipped {
				fmt.Fprintf(stderr, "fgtop: skipped %s\n", sk)
			}
		}
		return readErr(err)
	}
	if err := report.WriteForm(stdout, res.Snap, allocMap, !compact); err != nil {
		return err
	}
	for _, n := range histread.Notes(res, allocMap) {
		fmt.Fprintf(stderr, "fgtop: %s\n", n)
	}
	if err := histread.Inexact(t, res); err != nil {
		return &exitError{code: exitProblem, err: err}
	}
	return nil
}

// readErr is exit status 1 for what the record lacks (histread.ReadError);
// other errors pass as they are.
func readErr(err error) error {
	if re, ok := errors.AsType[*histread.ReadError](err); ok {
		return &exitError{code: exitProblem, err: re.Err}
	}
	return err
}

func newHistoryCmd() *cobra.Command {
	var dir, device, kernel, user, session, project, since, until string
	var asJSON, noTrunc bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Who held which device, how much, from when to when (from the record of `fgtop record`)",
		Long: `List, from the history directory, who held what: one line per kernel and device with the
same amounts, owner and session, from when to when.

  --device NAME  a device by any name fgtop shows: cuda:1, GPU1, MIG 4/0, its id or UUID, a unique prefix;
                 the host's cores and memory as cpu:3 and mem:root
  --kernel ID    a kernel id or a unique prefix
  --user ID      an owner user id (recovery.json owner_user_id) or a unique prefix
  --session ID   a session id or a unique prefix
  --project ID   an owner project id or a unique prefix
  --since/--until TIME   RFC 3339, 14:02, 2026-11-27 14:02, or -2h

The rows are cut to the asked span. Kernel, session and user UUIDs are cut to their first 8
characters (more where two in a column share them), which --kernel, --session and --user take;
--no-trunc prints them whole (--json always does). A "<" before FROM: it held the device already at --since, or
when the record (or the record after a gap) began. TO "open": it still held it at --until, or at
the end of the record (a note says when that end is not now). A "?" after TO: it ended somewhere
in a gap of the record (or held it last then, before a gap that --until falls in). From when to when a kernel held it: --kernel ID
without --since/--until. Gaps, damaged segments and a span past the end of a record no recorder writes to any
more are listed after the table.

A kernel's owner, session, project and agent are the whole kernel's, even when its recovery.json
was written after it appeared (the agent's usual order).

Exit status: 0; 1 when the record lacks part of the asked span (with --kernel, of the kernel's stay
in it: a gap before it appeared or after it ended is left out) or the span lies outside the record;
2 on bad usage, and for a name that names nothing in the record (the error lists what it knows)
or a prefix that names several (the error lists them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := history.Filter{Device: device, Kernel: kernel, User: user, Session: session, Project: project}
			if err := histread.OneName(f); err != nil {
				return usageErr("%v", err)
			}
			d, err := readHistoryDir(dir)
			if err != nil {
				return err
			}
			now := time.Now()
			if err := histread.SetSpan(&f, since, until, now); err != nil {
				return usageErr("%v", err)
			}
			if err := histread.Future("--since", f.Since, now); err != nil {
				return &exitError{code: exitProblem, err: err}
			}
			res, active, err := histread.Query(d, f)
			var notFound *names.NotFoundError
			var ambiguous *names.AmbiguousError
			if errors.As(err, &notFound) || errors.As(err, &ambiguous) {
				return usageErr("history %s: %v", askedName(cmd.Flags(), "device", "kernel", "user", "session", "project"), err)
			} else if err != nil {
				return readErr(err)
			}
			problems, err := histtext.WriteBuffered(cmd.OutOrStdout(), res, f, histtext.Options{JSON: asJSON, Active: active, Now: now, Full: noTrunc})
			if err != nil {
				return err
			}
			if len(problems) > 0 {
				// What the answer lacks is exit status 1.
				return &exitError{code: exitProblem, err: errors.New(strings.Join(problems, "; "))}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "history", "", "the history directory ("+historyDefaultUsage()+")")
	fl.StringVar(&device, "device", "", "a device: cuda:1, GPU1, MIG 4/0, an id, UUID or unique prefix; cpu:3 or mem:root for the host's")
	fl.StringVar(&kernel, "kernel", "", "a kernel id or a unique prefix")
	fl.StringVar(&user, "user", "", "an owner user id or a unique prefix")
	fl.StringVar(&session, "session", "", "a session id or a unique prefix")
	fl.StringVar(&project, "project", "", "an owner project id or a unique prefix")
	fl.StringVar(&since, "since", "", "from this time (RFC 3339, 2026-11-27 14:02, 14:02, yesterday, -2h, -1d)")
	fl.StringVar(&until, "until", "", "up to this time")
	fl.BoolVar(&asJSON, "json", false, "print JSON (schema "+histtext.Schema+")")
	fl.BoolVar(&noTrunc, "no-trunc", false, "print kernel, session and user ids whole in the table")
	return cmd
}

// askedName is the first of flags that was given, as typed ("--device GPU9").
func askedName(fl *pflag.FlagSet, flags ...string) string {
	for _, n := range flags {
		if fl.Changed(n) {
			return "--" + n + " " + fl.Lookup(n).Value.String()
		}
	}
	return ""
}

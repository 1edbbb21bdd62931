package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/history/histdir"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/local"
)

// consoleFlags are the flags of every interactive console command.
type consoleFlags struct {
	theme    string
	readOnly bool
	ascii    bool
	history  string
}

func (f *consoleFlags) register(cmd *cobra.Command, withReadOnly bool) {
	f.registerLook(cmd)
	registerHistoryFlag(cmd.Flags(), &f.history, "record the node's history into DIR and read the past from it")
	if withReadOnly {
		cmd.Flags().BoolVar(&f.readOnly, "readonly", false, "read-only: no editing or applying action exists")
	}
}

// registerLook adds only the look of the console: a console of no node
// (the fleet's) records no history, so it has no --history.
func (f *consoleFlags) registerLook(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.theme, "theme", "", "theme: "+fmt.Sprint(themes.Names())+", light|dark to override detection, or a theme file")
	fl.BoolVar(&f.ascii, "ascii", false, "draw with 7-bit characters only (terminals without block glyphs)")
}

// uiOptions turns the flags into console options (local.ConsoleOptions:
// one record cache per process). An explicit --theme wins over NO_COLOR;
// without one the console picks mono under NO_COLOR and detects light or
// dark otherwise.
func (f *consoleFlags) uiOptions(node string) (console.Options, error) {
	opts, err := local.ConsoleOptions(node, local.Look{Theme: f.theme, ASCII: f.ascii, ReadOnly: f.readOnly})
	if te := (*local.ThemeError)(nil); errors.As(err, &te) {
		return opts, usageErr("--theme %s: %v", te.Name, te.Err)
	}
	return opts, err //nolint:wrapcheck // nil: a theme is all ConsoleOptions can fail on
}

// runConsoleUI runs the engine and the interactive console on it until the
// user quits or a signal arrives. demo says the node is the demo's, whose
// record is its own (recordNames).
func runConsoleUI(ctx context.Context, eopts engine.Options, uopts console.Options, demo bool) error {
	// SIGHUP too: uncaught, it ended the process on the alternate
	// screen, raw, with the mouse reporting into the shell.
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return local.Run(ctx, local.Options{Engine: eopts, Console: uopts, Actor: agentconfig.LocalOperator(), Stderr: os.Stderr,
		Record: func(ctx context.Context, eng *engine.Engine) func() {
			return startRecording(ctx, eng, uopts.History, eopts.Node, demo, os.Stderr)
		}})
}

func newWatchCmd() *cobra.Command {
	var src sourceFlags
	var cf consoleFlags
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "The console, read-only: no editing or applying action exists",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.readOnly = true
			return consoleOn(cmd.Context(), "fgtop watch", &src, &cf)
		},
	}
	src.register(cmd)
	src.registerLive(cmd)
	// Taken, hidden, changing nothing: the README names watch and
	// --readonly together, and `watch --readonly` was an unknown flag.
	cf.register(cmd, true)
	_ = cmd.Flags().MarkHidden("readonly")
	return cmd
}

// consoleOn opens the console on the node the source flags describe.
func consoleOn(ctx context.Context, name string, src *sourceFlags, cf *consoleFlags) error {
	// The console's own flags first: a --theme typo was said only once
	// the node opened, after "no agent.toml found" had sent the operator
	// to fix that, or the lack of a terminal.
	uopts, err := cf.uiOptions("")
	if err != nil {
		return err
	}
	if err := requireTerminal(name, "fgtop snapshot --json (add --follow for a stream)"); err != nil {
		return err
	}
	eopts, err := src.options()
	if err != nil {
		return err
	}
	defer closeSource(eopts)
	uopts.NodeName = eopts.Node
	if ctx == nil {
		ctx = context.Background()
	}
	onDemo := cf.historyDir(&uopts, eopts, os.Stderr) // before uopts is copied
	return runConsoleUI(ctx, eopts, uopts, onDemo)
}

// historyDir resolves --history into uopts for a console on the node o
// describes, saying on w why nothing is recorded; onDemo: the node's
// files are the demo's (histdir.ForDemoFiles, histdir.DemoFilesWhy).
func (f *consoleFlags) historyDir(uopts *console.Options, o engine.Options, w io.Writer) (onDemo bool) {
	dir, note, onDemo := historyDir(f.history, o)
	if note != "" {
		fmt.Fprintln(w, "fgtop:", note)
	}
	uopts.History, uopts.HistoryOffByEnv = dir, histdir.OffByEnv(f.history)
	if onDemo && note != "" {
		uopts.NoRecordWhy, uopts.Unrecorded = histdir.DemoFilesWhy, histdir.DemoFilesBadge
	}
	return onDemo
}

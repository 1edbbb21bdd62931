// Command fgtop is an operator console for GPU nodes that run Backend.AI
// agents: who holds which share of which GPU, which agent owns which device,
// and how to change that partition safely.
//
// Exit codes: 0 ok, 1 the check found a problem, 2 bad usage or bad input,
// 3 a config written whose --restart-cmd failed.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/internal/buildinfo"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/profiling"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/ui/local"
)

// Exit codes scripts can trust.
const (
	exitOK       = 0
	exitProblem  = 1
	exitBadUsage = 2
	// exitRestartFailed: apply or rollback wrote the config, and
	// --restart-cmd failed: unlike 1, something was written.
	exitRestartFailed = 3
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitBadUsage, err: fmt.Errorf(format, a...)}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	catchSIGPIPE()
	// Everything printed as plain text (reports, JSON, errors) passes
	// through the one rule for outside text: a node name, an HTTP body or
	// a file's bytes quoted in it cannot drive the terminal.
	stdout, stderr := untrusted.NewWriter(os.Stdout), untrusted.NewWriter(os.Stderr)
	if local.IsTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" {
		stdout.AllowRed()
	}
	defer func() { _ = stdout.Flush(); _ = stderr.Flush() }()
	if path := os.Getenv("FGTOP_CPUPROFILE"); path != "" {
		stop, err := profiling.StartCPU(path)
		if err != nil {
			fmt.Fprintln(stderr, "fgtop:", err)
			return exitBadUsage
		}
		defer stop()
	}
	if path := os.Getenv("FGTOP_MEMPROFILE"); path != "" {
		defer func() {
			if err := profiling.WriteHeap(path); err != nil {
				fmt.Fprintln(stderr, "fgtop:", err)
			}
		}()
	}
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if stdoutGone(err) {
		// The reader of stdout went away (`| head -1`): what was asked
		// was printed until it stopped reading, a normal end (as for
		// demo --headless), and a finding keeps its status.
		if errors.As(err, &ee) {
			return ee.code
		}
		return exitOK
	}
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "fgtop:", ee.err)
		}
		return ee.code
	}
	// Cobra's own errors are flag and argument problems.
	fmt.Fprintln(stderr, "fgtop:", cliwords.UnknownCommand(root, err))
	return exitBadUsage
}

var sigpipeOnce sync.Once

// written is the error of printing a command's result, nil where stdout's
// reader went away: the command goes on to its verdict, whose exit status
// a script reads whether or not it read all the output (`simulate ... |
// head -1` exited 0 on a request that could not be placed).
func written(err error) error {
	if stdoutGone(err) {
		return nil
	}
	return err
}

// stdoutGone reports whether err is a write to stdout that failed because
// its reader closed the pipe. Only stdout's: a broken pipe to a peer (an SSH
// session, etcd) is a failure to report.
func stdoutGone(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}

// catchSIGPIPE makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing fgtop, so that `fgtop check | head -1` exits with
// check's status (1 for drift), not the signal's 141 that a script reads as
// a crash. The signal is caught, not ignored: an ignored signal would stay
// ignored in the commands fgtop starts (--restart-cmd, ssh). A command
// that follows (demo --headless) catches it too, and stops on it.
func catchSIGPIPE() {
	sigpipeOnce.Do(func() {
		// Nobody reads ch: being notified is what turns the signal
		// into EPIPE; a full buffer only drops the notice.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}

func newRootCmd() *cobra.Command {
	var src sourceFlags
	var cf consoleFlags
	root := &cobra.Command{
		Use:   "fgtop",
		Short: "Operator console for Backend.AI GPU nodes: live fGPU shares, devices, agents and partitions",
		Long: `fgtop shows, live and exactly, who holds which share of which GPU on a Backend.AI node,
which agent owns which device, and what is wrong. Without a subcommand it opens the console on
this node: the agent config is found where Backend.AI looks for it, or given with --config, or
the kernels are named with --scratch-root. Try it without a node: fgtop demo.

` + exitStatusHelp(96),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return consoleOn(cmd.Context(), "fgtop", &src, &cf)
		},
		// --version prints what `fgtop version` prints.
		Version: strings.TrimSuffix(buildinfo.Read().Text(), "\n"),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// Every subcommand inherits it: flag errors in fgtop's words.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitBadUsage, err: cliwords.FlagError(c, err)}
	})
	src.register(root)
	src.registerLive(root)
	cf.register(root, true)
	root.AddCommand(newWatchCmd())
	root.AddCommand(newSnapshotCmd())
	root.AddCommand(newCheckCmd(), newPlanCmd(), newApplyCmd(), newRollbackCmd())
	root.AddCommand(newSimulateCmd())
	root.AddCommand(newDemoCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newFleetCmd())
	root.AddCommand(newExporterCmd())
	root.AddCommand(newRecordCmd(), newHistoryCmd())
	root.AddCommand(newVersionCmd())
	root.AddCommand(newManCmd())
	// Our own completion command (cobra's default one is added only at
	// Execute, so the manual would not see it), with ids from the node.
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newCompletionCmd())
	registerCompletions(root)
	cliwords.StrictHelp(root, func(err error) error { return &exitError{code: exitBadUsage, err: err} })
	return root
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/screen"
	"github.com/spf13/cobra"
)

// consoleFlags are the flags of every interactive console command.
type consoleFlags struct {
	theme    string
	readOnly bool
	ascii    bool
	history  string
}

func (f *consoleFlags) register(cmd *cobra.Command, withReadOnly bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.theme, "theme", "", "theme: "+fmt.Sprint(themes.Names())+", light|dark to override detection, or a theme file")
	fl.BoolVar(&f.ascii, "ascii", false, "draw with 7-bit characters only (terminals without block glyphs)")
	registerHistoryFlag(fl, &f.history, "record the node's history into DIR and read the past from it")
	if withReadOnly {
		fl.BoolVar(&f.readOnly, "readonly", false, "read-only: no editing or applying action exists")
	}
}

// uiOptions turns the flags into console options. An explicit --theme wins
// over NO_COLOR; without one the console picks mono under NO_COLOR and
// detects light or dark otherwise.
func (f *consoleFlags) uiOptions(node string) (console.Options, error) {
	// One record cache per process: uiOptions is called once by each
	// command that runs consoles, and serve gives these options to every
	// session's console.
	opts := console.Options{ReadOnly: f.readOnly, ASCII: f.ascii, NodeName: node, Records: replay.NewRecordCache(replay.RecordsMax)}
	switch f.theme {
	case "":
	case "light", "dark":
		opts.Background = f.theme
		t, err := themes.Load(f.theme)
		if err != nil {
			return opts, usageErr("--theme %s: %v", f.theme, err)
		}
		opts.Theme = t
	default:
		t, err := themes.Load(f.theme)
		if err != nil {
			return opts, usageErr("--theme %s: %v", f.theme, err)
		}
		opts.Theme = t
	}
	return opts, nil
}

// runConsoleUI runs the engine and the interactive console on it until the
// user quits or a signal arrives.
func runConsoleUI(ctx context.Context, eopts engine.Options, uopts console.Options) error {
	// SIGHUP too: uncaught, it ended the process on the alternate
	// screen, raw, with the mouse reporting into the shell.
	ctx, stop := notifyStop(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng := engine.New(eopts)
	withDesk(&uopts, eopts.ConfigPath, eng)
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	defer startRecording(ctx, eng, uopts.History, os.Stderr)()
	return runProgram(ctx, eng, uopts, errc)
}

// withDesk gives the local console its partition desk (one per process:
// plans are made against the engine's latest snapshot) and its actor: the
// user at the terminal, an operator unless the console is read-only. With
// no agent.toml there is nothing to edit and no desk.
func withDesk(uopts *console.Options, config string, eng *engine.Engine) {
	uopts.Actor = consoleActor(uopts.ReadOnly)
	if config != "" && uopts.Desk == nil {
		uopts.Desk = partition.NewDesk(partition.DeskOptions{Config: config, Snapshot: eng.Latest})
	}
}

// consoleActor is who sits at the local console: the sudo user or the
// login, origin "console".
func consoleActor(readOnly bool) agentconfig.Actor {
	a := cliActor()
	a.Origin = "console"
	if readOnly {
		a.Role = agentconfig.RoleViewer
	}
	return a
}

// runProgram runs the console on a running engine.
func runProgram(ctx context.Context, eng *engine.Engine, uopts console.Options, engineErr <-chan error) error {
	m := console.New(eng.Subscribe(ctx), uopts)
	// The model holds the partition draft while editing: give it back
	// however the program ends.
	defer m.Close()
	p, closeTTY, err := localProgram(ctx, m, eng.AlignPoll)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	defer closeTTY()
	go oneProcAfterScan(ctx, eng.Ready())
	go gcAfterScan(ctx, eng.Ready())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	select {
	case err := <-done:
		if consoleFailed(ctx, err, os.Stderr) {
			return fmt.Errorf("console: %w", err)
		}
		return nil
	case err := <-engineErr:
		p.Kill()
		<-done
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		return nil
	}
}

// consoleFailed reports whether a console's program ended in failure, not
// by quitting or being stopped: a panic (the model's, which Bubble Tea
// reports itself, or drawing's, whose stack is written to stderr here)
// is one, though Bubble Tea calls it killed too.
func consoleFailed(ctx context.Context, err error, stderr io.Writer) bool {
	if dp := (*screen.DrawPanicError)(nil); errors.As(err, &dp) {
		fmt.Fprintf(stderr, "%s\n", dp.Stack)
	}
	return err != nil && (errors.Is(err, tea.ErrProgramPanic) || !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil)
}

// localProgram is the program of a console on this process's terminal,
// drawn when what it shows changed (package screen); done closes the
// terminal it opened, once the program ended. ctx must end on SIGINT and
// SIGTERM (notifyStop): Bubble Tea's own handler of them is off, since
// with both, a signal could end ctx first, and Bubble Tea's handler then
// waited for ever to send its QuitMsg to the loop that had ended, and its
// shutdown for that handler, so the terminal was never restored.
//
// started, when set, is told when the program started (screen.Options):
// the console puts the engine's inventory poll on that phase.
func localProgram(ctx context.Context, m tea.Model, started func(time.Time)) (p *screen.Program, done func(), err error) {
	o, done, err := screen.Local()
	if err != nil {
		return nil, nil, err //nolint:wrapcheck // screen's words
	}
	o.Started = started
	return screen.NewProgram(m, o, tea.WithContext(ctx), tea.WithoutSignalHandler()), done, nil
}

// oneProcAfterScan lets the console run on one P once the engine's first
// scan, which reads the scratch roots on every core, is done. With a
// second P each wake-up of the console (a poll, the clock, a frame) also
// sets an idle thread spinning for work, which measured about a fifth of
// an idle console's CPU when it still woke 20 times a second for Bubble
// Tea's renderer (bench/idlecpu.sh: 0.41-0.49 % of a core with one P,
// 0.57-0.59 % with two, in the same runs). A change of a file costs the engine well under a
// millisecond and a frame under 2 ms, so one P keeps up. A GOMAXPROCS the
// user set is left alone.
func oneProcAfterScan(ctx context.Context, ready <-chan struct{}) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	select {
	case <-ready:
		runtime.GOMAXPROCS(1)
	case <-ctx.Done():
	}
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
			if err := requireTerminal("fgtop watch", "fgtop snapshot --json (add --follow for a stream)"); err != nil {
				return err
			}
			return consoleOn(cmd.Context(), &src, &cf)
		},
	}
	src.register(cmd)
	src.registerLive(cmd)
	cf.register(cmd, false)
	return cmd
}

// consoleOn opens the console on the node the source flags describe.
func consoleOn(ctx context.Context, src *sourceFlags, cf *consoleFlags) error {
	eopts, err := src.options()
	if err != nil {
		return err
	}
	defer closeSource(eopts)
	uopts, err := cf.uiOptions(eopts.Node)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	uopts.History = cf.historyDir(os.Stderr)
	return runConsoleUI(ctx, eopts, uopts)
}

// historyDir resolves --history for a console, with the note on w when
// nothing is recorded.
func (f *consoleFlags) historyDir(w io.Writer) string {
	dir, note := historyDir(f.history)
	if note != "" {
		fmt.Fprintln(w, "fgtop:", note)
	}
	return dir
}

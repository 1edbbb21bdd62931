// Package local runs fgtop's consoles on this process's terminal, as
// package ssh runs them for SSH sessions: the node console on an engine it
// starts (Run), any other model (the fleet's) on the terminal (Program),
// and the options every console of one process shares (ConsoleOptions).
// cmd/fgtop parses the flags, handles the signals and prints; the rest of
// running a console is here.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/screen"
)

// Look is how the command line asks for consoles to be drawn.
type Look struct {
	// Theme is a built-in theme's name or a theme file; "light" and
	// "dark" also override the terminal's detected background; empty
	// leaves the console to pick (mono under NO_COLOR, else detected).
	Theme    string
	ASCII    bool
	ReadOnly bool
}

// ThemeError is a theme that could not be loaded.
type ThemeError struct {
	Name string
	Err  error
}

func (e *ThemeError) Error() string { return fmt.Sprintf("theme %s: %v", e.Name, e.Err) }
func (e *ThemeError) Unwrap() error { return e.Err }

// ConsoleOptions are the options of the consoles of one process on the
// node named node: the look, and one record cache for the whole process
// (serve gives these options to every session's console, so they share one
// read of the record). Its only error is a *ThemeError.
func ConsoleOptions(node string, l Look) (console.Options, error) {
	o := console.Options{ReadOnly: l.ReadOnly, ASCII: l.ASCII, NodeName: node, Records: replay.NewRecordCache(replay.RecordsMax)}
	if l.Theme == "" {
		return o, nil
	}
	t, err := themes.Load(l.Theme)
	if err != nil {
		return o, &ThemeError{Name: l.Theme, Err: err}
	}
	if l.Theme == "light" || l.Theme == "dark" {
		o.Background = l.Theme
	}
	o.Theme = t
	return o, nil
}

// Options say what Run runs.
type Options struct {
	// Engine is the engine's options; Run starts the engine.
	Engine engine.Options
	// Console is the console's options (ConsoleOptions', with what the
	// command adds); Run gives it a desk and an actor.
	Console console.Options
	// Actor is who sits at the terminal; the console acts as them from
	// "console", as a viewer where it is read-only.
	Actor agentconfig.Actor
	// Record, if set, starts recording the engine's snapshots and
	// returns what stops it; Run calls the stop before it returns.
	Record func(ctx context.Context, eng *engine.Engine) (stop func())
	// Stderr is where a drawing panic's stack goes; nil is os.Stderr.
	Stderr io.Writer
}

// Run starts the engine and runs the console on it on this terminal until
// the user quits, ctx ends (the caller ends it on SIGINT, SIGTERM and
// SIGHUP: Bubble Tea's own signal handler is off, see Program) or the
// engine fails.
func Run(ctx context.Context, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	eng := engine.New(o.Engine)
	o.Console.Actor = consoleActor(o.Actor, o.Console.ReadOnly)
	if o.Engine.ConfigPath != "" && o.Console.Desk == nil {
		// One desk per process: plans are made against the engine's latest
		// snapshot. With no agent.toml there is nothing to edit.
		o.Console.Desk = partition.NewDesk(partition.DeskOptions{Config: o.Engine.ConfigPath, Snapshot: eng.Latest})
	}
	engineErr := make(chan error, 1)
	go func() { engineErr <- eng.Run(ctx) }()
	if o.Record != nil {
		defer o.Record(ctx, eng)()
	}
	return run(ctx, eng, o, engineErr)
}

// consoleActor is who acts through the local console: the person at the
// terminal, from "console", a viewer where the console is read-only.
func consoleActor(a agentconfig.Actor, readOnly bool) agentconfig.Actor {
	a.Origin = "console"
	if readOnly {
		a.Role = agentconfig.RoleViewer
	}
	return a
}

// run runs the console on a running engine.
func run(ctx context.Context, eng *engine.Engine, o Options, engineErr <-chan error) error {
	m := console.New(eng.Subscribe(ctx), o.Console)
	// The model holds the partition draft while editing: give it back
	// however the program ends.
	defer m.Close()
	p, closeTTY, err := Program(ctx, m, eng.AlignPoll)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	defer closeTTY()
	go governProcs(ctx, eng.Ready(), eng.Subscribe(ctx), runtime.GOMAXPROCS)
	go gcAfterScan(ctx, eng.Ready())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	select {
	case err := <-done:
		if Failed(ctx, err, o.Stderr) {
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

// Failed reports whether a console's program ended in failure, not by
// quitting or being stopped: a panic (the model's, which Bubble Tea
// reports itself, or drawing's, whose stack is written to stderr here) is
// one, though Bubble Tea calls it killed too.
func Failed(ctx context.Context, err error, stderr io.Writer) bool {
	if dp := (*screen.DrawPanicError)(nil); errors.As(err, &dp) {
		fmt.Fprintf(stderr, "%s\n", dp.Stack)
	}
	return err != nil && (errors.Is(err, tea.ErrProgramPanic) || !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil)
}

// Program is the program of a console on this process's terminal, drawn
// when what it shows changed (package screen); done closes the terminal it
// opened, once the program ended. ctx must end on SIGINT and SIGTERM:
// Bubble Tea's own handler of them is off, since with both, a signal could
// end ctx first, and Bubble Tea's handler then waited for ever to send its
// QuitMsg to the loop that had ended, and its shutdown for that handler,
// so the terminal was never restored.
//
// started, when set, is told when the program started (screen.Options):
// the local console puts the engine's inventory poll on that phase.
func Program(ctx context.Context, m tea.Model, started func(time.Time)) (p *screen.Program, done func(), err error) {
	o, done, err := screen.Local()
	if err != nil {
		return nil, nil, err //nolint:wrapcheck // screen's words
	}
	o.Started = started
	return screen.NewProgram(m, o, tea.WithContext(ctx), tea.WithoutSignalHandler()), done, nil
}

// gcAfterScan lowers the collector's growth target to gcPercentAtRest once
// the engine's first scan is done (the scan allocates the most, and keeps
// the default). A console at rest allocates a few hundred KB a second, and
// with GOGC 100 its heap grew to twice the live one between collections:
// on four idle fake GPUs (issue 29) the anonymous RSS went from 13.8-13.9
// MB to 12.1-12.2 MB, where a collection of its 4 MB live heap costs well
// under a millisecond every several seconds. Measured again at rest on the
// same four fake GPUs at 160x48 (two 120 s windows, the two settings side
// by side in the same windows): GOGC 50 took 0.257 and 0.270 % of a core
// at 42.2-42.6 MB RSS, GOGC 100 0.244 and 0.301 % at 43.9-44.4 MB: the
// CPU is the same within the windows' noise and 50 keeps 1.7 MB less, so
// 50 stays. A GOGC or GOMEMLIMIT in the environment wins: then nothing is
// changed.
func gcAfterScan(ctx context.Context, ready <-chan struct{}) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	select {
	case <-ready:
		debug.SetGCPercent(gcPercentAtRest)
	case <-ctx.Done():
	}
}

// gcPercentAtRest is the console's GOGC once its first scan is done.
const gcPercentAtRest = 50

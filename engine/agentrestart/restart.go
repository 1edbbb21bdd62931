// Package agentrestart restarts the agent after agent.toml was written, with
// the operator's command (apply and rollback's --restart-cmd), within a
// time limit: the agent reads the file only at start-up, and a hung
// `systemctl restart` would hold the operator's terminal with the file
// already written.
package agentrestart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/agentproc"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/internal/shjob"
	"github.com/fgtop/fgtop/model"
)

// Grace is how long a restart command stopped at its timeout may take to
// end before it and its process group are killed.
const Grace = 5 * time.Second

// Options say what to run and where its output goes.
type Options struct {
	// Cmd is run with sh -c; "" runs nothing and says a restart is needed.
	Cmd string
	// Timeout stops Cmd (and whatever it started); it must be positive.
	Timeout time.Duration
	Stdin   io.Reader
	// Stdout gets fgtop's words and the command's output; Stderr the
	// command's errors.
	Stdout, Stderr io.Writer
	// Config is the file written: with no Cmd, agents that run it as it
	// is (a rollback to the version they started with: agentproc's
	// FileStatus) need no restart, and are not told to.
	Config string
	// Status is what the agents of Config run now (nil: agentproc's
	// FileStatus with the agent's own search paths).
	Status func() model.Restart
}

// Run says a restart is needed when o.Cmd is "", or runs it with its
// output shown, within o.Timeout; ctx ending (SIGINT, SIGTERM) stops it
// too. An error is always a restart that failed after the config was
// written, in words that say so and what the operator is to do.
func Run(ctx context.Context, o Options) error {
	if o.Cmd == "" {
		if o.Status == nil && o.Config != "" {
			f := &agentproc.Finder{SearchPaths: agentconfig.SearchPaths()}
			o.Status = func() model.Restart { return f.FileStatus(o.Config) }
		}
		var st model.Restart
		if o.Status != nil {
			if st = o.Status(); st.State == model.RestartCurrent {
				fmt.Fprintln(o.Stdout, "no restart needed: "+st.Detail)
				return nil
			}
		}
		fmt.Fprintln(o.Stdout, partition.RestartNeeded)
		// Which process runs what, and after a rollback why the journal
		// did not clear it: the operator who rolled back is otherwise
		// told to restart with no reason.
		if st.State == model.RestartPending && st.Detail != "" {
			fmt.Fprintln(o.Stdout, "  "+st.Detail)
		}
		return nil
	}
	fmt.Fprintf(o.Stdout, "running restart command: %s\n", o.Cmd)
	err := shjob.Run(ctx, shjob.Options{Cmd: o.Cmd, Timeout: o.Timeout, Grace: Grace,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr})
	switch {
	case errors.Is(err, shjob.ErrTimeout):
		return fmt.Errorf("the config is written, but the restart command did not finish within %s (--restart-timeout) and was stopped: restart the agent yourself", o.Timeout)
	case errors.Is(err, shjob.ErrStopped):
		return errors.New("the config is written, but the restart command was stopped by a signal: restart the agent yourself")
	case err != nil:
		return fmt.Errorf("the config is written, but the restart command failed: %w", err)
	}
	fmt.Fprintln(o.Stdout, "restart command finished")
	return nil
}

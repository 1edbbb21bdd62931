package demo

import (
	"context"
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
)

// RestartSaid restarts the agents whose restart is pending (Restart) and
// says which, as the console's R reports it (RestartedText).
func (n *Node) RestartSaid() (string, error) {
	ids, err := n.Restart()
	return RestartedText(ids), err
}

// Until is ctx, also done once the node's simulated agents stop (Done):
// what shows the node ends with it. Call cancel when done.
func (n *Node) Until(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-n.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// RestartAfter restarts the agents whose restart has been pending for
// after (--restart-after) until ctx is done or the node stops, and says
// through say which it restarted, or why it could not.
func (n *Node) RestartAfter(ctx context.Context, after time.Duration, say func(string)) {
	t := time.NewTicker(max(min(after/4, time.Second), 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.Done():
			return
		case <-t.C:
		}
		since := n.PendingSince()
		if since.IsZero() || time.Since(since) < after {
			continue
		}
		text, err := n.RestartSaid()
		if err != nil {
			say(err.Error())
			continue
		}
		say(text)
	}
}

// RunOptions say what Run runs.
type RunOptions struct {
	// Options are the node's; OnAction is Run's while Say is set.
	Options Options
	// RestartAfterSet restarts the changed agents RestartAfter after a
	// change (Node.RestartAfter).
	RestartAfter    time.Duration
	RestartAfterSet bool
	// Say, if set, is told what a watcher without a console should know:
	// each kernel an agent's allocator refused, each restart.
	Say func(string)
	// Show shows the node until ctx is done or the viewer ends; ctx ends
	// too when the node's simulated agents stop (Until).
	Show func(ctx context.Context, n *Node) error
}

// Run starts the demo node, shows it (o.Show) and removes its files on
// every path: fgtop demo, less its flags and signals. A ctx that ends
// during the warm-up is no error; an error of the simulated agents is
// Run's when the node was shown without one.
func Run(ctx context.Context, o RunOptions) (err error) {
	opts := o.Options
	if o.Say != nil {
		opts.OnAction = func(a Action) {
			if a.Kind == ActFail {
				o.Say(a.String())
			}
		}
	}
	n, err := Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped during the warm-up; Start removed the files.
			return nil
		}
		return err
	}
	defer func() {
		if cerr := n.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if o.RestartAfterSet {
		go n.RestartAfter(ctx, o.RestartAfter, func(text string) {
			if o.Say != nil {
				o.Say(text)
			}
		})
	}
	showCtx, cancel := n.Until(ctx)
	defer cancel()
	if err := o.Show(showCtx, n); err != nil {
		return err
	}
	return n.Err()
}

// WriteSnapshots writes every snapshot an engine on the node publishes
// (engine.FollowSnapshots, kernels idle after idleAfter) to w as one
// fgtop.snapshot/v1 NDJSON line, until ctx is done: fgtop demo
// --headless. A reader that went away (`fgtop demo --headless | head`,
// EPIPE) is a normal end.
func (n *Node) WriteSnapshots(ctx context.Context, idleAfter time.Duration, w io.Writer) error {
	opts := n.EngineOptions()
	opts.IdleAfter = idleAfter
	err := engine.FollowSnapshots(ctx, opts, func(s *model.Snapshot) error {
		b, err := report.Marshal(report.FromSnapshot(s), false)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}, nil, nil)
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// DefaultIdleAfter is how long a demo kernel holds a GPU at 0 % before it
// is marked holding but idle (engine.Options.IdleAfter), unless asked
// otherwise: its kernels live seconds to a minute, so the engine's 10
// minutes would never show the mark.
const DefaultIdleAfter = 30 * time.Second

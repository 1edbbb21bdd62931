// Package recording keeps a running engine's snapshots in a history
// directory: on the side of a console, serve or exporter (Start), or as
// the whole of `fgtop record` (Run).
package recording

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histdir"
	"github.com/fgtop/fgtop/model"
)

// ScannedWait bounds how long a recorder waits for the engine's first
// full reading before it records what there is.
const ScannedWait = 10 * time.Second

// subscribeScanned subscribes to eng once every scratch root has been
// scanned (eng.Ready), or after ScannedWait. The engine publishes as the
// device inventory and each root come in; a record whose first checkpoint
// is such a partial snapshot has every kernel already running "begin" a
// moment after the record did: history showed them without "<" (held
// since at least then) and a replay counted none as running at the start.
func subscribeScanned(ctx context.Context, eng *engine.Engine) <-chan *model.Snapshot {
	t := time.NewTimer(ScannedWait)
	defer t.Stop()
	select {
	case <-eng.Ready():
	case <-ctx.Done():
	case <-t.C:
	}
	return eng.Subscribe(ctx)
}

// Start records eng's snapshots into dir until ctx is done or the
// returned function is called, which waits for the last write. names are
// the names the node's snapshots go by (history.Options.Names); vouch says
// the engine reads a real node, whose kernels (under eng's scratch roots)
// the record may vouch for.
//
// Recording is on the side: what keeps it from recording (another process
// writing the directory, which this one then only reads; a directory
// holding another node's record; any other error) is said on stderr and
// the command goes on without it: say says it, a line without fgtop's
// prefix. "" or "off" records nothing.
func Start(ctx context.Context, eng *engine.Engine, dir string, names []string, vouch bool, say func(line string)) func() {
	if dir == "" || dir == histdir.Off {
		return func() {}
	}
	rec, err := history.Open(history.Options{Dir: dir, Names: names, KernelsVouch: vouch, Roots: eng.RootPaths(), Logf: func(format string, a ...any) {
		say(fmt.Sprintf(format, a...))
	}})
	if err != nil {
		say(refusal(err))
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.Run(ctx, subscribeScanned(ctx, eng))
	}()
	return func() {
		cancel()
		<-done
	}
}

// refusal is the line Start says when it cannot open the record.
func refusal(err error) string {
	switch {
	case errors.Is(err, history.ErrOtherNode):
		return fmt.Sprintf("not recording: %v", err)
	case errors.Is(err, history.ErrLocked):
		return fmt.Sprintf("%v; not recording, the other one does", err)
	}
	return fmt.Sprintf("history off: %v", err)
}

// Record is the whole of `fgtop record`: it opens o's record, then runs
// an engine on eopts and records its snapshots until ctx is done or the
// engine fails; started is called once the engine runs, before the first
// record. An error opening the record is history.Open's (history.ErrLocked:
// another process writes it; history.ErrOtherNode); the engine's is
// "engine: ...". It returns once the last write is done, nil when it
// stopped with ctx. o.Roots, when nil, are eopts' scratch roots: the
// kernels that may vouch for the record are this node's.
func Record(ctx context.Context, eopts engine.Options, o history.Options, started func()) error {
	if o.Roots == nil {
		for _, r := range eopts.Roots {
			o.Roots = append(o.Roots, r.Path)
		}
	}
	rec, err := history.Open(o)
	if err != nil {
		return err
	}
	return run(ctx, engine.New(eopts), rec, started)
}

// run runs eng and records its snapshots with rec (Record).
func run(ctx context.Context, eng *engine.Engine, rec *history.Recorder, started func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	started()
	recErr := make(chan error, 1)
	go func() { recErr <- rec.Run(ctx, subscribeScanned(ctx, eng)) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	<-recErr
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}

package engine

import (
	"context"
	"time"

	"github.com/fgtop/fgtop/model"
)

// FollowSnapshots runs a live engine on opts and calls emit with the node
// once every root's initial scan is published, then with each snapshot
// the engine publishes after that, in order and never one twice; with a
// non-nil tick it calls beat on every tick. Nothing is emitted before the
// initial scan: the first snapshot is the node as it is, not a partial
// scan. It returns nil when ctx ends, the error of emit or beat as soon as
// one fails, or Run's error when the engine stops by itself.
func FollowSnapshots(ctx context.Context, opts Options, emit func(*model.Snapshot) error, tick <-chan time.Time, beat func(time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng := New(opts)
	errc := make(chan error, 1)
	go func() { errc <- eng.Run(ctx) }()
	sub := eng.Subscribe(ctx)
	ready := eng.Ready()
	var done uint64 // the last sequence number emitted
	for {
		select {
		case err := <-errc:
			return err
		case <-ready:
			ready = nil
			if s := eng.Latest(); s != nil {
				done = s.Seq
				if err := emit(s); err != nil {
					return err
				}
			}
		case s, ok := <-sub:
			if !ok {
				return nil
			}
			if ready != nil || s.Seq <= done {
				continue
			}
			done = s.Seq
			if err := emit(s); err != nil {
				return err
			}
		case now := <-tick:
			if err := beat(now); err != nil {
				return err
			}
		}
	}
}

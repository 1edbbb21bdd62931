package engine

import (
	"context"
	"io"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
)

// FollowForm runs the live engine and writes to w one JSON line in form
// (report.Follower) per real change of what the form shows (the
// snapshot's sequence number and time aside), nothing while nothing
// changes, and with heartbeat > 0 a marked heartbeat line after that long
// without one, so that a reader can tell a quiet node from a dead pipe.
func FollowForm(ctx context.Context, opts Options, w io.Writer, form string, heartbeat time.Duration) error {
	f := report.Follower{Form: form}
	var tick <-chan time.Time
	var hb *time.Ticker
	if heartbeat > 0 {
		hb = time.NewTicker(heartbeat)
		defer hb.Stop()
		tick = hb.C
	}
	emit := func(s *model.Snapshot) error {
		b, err := f.Line(s)
		if err != nil || b == nil {
			return err
		}
		if hb != nil {
			hb.Reset(heartbeat)
		}
		_, err = w.Write(b)
		return err
	}
	beat := func(now time.Time) error {
		b, err := f.Heartbeat(now)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return FollowSnapshots(ctx, opts, emit, tick, beat)
}

package local

import (
	"context"
	"os"

	"github.com/fgtop/fgtop/model"
)

// busyProcs is the most Ps the console runs on while what it shows
// changes: one for the program's loop and the keys, one for the engine,
// the recorder and the demo's agents beside it.
const busyProcs = 2

// quietPolls is how many snapshots of one content in a row (at rest, one
// a poll) take the console back to one P.
const quietPolls = 5

// governProcs runs the console on one P at rest and on two while the
// engine's snapshots change, from the end of the engine's first scan
// (which reads the scratch roots on every core) until ctx ends; set is
// runtime.GOMAXPROCS.
//
// One P at rest: with a second, each wake-up of the console (a poll, the
// clock, a frame) also set an idle thread spinning for work, about a
// fifth of an idle console's CPU when it still woke 20 times a second
// (bench/idlecpu.sh: 0.41-0.49 % of a core with one P, 0.57-0.59 % with
// two, in the same runs). Two while it changes: on one P a key pressed
// while the engine, the recorder or the demo's agents ran waited for the
// scheduler to take the P from them (up to its 10 ms slice, more than
// once), so a key's frame took 20-22 ms at p99 under the demo's churn,
// against 3.9-4.4 ms on two Ps in the same runs (bench/keylat.sh,
// BENCHMARKS.md). A content that changes at once takes the second P; five
// snapshots of one content in a row give it back. A machine with one
// core, or a GOMAXPROCS the user set, is left alone.
func governProcs(ctx context.Context, ready <-chan struct{}, snaps <-chan *model.Snapshot, set func(int) int) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	busy := min(set(1), busyProcs)
	if busy < 2 {
		return
	}
	var last *model.Snapshot
	procs, same := 1, 0
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-snaps:
			if !ok {
				return
			}
			switch {
			case last == nil:
			case !s.SameContent(last):
				same = 0
				if procs == 1 {
					procs = busy
					set(procs)
				}
			default:
				same++
				if procs > 1 && same >= quietPolls {
					procs = 1
					set(procs)
				}
			}
			last = s
		}
	}
}

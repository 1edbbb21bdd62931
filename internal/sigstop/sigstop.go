// Package sigstop ends a long-running command on a signal and makes
// sure the process then exits: a command that stops gracefully (closing
// its sessions, restoring the terminal, removing its files) gets a
// deadline, and a person asking twice gets an exit at once.
package sigstop

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// SameSignal is how soon after the first a signal that is the same one
// again counts as that one: GNU timeout sends its signal to the child and
// then to the child's process group, microseconds apart, and taking that
// for a person asking twice skipped the cleanup (fgtop-demo-* directories
// were left in /tmp). A person pressing Ctrl-C twice is seconds apart.
const SameSignal = 500 * time.Millisecond

// Notify is signal.NotifyContext for a long-running command: ctx ends at
// the first of sigs (the command then stops and returns as it does), and
// from then on exit is called within after, whatever the command still
// waits for (at once on a second signal, unless it is the first one again
// within SameSignal), with 128 plus the signal's number, as a shell
// reports a killed process; why is said as a line (without a program's
// prefix: the caller's say adds its own). The stop function
// releases the signals; once one came, the deadline stands even after
// stop.
func Notify(ctx context.Context, say func(line string), after time.Duration, exit func(int), sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	var signalled atomic.Bool
	go func() {
		var sig os.Signal
		select {
		case sig = <-ch:
		case <-done:
			return
		}
		first := time.Now()
		signalled.Store(true)
		cancel()
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		timer := time.NewTimer(after)
		defer timer.Stop()
		for {
			select {
			case <-timer.C:
				say(fmt.Sprintf("%s: not stopped after %s: exiting now", sig, after))
			case again := <-ch:
				if again == syscall.SIGPIPE {
					// Every write to a closed pipe raises it: not a
					// person asking twice.
					continue
				}
				if again == sig && time.Since(first) < SameSignal {
					continue
				}
				say(fmt.Sprintf("%s again: exiting now", again))
			}
			break
		}
		exit(code)
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			if signalled.Load() {
				// The deadline runs on: the process is on its way out.
				cancel()
				return
			}
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

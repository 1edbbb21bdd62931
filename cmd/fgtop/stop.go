package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// forceAfter is how long a command that stops on a signal gets to stop
// gracefully (close its sessions, restore the terminal, remove its
// files) before the process exits anyway: issue 23's serve and fleet
// ignored SIGTERM for good while a peer held them.
const forceAfter = 3 * time.Second

// sameSignal is how soon after the first a signal that is the same one
// again counts as that one: GNU timeout sends its signal to the child and
// then to the child's process group, microseconds apart, and taking that
// for a person asking twice skipped the cleanup (fgtop-demo-* directories
// were left in /tmp). A person pressing Ctrl-C twice is seconds apart.
const sameSignal = 500 * time.Millisecond

// notifyStop is signal.NotifyContext for a long-running command: ctx ends
// at the first of sigs (the command then stops and returns as it does,
// 0 when all went well), and from then on the process exits within
// forceAfter whatever the command still waits for (at once on a second
// signal, unless it is the first one again within sameSignal), with 128
// plus the signal's number, as a shell reports a killed process. The stop
// function releases the signals; once one came, the deadline stands even
// after stop.
func notifyStop(ctx context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	return notifyStopTo(ctx, os.Stderr, forceAfter, os.Exit, sigs...)
}

// notifyStopTo is notifyStop with its output, deadline and exit in
// arguments, for tests.
func notifyStopTo(ctx context.Context, stderr io.Writer, after time.Duration, exit func(int), sigs ...os.Signal) (context.Context, context.CancelFunc) {
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
				fmt.Fprintf(stderr, "fgtop: %s: not stopped after %s: exiting now\n", sig, after)
			case again := <-ch:
				if again == syscall.SIGPIPE {
					// Every write to a closed pipe raises it: not a
					// person asking twice.
					continue
				}
				if again == sig && time.Since(first) < sameSignal {
					continue
				}
				fmt.Fprintf(stderr, "fgtop: %s again: exiting now\n", again)
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

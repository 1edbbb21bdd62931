package main

import (
	"context"
	"os"
	"time"

	"github.com/fgtop/fgtop/internal/sigstop"
)

// forceAfter is how long a command that stops on a signal gets to stop
// gracefully (close its sessions, restore the terminal, remove its
// files) before the process exits anyway: issue 23's serve and fleet
// ignored SIGTERM for good while a peer held them.
const forceAfter = 3 * time.Second

// notifyStop is signal.NotifyContext for a long-running command
// (sigstop.Notify): ctx ends at the first of sigs, and from then on the
// process exits within forceAfter whatever the command still waits for,
// with 128 plus the signal's number.
func notifyStop(ctx context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	return sigstop.Notify(ctx, sayOn(os.Stderr), forceAfter, os.Exit, sigs...)
}

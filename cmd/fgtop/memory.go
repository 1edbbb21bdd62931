package main

import (
	"context"
	"os"
	"runtime/debug"
)

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

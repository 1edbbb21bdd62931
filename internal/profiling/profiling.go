// Package profiling writes the CPU and heap profiles fgtop takes of
// itself when asked (FGTOP_CPUPROFILE, FGTOP_MEMPROFILE,
// FGTOP_SERVE_MEMPROFILE): how the figures in BENCHMARKS.md are taken
// apart.
package profiling

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
)

// WriteHeap writes a heap profile to path, after a collection, so it
// shows what stays live (go tool pprof -sample_index=inuse_space -top).
// A path ending in .txt gets the runtime's debug=1 form, whose
// "# runtime.MemStats" lines give the heap in use, reserved and stacks.
func WriteHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	runtime.GC()
	debugForm := 0
	if strings.HasSuffix(path, ".txt") {
		debugForm = 1
	}
	if err := pprof.Lookup("heap").WriteTo(f, debugForm); err != nil {
		f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return nil
}

// StartCPU writes a CPU profile of the rest of the run to path until the
// returned function is called (go tool pprof -top).
func StartCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

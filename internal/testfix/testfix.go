// Package testfix is shared by the tests and benchmarks of every package:
// it finds the shared fixtures (../shared/fixtures beside the module root,
// where Backend.AI's own results are kept) and reports CPU time next to wall
// time in benchmarks. Nothing outside _test.go files imports it.
package testfix

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Path returns ../shared/fixtures/<parts...> beside the module root (the
// directory holding go.mod, found upwards from the working directory), or
// an error when there is no module root or no such fixture.
func Path(parts ...string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
	p := filepath.Join(append([]string{dir, "..", "shared", "fixtures"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("shared fixture: %w", err)
	}
	return p, nil
}

// Dir is Path for a test: it fails the test when the fixture is missing.
func Dir(t testing.TB, parts ...string) string {
	t.Helper()
	p, err := Path(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CPUClock reports the process's CPU time per operation as "cpu-ns/op"
// next to the wall-clock ns/op: on a shared, loaded machine the wall time
// includes waiting for a core, the CPU time does not. Call the returned
// function after the loop.
func CPUClock(b *testing.B) func() {
	start := cpuNow()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuNow()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

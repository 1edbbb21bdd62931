//go:build linux

package scratch

import "testing"

// forceOpenatChain makes reads use the openat chain instead of openat2 until
// the test ends, and reports whether there is such a fallback here.
func forceOpenatChain(t *testing.T) bool {
	prev := openat2Off.Load()
	openat2Off.Store(true)
	t.Cleanup(func() { openat2Off.Store(prev) })
	return true
}

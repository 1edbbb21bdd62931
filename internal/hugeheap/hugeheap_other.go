//go:build !linux

package hugeheap

// prepare does nothing: the platform has no advice for huge pages the
// query could give.
func prepare(n int64) (beg, end uintptr, err error) { return 0, 0, nil }

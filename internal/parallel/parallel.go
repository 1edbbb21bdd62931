// Package parallel splits work into parts run at once: the one-shot
// queries (snapshot --at, history) spend most of their time on work that
// cuts cleanly into parts, one per processor.
package parallel

import (
	"runtime"
	"sync"
)

// Parts is how many parts to cut n items into: 1 below threshold items
// (a part costs a goroutine and a merge), else one per processor the Go
// runtime may use, at most max.
func Parts(n, threshold, max int) int {
	if n < threshold {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), max)
}

// Start runs f(1) ... f(parts-1) each on its own goroutine and returns a
// function that waits for them. The caller runs part 0 itself, and may do
// other work meanwhile, then waits.
func Start(parts int, f func(p int)) (wait func()) {
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(p)
		}()
	}
	return wg.Wait
}

//go:build race

package fleet

// raceOn says the race detector is on: it slows the allocator about
// twentyfold, so the tests that time the summary do not judge its speed.
const raceOn = true

//go:build race

package screen

// raceOn: the race detector slows every frame several times over, so
// timings are logged, not judged.
const raceOn = true

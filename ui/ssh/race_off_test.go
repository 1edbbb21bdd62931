//go:build !race

package sshserve

// raceDetector is true in a -race build, whose console draws several
// times slower.
const raceDetector = false

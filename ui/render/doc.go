// Package render derives, once per adopted snapshot, what fgtop's screens
// show: device rows (allocation, owner, telemetry), kernel rows, agent
// blocks, issues and host summaries, the widths their columns need, the
// kernels' looks, and the kernel filter (/type:batch, !x). It reads only
// the engine's immutable model.Snapshot and memoises per immutable kernel
// and device usage (cache.go). It draws nothing: the screens lay its rows
// out with the kit.
package render

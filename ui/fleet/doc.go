// Package fleet is fgtop's fleet screen: one row per node (state, free
// and largest placeable shares, pieces, held, kernels, issues, last seen)
// from the engine's fleet.Fleet values, sorted, filtered, with :fit to ask
// which nodes could place a request. Enter opens a node's console
// (package console) read-only over the table; esc goes back. The fleet is
// read-only: its key map (fleet_keys.go) has no binding that changes a
// node.
package fleet

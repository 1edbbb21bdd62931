// Package model holds fgtop's domain values and nothing that does I/O:
// exact decimals with Python's semantics, binary sizes, slot names and
// types, devices, kernels, agents, issues and the Snapshot.
package model

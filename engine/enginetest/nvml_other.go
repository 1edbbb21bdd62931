//go:build !cgo || !linux

package enginetest

// NVMLScenarios are the fault scenarios that need go-nvml's mocks: none
// without cgo on Linux.
func NVMLScenarios() []Scenario { return nil }

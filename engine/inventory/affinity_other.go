//go:build !linux

package inventory

// schedAffinity has no portable equivalent off Linux: nil means every
// online CPU.
func schedAffinity() ([]int, error) { return nil, nil }

//go:build linux

package inventory

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// schedAffinity returns the CPUs in the calling thread's affinity mask, which
// for a Go program is the process's mask. unix.CPUSet holds 1024 CPUs; a
// larger machine gets EINVAL and falls back to every online CPU.
func schedAffinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	out := make([]int, 0, set.Count())
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

//go:build cgo && linux

package engine_test

import (
	"testing"

	"github.com/fgtop/fgtop/engine/enginetest"
)

// TestFaultsNVML: a GPU that NVML reports lost mid-run (go-nvml's dgxa100
// mock); see enginetest.GPULost.
func TestFaultsNVML(t *testing.T) {
	for _, sc := range enginetest.NVMLScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if phases := sc.Run(t); len(phases) < 2 {
				t.Fatalf("%d phases", len(phases))
			}
		})
	}
}

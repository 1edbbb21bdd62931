//go:build cgo && linux

package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// NVMLScenarios are the fault scenarios that need go-nvml's mocks (cgo on
// Linux).
func NVMLScenarios() []Scenario {
	return []Scenario{{Name: "nvml-gpu-lost", Run: GPULost}}
}

// LostGPU is the index of the GPU GPULost loses.
const LostGPU = 3

// GPULost runs the engine on go-nvml's dgxa100 mock (eight A100s, fGPU
// shares) with telemetry on every GPU, then makes GPU 3 answer
// ERROR_GPU_IS_LOST to every call. That GPU must show as lost with an
// error issue naming it, the other seven keep their telemetry, the kernels
// on the lost GPU keep counting, and changes made afterwards are still
// accounted exactly.
func GPULost(t *testing.T) []Phase {
	srv := dgxa100.New()
	var lost atomic.Bool
	ids := make([]model.DeviceID, len(srv.Devices))
	for i, d := range srv.Devices {
		dev := d.(*dgxa100.Device)
		ids[i] = model.DeviceID(dev.UUID)
		gone := func() bool { return i == LostGPU && lost.Load() }
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			if gone() {
				return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
			}
			return nvml.Memory{Total: 40 << 30, Used: uint64(i+1) << 30, Free: uint64(39-i) << 30}, nvml.SUCCESS
		}
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			if gone() {
				return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
			}
			return nvml.Utilization{Gpu: uint32(10 + 10*i), Memory: 5}, nvml.SUCCESS
		}
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
			if gone() {
				return 0, nvml.ERROR_GPU_IS_LOST
			}
			return uint32(40 + i), nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			if gone() {
				return 0, nvml.ERROR_GPU_IS_LOST
			}
			return uint32(100_000 + 10_000*i), nvml.SUCCESS
		}
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	}
	dir := t.TempDir()
	src := inventory.NewNVML(srv, inventory.NVMLOptions{Fractional: true, SysRoot: dir, ProcRoot: dir}, nil)
	if src.InitErr() != nil {
		t.Fatal(src.InitErr())
	}
	t.Cleanup(func() { src.Close() })

	f := NewFiles(t)
	root := filepath.Join(dir, "scratches")
	k1, k2, k3, k4 := KernelID(1), KernelID(2), KernelID(3), KernelID(4)
	on := func(dev int, amt string) []Share { return []Share{{Dev: ids[dev], Amount: model.MustDec(amt)}} }
	MustWriteKernel(t, root, k1, f.Resource(root, k1, on(LostGPU, "0.50")))
	MustWriteKernel(t, root, k2, f.Resource(root, k2, on(0, "0.30")))
	l := Start(t, engine.Options{
		Roots: []scratch.Root{{Path: root, Agent: "agent-a"}}, Inventory: src, Node: "dgx-node",
		PollEvery: 20 * time.Millisecond, Watch: fastWatch,
	})
	lostKey := model.DeviceKey{Name: "cuda", ID: ids[LostGPU]}
	othersLive := func(s *model.Snapshot) error {
		for i, id := range ids {
			if i == LostGPU {
				continue
			}
			d := s.Device(model.DeviceKey{Name: "cuda", ID: id})
			if d == nil || d.Telemetry == nil || d.Telemetry.Lost || !d.Telemetry.UtilGPU.Valid || d.Telemetry.UtilGPU.V != uint32(10+10*i) || !d.Telemetry.TempC.Valid {
				return fmt.Errorf("GPU %d lost its telemetry: %+v", i, d)
			}
		}
		return nil
	}
	healthy := converged(t, l, "healthy", func(s *model.Snapshot) error {
		d := s.Device(lostKey)
		if d == nil || d.Telemetry == nil || !d.Telemetry.UtilGPU.Valid {
			return fmt.Errorf("GPU %d has no telemetry yet: %+v", LostGPU, d)
		}
		if err := othersLive(s); err != nil {
			return err
		}
		return wantAlloc(s, ids[LostGPU], "0.50")
	})

	lost.Store(true)
	gone := converged(t, l, "GPU lost", func(s *model.Snapshot) error {
		d := s.Device(lostKey)
		if d == nil || d.Telemetry == nil || !d.Telemetry.Lost || d.Telemetry.UtilGPU.Valid || d.Telemetry.TempC.Valid {
			return fmt.Errorf("GPU %d not shown lost (or still showing values): %+v", LostGPU, d)
		}
		if FindIssue(s, model.IssueDeviceSource, func(i model.Issue) bool {
			return i.Device == lostKey && i.Severity == model.SevError && strings.Contains(i.Message, "lost")
		}) == nil {
			return fmt.Errorf("no device-source error naming %s: %v", lostKey, s.Issues)
		}
		if s.Source.Health != inventory.HealthDegraded {
			return fmt.Errorf("source health %q", s.Source.Health)
		}
		if err := othersLive(s); err != nil {
			return err
		}
		// Its kernels still hold it: Backend.AI's map does not forget them.
		return wantAlloc(s, ids[LostGPU], "0.50")
	})

	// Accounting goes on: a kernel placed on the lost GPU (the agent does
	// not know), one on a healthy GPU, one removed.
	MustWriteKernel(t, root, k3, f.Resource(root, k3, on(LostGPU, "0.25")))
	MustWriteKernel(t, root, k4, f.Resource(root, k4, on(5, "0.40")))
	if err := os.RemoveAll(filepath.Join(root, k2)); err != nil {
		t.Fatal(err)
	}
	after := converged(t, l, "changes after the loss", func(s *model.Snapshot) error {
		if err := wantAlloc(s, ids[LostGPU], "0.75"); err != nil {
			return err
		}
		if err := wantAlloc(s, ids[5], "0.40"); err != nil {
			return err
		}
		if err := wantAlloc(s, ids[0], "none"); err != nil {
			return err
		}
		if d := s.Device(lostKey); d == nil || d.Telemetry == nil || !d.Telemetry.Lost {
			return fmt.Errorf("GPU %d no longer lost", LostGPU)
		}
		return othersLive(s)
	})
	return []Phase{
		{Name: "healthy", Snap: healthy, Device: lostKey},
		{Name: "lost", Snap: gone, Device: lostKey, Kernel: model.KernelID(k1)},
		{Name: "after", Snap: after, Device: lostKey, Kernel: model.KernelID(k3)},
	}
}

//go:build cgo && linux

package inventory

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// setTelemetry makes every GPU of m answer the calls the mock leaves unset.
func setTelemetry(m *dgx) {
	for _, d := range m.devs {
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 50, Memory: 20}, nvml.SUCCESS }
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 61, nvml.SUCCESS }
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 250_000, nvml.SUCCESS }
		d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 1, UsedGpuMemory: 1 << 30}, {Pid: 2, UsedGpuMemory: 2 << 30}}, nvml.SUCCESS
		}
		d.GetNumaNodeIdFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	}
}

func benchNVML(b *testing.B, set bool) {
	m := newDGX(b, "dgxa100")
	if set {
		setTelemetry(m)
	}
	src := NewNVML(m.lib, NVMLOptions{}, NewHost(HostOptions{}))
	defer src.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportCore(b)
}

// BenchmarkPollNVMLMock8 polls the 8 GPUs of go-nvml's dgxa100 mock with
// every telemetry call answering (2 processes per GPU), plus this
// machine's CPU cores and memory. It measures fgtop's own cost; a real
// driver adds its ioctl time.
func BenchmarkPollNVMLMock8(b *testing.B) { benchNVML(b, true) }

// BenchmarkPollNVMLMock8Unset is the same with the mock's unimplemented
// calls left to panic: the cost of recovering them as N/A.
func BenchmarkPollNVMLMock8Unset(b *testing.B) { benchNVML(b, false) }

//go:build cgo && linux

package inventory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/fgtop/fgtop/internal/fakenvml"
	"github.com/fgtop/fgtop/model"
)

// The fake libnvidia-ml.so.1, built once per test process and kept loaded
// (keeper never shuts down): the cgo symbols bind to the first copy loaded
// and must not see it unmapped.
var fakeLib struct {
	once   sync.Once
	path   string
	err    error
	keeper nvml.Interface
}

// fakeNVML returns a real go-nvml library over the fake one, with the
// fake configured by c, and the file its call counts go to at Shutdown.
func fakeNVML(tb testing.TB, c fakenvml.Config) (nvml.Interface, string) {
	tb.Helper()
	fakeLib.once.Do(func() {
		dir, err := os.MkdirTemp("", "fgtop-fakenvml-")
		if err != nil {
			fakeLib.err = err
			return
		}
		if fakeLib.err = fakenvml.Compile(dir); fakeLib.err != nil {
			return
		}
		fakeLib.path = filepath.Join(dir, fakenvml.LibName)
		fakeLib.keeper = nvml.New(nvml.WithLibraryPath(fakeLib.path))
		if ret := fakeLib.keeper.Init(); ret != nvml.SUCCESS {
			fakeLib.err = errors.New("keeper Init: " + ret.String())
		}
	})
	if fakeLib.err != nil {
		if errors.Is(fakeLib.err, fakenvml.ErrNoCompiler) {
			tb.Skip(fakeLib.err)
		}
		tb.Fatal(fakeLib.err)
	}
	dir := tb.TempDir()
	cfg, stats := filepath.Join(dir, "nvml.toml"), filepath.Join(dir, "stats")
	c.Write(tb, cfg)
	tb.Setenv(fakenvml.ConfigEnv, cfg)
	tb.Setenv(fakenvml.StatsEnv, stats)
	return nvml.New(nvml.WithLibraryPath(fakeLib.path)), stats
}

// busyH100s is four fake H100s, processes on GPU 1 only.
func busyH100s() fakenvml.Config {
	return fakenvml.Config{GPUs: fakenvml.H100s(4), Processes: []fakenvml.Process{
		{GPU: 1, PID: os.Getpid(), UsedMemory: 30 << 30, SMUtil: 71, MemUtil: 20},
		{GPU: 1, PID: 1, UsedMemory: 1 << 30},
	}}
}

// TestNVMLFakeLibSlowValuesRare polls four fake H100s through the real cgo
// path and counts the driver calls: the power limit and MIG mode once per
// SlowEvery, per-process samples only on the GPU that runs processes.
func TestNVMLFakeLibSlowValuesRare(t *testing.T) {
	c := busyH100s()
	lib, stats := fakeNVML(t, c)
	now := time.Unix(1_800_000_000, 0)
	src := NewNVML(lib, nvmlOpts(t, NVMLOptions{SlowEvery: time.Minute, Now: func() time.Time { return now }}), nil)
	if src.InitErr() != nil {
		t.Fatal(src.InitErr())
	}
	const polls = 10
	var inv *Inventory
	for range polls {
		inv = poll(t, src)
		now = now.Add(time.Second)
	}
	if len(inv.Devices) != 4 {
		t.Fatalf("%d devices", len(inv.Devices))
	}
	for i, d := range inv.Devices {
		tel := d.Telemetry
		if d.ID != model.DeviceID(c.GPUs[i].UUID) || !tel.PowerCapMW.Valid || tel.PowerCapMW.V != 700000 || !tel.MIGMode.Valid || tel.MIGMode.V ||
			!tel.ProcUtil.Valid || !tel.ProcUtil.V {
			t.Errorf("GPU %d: %s %+v", i, d.ID, tel)
		}
	}
	if p := inv.Devices[1].Telemetry.Processes; len(p) != 2 || p[0].PID != uint32(os.Getpid()) || !p[0].SMUtil.Valid || p[0].SMUtil.V != 71 {
		t.Errorf("GPU 1 processes %+v", p)
	}
	// An operator lowers the power cap: seen at the next slow read.
	c.GPUs[2].PowerLimitMW = 350000
	c.Write(t, os.Getenv(fakenvml.ConfigEnv))
	time.Sleep(150 * time.Millisecond) // the fake re-reads its file at most every 100 ms
	if got := poll(t, src).Devices[2].Telemetry.PowerCapMW.V; got != 700000 {
		t.Errorf("power cap %d before SlowEvery passed, want the cached 700000", got)
	}
	now = now.Add(time.Minute)
	if got := poll(t, src).Devices[2].Telemetry.PowerCapMW.V; got != 350000 {
		t.Errorf("power cap %d after SlowEvery, want 350000", got)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	calls := fakenvml.ReadStats(t, stats)
	const total = polls + 2
	for name, want := range map[string]int{
		"nvmlDeviceGetEnforcedPowerLimit": 4 * 2, // at the first poll and after the minute
		"nvmlDeviceGetMigMode":            4 * 2,
		"nvmlDeviceGetMemoryInfo":         4 + 4*total, // enumeration, then every poll
		"nvmlDeviceGetUtilizationRates":   4 * total,
		// Only GPU 1 runs processes: a size query and a read per poll.
		"nvmlDeviceGetProcessUtilization": 2 * total,
		"nvmlDeviceGetName":               4,
		"nvmlShutdown":                    1,
	} {
		if calls[name] != want {
			t.Errorf("%s called %d times, want %d", name, calls[name], want)
		}
	}
	if calls["nvmlInit_v2"] < 1 {
		t.Errorf("no nvmlInit_v2 counted: %v", calls)
	}
	for name := range calls {
		if !strings.HasPrefix(name, "nvml") {
			t.Errorf("odd call count line %q", name)
		}
	}
}

// BenchmarkPollNVMLFakeLib measures one poll of four fake H100s through the
// real cgo path (dlopen, cgo calls, the fake's answers), idle (no process)
// and busy (two processes on one GPU), with the slow values read every
// poll (what fgtop did before SlowEvery) and every 30 s.
func BenchmarkPollNVMLFakeLib(b *testing.B) {
	for _, load := range []string{"idle", "busy"} {
		for _, slow := range []time.Duration{-1, DefaultSlowEvery} {
			name := load + "/slow=every-poll"
			if slow > 0 {
				name = load + "/slow=" + slow.String()
			}
			b.Run(name, func(b *testing.B) {
				c := busyH100s()
				if load == "idle" {
					c.Processes = nil
				}
				lib, stats := fakeNVML(b, c)
				src := NewNVML(lib, nvmlOpts(b, NVMLOptions{SlowEvery: slow}), nil)
				if src.InitErr() != nil {
					b.Fatal(src.InitErr())
				}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := src.Poll(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4, "ns/GPU")
				reportCore(b)
				b.StopTimer()
				if err := src.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(pollCalls(fakenvml.ReadStats(b, stats)))/float64(b.N)/4, "calls/GPU")
			})
		}
	}
}

// pollCalls sums the driver calls in a call count, Init and Shutdown left
// out (the enumeration's few calls per GPU are in, spread over the polls).
func pollCalls(calls map[string]int) int {
	n := 0
	for name, v := range calls {
		if !strings.HasPrefix(name, "nvmlInit") && name != "nvmlShutdown" {
			n += v
		}
	}
	return n
}

// TestFakeLibAttributes: the fake answers the SM count as go-nvml asks for
// it (nvmlDeviceGetAttributes_v2), or refuses it on a full GPU as nvml.h
// says drivers may; the CUDA core count stays available.
func TestFakeLibAttributes(t *testing.T) {
	for _, migOnly := range []bool{false, true} {
		c := busyH100s()
		c.AttributesMIGOnly = migOnly
		lib, _ := fakeNVML(t, c)
		if ret := lib.Init(); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		d, ret := lib.DeviceGetHandleByIndex(0)
		if ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
		a, ret := d.GetAttributes()
		switch {
		case !migOnly && (ret != nvml.SUCCESS || a.MultiprocessorCount != 132):
			t.Errorf("attributes: %v %d, want 132 SMs", ret, a.MultiprocessorCount)
		case migOnly && ret != nvml.ERROR_NOT_SUPPORTED:
			t.Errorf("attributes with mig-only: %v, want NOT_SUPPORTED", ret)
		}
		if cores, ret := d.GetNumGpuCores(); ret != nvml.SUCCESS || cores != 132*128 {
			t.Errorf("cores %d %v", cores, ret)
		}
		if arch, ret := d.GetArchitecture(); ret != nvml.SUCCESS || arch != nvml.DEVICE_ARCH_HOPPER {
			t.Errorf("architecture %d %v, want Hopper (the SM count's fallback needs it)", arch, ret)
		}
		if ret := lib.Shutdown(); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
}

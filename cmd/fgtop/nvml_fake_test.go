//go:build linux && cgo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/fakenvml"
)

// The real binary, built once per test run with cgo: the path users run.
var realBinary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func buildRealBinary(t *testing.T) string {
	t.Helper()
	realBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "fgtop-nvml-bin-")
		if err != nil {
			realBinary.err = err
			return
		}
		realBinary.path = filepath.Join(dir, "fgtop")
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", realBinary.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		realBinary.out, realBinary.err = cmd.CombinedOutput()
	})
	if realBinary.err != nil {
		t.Fatalf("go build (cgo): %v\n%s", realBinary.err, realBinary.out)
	}
	return realBinary.path
}

// fakeNode is the real binary with the fake NVML library and an empty
// scratch root.
type fakeNode struct {
	bin, lib, cfg, stats, scratch string
}

func newFakeNode(t *testing.T, c fakenvml.Config) *fakeNode {
	t.Helper()
	lib := fakenvml.Build(t) // skips without a C compiler
	dir := t.TempDir()
	n := &fakeNode{
		bin: buildRealBinary(t), lib: lib,
		cfg: filepath.Join(dir, "nvml.toml"), stats: filepath.Join(dir, "stats"),
		scratch: filepath.Join(dir, "scratch"),
	}
	if err := os.Mkdir(n.scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	c.Write(t, n.cfg)
	return n
}

// run runs the binary with extra environment entries and returns stdout.
func (n *fakeNode) run(t *testing.T, env []string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.bin, args...)
	cmd.Env = append(fakenvml.Env(n.lib, n.cfg, n.stats), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("stderr: %s", stderr.String())
	}
	return out, err
}

type fakeSnap struct {
	Source struct {
		Kind, Health, Detail string
	}
	Devices []struct {
		Key, ID, Slot, Model, UUID string
		Index                      int
		MemoryBytes                int64 `json:"memory_bytes"`
		Telemetry                  *struct {
			MemUsed  *uint64 `json:"mem_used_bytes"`
			MemTotal *uint64 `json:"mem_total_bytes"`
			UtilGPU  *int    `json:"util_gpu_pct"`
			TempC    *int    `json:"temp_c"`
			PowerMW  *int    `json:"power_mw"`
			PowerCap *int    `json:"power_cap_mw"`
			Lost     bool
			Procs    []struct {
				PID     int     `json:"pid"`
				UsedMem *uint64 `json:"used_mem_bytes"`
				SMUtil  *int    `json:"sm_util_pct"`
			} `json:"processes"`
		}
	}
	Issues []struct {
		Severity, Code, Message string
	}
}

func (n *fakeNode) snapshot(t *testing.T, env ...string) fakeSnap {
	t.Helper()
	out, err := n.run(t, env, "snapshot", "--json", "--devices", "nvml", "--scratch-root", n.scratch)
	if err != nil {
		t.Fatalf("fgtop snapshot: %v", err)
	}
	var s fakeSnap
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	return s
}

func fourH100s() fakenvml.Config {
	gpus := fakenvml.H100s(4)
	gpus[1].MemoryUsed = 40 << 30
	return fakenvml.Config{
		GPUs: gpus,
		Processes: []fakenvml.Process{
			{GPU: 1, PID: 4242, UsedMemory: 30 << 30, SMUtil: 71, MemUtil: 20},
			{GPU: 1, PID: 4243, UsedMemory: 10 << 30},
			{GPU: 3, PID: 777, UsedMemory: 1 << 30, SMUtil: 5, MemUtil: 1},
		},
	}
}

// TestFakeNVMLSnapshot runs `fgtop snapshot --json --devices nvml` on four
// fake H100s through the real cgo path and checks what NVML said arrives.
func TestFakeNVMLSnapshot(t *testing.T) {
	c := fourH100s()
	n := newFakeNode(t, c)
	s := n.snapshot(t)
	if s.Source.Kind != "nvml" || s.Source.Health != "ok" || !strings.Contains(s.Source.Detail, "driver 580.159.04: 4 GPU(s)") {
		t.Fatalf("source = %+v", s.Source)
	}
	gpus := 0
	for _, d := range s.Devices {
		if !strings.HasPrefix(d.Key, "cuda:") {
			continue
		}
		i := gpus
		gpus++
		want := c.GPUs[i]
		if d.ID != want.UUID || d.UUID != strings.TrimPrefix(want.UUID, "GPU-") || d.Index != i {
			t.Errorf("GPU %d: id %s uuid %s index %d, want %s", i, d.ID, d.UUID, d.Index, want.UUID)
		}
		if d.Model != "NVIDIA H100 80GB HBM3" || d.MemoryBytes != 81559<<20 {
			t.Errorf("GPU %d: model %q memory %d, want an H100 with 81,559 MiB", i, d.Model, d.MemoryBytes)
		}
		tel := d.Telemetry
		if tel == nil || tel.UtilGPU == nil || *tel.UtilGPU != want.UtilGPU || tel.TempC == nil || *tel.TempC != want.Temperature ||
			tel.PowerMW == nil || *tel.PowerMW != want.PowerMW || tel.PowerCap == nil || *tel.PowerCap != 700000 ||
			tel.MemUsed == nil || *tel.MemUsed != want.MemoryUsed {
			t.Errorf("GPU %d: telemetry %+v, want %+v", i, tel, want)
			continue
		}
		var pids []int
		for _, p := range tel.Procs {
			pids = append(pids, p.PID)
			for _, wp := range c.Processes {
				if wp.PID == p.PID && (p.UsedMem == nil || *p.UsedMem != wp.UsedMemory || p.SMUtil == nil || *p.SMUtil != wp.SMUtil) {
					t.Errorf("GPU %d pid %d: used %v sm %v, want %d and %d", i, p.PID, p.UsedMem, p.SMUtil, wp.UsedMemory, wp.SMUtil)
				}
			}
		}
		wantPIDs := map[int]string{0: "[]", 1: "[4242 4243]", 2: "[]", 3: "[777]"}[i]
		if got := fmt.Sprint(pids); got != wantPIDs {
			t.Errorf("GPU %d: processes %v, want %s", i, pids, wantPIDs)
		}
	}
	if gpus != 4 {
		t.Fatalf("%d GPUs in the snapshot, want 4", gpus)
	}
	calls := fakenvml.ReadStats(t, n.stats)
	if calls["nvmlInit_v2"] != 1 || calls["nvmlShutdown"] != 1 {
		t.Errorf("Init %d, Shutdown %d times; want once each (calls: %v)", calls["nvmlInit_v2"], calls["nvmlShutdown"], calls)
	}
}

// TestFakeNVMLBindsEverySymbol preloads the fake library and binds every
// symbol at start (LD_BIND_NOW): the loader refuses to start the binary if
// any NVML symbol it references is missing from the library.
func TestFakeNVMLBindsEverySymbol(t *testing.T) {
	n := newFakeNode(t, fourH100s())
	lib := filepath.Join(n.lib, fakenvml.LibName)
	out, err := n.run(t, []string{"LD_PRELOAD=" + lib, "LD_BIND_NOW=1"}, "version")
	if err != nil {
		t.Fatalf("fgtop version with every symbol bound now: %v\n%s", err, out)
	}
	s := n.snapshot(t, "LD_PRELOAD="+lib, "LD_BIND_NOW=1")
	if s.Source.Health != "ok" {
		t.Fatalf("source %+v", s.Source)
	}
}

// TestFakeNVMLInitErrors makes nvmlInit fail as a broken node does. fgtop
// must classify the failure and call nothing else in the library (the fake
// aborts the process if it does), and still print the host's devices.
func TestFakeNVMLInitErrors(t *testing.T) {
	n := newFakeNode(t, fourH100s())
	for _, tc := range []struct {
		init, want string
	}{
		{"DRIVER_NOT_LOADED", "ERROR_DRIVER_NOT_LOADED"},
		{"NO_PERMISSION", "ERROR_NO_PERMISSION"},
		{"LIB_RM_VERSION_MISMATCH", "ERROR_LIB_RM_VERSION_MISMATCH"},
		{"UNKNOWN", "NVML error 999"},
	} {
		t.Run(tc.init, func(t *testing.T) {
			c := fourH100s()
			c.Init = tc.init
			c.Write(t, n.cfg)
			s := n.snapshot(t)
			if s.Source.Health != "unavailable" {
				t.Errorf("health %q, want unavailable", s.Source.Health)
			}
			found := false
			for _, is := range s.Issues {
				if is.Code == "device-source" && strings.Contains(is.Message, tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no device-source issue naming %s: %+v", tc.want, s.Issues)
			}
			for _, d := range s.Devices {
				if strings.HasPrefix(d.Key, "cuda:") {
					t.Errorf("a GPU listed although NVML did not start: %s", d.Key)
				}
			}
		})
	}
	t.Run("no library", func(t *testing.T) {
		empty := t.TempDir()
		m := *n
		m.lib = empty
		s := m.snapshot(t)
		if s.Source.Health != "unavailable" || len(s.Issues) == 0 || !strings.Contains(s.Issues[0].Message, "libnvidia-ml.so.1") {
			t.Errorf("without the library: %+v %+v", s.Source, s.Issues)
		}
	})
}

// TestFakeNVMLGPULostAndCountError: a GPU that is lost when fgtop starts
// has no readable UUID, its device id, so it is named by index and left
// out while the others are listed; a driver that cannot count its GPUs
// leaves the source unavailable.
func TestFakeNVMLGPULostAndCountError(t *testing.T) {
	c := fourH100s()
	c.GPUs[2].Error = "GPU_IS_LOST"
	n := newFakeNode(t, c)
	s := n.snapshot(t)
	if s.Source.Health != "degraded" {
		t.Errorf("health %q with a lost GPU, want degraded", s.Source.Health)
	}
	lost := 0
	for _, is := range s.Issues {
		if strings.Contains(is.Message, "NVML index 2") && strings.Contains(is.Message, "GPU is lost") {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d lost-GPU issues, want 1: %+v", lost, s.Issues)
	}
	var ids []string
	for _, d := range s.Devices {
		if strings.HasPrefix(d.Key, "cuda:") {
			ids = append(ids, d.ID)
		}
	}
	if want := []string{c.GPUs[0].UUID, c.GPUs[1].UUID, c.GPUs[3].UUID}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("GPUs %v, want %v", ids, want)
	}

	c = fourH100s()
	c.CountError = "UNKNOWN"
	c.Write(t, n.cfg)
	s = n.snapshot(t)
	if s.Source.Health != "unavailable" || len(s.Issues) == 0 || !strings.Contains(s.Issues[0].Message, "cannot count the GPUs") {
		t.Errorf("count error: %+v %+v", s.Source, s.Issues)
	}
}

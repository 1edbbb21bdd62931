//go:build cgo && linux

package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/fgtop/fgtop/model"
)

const (
	cidA = "0b7e4d1a9c2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6f7e8d"
	cidB = "f1e2d3c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2"
)

func statLine(pid int, comm string, start uint64) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 100 10\n", pid, comm, pid, pid, start)
}

// TestNVMLProcessesMapped: go-nvml's mock lists processes on two GPUs;
// a fake /proc names their containers (cgroup v2 systemd docker, v1
// cgroupfs docker, containerd under kubepods), a host process, a PID gone
// and a PID reused after the listing; per-process utilisation samples
// where the mock driver has them, ERROR_NOT_FOUND (no process busy) and
// ERROR_NOT_SUPPORTED (memory only).
func TestNVMLProcessesMapped(t *testing.T) {
	m := newDGX(t, "dgxa100")
	dir := t.TempDir()
	writeFile(t, dir, "proc/uptime", "1000.00 1.00\n")
	procs := map[int]struct {
		comm   string
		start  uint64
		cgroup string
	}{
		10: {"python3", 5000, "0::/system.slice/docker-" + cidA + ".scope\n"},
		11: {"train", 6000, "12:memory:/docker/" + cidB + "\n1:name=systemd:/docker/" + cidB + "\n"},
		12: {"triton", 7000, "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-" + cidA + ".scope\n"},
		13: {"Xorg", 100, "0::/system.slice/display-manager.service\n"},
		15: {"late", 200_000, "0::/docker/" + cidA + "\n"}, // started after the listing (uptime 1000 s)
	}
	for pid, p := range procs {
		writeFile(t, dir, fmt.Sprintf("proc/%d/stat", pid), statLine(pid, p.comm, p.start))
		writeFile(t, dir, fmt.Sprintf("proc/%d/cgroup", pid), p.cgroup)
	}
	list := func(pids ...uint32) func() ([]nvml.ProcessInfo, nvml.Return) {
		return func() ([]nvml.ProcessInfo, nvml.Return) {
			out := make([]nvml.ProcessInfo, len(pids))
			for i, p := range pids {
				out[i] = nvml.ProcessInfo{Pid: p, UsedGpuMemory: uint64(p) << 20}
			}
			return out, nvml.SUCCESS
		}
	}
	m.devs[0].GetComputeRunningProcessesFunc = list(10, 11, 14)
	var asked []uint64
	m.devs[0].GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		asked = append(asked, last)
		if last >= 300 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return []nvml.ProcessUtilizationSample{
			{Pid: 10, TimeStamp: 100, SmUtil: 40, MemUtil: 10},
			{Pid: 10, TimeStamp: 300, SmUtil: 61, MemUtil: 20},
			{Pid: 99, TimeStamp: 200, SmUtil: 5},
		}, nvml.SUCCESS
	}
	m.devs[1].GetComputeRunningProcessesFunc = list(12, 13, 15)
	m.devs[1].GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	src := NewNVML(m.lib, NVMLOptions{SysRoot: dir + "/sys", ProcRoot: dir + "/proc"}, nil)
	defer src.Close()

	inv := poll(t, src)
	mem := func(p uint32) model.Opt[uint64] { return model.Some(uint64(p) << 20) }
	u := model.Some[uint32]
	want0 := []model.Process{
		{PID: 10, UsedMem: mem(10), SMUtil: u(51), MemUtil: u(15), Name: "python3", Start: 5000, Container: cidA},
		{PID: 11, UsedMem: mem(11), SMUtil: u(0), MemUtil: u(0), Name: "train", Start: 6000, Container: cidB},
		{PID: 14, UsedMem: mem(14), SMUtil: u(0), MemUtil: u(0), Owner: model.ProcGone},
	}
	want1 := []model.Process{
		{PID: 12, UsedMem: mem(12), Name: "triton", Start: 7000, Container: cidA},
		{PID: 13, UsedMem: mem(13), Name: "Xorg", Start: 100},
		{PID: 15, UsedMem: mem(15), Owner: model.ProcReused},
	}
	t0, t1 := inv.Devices[0].Telemetry, inv.Devices[1].Telemetry
	if !reflect.DeepEqual(t0.Processes, want0) || t0.ProcUtil != model.Some(true) {
		t.Errorf("GPU 0 (samples):\n got %+v %+v\nwant %+v", t0.Processes, t0.ProcUtil, want0)
	}
	if !reflect.DeepEqual(t1.Processes, want1) || t1.ProcUtil != model.Some(false) || len(t1.Errors) != 0 {
		t.Errorf("GPU 1 (memory only):\n got %+v %+v %v\nwant %+v", t1.Processes, t1.ProcUtil, t1.Errors, want1)
	}

	// Next poll: only newer samples are asked for; none (NOT_FOUND) reads
	// as every process at 0 %. PID 10 exits and its PID goes to a process
	// in another container that started before the listing: that one is
	// credited, under its own start time, never from the cache.
	if err := os.RemoveAll(filepath.Join(dir, "proc/11")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "proc/10/stat", statLine(10, "bash", 8000))
	writeFile(t, dir, "proc/10/cgroup", "0::/docker/"+cidB+"\n")
	inv = poll(t, src)
	t0 = inv.Devices[0].Telemetry
	want0 = []model.Process{
		{PID: 10, UsedMem: mem(10), SMUtil: u(0), MemUtil: u(0), Name: "bash", Start: 8000, Container: cidB},
		{PID: 11, UsedMem: mem(11), SMUtil: u(0), MemUtil: u(0), Owner: model.ProcGone},
		{PID: 14, UsedMem: mem(14), SMUtil: u(0), MemUtil: u(0), Owner: model.ProcGone},
	}
	if !reflect.DeepEqual(t0.Processes, want0) || t0.ProcUtil != model.Some(true) {
		t.Errorf("GPU 0, second poll:\n got %+v\nwant %+v", t0.Processes, want0)
	}
	if !reflect.DeepEqual(asked, []uint64{0, 300}) {
		t.Errorf("sample timestamps asked: %v", asked)
	}
}

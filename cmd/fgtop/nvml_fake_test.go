//go:build linux && cgo

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
		// The id is the UUID or the CUDA index, as the node's plugin names
		// GPUs; the UUID is always there.
		if (d.ID != want.UUID && d.ID != strconv.Itoa(i)) || d.UUID != strings.TrimPrefix(want.UUID, "GPU-") || d.Index != i {
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
// has no readable UUID. cuda_open (the plugin here, nothing else saying)
// registers GPUs by index, which NVML knows: the GPU is listed, lost, as
// "2", with one issue. The fractional plugin's id is the UUID: there it
// is named by index and left out while the others are listed. A driver
// that cannot count its GPUs leaves the source unavailable.
func TestFakeNVMLGPULostAndCountError(t *testing.T) {
	c := fourH100s()
	c.GPUs[2].Error = "GPU_IS_LOST"
	n := newFakeNode(t, c)
	lostIssues := func(s fakeSnap, sub string) int {
		k := 0
		for _, is := range s.Issues {
			if strings.Contains(is.Message, sub) {
				k++
			}
		}
		return k
	}
	s := n.snapshot(t)
	if s.Source.Health != "degraded" {
		t.Errorf("health %q with a lost GPU, want degraded", s.Source.Health)
	}
	var open []string
	for _, d := range s.Devices {
		if strings.HasPrefix(d.Key, "cuda:") {
			open = append(open, fmt.Sprintf("%s lost=%v", d.ID, d.Telemetry != nil && d.Telemetry.Lost))
		}
	}
	if want := "[0 lost=false 1 lost=false 2 lost=true 3 lost=false]"; fmt.Sprint(open) != want {
		t.Errorf("cuda_open: GPUs %v, want %s", open, want)
	}
	if k := lostIssues(s, "index 2"); k != 1 || lostIssues(s, "GPU 2 (index 2) is lost") != 1 {
		t.Errorf("cuda_open: %d issues about GPU 2, want 1 saying it is lost: %+v", k, s.Issues)
	}

	out, err := n.run(t, nil, "snapshot", "--json", "--devices", "nvml", "--scratch-root", n.scratch, "--cuda-plugin", "fractional")
	if err != nil {
		t.Fatalf("fgtop snapshot --cuda-plugin fractional: %v", err)
	}
	s = fakeSnap{}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	if k := lostIssues(s, "index 2"); k != 1 || lostIssues(s, "NVML index 2: cannot read its UUID (GPU is lost)") != 1 {
		t.Errorf("fractional: %d issues about GPU 2, want 1 saying it is not listed: %+v", k, s.Issues)
	}
	var ids []string
	for _, d := range s.Devices {
		if strings.HasPrefix(d.Key, "cuda:") {
			ids = append(ids, "GPU-"+d.UUID)
		}
	}
	if want := []string{c.GPUs[0].UUID, c.GPUs[1].UUID, c.GPUs[3].UUID}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("fractional: GPUs %v, want %v", ids, want)
	}

	c = fourH100s()
	c.CountError = "UNKNOWN"
	c.Write(t, n.cfg)
	s = n.snapshot(t)
	if s.Source.Health != "unavailable" || len(s.Issues) == 0 || !strings.Contains(s.Issues[0].Message, "cannot count the GPUs") {
		t.Errorf("count error: %+v %+v", s.Source, s.Issues)
	}
}

// TestFakeNVMLConsole starts the console in a real terminal (tmux) on the
// fake GPUs and reads the screen: the four H100s with their utilisation,
// then q quits.
func TestFakeNVMLConsole(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux: the console's cgo path is not checked in a terminal")
	}
	n := newFakeNode(t, fourH100s())
	sock := fmt.Sprintf("fgtop-nvml-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	env := strings.Join([]string{"LD_LIBRARY_PATH=" + n.lib, fakenvml.ConfigEnv + "=" + n.cfg, "TERM=tmux-256color"}, " ")
	if out, err := tm("new-session", "-d", "-x", "160", "-y", "40",
		fmt.Sprintf("env %s %s --devices nvml --scratch-root %s; sleep 30", env, n.bin, n.scratch)); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	defer tm("kill-server")
	var screen string
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen, _ = tm("capture-pane", "-p")
		if strings.Contains(screen, "GPU3") && strings.Contains(screen, "NVML ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console did not show four GPUs in 20 s:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i, want := range []string{"10%", "20%", "30%", "40%"} {
		line := ""
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, fmt.Sprintf("GPU%d ", i)) {
				line = l
				break
			}
		}
		if !strings.Contains(line, want) || !strings.Contains(line, "79.6G") {
			t.Errorf("GPU%d's row %q lacks utilisation %s and 79.6G of memory", i, line, want)
		}
	}
	if _, err := tm("send-keys", "q"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		// After q the pane runs `sleep`: the console has left the screen.
		if s, _ := tm("capture-pane", "-p"); !strings.Contains(s, "GPU3") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the console did not quit on q")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFakeNVMLFollow: `snapshot --follow` prints a new line within 3 s
// when the driver's answers change: a process starts on a GPU, then the
// GPU is lost.
func TestFakeNVMLFollow(t *testing.T) {
	c := fourH100s()
	n := newFakeNode(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.bin, "snapshot", "--follow", "--devices", "nvml", "--scratch-root", n.scratch)
	cmd.Env = fakenvml.Env(n.lib, n.cfg, "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(d time.Duration) string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("fgtop ended")
			}
			return l
		case <-time.After(d):
			t.Fatalf("no line within %s", d)
		}
		return ""
	}
	if l := next(20 * time.Second); strings.Contains(l, `"pid":31337`) {
		t.Fatal("the new process is there before it started")
	}
	c.Processes = append(c.Processes, fakenvml.Process{GPU: 2, PID: 31337, UsedMemory: 5 << 30, SMUtil: 12})
	c.Write(t, n.cfg)
	waitFor := func(what, needle string) {
		t.Helper()
		changed := time.Now()
		for {
			l := next(3*time.Second - time.Since(changed))
			if strings.Contains(l, needle) {
				t.Logf("%s seen after %s", what, time.Since(changed).Round(time.Millisecond))
				return
			}
		}
	}
	waitFor("the new process", `"pid":31337`)
	// The GPU falls off the bus while fgtop runs.
	c.GPUs[2].Error = "GPU_IS_LOST"
	c.Write(t, n.cfg)
	waitFor("the lost GPU", "ERROR_GPU_IS_LOST")
}

// TestGPUCheckScriptDryRun runs bench/gpu-check.sh, the script an operator
// runs on a GPU node, against the fake library: every step it can take
// without a GPU must pass, so the script keeps working as fgtop changes.
func TestGPUCheckScriptDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the console and the exporter")
	}
	for _, tool := range []string{"bash", "python3", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	n := newFakeNode(t, fourH100s())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../bench/gpu-check.sh")
	cmd.Env = append(os.Environ(), "FGTOP_BIN="+n.bin, "FGTOP_NVML_LIB_DIR="+n.lib, fakenvml.ConfigEnv+"="+n.cfg, "WINDOW=1")
	out, err := cmd.CombinedOutput()
	t.Logf("gpu-check.sh:\n%s", out)
	if err != nil {
		t.Fatalf("gpu-check.sh: %v", err)
	}
	for _, want := range []string{"PASS  1 NVML source ok", "PASS  3 agent health: up", "PASS  3 agent stopped: down", "PASS  5 exporter: fgtop_gpu_utilization_ratio for 4 GPU(s)", "PASS  6 console shows 4 GPU(s)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("gpu-check.sh did not say %q", want)
		}
	}
	if strings.Contains(string(out), "FAIL") {
		t.Error("a step failed")
	}
}

// TestFakeNVMLMIG: a GPU with MIG on lists its MIG devices (NVML's MIG
// handles) as child devices with their own slot, memory and processes,
// under the fractional plugin; cuda_open (whose one slot is cuda.device)
// registers none of them, and says so.
func TestFakeNVMLMIG(t *testing.T) {
	c := fourH100s()
	c.GPUs[0].MIG = true
	c.MIGDevices = []fakenvml.MIGDevice{
		{GPU: 0, UUID: "MIG-11111111-2222-4333-8444-000000000001", Name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb", MemoryTotal: 40 << 30},
		{GPU: 0, UUID: "MIG-11111111-2222-4333-8444-000000000002", Name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", MemoryTotal: 10 << 30, MemoryUsed: 1 << 30},
	}
	one := 1
	c.Processes = append(c.Processes, fakenvml.Process{GPU: 0, MIG: &one, PID: 5150, UsedMemory: 1 << 30})
	n := newFakeNode(t, c)
	open := n.snapshot(t)
	var said bool
	for _, d := range open.Devices {
		if strings.HasPrefix(d.ID, "MIG-") {
			t.Errorf("cuda_open registered MIG slice %s (%s)", d.ID, d.Slot)
		}
	}
	for _, is := range open.Issues {
		said = said || strings.Contains(is.Message, "MIG slices of GPU 0 (2) not registered")
	}
	if !said {
		t.Errorf("cuda_open: no issue says GPU 0's MIG slices are not registered: %+v", open.Issues)
	}
	out, err := n.run(t, nil, "snapshot", "--json", "--devices", "nvml", "--scratch-root", n.scratch, "--cuda-plugin", "fractional")
	if err != nil {
		t.Fatalf("fgtop snapshot --cuda-plugin fractional: %v", err)
	}
	var s fakeSnap
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	type row struct {
		id, slot string
		mem      int64
		pids     string
	}
	var got []row
	for _, d := range s.Devices {
		if strings.HasPrefix(d.ID, "MIG-") {
			var pids []int
			if d.Telemetry != nil {
				for _, p := range d.Telemetry.Procs {
					pids = append(pids, p.PID)
				}
			}
			got = append(got, row{d.ID, d.Slot, d.MemoryBytes, fmt.Sprint(pids)})
		}
	}
	want := []row{
		{"MIG-11111111-2222-4333-8444-000000000001", "cuda.device:3g.40gb-mig", 40 << 30, "[]"},
		{"MIG-11111111-2222-4333-8444-000000000002", "cuda.device:1g.10gb-mig", 10 << 30, "[5150]"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MIG devices\n got %v\nwant %v", got, want)
	}
}

package fakenvml

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryExportsEveryHeaderSymbol checks the built library defines
// every entry point of go-nvml's nvml.h: the real binary binds them all.
func TestLibraryExportsEveryHeaderSymbol(t *testing.T) {
	dir := Build(t)
	hdr, err := HeaderDir()
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(filepath.Join(hdr, "nvml.h"))
	if err != nil {
		t.Fatal(err)
	}
	want := Symbols(header)
	if len(want) < 400 {
		t.Fatalf("found only %d declarations in nvml.h; the declaration pattern is stale", len(want))
	}
	nm, err := exec.LookPath("nm")
	if err != nil {
		t.Skipf("no nm: %v", err)
	}
	out, err := exec.Command(nm, "-D", "--defined-only", filepath.Join(dir, LibName)).Output()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			have[f[2]] = true
		}
	}
	for _, s := range want {
		if !have[s] {
			t.Errorf("the fake library lacks %s", s)
		}
	}
}

func TestSymbolsFindsBothDeclarationForms(t *testing.T) {
	h := []byte("nvmlReturn_t DECLDIR nvmlInit_v2(void);\nconst DECLDIR char* nvmlErrorString(nvmlReturn_t result);\n" +
		"DEPRECATED(13.0) nvmlReturn_t DECLDIR nvmlDeviceGetTemperature(nvmlDevice_t device);\n#define DECLDIR __declspec(dllexport)\n")
	got := strings.Join(Symbols(h), ",")
	if got != "nvmlDeviceGetTemperature,nvmlErrorString,nvmlInit_v2" {
		t.Fatalf("Symbols = %s", got)
	}
}

func TestConfigBytes(t *testing.T) {
	numa := 1
	c := Config{Init: "DRIVER_NOT_LOADED", GPUs: []GPU{{UUID: "GPU-x", SMs: 132, NUMA: &numa}}, Processes: []Process{{GPU: 0, PID: 42, UsedMemory: 7}}}
	got := string(c.Bytes())
	for _, want := range []string{`init = "DRIVER_NOT_LOADED"`, "[[gpu]]\nuuid = \"GPU-x\"\nsms = 132\nnuma = 1\n", "[[process]]\ngpu = 0\npid = 42\nused_memory = 7\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
}

// monitorProg calls what nvtop 3.0.1 calls beyond fgtop's entry points
// and prints the answers, one line each.
const monitorProg = `#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <stdio.h>
#include <nvml.h>
int main(void) {
	nvmlDevice_t d; unsigned int v, p, n;
	nvmlProcessInfo_v1_t procs[4];
	if (nvmlInit_v2() != NVML_SUCCESS || nvmlDeviceGetHandleByIndex_v2(1, &d) != NVML_SUCCESS) return 1;
	/* Each call before its printf: C leaves the order of arguments open. */
	nvmlReturn_t r;
	r = nvmlDeviceGetClockInfo(d, NVML_CLOCK_GRAPHICS, &v); printf("clock %d %u\n", r, v);
	r = nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v); printf("memclock %d %u\n", r, v);
	r = nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &v); printf("maxclock %d %u\n", r, v);
	r = nvmlDeviceGetCurrPcieLinkGeneration(d, &v); printf("pcie gen %d %u\n", r, v);
	r = nvmlDeviceGetMaxPcieLinkWidth(d, &v); printf("pcie width %d %u\n", r, v);
	r = nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &v); printf("pcie rx %d %u\n", r, v);
	r = nvmlDeviceGetEncoderUtilization(d, &v, &p); printf("encoder %d %u %u\n", r, v, p);
	r = nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v); printf("slowdown %d %u\n", r, v);
	r = nvmlDeviceGetFanSpeed(d, &v); printf("fan %d\n", r);
	n = 0;
	r = nvmlDeviceGetComputeRunningProcesses(d, &n, procs); printf("procs v1, no room %d %u\n", r, n);
	n = 4;
	r = nvmlDeviceGetComputeRunningProcesses(d, &n, procs);
	printf("procs v1 %d %u pid %u mem %llu\n", r, n, procs[0].pid, procs[0].usedGpuMemory);
	n = 4;
	r = nvmlDeviceGetGraphicsRunningProcesses(d, &n, procs); printf("graphics %d %u\n", r, n);
	return 0;
}
`

// TestMonitorCalls checks the answers to what a GPU monitor such as nvtop
// asks beyond fgtop's calls (bench/idle-vs-nvtop.sh runs nvtop on this
// library): an idle H100 SXM's clocks, PCIe link and thresholds, the
// processes in the first calls' v1 layout, and no fan.
func TestMonitorCalls(t *testing.T) {
	dir := Build(t)
	hdr, err := HeaderDir()
	if err != nil {
		t.Fatal(err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	src, prog := filepath.Join(dir, "monitor.c"), filepath.Join(dir, "monitor")
	if err := os.WriteFile(src, []byte(monitorProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-Wno-deprecated-declarations", "-I", hdr, "-o", prog, src,
		"-L", dir, "-l:"+LibName, "-Wl,-rpath,"+dir).CombinedOutput(); err != nil {
		t.Fatalf("build the monitor: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(dir, "gpus.toml")
	cfg := Config{GPUs: []GPU{{}, {}}, Processes: []Process{{GPU: 1, PID: 4242, UsedMemory: 1 << 30}}}
	cfg.Write(t, cfgPath)
	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), ConfigEnv+"="+cfgPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the monitor: %v\n%s", err, out)
	}
	want := `clock 0 345
memclock 0 2619
maxclock 0 1980
pcie gen 0 5
pcie width 0 16
pcie rx 0 0
encoder 0 0 167000
slowdown 0 89
fan 3
procs v1, no room 7 1
procs v1 0 1 pid 4242 mem 1073741824
graphics 0 0
`
	if string(out) != want {
		t.Errorf("the monitor printed\n%s\nwant\n%s", out, want)
	}
}

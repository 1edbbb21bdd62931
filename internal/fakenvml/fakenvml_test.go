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

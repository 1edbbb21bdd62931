// Package testfix is shared by the tests and benchmarks of every package:
// it finds the fixtures (testdata/fixtures at the module root: Backend.AI's
// own results, copied from ../shared/fixtures so that a plain clone tests
// itself), finds Backend.AI's config-loader oracle (../shared/oracle, the
// one thing that stays outside the repo), and reports CPU time next to wall
// time in benchmarks. Nothing outside _test.go files imports it.
package testfix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ModuleRoot returns the directory holding go.mod, found upwards from the
// working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Path returns testdata/fixtures/<parts...> under the module root, or an
// error when there is no module root or no such fixture.
func Path(parts ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(append([]string{root, "testdata", "fixtures"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("fixture: %w", err)
	}
	return p, nil
}

// OracleEnv names the variable that, when set to 1, makes a missing oracle
// a test failure instead of a skip (.ci/run sets it).
const OracleEnv = "FGTOP_REQUIRE_ORACLE"

// Oracle returns the path of Backend.AI's config-loader oracle,
// ../shared/oracle/backendai/check-agent-config beside the module root. It
// is Backend.AI's code and stays outside the repo: where it is absent (a
// plain clone) the test is skipped with the reason, unless OracleEnv is 1.
func Oracle(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "..", "shared", "oracle", "backendai", "check-agent-config")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(OracleEnv) == "1" {
			t.Fatalf("Backend.AI oracle required (%s=1) but missing: %v", OracleEnv, err)
		}
		t.Skipf("Backend.AI oracle not found (%v): a plain clone skips the differential tests; CI runs them", err)
	}
	return p
}

// Dir is Path for a test: it fails the test when the fixture is missing.
func Dir(t testing.TB, parts ...string) string {
	t.Helper()
	p, err := Path(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CPUClock reports the process's CPU time per operation as "cpu-ns/op"
// next to the wall-clock ns/op: on a shared, loaded machine the wall time
// includes waiting for a core, the CPU time does not. Call the returned
// function after the loop.
func CPUClock(b *testing.B) func() {
	start := cpuNow()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuNow()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// AgentTOML completes an agent.toml fragment with the tables Backend.AI's
// agent requires of every file ([etcd], [agent] with backend, [container],
// [resource]) where the fragment lacks them, so a test can state only what
// it is about. Missing tables are appended, so line numbers in the
// fragment stay as they are.
func AgentTOML(fragment string) string {
	has := func(header string) bool {
		for _, l := range strings.Split(fragment, "\n") {
			if strings.TrimSpace(l) == header {
				return true
			}
		}
		return false
	}
	out := fragment
	if !strings.HasSuffix(out, "\n") && out != "" {
		out += "\n"
	}
	if !has("[etcd]") {
		out += "[etcd]\nnamespace = \"local\"\n"
	}
	switch {
	case !has("[agent]"):
		out += "[agent]\nbackend = \"docker\"\n"
	case !strings.Contains(fragment, "backend"):
		// After the [agent] header; the lines below it shift by one.
		out = strings.Replace(out, "[agent]\n", "[agent]\nbackend = \"docker\"\n", 1)
	}
	if !has("[container]") {
		out += "[container]\n"
	}
	if !has("[resource]") {
		out += "[resource]\n"
	}
	return out
}

// WriteFile writes content to dir/rel, making the directories between,
// and returns the path: fake /proc and /sys trees in tests.
func WriteFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ReexecAsNobody re-runs the current test as user nobody (65534) when the
// process runs as root, where permission bits stop nothing; it returns
// true when it did (the child's result is the test's), false when the test
// should go on here. It skips the test when the re-run is impossible. The
// test binary is copied to a world-readable directory first: go test keeps
// it in a private one. The child runs in the package's directory, or,
// with copies (paths relative to it: fixtures under testdata/), in that
// world-readable directory with a copy of each beside the binary, where
// the package's own may sit in a directory nobody may not read.
func ReexecAsNobody(t *testing.T, copies ...string) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("running as root and cannot find the test binary to re-run as nobody: %v", err)
	}
	dir, err := os.MkdirTemp("", "fgtop-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, c := range copies {
		raw, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, c)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		wd = dir
	}
	run := "^" + strings.ReplaceAll(t.Name(), "/", "$/^") + "$"
	cmd := exec.Command(bin, "-test.run="+run, "-test.v", "-test.count=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME=/tmp", "GOCOVERDIR=")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		if strings.Contains(out, "--- FAIL") || strings.Contains(out, "panic") {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
		t.Skipf("running as root and cannot re-run as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(out, "--- PASS: "+t.Name()) {
		if strings.Contains(out, "--- SKIP: "+t.Name()) {
			t.Skipf("skipped as nobody:\n%s", out)
		}
		t.Fatalf("as nobody, the test did not pass:\n%s", out)
	}
	t.Logf("ran as nobody (uid 65534):\n%s", out)
	return true
}

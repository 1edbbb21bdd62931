//go:build cgo && linux

package main

import (
	"bufio"
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

	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/etcdtest"
)

var (
	etcdTestBinOnce sync.Once
	etcdTestBin     string
	etcdTestBinErr  error
)

// etcdTestBinary builds the fgtop binary once per test process.
func etcdTestBinary(t *testing.T) string {
	t.Helper()
	etcdTestBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fgtop-bin-")
		if err != nil {
			etcdTestBinErr = err
			return
		}
		etcdTestBin = filepath.Join(dir, "fgtop")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", etcdTestBin, ".").CombinedOutput(); err != nil {
			etcdTestBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if etcdTestBinErr != nil {
		t.Fatal(etcdTestBinErr)
	}
	return etcdTestBin
}

// TestSnapshotFollowsPluginSettingsInEtcd runs the built binary's
// `snapshot --follow` against a real etcd: the plugin settings are read
// from the node scope of agent.toml's agent over the global scope, a
// change in etcd reaches the output within 3 s, and a stopped etcd is an
// issue naming etcd and its address. It runs with --devices nvml: where
// no NVIDIA library is loadable (CI) the source lists no GPU but still
// follows the plugin settings; a fake libnvidia-ml.so.1 on
// LD_LIBRARY_PATH, or a real one, lists GPUs as well.
func TestSnapshotFollowsPluginSettingsInEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	etcd := etcdtest.Start(t)
	g := plugin.GlobalPrefix("fgtop-test")
	etcd.Put(g+"allocation_mode", "discrete")
	etcd.Put(g+"unit_mem", "20g")

	dir := t.TempDir()
	scratchRoot := filepath.Join(dir, "scratches")
	if err := os.Mkdir(scratchRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(etcd.Endpoint, ":")
	cfg := filepath.Join(dir, "agent.toml")
	text := fmt.Sprintf(`[etcd]
namespace = "fgtop-test"
addr = { host = %q, port = %s }

[agent]
id = "i-node01"

[container]
scratch-root = %q

[resource]
`, host, port, scratchRoot)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	bin := etcdTestBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "snapshot", "--follow", "--json", "--config", cfg, "--devices", "nvml")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan *report.Snapshot, 64)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			var s report.Snapshot
			if json.Unmarshal(sc.Bytes(), &s) == nil && s.Schema != "" {
				lines <- &s
			}
		}
		close(lines)
	}()
	await := func(what string, within time.Duration, ok func(*report.Snapshot) bool) *report.Snapshot {
		t.Helper()
		deadline := time.After(within)
		for {
			select {
			case s, open := <-lines:
				if !open {
					t.Fatalf("%s: fgtop exited; stderr: %s", what, stderr.String())
				}
				if ok(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("%s: not within %v; stderr: %s", what, within, stderr.String())
			}
		}
	}
	first := await("first line", 20*time.Second, func(*report.Snapshot) bool { return true })
	if p := first.Plugin; p == nil || p.Kind != "open" || p.Source != "plugin-settings" || p.Settings != "etcd "+etcd.Endpoint || !p.SettingsOK {
		t.Fatalf("first line's plugin: %+v", first.Plugin)
	}

	// The node scope of agent i-node01 overrides the global key.
	changed := time.Now()
	etcd.Put(plugin.NodePrefix("fgtop-test", "i-node01")+"allocation_mode", "fractional")
	await("node-scope change", 3*time.Second, func(s *report.Snapshot) bool {
		return s.Plugin != nil && s.Plugin.Kind == "fractional" && s.Allocator.AllocationMode == "fractional" && s.Allocator.QuantumSize == "0.1"
	})
	t.Logf("etcd change reached snapshot --follow in %v", time.Since(changed).Round(time.Millisecond))

	etcd.Stop()
	s := await("etcd stopped", 10*time.Second, func(s *report.Snapshot) bool {
		for _, i := range s.Issues {
			if i.Code == "plugin-settings" && strings.Contains(i.Message, "etcd at "+etcd.Endpoint) {
				return true
			}
		}
		return false
	})
	if s.Plugin.SettingsOK || s.Plugin.Kind != "fractional" {
		t.Fatalf("with etcd stopped: %+v (the last settings must be kept)", s.Plugin)
	}
}

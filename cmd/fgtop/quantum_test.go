package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/plugin"
)

// A fractional node whose quantum_size cannot be read is not simulated
// with a default quantum: 0.15 of cuda.shares lands as 0.10 with the
// mock's 0.1 and as 0.15 with FractionAllocMap's 0.01, while the node's
// allocator may refuse it. simulate says the quantum is unknown (exit 2)
// until --quantum gives it, and snapshot says so beside the devices.
func TestRealNodeUnknownQuantum(t *testing.T) {
	n := newRealNode(t)
	run := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, n.bin, args...)
		cmd.Env = n.env()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return out.String(), errb.String(), 0
		case errors.As(err, &ee):
			return out.String(), errb.String(), ee.ExitCode()
		}
		t.Fatalf("fgtop %s: %v", strings.Join(args, " "), err)
		return "", "", -1
	}
	live := []string{"simulate", "--config", n.agentToml, "--devices", "nvml", "--request", "cuda.shares=0.15"}
	pluginFile := filepath.Join(t.TempDir(), "plugin.json")
	empty := []string{"simulate", "--devices", "nvml", "--plugin-config", pluginFile, "--request", "cuda.shares=0.15"}
	for _, tc := range []struct {
		name, quantum string
		why           string // the issue's reason
	}{
		{"quantum_size not a decimal", "banana", "its quantum_size is not a positive decimal"},
		{"quantum_size negative", "-0.25", "its quantum_size is not a positive decimal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g", "quantum_size": tc.quantum}, nil)
			n.kernels(t, map[string]string{})
			js := fmt.Sprintf(`{"cuda": {"allocation_mode": "fractional", "unit_mem": "20g", "quantum_size": %q}}`, tc.quantum)
			if err := os.WriteFile(pluginFile, []byte(js), 0o644); err != nil {
				t.Fatal(err)
			}
			s := n.snapshot(t)
			if s.Allocator.AllocationMode != "fractional" || s.Allocator.QuantumSize != "" {
				t.Errorf("allocator %+v: want fractional with no quantum_size", s.Allocator)
			}
			said := false
			for _, m := range s.issuesWith("plugin-settings") {
				said = said || strings.Contains(m, "quantum_size unknown ("+tc.why+")")
			}
			if !said {
				t.Errorf("snapshot issues %q: want one saying the quantum is unknown (%s)", s.issuesWith("plugin-settings"), tc.why)
			}
			for _, args := range [][]string{live, empty} {
				out, errs, rc := run(t, args...)
				if rc != 2 || !strings.Contains(errs, "the quantum_size of the fractional maps is unknown") || !strings.Contains(errs, "--quantum") || out != "" {
					t.Errorf("fgtop %s: rc %d\nstdout %q\nstderr %s\nwant exit 2 saying the quantum is unknown and naming --quantum", strings.Join(args, " "), rc, out, errs)
				}
				// Given, the request is placed with it: 0.15 of 0.25 is refused
				// as the node's own allocator would.
				out, errs, rc = run(t, append(args, "--quantum", "0.25", "--json")...)
				if rc != 1 || !strings.Contains(out, `"quantum": "0.25"`) || !strings.Contains(out, "NotMultipleOfQuantum") {
					t.Errorf("fgtop %s --quantum 0.25: rc %d\n%s\n%s\nwant NotMultipleOfQuantum (exit 1)", strings.Join(args, " "), rc, out, errs)
				}
			}
		})
	}
	t.Run("quantum_size read", func(t *testing.T) {
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g", "quantum_size": "0.05"}, nil)
		out, errs, rc := run(t, append(live, "--json")...)
		if rc != 0 || !strings.Contains(out, `"quantum": "0.05"`) || !strings.Contains(out, `"0.15"`) {
			t.Errorf("rc %d\n%s\n%s\nwant 0.15 placed with the settings' quantum 0.05", rc, out, errs)
		}
	})
}

// Two agents whose node-scope plugin settings register the same GPUs in
// different units: the shares shown are the first agent's, so check
// cannot say the second's amount fits its own registration. It says the
// start-up checks on accelerator amounts were not run (exit 1), where the
// same file on agents that agree is ok.
func TestRealNodeAgentsSettingsDiffer(t *testing.T) {
	n := newRealNode(t)
	host, port, _ := strings.Cut(n.etcd.Endpoint, ":")
	const a, b = "i-e2e-a", "i-e2e-b"
	text := fmt.Sprintf(`[etcd]
namespace = %q
addr = { host = %q, port = %s }

[agent]
backend = "docker"

[container]
scratch-root = %q

[resource]
reserved-cpu = 0
reserved-mem = "0"
allocation-mode = "manual"

[[agents]]
  [agents.agent]
  id = %q
  service-addr = { host = "127.0.0.1", port = %d }
  [agents.resource]
  cpu = 1
  mem = "64M"
  devices = { "cuda.shares" = "7.92" }

[[agents]]
  [agents.agent]
  id = %q
  service-addr = { host = "127.0.0.1", port = %d }
  [agents.resource]
  cpu = 1
  mem = "64M"
  devices = { "cuda.shares" = "7.92" }
`, realNodeNS, host, port, n.scratch, a, freeTCPPort(t), b, freeTCPPort(t))
	cfg := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, n.bin, "check", "--config", cfg, "--devices", "nvml", "--json")
		cmd.Env = n.env()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &ee):
			return string(out) + errb.String(), ee.ExitCode()
		}
		t.Fatal(err)
		return "", -1
	}
	g := plugin.GlobalPrefix(realNodeNS)
	for _, k := range []string{"allocation_mode", "unit_mem"} {
		defer n.etcd.Delete(g + k)
	}
	n.etcd.Put(g+"allocation_mode", "fractional")
	n.etcd.Put(g+"unit_mem", "20g") // 3.98 shares a GPU, 15.92 in all

	out, rc := check(t)
	if rc != 0 || !strings.Contains(out, `"status": "ok"`) || !strings.Contains(out, `"startup_checked": true`) {
		t.Fatalf("agents that agree: rc %d\n%s\nwant ok", rc, out)
	}

	// b's plugin registers 0.99 a GPU (3.96 in all): its 7.92 is over.
	bp := plugin.NodePrefix(realNodeNS, b) + "unit_mem"
	n.etcd.Put(bp, "80g")
	defer n.etcd.Delete(bp)
	out, rc = check(t)
	if rc != 1 || !strings.Contains(out, `"status": "unchecked"`) || !strings.Contains(out, `"startup_checked": false`) ||
		!strings.Contains(out, "settings differ") {
		t.Fatalf("agents that differ in unit_mem: rc %d\n%s\nwant unchecked (exit 1) saying the settings differ", rc, out)
	}

	// b runs the discrete plugin: its slot is cuda.device, which the
	// file does not give it.
	n.etcd.Delete(bp)
	mp := plugin.NodePrefix(realNodeNS, b) + "allocation_mode"
	n.etcd.Put(mp, "discrete")
	defer n.etcd.Delete(mp)
	out, rc = check(t)
	if rc != 1 || !strings.Contains(out, `"status": "unchecked"`) || !strings.Contains(out, "settings differ") {
		t.Fatalf("agents that differ in allocation_mode: rc %d\n%s\nwant unchecked (exit 1) saying the settings differ", rc, out)
	}
}

//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoHelperProcess is not a test: it is the fgtop binary when the
// demo tests run this test executable as a child process (the os/exec test
// pattern), so that a real process receives real signals.
func TestDemoHelperProcess(t *testing.T) {
	if os.Getenv("FGTOP_DEMO_HELPER") != "1" {
		t.Skip("helper process for the demo tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args))
}

// demoChild starts `fgtop demo ARGS` as a child process with its own
// TMPDIR, so that the test can see the node's directory appear and go.
type demoChild struct {
	cmd    *exec.Cmd
	tmp    string
	stdout io.ReadCloser
	lines  *bufio.Scanner
	stderr *strings.Builder
}

func startDemoChild(t *testing.T, args ...string) *demoChild {
	t.Helper()
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--", "demo"}, args...)...)
	cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1", "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &demoChild{cmd: cmd, tmp: tmp, stdout: stdout, stderr: &stderr}
	c.lines = bufio.NewScanner(stdout)
	c.lines.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return c
}

// snapshotLine is the part of an NDJSON line the tests look at.
type snapshotLine struct {
	Schema  string `json:"schema"`
	Seq     uint64 `json:"seq"`
	Node    string `json:"node"`
	Mode    string `json:"mode"`
	Devices []struct {
		Key       string `json:"key"`
		Slot      string `json:"slot"`
		Telemetry *struct {
			Processes []struct {
				PID       uint32 `json:"pid"`
				Container string `json:"container"`
				Kernel    string `json:"kernel"`
				Owner     string `json:"owner"`
			} `json:"processes"`
		} `json:"telemetry"`
	} `json:"devices"`
	Kernels []struct {
		ID          string `json:"id"`
		Agent       string `json:"agent"`
		Container   string `json:"container"`
		OwnerUserID string `json:"owner_user_id"`
		SessionID   string `json:"session_id"`
		SessionType string `json:"session_type"`
	} `json:"kernels"`
	Issues []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"issues"`
	Agents []struct {
		ID      string              `json:"id"`
		Owns    map[string][]string `json:"owns"`
		Given   map[string]string   `json:"given"`
		Restart *struct {
			State string `json:"state"`
		} `json:"restart"`
	} `json:"agents"`
}

// next reads and decodes the next NDJSON line.
func (c *demoChild) next(t *testing.T) snapshotLine {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- c.lines.Scan() }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatalf("no line on stdout (%v); stderr:\n%s", c.lines.Err(), c.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no line on stdout after 20 s; stderr:\n%s", c.stderr)
	}
	var s snapshotLine
	if err := json.Unmarshal(c.lines.Bytes(), &s); err != nil {
		t.Fatalf("not a JSON line: %v\n%.200s", err, c.lines.Bytes())
	}
	return s
}

// nodeDirs lists the demo node directories in the child's TMPDIR.
func (c *demoChild) nodeDirs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(c.tmp, "fgtop-demo-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wait waits for the child to exit and returns its exit code.
func (c *demoChild) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		t.Fatalf("the demo did not exit; stderr:\n%s", c.stderr)
	}
	return c.cmd.ProcessState.ExitCode()
}

// TestDemoSignalsRemoveFiles runs the demo binary, stops it with a signal
// and checks that its temporary files are gone. GNU timeout sends its
// signal twice, to the child and then to its process group: that was taken
// for a second signal and the files were left.
func TestDemoSignalsRemoveFiles(t *testing.T) {
	tests := []struct {
		name  string
		sig   syscall.Signal
		twice bool
	}{
		{"SIGTERM", syscall.SIGTERM, false},
		{"SIGINT", syscall.SIGINT, false},
		{"SIGHUP", syscall.SIGHUP, false},
		{"SIGTERM twice at once, as timeout sends it", syscall.SIGTERM, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startDemoChild(t, "--headless", "--speed", "20", "--seed", "3")
			s := c.next(t)
			if s.Schema != "fgtop.snapshot/v1" || len(s.Kernels) == 0 {
				t.Fatalf("first line: schema %q, %d kernels", s.Schema, len(s.Kernels))
			}
			if d := c.nodeDirs(t); len(d) != 1 {
				t.Fatalf("node directories while running: %v", d)
			}
			if err := c.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if tt.twice {
				// Apart enough that the child's runtime takes them as two.
				time.Sleep(5 * time.Millisecond)
				if err := c.cmd.Process.Signal(tt.sig); err != nil {
					t.Fatal(err)
				}
			}
			_, _ = io.Copy(io.Discard, c.stdout)
			if code := c.wait(t); code != 0 {
				t.Errorf("exit code %d after %s; stderr:\n%s", code, tt.name, c.stderr)
			}
			if d := c.nodeDirs(t); len(d) != 0 {
				t.Errorf("left behind after %s: %v", tt.name, d)
			}
		})
	}
}

// TestDemoClosedStdout: `fgtop demo --headless | head -1` ends cleanly and
// removes its files.
func TestDemoClosedStdout(t *testing.T) {
	c := startDemoChild(t, "--headless", "--speed", "50")
	c.next(t)
	_ = c.stdout.Close()
	if code := c.wait(t); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, c.stderr)
	}
	if d := c.nodeDirs(t); len(d) != 0 {
		t.Errorf("left behind: %v", d)
	}
}

// TestDemoHeadlessSaysFlags: the headless demo's line on stderr gives the
// flags that point other commands at its node (its files, and the host it
// simulates), where "node files in DIR" alone left watch reading this
// machine's cores and memory.
func TestDemoHeadlessSaysFlags(t *testing.T) {
	c := startDemoChild(t, "--headless", "--speed", "50")
	c.next(t)
	_ = c.stdout.Close()
	c.wait(t)
	out := c.stderr.String()
	_, flags, ok := strings.Cut(out, "point commands at it with: ")
	flags, _, _ = strings.Cut(flags, ";")
	if !ok || !strings.HasPrefix(flags, "--config "+c.tmp) {
		t.Fatalf("stderr gives no flags for the node:\n%s", out)
	}
	for _, w := range []string{"/agent.toml --devices ", "/mock-accelerator.toml --mock-etcd ", "/mock-accelerator.etcd.json --host-cpus ", " --host-mem "} {
		if !strings.Contains(flags, w) {
			t.Errorf("flags %q lack %q", flags, w)
		}
	}
}

// TestDemoHeadlessStream checks the NDJSON stream: one snapshot per line,
// in order, describing the demo node; its GPU processes carry the ids of
// live kernels (whose container they run in), and its kernels their owner
// and session.
func TestDemoHeadlessStream(t *testing.T) {
	c := startDemoChild(t, "--headless", "--speed", "30", "--seed", "8")
	var last uint64
	agents := map[string]bool{}
	mapped, owned := 0, 0
	for i := 0; i < 8; i++ {
		s := c.next(t)
		containers := map[string]string{}
		for _, k := range s.Kernels {
			containers[k.ID] = k.Container
			if k.OwnerUserID != "" && k.SessionID != "" && k.SessionType != "" {
				owned++
			}
		}
		for _, d := range s.Devices {
			if d.Telemetry == nil {
				continue
			}
			for _, p := range d.Telemetry.Processes {
				if p.Owner != "kernel" {
					continue
				}
				mapped++
				if cid, live := containers[p.Kernel]; !live || cid != p.Container {
					t.Errorf("line %d: process %d credited to %q (live %v, its container %q, the process's %q)", i, p.PID, p.Kernel, live, cid, p.Container)
				}
			}
		}
		if s.Seq <= last {
			t.Fatalf("line %d: seq %d after %d", i, s.Seq, last)
		}
		last = s.Seq
		if s.Node != "fgtop-demo" || s.Mode != "manual" {
			t.Fatalf("line %d: node %q mode %q", i, s.Node, s.Mode)
		}
		for _, k := range s.Kernels {
			agents[k.Agent] = true
		}
		if i == 0 {
			slots := map[string]int{}
			for _, d := range s.Devices {
				slots[d.Slot]++
			}
			if slots["cuda.shares"] != 4 || slots["cuda.device:5g-mig"] != 2 || slots["cpu"] != 32 {
				t.Errorf("devices by slot: %v", slots)
			}
			// The first screen says nothing about the demo's own files:
			// they are in the form Backend.AI main loads.
			for _, is := range s.Issues {
				if is.Code == "config" || strings.Contains(is.Message, "BEP-1044") {
					t.Errorf("first snapshot: an issue about the demo's files: %s %s", is.Code, is.Message)
				}
			}
			// Backend.AI main's slot-based form: every agent sees every
			// device and is given amounts.
			if len(s.Agents) != 2 || s.Agents[0].Owns != nil || s.Agents[1].Given["cuda.shares"] != "2.0" || s.Agents[0].Given["cpu"] != "15" {
				t.Errorf("agents: %+v", s.Agents)
			}
		}
	}
	if !agents["i-demo-numa0"] || !agents["i-demo-numa1"] {
		t.Errorf("kernels only on %v", agents)
	}
	if mapped == 0 || owned == 0 {
		t.Errorf("%d processes mapped to kernels, %d kernels with owner and session", mapped, owned)
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_, _ = io.Copy(io.Discard, c.stdout)
	c.wait(t)
}

// TestDemoRestartAfter: an apply made with the CLI on the running demo's
// agent.toml (slot-based, as main loads it) makes the changed agents
// "restart pending" in the stream; --restart-after restarts them, and the
// stream says they run the file again.
func TestDemoRestartAfter(t *testing.T) {
	c := startDemoChild(t, "--headless", "--speed", "5", "--restart-after", "500ms")
	first := c.next(t)
	for _, a := range first.Agents {
		if a.Restart == nil || a.Restart.State != "current" {
			t.Fatalf("first snapshot: agent %s restart %+v, want current", a.ID, a.Restart)
		}
	}
	dirs := c.nodeDirs(t)
	if len(dirs) != 1 {
		t.Fatalf("node dirs %v", dirs)
	}
	dir := dirs[0]
	code, out := runCLI(t, "apply", "--config", filepath.Join(dir, "agent.toml"),
		"--devices", filepath.Join(dir, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(dir, "mock-accelerator.etcd.json"),
		"--host-cpus", "0-31", "--host-mem", "256g",
		"--slot", "i-demo-numa0=cuda.shares=1.5", "--slot", "i-demo-numa1=cuda.shares=2.5", "--yes", "--force")
	wantCode(t, code, exitOK, out, "verified")
	pending, restarted := false, false
	end := time.Now().Add(15 * time.Second)
	for time.Now().Before(end) && !restarted {
		s := c.next(t)
		states := map[string]string{}
		for _, a := range s.Agents {
			if a.Restart != nil {
				states[a.ID] = a.Restart.State
			}
		}
		switch {
		case states["i-demo-numa0"] == "restart-pending" && states["i-demo-numa1"] == "restart-pending":
			pending = true
		case pending && states["i-demo-numa0"] == "current" && states["i-demo-numa1"] == "current":
			restarted = true
		}
	}
	if !pending || !restarted {
		t.Errorf("restart pending seen %v, restarted seen %v", pending, restarted)
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_, _ = io.Copy(io.Discard, c.stdout)
	c.wait(t)
}

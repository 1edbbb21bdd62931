package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/testfix"
)

// fgtopProc runs fgtop ARGS as a child process (this test binary, through
// TestDemoHelperProcess): a real second process, as an operator's shell is.
func fgtopProc(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "FGTOP_DEMO_HELPER=1")
	return cmd
}

// runFgtop runs fgtop ARGS to the end and returns its exit code, stdout and
// stderr.
func runFgtop(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := fgtopProc(args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("fgtop %s -> %d\nstderr: %s", strings.Join(args, " "), code, stderr.String())
	return code, stdout.String(), stderr.String()
}

// shareRoot turns newNode's node into one where both agents share a single
// scratch root (as the fixture's agent.toml has it).
func (n *node) shareRoot(t *testing.T) string {
	t.Helper()
	shared := filepath.Join(n.dir, "scratches")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	text := string(n.original)
	for _, a := range []string{agentA, agentB} {
		line := "  scratch-root = \"" + n.roots[a] + "\"\n"
		if !strings.Contains(text, line) {
			t.Fatalf("node changed: no %q", line)
		}
		text = strings.Replace(text, line, "", 1)
		n.roots[a] = shared
	}
	text = strings.Replace(text, `scratch-root = "/var/lib/backend.ai/scratches"`, `scratch-root = "`+shared+`"`, 1)
	n.original = []byte(text)
	if err := os.WriteFile(n.config, n.original, 0o640); err != nil {
		t.Fatal(err)
	}
	return shared
}

// addRecord writes the kernel's recovery.json naming agent, made from a
// fixture sample.
func addRecord(t *testing.T, kernelDir, agent string) {
	t.Helper()
	text := string(readFixture(t, "recovery.numa0-batch.json"))
	text = strings.ReplaceAll(text, "21e330bf-e15a-47a9-9183-df27ccd257b6", filepath.Base(kernelDir))
	text = strings.ReplaceAll(text, agentA, agent)
	if err := os.WriteFile(filepath.Join(kernelDir, "config", "recovery.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckSharedRoot: two agents share one scratch root and each kernel
// has its recovery.json: every kernel is attributed to its own agent and
// check exits 0 (it reported false drift-not-owner and exited 1).
func TestCheckSharedRoot(t *testing.T) {
	n := newNode(t)
	shared := n.shareRoot(t)
	ka := n.addKernel(t, agentA, "0b7e4c2a-1f3d-4a5b-9c8e-7d6f5e4a3b21", gpu1, "0.50")
	kb := n.addKernel(t, agentB, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", gpu2, "0.30")
	addRecord(t, ka, agentA)
	addRecord(t, kb, agentB)
	code, out := runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitOK, out, "the live state matches the config")

	// The same tree named with a bare --scratch-root (the config's root
	// moved, say): the records still say whose each kernel is.
	moved := filepath.Join(n.dir, "elsewhere")
	if err := os.Rename(shared, moved); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, n.draftCheck("--scratch-root", moved)...)
	wantCode(t, code, exitOK, out, "the live state matches the config", "2 live kernel(s)")
	if err := os.Rename(moved, shared); err != nil {
		t.Fatal(err)
	}

	code, stdout, _ := runFgtop(t, n.args("snapshot", "--json")...)
	if code != 0 {
		t.Fatalf("snapshot exit %d", code)
	}
	var doc struct {
		Kernels []struct {
			ID, Agent, AgentBy, SessionType, Image string
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(strings.ReplaceAll(stdout, `"agent_by"`, `"AgentBy"`), `"session_type"`, `"SessionType"`)), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range doc.Kernels {
		got[k.ID] = k.Agent + " by " + k.AgentBy + " " + k.SessionType
		if k.Image == "" {
			t.Errorf("kernel %s: no image in the JSON", k.ID)
		}
	}
	want := map[string]string{filepath.Base(ka): agentA + " by recovery.json batch", filepath.Base(kb): agentB + " by recovery.json batch"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("kernel %s: %q, want %q", id, got[id], w)
		}
	}

	// A record naming the other agent's kernel... is still that agent's:
	// the record, not the directory, says whose it is, and numa1 holding
	// gpu1 is real drift.
	addRecord(t, ka, agentB)
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitProblem, out, "drift-not-owner", "of agent "+agentB+" holds 0.50 cuda.shares on cuda:"+gpu1)
}

// TestSnapshotAllocMapForms: --alloc-map is upstream's per-device ratio,
// --alloc-map=absolute the old sums, on a fixture tree where each GPU's
// capacity is 1.33 fGPU (min(40G/30g, 108/81) rounded down to 0.01) and one
// kernel holds a whole device (no capacity registered for cuda.device
// there: the raw amount).
func TestSnapshotAllocMapForms(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "scratch")
	write := func(id, name string, edit func(string) string) {
		t.Helper()
		text := string(readFixture(t, name))
		if edit != nil {
			text = edit(text)
		}
		p := filepath.Join(root, id, "config", "resource.txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("7f3c2a1e-5b4d-4c8e-9a21-3d6f0b8e4c17", "resource.cpu-only.txt", nil)
	write("2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", "resource.cuda-shares-single.txt", nil)
	write("c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63", "resource.cuda-shares-split.txt", nil)
	write("d0d0d0d0-0000-4000-8000-000000000001", "resource.cuda-shares-single.txt", func(s string) string {
		return strings.Replace(s, "CUDA.SHARES_SHARES="+gpu4+":0.50", "CUDA.DEVICE_SHARES="+gpu1+":1", 1)
	})
	// A file that does not parse is skipped, not a truncated map.
	write("e0e0e0e0-0000-4000-8000-000000000002", "resource.cuda-shares-single.txt", func(s string) string {
		return strings.Replace(s, "MOUNTS=", "MOUNTZ=", 1)
	})
	mock := filepath.Join(dir, "mock-accelerator.toml")
	etcd := filepath.Join(dir, "etcd.json")
	os.WriteFile(mock, readFixture(t, "mock-accelerator.toml"), 0o644)
	etcdText := strings.Replace(string(readFixture(t, "mock-accelerator.etcd.json")), `"unit_mem": "40g"`, `"unit_mem": "30g"`, 1)
	etcdText = strings.Replace(etcdText, `"unit_proc": "108"`, `"unit_proc": "81"`, 1)
	if !strings.Contains(etcdText, `"unit_proc": "81"`) || !strings.Contains(etcdText, `"unit_mem": "30g"`) {
		t.Fatal("fixture changed: mock etcd settings")
	}
	os.WriteFile(etcd, []byte(etcdText), 0o644)
	args := []string{"snapshot", "--scratch-root", "i-gpu-node01=" + root, "--devices", mock, "--mock-etcd", etcd}

	cases := []struct {
		flag string
		want map[string]string
	}{
		// 0.60/1.33 = 0.45112..., 0.50/1.33 = 0.37593...
		{"--alloc-map", map[string]string{gpu1: "1.0000", gpu2: "0.4511", gpu3: "0.4511", gpu4: "0.3759"}},
		{"--alloc-map=absolute", map[string]string{gpu1: "1", gpu2: "0.60", gpu3: "0.60", gpu4: "0.50"}},
	}
	for _, c := range cases {
		code, stdout, stderr := runFgtop(t, append(args, c.flag)...)
		if code != 0 {
			t.Fatalf("%s: exit %d", c.flag, code)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%s: %v\n%s", c.flag, err, stdout)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.flag, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (map %v)", c.flag, k, got[k], v, got)
			}
		}
		if !strings.Contains(stderr, "skipped") || !strings.Contains(stderr, "e0e0e0e0-0000-4000-8000-000000000002") {
			t.Errorf("%s: the broken file is not reported on stderr: %s", c.flag, stderr)
		}
	}
	code, _, stderr := runFgtop(t, append(args, "--alloc-map=relative")...)
	if code != exitBadUsage || !strings.Contains(stderr, "absolute") {
		t.Errorf("--alloc-map=relative: exit %d, %s", code, stderr)
	}
	code, _, stderr = runFgtop(t, append(args, "--alloc-map", "absolute")...)
	if code != exitBadUsage || !strings.Contains(stderr, "--alloc-map=absolute, with '='") {
		t.Errorf("--alloc-map absolute: exit %d, %s", code, stderr)
	}

	// devices[].kernels counts the kernels on cpu and mem devices too.
	code, stdout, _ := runFgtop(t, append(args, "--json")...)
	if code != 0 {
		t.Fatal(code)
	}
	var doc struct {
		Devices []struct {
			Key     string `json:"key"`
			Kernels int    `json:"kernels"`
		} `json:"devices"`
		Unknown []struct {
			Key     string `json:"key"`
			Kernels int    `json:"kernels"`
		} `json:"unknown_devices"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	kernels := map[string]int{}
	for _, d := range append(doc.Devices, doc.Unknown...) {
		kernels[d.Key] = d.Kernels
	}
	if kernels["mem:root"] != 4 || kernels["cuda:"+gpu2] != 1 {
		t.Errorf("device kernel counts: %v", kernels)
	}
}

// TestSnapshotBlindRoot: a one-shot snapshot refuses a mistyped
// --scratch-root (exit 2, said once, nothing on stdout) rather than print a
// node without that root's kernels; a root of agent.toml's that does not
// exist yet (the agent creates it) is warned about and the report printed.
func TestSnapshotBlindRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	mock := filepath.Join(testfix.Dir(t, "backendai"), "mock-accelerator.toml")
	for _, c := range []struct{ root, want string }{
		{filepath.Join(dir, "nope"), "does not exist"},
		{file, "is not a directory"},
	} {
		code, stdout, stderr := runFgtop(t, "snapshot", "--scratch-root", c.root, "--devices", mock, "--alloc-map")
		msg := "scratch root " + c.root + " (agent " + filepath.Base(c.root) + ") " + c.want
		if code != exitBadUsage || stdout != "" || strings.Count(stderr, msg) != 1 ||
			!strings.Contains(stderr, "a one-shot report would leave out the kernels under it") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.root, code, stdout, stderr)
		}
	}

	n := newNode(t)
	if err := os.RemoveAll(n.roots[agentB]); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runFgtop(t, n.args("snapshot", "--alloc-map")...)
	if code != 0 || !strings.HasPrefix(stdout, "{") || !strings.Contains(stderr, "warning: scratch root "+n.roots[agentB]) {
		t.Errorf("config root not created yet: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestScratchRootNamesAConfigAgent: with a config, --scratch-root
// AGENT=DIR must name one of its agents; a typo made a new agent of the
// kernels under DIR, taken from the one that runs them, with exit 0.
func TestScratchRootNamesAConfigAgent(t *testing.T) {
	n := newNode(t)
	code, stdout, stderr := runFgtop(t, n.args("snapshot", "--alloc-map", "--scratch-root", "i-zz="+n.roots[agentB])...)
	if code != exitBadUsage || stdout != "" || !strings.Contains(stderr, `unknown agent "i-zz"; the config's agents are: `+agentA+", "+agentB) {
		t.Errorf("an unknown agent: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, root := range []string{agentB + "=" + n.roots[agentB], n.roots[agentB]} {
		if code, stdout, _ := runFgtop(t, n.args("snapshot", "--alloc-map", "--scratch-root", root)...); code != 0 || !strings.HasPrefix(stdout, "{") {
			t.Errorf("--scratch-root %s: exit %d", root, code)
		}
	}
}

// TestScratchRootNamesAConfigAgentPartition: the partition commands scan
// the node their own way (nodeopen.Scan), and took an unknown AGENT as a
// new agent: its kernels were judged against no partition, so check said
// ok and apply and rollback wrote past the live-kernel guard, exit 0.
// Each must refuse it as snapshot does (exit 2), leaving the file as it
// was; the config's own agent, or a bare DIR, is still taken.
func TestScratchRootNamesAConfigAgentPartition(t *testing.T) {
	n := newNode(t)
	// A rollback needs an apply to undo.
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitOK, out)
	applied := n.current(t)
	bad := []string{"--scratch-root", "i-zz=" + n.roots[agentB]}
	want := "--scratch-root i-zz=" + n.roots[agentB] + ": unknown agent \"i-zz\"; the config's agents are: " + agentA + ", " + agentB + " (" + n.config + ")"
	move := []string{"--move", "cuda:" + gpu3 + "=" + agentA}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"check", n.draftCheck(bad...)},
		{"plan", n.args("plan", append(move, bad...)...)},
		{"apply", n.args("apply", append(append(move, "--yes"), bad...)...)},
		{"apply --force", n.args("apply", append(append(move, "--yes", "--force"), bad...)...)},
		{"rollback", n.args("rollback", append([]string{"--yes"}, bad...)...)},
		{"rollback --force", n.args("rollback", append([]string{"--yes", "--force"}, bad...)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, tt.args...)
			wantCode(t, code, exitBadUsage, out, want)
			if !bytes.Equal(n.current(t), applied) {
				t.Fatalf("%s wrote the file", tt.name)
			}
		})
	}
	for _, root := range []string{agentB + "=" + n.roots[agentB], n.roots[agentB]} {
		code, out := runCLI(t, n.draftCheck("--scratch-root", root)...)
		wantCode(t, code, exitOK, out)
	}
}

// lines reads a child's stdout line by line into a channel.
func lines(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("child stderr:\n%s", stderr.String())
		}
	})
	ch := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
		close(ch)
	}()
	return ch
}

func nextLine(t *testing.T, ch <-chan string, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("the child ended")
		}
		return l
	case <-time.After(d):
		t.Fatalf("no line within %v", d)
	}
	return ""
}

func quiet(t *testing.T, ch <-chan string, d time.Duration, what string) {
	t.Helper()
	select {
	case l := <-ch:
		t.Fatalf("%s: printed %.300s", what, l)
	case <-time.After(d):
	}
}

// TestFollowSeesApplyFromAnotherProcess: `snapshot --follow` prints nothing
// while nothing changes, and shows a device's new owner within 2 s of an
// `fgtop apply` run by another process.
func TestFollowSeesApplyFromAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for quiet periods")
	}
	n := newNode(t)
	n.addKernel(t, agentB, "5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90", gpu2, "0.30")
	ch := lines(t, fgtopProc(n.args("snapshot", "--follow")...))
	type doc struct {
		Agents []struct {
			ID   string              `json:"id"`
			Owns map[string][]string `json:"owns"`
		} `json:"agents"`
	}
	owner := func(line string) string {
		var d doc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("not JSON: %v: %.200s", err, line)
		}
		for _, a := range d.Agents {
			for _, id := range a.Owns["cuda"] {
				if id == gpu3 {
					return a.ID
				}
			}
		}
		return ""
	}
	if o := owner(nextLine(t, ch, 20*time.Second)); o != agentA {
		t.Fatalf("gpu3 starts with %q, want %s", o, agentA)
	}
	// The inventory is polled every second: more than one poll, no line.
	quiet(t, ch, 2500*time.Millisecond, "nothing changed")

	code, _, stderr := runFgtop(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	if code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	applied := time.Now()
	deadline := applied.Add(2 * time.Second)
	for {
		l := nextLine(t, ch, time.Until(deadline))
		if owner(l) == agentB {
			t.Logf("new owner on the follow stream %v after apply returned", time.Since(applied))
			break
		}
	}
	quiet(t, ch, 1500*time.Millisecond, "nothing changed after the apply")
}

// TestFollowHeartbeat: --heartbeat adds marked lines while nothing changes.
func TestFollowHeartbeat(t *testing.T) {
	n := newNode(t)
	ch := lines(t, fgtopProc(n.args("snapshot", "--follow", "--alloc-map", "--heartbeat", "200ms")...))
	if l := nextLine(t, ch, 20*time.Second); l != "{}" {
		t.Fatalf("first line %q, want the empty map", l)
	}
	for i := 0; i < 2; i++ {
		var hb struct {
			Heartbeat bool   `json:"heartbeat"`
			Time      string `json:"time"`
		}
		l := nextLine(t, ch, 2*time.Second)
		if err := json.Unmarshal([]byte(l), &hb); err != nil || !hb.Heartbeat || hb.Time == "" {
			t.Fatalf("not a heartbeat: %q (%v)", l, err)
		}
	}
	code, _, stderr := runFgtop(t, "snapshot", "--heartbeat", "1s", "--devices", n.mock, "--scratch-root", t.TempDir())
	if code != exitBadUsage || !strings.Contains(stderr, "--heartbeat needs --follow") {
		t.Errorf("--heartbeat without --follow: exit %d %s", code, stderr)
	}
}

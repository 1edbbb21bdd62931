package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/internal/cliwords"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/partition"
)

const (
	gpu1 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	gpu2 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	gpu3 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	gpu4 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"

	agentA = "i-gpu-node01-numa0"
	agentB = "i-gpu-node01-numa1"
)

// node is a temp node: the commented two-agent device-based agent.toml
// with a scratch root per agent, the mock devices, and this host's cores.
type node struct {
	dir      string
	config   string
	mock     string
	etcd     string
	roots    map[string]string
	coresA   []string
	coresB   []string
	original []byte
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfix.Dir(t, "backendai"), name))
	if err != nil {
		t.Skipf("shared fixture not available: %v", err)
	}
	return b
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// newNode writes the config. The fixture assumes a 32-core host with
// plenty of memory; the CPU lists are split over this host's cores and mem
// is made small, so that the only difference from a real node is the
// kernels each test writes. Every other byte (comments included) is the
// fixture's.
func newNode(t *testing.T) *node {
	t.Helper()
	n := &node{dir: t.TempDir(), roots: map[string]string{}}
	n.mock = filepath.Join(n.dir, "mock-accelerator.toml")
	n.etcd = filepath.Join(n.dir, "mock-accelerator.etcd.json")
	os.WriteFile(n.mock, readFixture(t, "mock-accelerator.toml"), 0o644)
	os.WriteFile(n.etcd, readFixture(t, "mock-accelerator.etcd.json"), 0o644)

	src, err := inventory.Open(n.mock, inventory.OpenOptions{MockEtcdPath: n.etcd})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := src.Poll(context.Background())
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	var cores []string
	for _, d := range inv.Devices {
		if d.Name == "cpu" {
			cores = append(cores, string(d.ID))
		}
	}
	if len(cores) < 2 {
		t.Skipf("this host has %d usable core(s); the two agents need one each", len(cores))
	}
	n.coresA, n.coresB = cores[:len(cores)/2], cores[len(cores)/2:]

	text := string(readFixture(t, "agent.multi-agent.device-based.toml"))
	for _, a := range []string{agentA, agentB} {
		n.roots[a] = filepath.Join(n.dir, "scratch-"+a)
		if err := os.MkdirAll(n.roots[a], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(old, new string) {
		t.Helper()
		if strings.Count(text, old) != 1 {
			t.Fatalf("fixture changed: %q appears %d times", old, strings.Count(text, old))
		}
		text = strings.Replace(text, old, new, 1)
	}
	replace(`cpu = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"]`, "cpu = "+quoteList(n.coresA))
	replace(`cpu = ["16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31"]`, "cpu = "+quoteList(n.coresB))
	replace(`mem = "120G"                            # amount`, `mem = "64M"                             # amount`)
	replace("  cpu = "+quoteList(n.coresB)+"\n  mem = \"120G\"", "  cpu = "+quoteList(n.coresB)+"\n  mem = \"64M\"")
	replace("  port-range = [30000, 30999]             # keep ranges disjoint\n",
		"  port-range = [30000, 30999]             # keep ranges disjoint\n  scratch-root = \""+n.roots[agentA]+"\"\n")
	replace("  port-range = [31000, 31999]\n", "  port-range = [31000, 31999]\n  scratch-root = \""+n.roots[agentB]+"\"\n")
	n.original = []byte(text)
	n.config = filepath.Join(n.dir, "agent.toml")
	if err := os.WriteFile(n.config, n.original, 0o640); err != nil {
		t.Fatal(err)
	}
	return n
}

// addKernel writes a kernel of agent holding shares of gpu, in the
// resource.txt format of fixtures/backendai/resource.cuda-shares-single.txt
// (on the agent's own cores).
func (n *node) addKernel(t *testing.T, agent, id, gpu, shares string) string {
	t.Helper()
	cores := n.coresA
	if agent == agentB {
		cores = n.coresB
	}
	text := string(readFixture(t, "resource.cuda-shares-single.txt"))
	text = strings.ReplaceAll(text, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04", gpu)
	text = strings.ReplaceAll(text, "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", id)
	text = strings.Replace(text, `"cuda.shares":"0.5"`, `"cuda.shares":"`+shares+`"`, 1)
	text = strings.Replace(text, ":0.50\n", ":"+shares+"\n", 1)
	text = strings.Replace(text, "CPU_SHARES=16:1,17:1,18:1,19:1", "CPU_SHARES="+cores[0]+":1", 1)
	text = strings.Replace(text, `"cpu":"4"`, `"cpu":"1"`, 1)
	// 16 MiB, not 16 GiB: the test host's memory must not be overbooked.
	text = strings.Replace(text, `"mem":"17179869184"`, `"mem":"16777216"`, 1)
	text = strings.Replace(text, "MEM_SHARES=root:16g", "MEM_SHARES=root:16m", 1)
	dir := filepath.Join(n.roots[agent], id)
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "resource.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (n *node) args(cmd string, extra ...string) []string {
	return append([]string{cmd, "--config", n.config, "--devices", n.mock, "--mock-etcd", n.etcd}, extra...)
}

// draftCheck is `check` judged by the BEP-1044 draft, which the node's
// device-based file is written for (main refuses it: exit 2).
func (n *node) draftCheck(extra ...string) []string {
	return n.args("check", append([]string{"--schema", "bep-1044"}, extra...)...)
}

func (n *node) current(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(n.config)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runCLI runs fgtop with args the way main does, with stdin that is not a
// terminal, and returns the exit code and everything printed.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out := runCLIQuiet(t, args...)
	t.Logf("fgtop %s -> %d\n%s", strings.Join(args, " "), code, out)
	return code, out
}

// runCLIQuiet is runCLI without logging the output.
func runCLIQuiet(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(""))
	err := root.Execute()
	code := exitOK
	if err != nil {
		code = exitBadUsage
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else {
			err = cliwords.UnknownCommand(root, err) // as run words cobra's own errors
		}
		fmt.Fprintln(&out, "fgtop:", err)
	}
	return code, out.String()
}

func wantCode(t *testing.T, got, want int, out string, contains ...string) {
	t.Helper()
	if got != want {
		t.Fatalf("exit %d, want %d:\n%s", got, want, out)
	}
	for _, c := range contains {
		if !strings.Contains(out, c) {
			t.Errorf("output lacks %q:\n%s", c, out)
		}
	}
}

// TestPartitionScenarios is issue 5's "How it is checked", end to end.
func TestPartitionScenarios(t *testing.T) {
	n := newNode(t)

	// check: a kernel of numa0 holds shares on 2d04, which numa1 owns.
	stray := n.addKernel(t, agentA, "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", gpu4, "0.50")
	n.addKernel(t, agentB, "5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90", gpu2, "0.30")
	code, out := runCLI(t, n.args("check")...)
	wantCode(t, code, exitBadUsage, out, agentconfig.DraftFormatWarning+": an agent running Backend.AI main does not start with it", "--schema bep-1044")
	code, out = runCLI(t, n.args("check", "--json")...)
	wantCode(t, code, exitBadUsage, out, `"schema": "fgtop.check/v1"`, `"judged_by": "main"`, `"status": "invalid"`, `"loads_on_main": false`, `"loads_on_bep1044_draft": true`, `"main_errors": [`)
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitProblem, out, "drift-not-owner",
		"kernel 2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8 of agent "+agentA+" holds 0.50 cuda.shares on cuda:"+gpu4+", which agent "+agentA+" does not own (it belongs to "+agentB+")")
	code, out = runCLI(t, n.draftCheck("--json")...)
	wantCode(t, code, exitProblem, out, `"schema": "fgtop.check/v1"`, `"judged_by": "bep-1044"`, `"status": "drift"`)

	// ... and clean once it is gone.
	if err := os.RemoveAll(stray); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitOK, out, "the live state matches the config", "BEP-1044 draft format: Backend.AI main cannot load this file")

	// plan: an unknown device is refused by name.
	code, out = runCLI(t, n.args("plan", "--move", "cuda:GPU-nope="+agentB)...)
	wantCode(t, code, exitBadUsage, out, "Unknown device 'cuda:GPU-nope': no device on this node has that ID or name", "cuda:"+gpu1+" (GPU0)", "cuda:"+gpu4+" (GPU3)")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("plan wrote the file")
	}

	// apply without --yes and without a terminal: refused, untouched.
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB)...)
	wantCode(t, code, exitBadUsage, out, "refusing to write without --yes")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("apply without --yes wrote the file")
	}

	// apply moving a free device: only the device lists change.
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes", "--restart-cmd", "echo agent restarted")...)
	wantCode(t, code, exitOK, out, "verified: the file read back gives the planned partition", "running restart command: echo agent restarted", "agent restarted\n")
	after := n.current(t)
	oldLines, newLines := bytes.Split(n.original, []byte("\n")), bytes.Split(after, []byte("\n"))
	if len(oldLines) != len(newLines) {
		t.Fatalf("line count %d -> %d", len(oldLines), len(newLines))
	}
	changed := 0
	for i := range oldLines {
		if bytes.Equal(oldLines[i], newLines[i]) {
			continue
		}
		changed++
		if !bytes.HasPrefix(oldLines[i], []byte("  devices = { cuda = [")) || !bytes.HasPrefix(newLines[i], []byte("  devices = { cuda = [")) {
			t.Errorf("line %d changed:\n- %s\n+ %s", i+1, oldLines[i], newLines[i])
		}
	}
	if changed != 2 {
		t.Errorf("%d lines changed, want the 2 device lists", changed)
	}
	if !bytes.Contains(after, []byte(`devices = { cuda = ["`+gpu2+`", "`+gpu3+`", "`+gpu4+`"] }`)) {
		t.Errorf("numa1's list is not as planned:\n%s", after)
	}
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitOK, out)

	// moving a device a live kernel holds: refused without --force,
	// untouched.
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu2+"="+agentA, "--yes")...)
	wantCode(t, code, exitProblem, out, "kernel 5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90 (agent "+agentB+"): 0.30 cuda.shares  <- its agent no longer owns the device", "refusing to apply: live kernels hold devices that move")
	if !bytes.Equal(n.current(t), after) {
		t.Fatal("a refused apply changed the file")
	}

	// rollback restores the original bytes exactly. Its restart command
	// failing is exit 3: written, unlike 1 (nothing written).
	code, out = runCLI(t, n.args("rollback", "--yes", "--restart-cmd", "exit 7")...)
	wantCode(t, code, exitRestartFailed, out, "restored: ", "the config is written, but the restart command failed: exit status 7")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("rollback did not restore the original bytes")
	}
	code, out = runCLI(t, n.args("rollback", "--yes")...)
	wantCode(t, code, exitProblem, out, "nothing to roll back")
	// The same for apply: written and read back, then the restart failed.
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes", "--restart-cmd", "false")...)
	wantCode(t, code, exitRestartFailed, out, "verified: the file read back gives the planned partition", "the config is written, but the restart command failed")
	if !bytes.Equal(n.current(t), after) {
		t.Fatal("apply whose restart failed did not leave the applied file")
	}
	// Run again with a restart command that works: nothing is written,
	// and it says the restart is the operator's (it went silent).
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes", "--restart-cmd", "echo restarted")...)
	wantCode(t, code, exitOK, out, "nothing to apply", "--restart-cmd not run: nothing was written", "restart it")
	if strings.Contains(out, "running restart command") {
		t.Errorf("a restart ran with nothing written:\n%s", out)
	}
	code, out = runCLI(t, n.args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ")

	// A restart command that hangs (a stuck systemctl) is stopped at
	// --restart-timeout with what it started: exit 3, not a terminal held
	// for ever.
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes", "--restart-timeout", "1s",
		"--restart-cmd", "echo $$ > "+pidFile+"; sleep 60; echo woke")...)
	wantCode(t, code, exitRestartFailed, out, "running restart command", "the config is written, but the restart command did not finish within 1s (--restart-timeout) and was stopped")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("apply took %s with --restart-timeout 1s", d)
	}
	if b, err := os.ReadFile(pidFile); err != nil {
		t.Error(err)
	} else if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		t.Error(err)
	} else if left := liveInGroup(t, pid); len(left) > 0 {
		t.Errorf("the restart command's process group %d outlived its timeout: %v", pid, left)
		syscall.Kill(-pid, syscall.SIGKILL)
	}
	if !bytes.Equal(n.current(t), after) {
		t.Fatal("apply whose restart timed out did not leave the applied file")
	}
	code, out = runCLI(t, n.args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ")

	// a device listed under two agents: check says the config is invalid.
	dup := bytes.Replace(n.original, []byte(`devices = { cuda = ["`+gpu2+`", `), []byte(`devices = { cuda = ["`+gpu1+`", "`+gpu2+`", `), 1)
	if bytes.Equal(dup, n.original) {
		t.Fatal("fixture changed")
	}
	os.WriteFile(n.config, dup, 0o640)
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitBadUsage, out, "Device 'cuda:"+gpu1+"' assigned to multiple agents: "+agentA+", "+agentB)
}

func TestPartitionForceAndJournal(t *testing.T) {
	n := newNode(t)
	n.addKernel(t, agentB, "5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90", gpu2, "0.30")
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu2+"="+agentA, "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "restart needed")
	// The kernel now runs on a device its agent gave away: drift.
	code, out = runCLI(t, n.draftCheck()...)
	wantCode(t, code, exitProblem, out, "on cuda:"+gpu2+", which agent "+agentB+" does not own (it belongs to "+agentA+")")
	journal, err := os.ReadFile(n.config + ".fgtop-journal.jsonl")
	if err != nil || !bytes.Contains(journal, []byte(`"action":"apply"`)) || !bytes.Contains(journal, []byte(`"forced":true`)) {
		t.Errorf("journal: %v\n%s", err, journal)
	}
}

func TestPartitionUsageErrors(t *testing.T) {
	n := newNode(t)
	for _, args := range [][]string{
		{"check"},
		n.args("plan", "--move", "nonsense"),
		n.args("plan", "--mode", "split"),
		n.args("plan", "--format", "bep"),
		n.args("plan", "--mem", agentA+"=lots"),
		n.args("plan", "--from", filepath.Join(n.dir, "missing.toml")),
		{"rollback"},
	} {
		code, out := runCLI(t, args...)
		wantCode(t, code, exitBadUsage, out)
	}
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("a usage error wrote the file")
	}
}

func TestPartitionModeSwitch(t *testing.T) {
	n := newNode(t)
	code, out := runCLI(t, n.args("plan", "--mode", "auto-split")...)
	wantCode(t, code, exitOK, out, `+ "auto-split"`, "[agents.resource]", "valid, 3 file change(s)")
	code, out = runCLI(t, n.args("plan", "--move", "cuda:"+gpu1+"="+agentB, "--json")...)
	wantCode(t, code, exitOK, out, `"device": "cuda:`+gpu1+`"`)

	// --from: a draft file's tables, matched by agent id.
	draft := filepath.Join(n.dir, "draft.toml")
	text := fmt.Sprintf("[resource]\nallocation-mode = \"manual\"\n[[agents]]\n[agents.agent]\nid = %q\n[agents.resource]\ncpu = %s\nmem = \"64M\"\ndevices = { cuda = [%q] }\n[[agents]]\n[agents.agent]\nid = %q\n[agents.resource]\ncpu = %s\nmem = \"64M\"\ndevices = { cuda = [%q, %q, %q] }\n",
		agentA, quoteList(n.coresA), gpu1, agentB, quoteList(n.coresB), gpu2, gpu3, gpu4)
	os.WriteFile(draft, []byte(text), 0o644)
	code, out = runCLI(t, n.args("plan", "--from", draft)...)
	wantCode(t, code, exitOK, out, "cuda:"+gpu3+": "+agentA+" -> "+agentB+"  [free]", "valid, 2 file change(s)")
}

// An apply from the CLI while an operator holds the console's draft goes
// ahead (the CLI takes no draft) but says whose draft it makes stale.
func TestPartitionApplyNamesTheDraftHolder(t *testing.T) {
	n := newNode(t)
	desk := partition.NewDesk(partition.DeskOptions{Config: n.config})
	s, err := desk.Open(agentconfig.Actor{Name: "alice", Origin: "console", Role: agentconfig.RoleOperator}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitOK, out, "note: alice (console) since", "applying makes that draft stale")
	if err := s.Check(); !errors.Is(err, partition.ErrStale) {
		t.Errorf("the console's draft after the CLI apply: %v, want stale", err)
	}
}

// TestRollbackAcrossPathSpellings: the journal is keyed on the config's
// resolved path, so an apply made through one spelling of the path is
// undone through any other (relative, absolute, a symlink), byte for byte.
func TestRollbackAcrossPathSpellings(t *testing.T) {
	n := newNode(t)
	t.Chdir(n.dir)
	link := filepath.Join(n.dir, "link.toml")
	if err := os.Symlink("agent.toml", link); err != nil {
		t.Fatal(err)
	}
	dev := func(config string, extra ...string) []string {
		return append([]string{"--config", config, "--devices", n.mock, "--mock-etcd", n.etcd}, extra...)
	}
	for _, tc := range []struct{ apply, rollback string }{
		{"agent.toml", n.config},
		{n.config, "./agent.toml"},
		{"link.toml", filepath.Join(n.dir, ".", "agent.toml")},
	} {
		code, out := runCLI(t, append([]string{"apply"}, dev(tc.apply, "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)...)
		wantCode(t, code, exitOK, out, "verified", agentconfig.DraftFormatWarning)
		if bytes.Equal(n.current(t), n.original) {
			t.Fatalf("apply via %s changed nothing", tc.apply)
		}
		code, out = runCLI(t, append([]string{"rollback"}, dev(tc.rollback, "--yes")...)...)
		wantCode(t, code, exitOK, out, "restored: "+n.config)
		if !bytes.Equal(n.current(t), n.original) {
			t.Fatalf("rollback via %s of an apply via %s did not restore the bytes", tc.rollback, tc.apply)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symlink was replaced: %v", err)
		}
	}
}

// TestRollbackWarnsOfAnUnreadableJournalLine: a torn line in the journal
// does not stop the rollback, which is right, but is said, with the file
// and the line, rather than skipped in silence.
func TestRollbackWarnsOfAnUnreadableJournalLine(t *testing.T) {
	n := newNode(t)
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	journal := n.config + ".fgtop-journal.jsonl"
	before, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(before, []byte("\n"))
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"garbage`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out = runCLI(t, n.args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ",
		fmt.Sprintf("fgtop: warning: the journal %s: line %d is not a record fgtop can read", journal, lines+1),
		"it is skipped, and the apply to undo is found from the other lines")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("rollback did not restore the original bytes")
	}
}

// TestPartitionFindsTheConfig: without --config, check, plan, apply and
// rollback use the agent.toml Backend.AI's agent would (here through
// $BACKEND_CONFIG_FILE, the first place it looks).
func TestPartitionFindsTheConfig(t *testing.T) {
	n := newNode(t)
	t.Setenv("BACKEND_CONFIG_FILE", n.config)
	t.Chdir(t.TempDir())
	flags := []string{"--devices", n.mock, "--mock-etcd", n.etcd}
	code, out := runCLI(t, append([]string{"check", "--schema", "bep-1044"}, flags...)...)
	if code == exitBadUsage {
		t.Fatalf("check without --config: %s", out)
	}
	code, out = runCLI(t, append([]string{"plan", "--move", "cuda:" + gpu3 + "=" + agentB}, flags...)...)
	wantCode(t, code, exitOK, out, "valid, 2 file change(s)")
	code, out = runCLI(t, append([]string{"apply", "--move", "cuda:" + gpu3 + "=" + agentB, "--yes"}, flags...)...)
	wantCode(t, code, exitOK, out, "written: "+n.config)
	code, out = runCLI(t, "rollback", "--yes")
	wantCode(t, code, exitOK, out, "restored: "+n.config)
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("rollback did not restore the bytes")
	}
	t.Setenv("BACKEND_CONFIG_FILE", "")
	t.Setenv("HOME", t.TempDir())
	_, findErr := agentconfig.Find()
	for _, cmd := range []string{"check", "plan", "apply", "rollback"} {
		if findErr != nil { // /etc/backend.ai/agent.toml may exist on a real node
			code, out := runCLI(t, cmd)
			wantCode(t, code, exitBadUsage, out, "no agent.toml found; looked in:")
		}
		code, out := runCLI(t, cmd, "--help")
		wantCode(t, code, exitOK, out, "/etc/backend.ai/agent.toml")
	}
}

// TestSlotBasedAutoSplitManualStaysMainsForm is issue 11's reproduction:
// main's slot-based fixture (scaled to this host), apply --mode auto-split,
// then apply --mode manual. The tables manual writes are main's form, with
// every plugin slot, and Backend.AI main's own loader accepts the file.
func TestSlotBasedAutoSplitManualStaysMainsForm(t *testing.T) {
	n := newNode(t)
	text := string(readFixture(t, "agent.multi-agent.slot-based.toml"))
	for old, new := range map[string]string{
		"reserved-cpu = 2":      "reserved-cpu = 0",
		"reserved-mem = \"8G\"": "reserved-mem = \"0\"",
		"cpu = 15                                 # integer core COUNT (required)": "cpu = 1",
		"  cpu = 15\n": "  cpu = 1\n",
		"mem = \"120G\"                             # binary size (required)": "mem = \"64M\"",
		"  mem = \"120G\"\n": "  mem = \"64M\"\n",
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("fixture changed: no %q", old)
		}
		text = strings.Replace(text, old, new, 1)
	}
	if err := os.WriteFile(n.config, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, n.args("apply", "--mode", "auto-split", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	code, out = runCLI(t, n.args("apply", "--mode", "manual", "--yes")...)
	wantCode(t, code, exitOK, out, "verified", "even split, in Backend.AI main's slot-based form")
	if strings.Contains(out, agentconfig.DraftFormatWarning) {
		t.Errorf("the plan warns of the draft format:\n%s", out)
	}
	c, err := agentconfig.Load(n.config)
	if err != nil || c.AllocFormat != agentconfig.FormatSlotBased || c.FormatGuessed || c.Mode != agentconfig.ModeManual {
		t.Fatalf("after manual: %v, %s guessed=%v mode %s\n%s", err, c.AllocFormat, c.FormatGuessed, c.Mode, n.current(t))
	}
	for _, a := range c.Agents {
		if _, ok := a.Alloc.Slots["cuda.shares"]; !ok || !a.Alloc.HasCPU || !a.Alloc.HasMem {
			t.Errorf("agent %s: %+v", a.ID, a.Alloc)
		}
	}
	oracle := testfix.Oracle(t)
	res, err := exec.Command(oracle, n.config).Output()
	if err != nil || !strings.Contains(string(res), `"ok": true`) {
		t.Fatalf("Backend.AI main rejects the file: %v\n%s\n%s", err, res, n.current(t))
	}
}

// TestPartitionMemRefusedLikeTheConsole: --mem is read and bounded by the
// console's rules (partition.ParseMem, partition.CheckMem): a fraction of
// a byte, a size below memory-align-size and a size above the node's
// memory are refused, and nothing is written.
func TestPartitionMemRefusedLikeTheConsole(t *testing.T) {
	n := newNode(t)
	for _, tc := range []struct {
		size string
		code int
		want string
	}{
		{"0.3K", exitBadUsage, "not a whole number of bytes"},
		{"", exitBadUsage, "want AGENT=SIZE"},
		{"1M", exitBadUsage, "below the config's memory-align-size 16 MiB"},
		{"0", exitBadUsage, "0 is not above zero"},
		{"1E", exitBadUsage, "more than the node's"},
	} {
		for _, verb := range []string{"plan", "apply"} {
			args := n.args(verb, "--mode", "manual", "--mem", agentA+"="+tc.size)
			if verb == "apply" {
				args = append(args, "--yes")
			}
			code, out := runCLI(t, args...)
			wantCode(t, code, tc.code, out, tc.want)
		}
	}
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("a refused --mem wrote the file")
	}
	// What both accept still plans.
	code, out := runCLI(t, n.args("plan", "--mode", "manual", "--mem", agentA+"=32M")...)
	wantCode(t, code, exitOK, out, "valid, 1 file change(s)")
	// One agent's slot given twice is refused, not the last one taken.
	for _, args := range [][]string{
		{"--mem", agentA + "=32M", "--mem", agentA + "=64M"},
		{"--mem", agentA + "=32M", "--slot", agentA + "=mem=64M"},
		{"--slot", agentA + "=cuda.shares=1", "--slot", agentA + "=cuda.shares=1.5"},
	} {
		code, out := runCLI(t, n.args("apply", append([]string{"--mode", "manual", "--yes"}, args...)...)...)
		wantCode(t, code, exitBadUsage, out, "is given twice", "give it once")
	}
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("a slot given twice wrote the file")
	}
}

// TestApplyBlindRoot: a scratch root that cannot be read hides the kernels
// under it, so a move is refused without --force (it would otherwise pass as
// a move of a free device), the plan says why, and check does not claim that
// the live state matches.
func TestApplyBlindRoot(t *testing.T) {
	n := newNode(t)
	n.addKernel(t, agentB, "5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90", gpu2, "0.30")
	typo := n.roots[agentB] + "s"
	roots := []string{"--scratch-root", agentA + "=" + n.roots[agentA], "--scratch-root", agentB + "=" + typo}

	code, out := runCLI(t, n.draftCheck(roots...)...)
	wantCode(t, code, exitProblem, out, "the live state was not checked: 1 scratch root(s) missing or unreadable")
	if strings.Contains(out, "the live state matches") {
		t.Errorf("check claims a match it could not see:\n%s", out)
	}

	code, out = runCLI(t, n.args("plan", append(roots, "--move", "cuda:"+gpu2+"="+agentA)...)...)
	wantCode(t, code, exitOK, out, "scratch root "+typo+" (agent "+agentB+") does not exist: the kernels under it are not seen")

	code, out = runCLI(t, n.args("apply", append(roots, "--move", "cuda:"+gpu2+"="+agentA, "--yes")...)...)
	wantCode(t, code, exitProblem, out, "refusing to apply: 1 scratch root(s) cannot be read")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("a refused apply changed the file")
	}
	code, out = runCLI(t, n.args("apply", append(roots, "--move", "cuda:"+gpu2+"="+agentA, "--yes", "--force")...)...)
	wantCode(t, code, exitOK, out, "verified: the file read back gives the planned partition")

	// A root agent.toml names that does not exist yet (the agent creates
	// it) holds no kernel: warned about, not blind.
	if err := os.RemoveAll(n.roots[agentB]); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitOK, out, "verified: the file read back gives the planned partition")
	// One that exists but is not a directory is blind, from the config too.
	if err := os.WriteFile(n.roots[agentB], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentA, "--yes")...)
	wantCode(t, code, exitProblem, out, "refusing to apply: 1 scratch root(s) cannot be read")
}

// TestApplyBareRootIsItsAgents: a bare --scratch-root DIR that is an
// agent's root in the config holds that agent's kernels, so moving a
// device they hold is refused without --force. Named for its directory
// ("scratch-<agent>"), the root's kernels were a made-up agent's, the
// config's agent held nothing, and the apply went through.
func TestApplyBareRootIsItsAgents(t *testing.T) {
	n := newNode(t)
	n.addKernel(t, agentB, "5a1c9e3f-0b7d-4e2a-9c6f-1d8b3e5a7c90", gpu2, "0.30")
	roots := []string{"--scratch-root", n.roots[agentA], "--scratch-root", n.roots[agentB]}
	code, out := runCLI(t, n.args("apply", append(roots, "--move", "cuda:"+gpu2+"="+agentA, "--yes")...)...)
	wantCode(t, code, exitProblem, out, "refusing to apply: live kernels hold devices that move", "(agent "+agentB+")")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("a refused apply changed the file")
	}
}

// TestApplyBareRootOfOneAgent: with a single-agent config, a bare
// --scratch-root DIR (here the config's own root) holds its agent's
// kernels, so a slot amount below what they hold needs --force. Named for
// its directory, the root made a new agent of them, the config's agent
// held nothing, and apply wrote the lower amount with exit 0.
func TestApplyBareRootOfOneAgent(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	dir := t.TempDir()
	root := filepath.Join(dir, "scratches")
	kernel, err := os.ReadFile(filepath.Join(fix, "resource.cuda-shares-single.txt"))
	if err != nil {
		t.Fatal(err)
	}
	testfix.WriteFile(t, root, filepath.Join("2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", "config", "resource.txt"), string(kernel))
	config := testfix.WriteFile(t, dir, "agent.toml", testfix.AgentTOML("[agent]\nid = \"i-one\"\n[container]\nscratch-root = \""+root+"\"\n"))
	orig, _ := os.ReadFile(config)
	code, out := runCLI(t, "apply", "--config", config, "--devices", filepath.Join(fix, "mock-accelerator.toml"),
		"--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"), "--host-cpus", "0-63", "--host-mem", "512g",
		"--scratch-root", root, "--mode", "manual", "--slot", "i-one=cuda.shares=0.2", "--yes")
	wantCode(t, code, exitProblem, out, "refusing to apply: the live kernels of i-one hold more than the planned amount")
	if now, _ := os.ReadFile(config); !bytes.Equal(now, orig) {
		t.Fatal("a refused apply changed the file")
	}
}

// liveInGroup lists the processes of group pgid that are not zombies
// (a killed process waits for whoever adopted it to reap it), from /proc.
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		live = append(live, strings.TrimSpace(s[:i+1]))
	}
	return live
}

// TestApplyReadOnlyConfig: fgtop apply, run as root on an agent.toml
// chmod'ed 444, replaced it (the rename needs only the directory): it
// now refuses, exit 1, naming the mode and the way on; --force writes it
// and keeps the mode, and rollback refuses and forces the same way.
func TestApplyReadOnlyConfig(t *testing.T) {
	n := newNode(t)
	if err := os.Chmod(n.config, 0o444); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes")...)
	wantCode(t, code, exitProblem, out, "refusing to apply: "+n.config+" is read-only (mode 0444", "chmod u+w "+n.config, "(--force applies anyway)")
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("the read-only config was changed")
	}
	code, out = runCLI(t, n.args("apply", "--move", "cuda:"+gpu3+"="+agentB, "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "written: ")
	if st, err := os.Stat(n.config); err != nil || st.Mode().Perm() != 0o444 {
		t.Fatalf("after apply --force: %v %v, want mode 0444 kept", st.Mode(), err)
	}
	code, out = runCLI(t, n.args("rollback", "--yes")...)
	wantCode(t, code, exitProblem, out, "is read-only (mode 0444")
	code, out = runCLI(t, n.args("rollback", "--yes", "--force")...)
	wantCode(t, code, exitOK, out)
	if !bytes.Equal(n.current(t), n.original) {
		t.Fatal("rollback --force did not restore the config")
	}
}

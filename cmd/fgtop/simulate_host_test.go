package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestSimulateLiveHostIsThisMachines: on a live tree, the host's cores
// and memory are this machine's unless --cpus/--mem give the node's. A
// request for cpu on a tree whose kernels hold, or whose config gives,
// core ids this machine does not have (a tree copied from another node)
// is refused naming the flag; otherwise the answer says whose capacity it
// used, with an agent holding more memory than the machine as evidence
// only (agents may overcommit the host together); an accelerator request
// says nothing.
func TestSimulateLiveHostIsThisMachines(t *testing.T) {
	toml, etcd := seedMock(t)
	tree := func(cpuShares, memShares string) string {
		root := t.TempDir()
		writeFile(t, root, "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63/config/resource.txt",
			"SCRATCH_SIZE=0m\nMOUNTS=/x:/home/work:rw\nSLOTS={\"cuda.shares\":\"0.5\"}\n"+
				"CUDA.SHARES_SHARES="+seedA+":0.50\nCPU_SHARES="+cpuShares+"\nMEM_SHARES=root:"+memShares+"\n")
		return root
	}
	far := tree("4000:1,4001:1", "1g") // cores no machine running the tests has
	huge := tree("0:1", "64p")         // more memory than it has
	near := tree("0:1", "1g")          // nothing says it is another node's
	// The two-agent device-based config with cores no machine running
	// the tests has.
	fx := testfix.Dir(t, "backendai")
	text, err := os.ReadFile(filepath.Join(fx, "agent.multi-agent.device-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	far0, far1 := `cpu = ["4000", "4001"]`, `cpu = ["4002", "4003"]`
	cfgText := regexp.MustCompile(`cpu = \["0", [^\]]*\]`).ReplaceAllString(string(text), far0)
	cfgText = regexp.MustCompile(`cpu = \["16", [^\]]*\]`).ReplaceAllString(cfgText, far1)
	if !strings.Contains(cfgText, far0) || !strings.Contains(cfgText, far1) {
		t.Fatal("the fixture's core lists moved")
	}
	cfg := writeFile(t, t.TempDir(), "agent.toml", cfgText)
	cfgArgs := []string{"--config", cfg, "--scratch-root", "i-gpu-node01-numa1=" + t.TempDir()}
	tests := []struct {
		name   string
		root   string
		extra  []string
		bad    bool     // exit 2
		stderr []string // in stderr
		quiet  string   // not in stderr
		// noHost: no cpu or mem map, no cpu or mem row (this machine's
		// cores and memory were listed beside the tree's kernels, their
		// cores "not loaded").
		noHost bool
	}{
		{name: "cores this machine lacks", root: far, extra: []string{"--request", "cpu=1"}, bad: true,
			stderr: []string{"a request asks for cpu", "the kernels hold cores 4000, 4001, which this machine (", "--cpus N"}},
		{name: "the node's cores given", root: far, extra: []string{"--cpus", "4096", "--request", "cpu=1"},
			quiet: "stand for the node's"},
		{name: "more memory than this machine's is evidence, not proof", root: huge, extra: []string{"--request", "cuda.shares=0.1,mem=1g"},
			stderr: []string{"mem: this machine's", "stand for the node's (another node's: --mem SIZE); the kernels of i-gpu-node01-numa0 hold 64 PiB"}},
		{name: "the node's memory given", root: huge, extra: []string{"--mem", "128p", "--request", "mem=1g"},
			quiet: "stand for the node's"},
		{name: "a tree that fits says whose capacity", root: near, extra: []string{"--request", "cpu=1,mem=1g"},
			stderr: []string{"cpu: this machine's", "--cpus N", "mem: this machine's", "--mem SIZE"}},
		{name: "a config's cores this machine lacks", root: near, extra: append(cfgArgs, "--request", "cpu=1"), bad: true,
			stderr: []string{"the config gives its agents cores 4000, 4001, 4002, 4003, which this machine (", "--cpus N"}},
		{name: "the config's node's cores given", root: near, extra: append(cfgArgs, "--cpus", "4096", "--request", "cpu=1"),
			quiet: "stand for the node's"},
		{name: "an accelerator request says nothing", root: far, extra: []string{"--request", "cuda.shares=0.1"},
			quiet: "this machine", noHost: true},
		{name: "an accelerator request on a near tree says nothing", root: near, extra: []string{"--request", "cuda.shares=0.1"},
			quiet: "not loaded", noHost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"simulate", "--devices", toml, "--mock-etcd", etcd, "--scratch-root", "i-gpu-node01-numa0=" + tt.root}, tt.extra...)
			out, errOut, code := runSim(t, args...)
			if tt.noHost && (strings.Contains(out, "cpu:") || strings.Contains(out, "mem:") || strings.Contains(out, " cpu ") ||
				strings.Contains(out, " mem ") || strings.Contains(errOut, "not loaded")) {
				t.Errorf("the host simulated for an accelerator request:\n%s\n%s", out, errOut)
			}
			if strings.Contains(errOut, "skipped") {
				t.Fatalf("the tree's kernel was not read:\n%s", errOut)
			}
			if (code == exitBadUsage) != tt.bad {
				t.Fatalf("exit %d (refused: want %v)\n%s", code, tt.bad, errOut)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.quiet != "" && strings.Contains(errOut, tt.quiet) {
				t.Errorf("stderr says %q:\n%s", tt.quiet, errOut)
			}
		})
	}
}

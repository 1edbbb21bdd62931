package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// An agent renamed in agent.toml (its id changed, its scratch root kept)
// takes its kernels with it: the live engine kept them on the old id, an
// agent the file no longer had, with their held figures, while a one-shot
// snapshot of the same files put them on the new one.
func TestRenamedAgentKeepsItsKernels(t *testing.T) {
	dir := t.TempDir()
	r1, r2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	for _, r := range []string{r1, r2} {
		if err := os.Mkdir(r, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(second string) string {
		return fmt.Sprintf("[agent]\nid = \"main\"\n[[agents]]\n[agents.agent]\nid = \"a1\"\n[agents.container]\nscratch-root = %q\n"+
			"[[agents]]\n[agents.agent]\nid = %q\n[agents.container]\nscratch-root = %q\n", r1, second, r2)
	}
	path := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, []byte(cfg("a2")), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "77777777-7777-4777-8777-777777777777"
	writeKernel(t, r2, id, gpuKernel(t, gpu03, "0.30", "5"))
	l := startLive(t, viewOptions(t, path))
	holds := func(s *model.Snapshot, agent model.AgentID) error {
		if k := s.Kernel(id); k == nil || k.Agent != agent {
			return fmt.Errorf("kernel %+v", k)
		}
		var ids []string
		for _, a := range s.Agents {
			ids = append(ids, string(a.ID))
			if a.ID == agent && a.Held[model.SlotCUDAShares].String() != "0.30" {
				return fmt.Errorf("%s holds %v", agent, a.Held)
			}
		}
		if want := "a1 " + string(agent); strings.Join(ids, " ") != want {
			return fmt.Errorf("agents %v, want %s", ids, want)
		}
		return nil
	}
	l.wait(t, "the kernel on a2", 2*time.Second, func(s *model.Snapshot) error { return holds(s, "a2") })
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(cfg("a3")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "the kernel on a3", 2*time.Second, func(s *model.Snapshot) error { return holds(s, "a3") })
}

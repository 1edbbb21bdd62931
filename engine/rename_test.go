package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/scratch"
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

// A kernel with an amount of 28 digits and more (outside input: a hostile
// or broken resource.txt) that comes and goes leaves its agent's and
// devices' totals as a fresh sum of the kernels left, as a one-shot
// snapshot of the same files gives them: the running totals, rounded to
// 28 digits when it came, kept 9.876543211 for an agent holding 0.50; and
// after agent.toml changed, 0.0000001 come and gone left 0.5000000 (the
// agents' accounts made again did not count their terms' exponents).
func TestHostileAmountLeavesNoResidue(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "s1")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.toml")
	cfg := fmt.Sprintf("[agent]\nid = \"a1\"\n[container]\nscratch-root = %q\n", root)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	const keep, hostile, small = "77777777-7777-4777-8777-777777777777", "88888888-8888-4888-8888-888888888888", "99999999-9999-4999-8999-999999999999"
	writeKernel(t, root, keep, gpuKernel(t, gpu03, "0.50", "5"))
	l := startLive(t, viewOptions(t, path))
	same := func(what string) {
		t.Helper()
		snap, err := Build(context.Background(), viewOptions(t, path))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(heldOf(snap))
		l.wait(t, what, 3*time.Second, func(s *model.Snapshot) error {
			if got := fmt.Sprint(heldOf(s)); got != want {
				return fmt.Errorf("live %s, one-shot %s", got, want)
			}
			return nil
		})
	}
	same("the kernel alone")
	// The agents' accounts are made again when agent.toml changes.
	if err := os.WriteFile(path+".tmp", []byte(cfg+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "the edited config", 2*time.Second, func(s *model.Snapshot) error {
		if sum := sha256.Sum256([]byte(cfg + "# edited\n")); s.ConfigHash != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("config hash %s", s.ConfigHash)
		}
		return nil
	})
	for _, amt := range []string{"123456789012345678901234567890.123456789", "0.0000001", "1E+40"} {
		id := hostile
		if amt == "0.0000001" {
			id = small
		}
		writeKernel(t, root, id, gpuKernel(t, gpu01, amt, "6"))
		same("with " + amt)
		if err := os.RemoveAll(filepath.Join(root, id)); err != nil {
			t.Fatal(err)
		}
		same("after " + amt + " went")
	}
	l.wait(t, "0.50 held", time.Second, func(s *model.Snapshot) error {
		if got := s.Agents[0].Held[model.SlotCUDAShares].String(); got != "0.50" {
			return fmt.Errorf("a1 holds %s", got)
		}
		return nil
	})
}

// heldOf is what the snapshot says is held, per agent and per device.
func heldOf(s *model.Snapshot) []string {
	var out []string
	for _, a := range s.Agents {
		out = append(out, fmt.Sprintf("%s %v", a.ID, a.Held))
	}
	var devs []string
	for k, u := range s.Usage {
		devs = append(devs, fmt.Sprintf("%s %v %v", k, u.Held, u.ByAgent))
	}
	slices.Sort(devs)
	return append(out, devs...)
}

// A root that could not be listed (chmod 000) and can be again: the
// watcher's next listing (Resynced) ends the problem. The issue stayed up,
// counted in the header, though the root's kernels were followed again.
func TestRootListedAgainEndsItsProblem(t *testing.T) {
	root, opts := fixtureTree(t)
	writeKernel(t, root, "77777777-7777-4777-8777-777777777777", readFixture(t, "resource.cuda-shares-single.txt"))
	st := newState(&opts)
	types := st.takeInventory(opts.Inventory.Poll(context.Background()))
	r := opts.Roots[0]
	// As the watcher words a root whose listing is refused.
	st.applyEvent(scratch.Event[*kread]{Kind: scratch.Problem, Root: r.Path, Agent: r.Agent, Path: r.Path,
		Issue: &model.Issue{Severity: model.SevError, Code: model.IssuePermission, File: r.Path, Agent: r.Agent,
			Message: "cannot list the scratch root: open " + r.Path + ": permission denied; fgtop cannot see its kernels"}})
	denied := func(s *model.Snapshot) bool {
		return slices.ContainsFunc(s.Issues, func(i model.Issue) bool { return i.Code == model.IssuePermission && i.File == r.Path })
	}
	if !denied(st.snapshot()) {
		t.Fatal("no issue for the unlistable root")
	}
	for _, ev := range scratch.Scan(context.Background(), opts.Roots, parser(types, nil), 1) {
		st.applyEvent(ev)
	}
	if s := st.snapshot(); denied(s) || s.Kernel("77777777-7777-4777-8777-777777777777") == nil {
		t.Fatalf("listed again: issues %v", s.Issues)
	}
}

// A kernel directory seen before its file (pending), whose resource.txt
// then comes as a symlink the watcher refuses: the console listed it as
// "pending" and counted it, while a one-shot snapshot of the same tree
// leaves it out; both now leave it out, with the issue naming it.
func TestRefusedFileIsNotPending(t *testing.T) {
	root, opts := fixtureTree(t)
	const id = "88888888-8888-4888-8888-888888888888"
	dir := filepath.Join(root, id, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l := startLive(t, opts)
	l.wait(t, "the pending kernel", 2*time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k == nil || k.State != model.KernelPending {
			return fmt.Errorf("kernel %+v", k)
		}
		return nil
	})
	target := filepath.Join(t.TempDir(), "resource.txt")
	if err := os.WriteFile(target, readFixture(t, "resource.cuda-shares-single.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "resource.txt")); err != nil {
		t.Fatal(err)
	}
	shot, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if shot.Kernel(id) != nil {
		t.Fatalf("the one-shot snapshot lists the kernel: %+v", shot.Kernel(id))
	}
	l.wait(t, "the refused file", 2*time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k != nil {
			return fmt.Errorf("kernel %+v", k)
		}
		if !slices.ContainsFunc(s.Issues, func(i model.Issue) bool { return i.Kernel == id }) {
			return fmt.Errorf("no issue names the kernel: %v", s.Issues)
		}
		return nil
	})
}

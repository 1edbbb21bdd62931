package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
	"github.com/fsnotify/fsnotify"
)

const (
	gpu01 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	gpu02 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	gpu03 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	gpu04 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"
	numa0 = "i-gpu-node01-numa0"
	numa1 = "i-gpu-node01-numa1"
)

// sharedConfig writes the fixture's two-agent device-based agent.toml with
// both agents on one scratch root (as the fixture has it), moved to a temp
// directory, and returns the config path and the root.
func sharedConfig(t *testing.T) (config, root string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "scratches")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	text := string(readFixture(t, "agent.multi-agent.device-based.toml"))
	const orig = `scratch-root = "/var/lib/backend.ai/scratches"`
	if strings.Count(text, orig) != 1 {
		t.Fatalf("fixture changed: %q", orig)
	}
	text = strings.Replace(text, orig, fmt.Sprintf("scratch-root = %q", root), 1)
	config = filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, root
}

// gpuKernel is a resource.txt holding shares on gpu and one CPU core.
func gpuKernel(t *testing.T, gpu, shares, core string) []byte {
	t.Helper()
	text := string(readFixture(t, "resource.cuda-shares-single.txt"))
	text = strings.ReplaceAll(text, gpu04, gpu)
	text = strings.Replace(text, ":0.50\n", ":"+shares+"\n", 1)
	text = strings.Replace(text, "CPU_SHARES=16:1,17:1,18:1,19:1", "CPU_SHARES="+core+":1", 1)
	if !strings.Contains(text, "CPU_SHARES="+core+":1\n") {
		t.Fatal("fixture changed: CPU_SHARES line")
	}
	return []byte(text)
}

// writeRecord writes kernel id's recovery.json naming agent, made from a
// fixture sample.
func writeRecord(t *testing.T, root, id, agent string) {
	t.Helper()
	b := readFixture(t, "recovery.numa0-batch.json")
	text := strings.ReplaceAll(string(b), "21e330bf-e15a-47a9-9183-df27ccd257b6", id)
	text = strings.ReplaceAll(text, numa0, agent)
	dir := filepath.Join(root, id, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "recovery.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func viewOptions(t *testing.T, config string) Options {
	t.Helper()
	v, err := LoadConfigView(config)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Roots: v.Roots, Inventory: mockSource(t), Node: "t", NoProcs: true,
		Watch: scratchOpts()}
	v.Apply(&opts)
	return opts
}

func kernelOf(t *testing.T, s *model.Snapshot, id string) *model.Kernel {
	t.Helper()
	k := s.Kernel(model.KernelID(id))
	if k == nil {
		t.Fatalf("kernel %s missing", id)
	}
	return k
}

func issuesWith(s *model.Snapshot, code string) []model.Issue {
	var out []model.Issue
	for _, iss := range s.Issues {
		if iss.Code == code {
			out = append(out, iss)
		}
	}
	return out
}

// TestSharedRootAttribution: two agents on one scratch root, each kernel
// with its recovery.json, are attributed to their own agents (no false
// drift); a kernel with no record cannot be told and says so; a record
// naming an agent that is not configured is a conflict, not a guess.
func TestSharedRootAttribution(t *testing.T) {
	config, root := sharedConfig(t)
	const k0, k1, kNone, kConflict = "00000000-0000-4000-8000-000000000000", "11111111-1111-4111-8111-111111111111",
		"22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	writeKernel(t, root, k0, gpuKernel(t, gpu01, "0.50", "3"))
	writeRecord(t, root, k0, numa0)
	writeKernel(t, root, k1, gpuKernel(t, gpu02, "0.30", "20"))
	writeRecord(t, root, k1, numa1)
	writeKernel(t, root, kNone, gpuKernel(t, gpu03, "0.20", "4"))
	writeKernel(t, root, kConflict, gpuKernel(t, gpu04, "0.10", "21"))
	writeRecord(t, root, kConflict, "i-gpu-node02")

	snap, err := Build(context.Background(), viewOptions(t, config))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id    string
		agent model.AgentID
		by    model.AgentBasis
	}{{k0, numa0, model.AgentByRecord}, {k1, numa1, model.AgentByRecord}, {kNone, "", model.AgentByNone}, {kConflict, "", model.AgentByNone}}
	for _, c := range cases {
		k := kernelOf(t, snap, c.id)
		if k.Agent != c.agent || k.AgentBy != c.by {
			t.Errorf("kernel %s: agent %q by %q, want %q by %q", c.id[:8], k.Agent, k.AgentBy, c.agent, c.by)
		}
	}
	if r := kernelOf(t, snap, k0).Record; r == nil || r.SessionType != "batch" || r.OwnerUserID == "" || !strings.Contains(r.Image, "python-pytorch") {
		t.Errorf("k0 record: %+v", r)
	}
	if d := issuesWith(snap, model.IssueDriftNotOwner); len(d) != 0 {
		t.Errorf("false drift: %v", d)
	}
	if u := issuesWith(snap, model.IssueUnattributed); len(u) != 1 || u[0].Kernel != kNone || !strings.Contains(u[0].Message, "shared by agents "+numa0+", "+numa1) {
		t.Errorf("unattributed issues: %v", u)
	}
	if c := issuesWith(snap, model.IssueAgentConflict); len(c) != 1 || c[0].Kernel != kConflict || c[0].Severity != model.SevError ||
		!strings.Contains(c[0].Message, "i-gpu-node02") || !strings.HasSuffix(c[0].File, "recovery.json") {
		t.Errorf("conflict issues: %v", c)
	}
	for _, a := range snap.Agents {
		if a.Kernels != 1 {
			t.Errorf("agent %s has %d kernels, want 1", a.ID, a.Kernels)
		}
	}
	// Every kernel still counts on its device, whoever it belongs to.
	if u := snap.Usage[model.DeviceKey{Name: "cuda", ID: gpu04}]; u == nil || u.Total().String() != "0.10" {
		t.Errorf("conflicting kernel's device: %+v", u)
	}
}

// TestRecordWrittenAfterResource: the agent may write recovery.json after
// resource.txt; the live engine re-attributes when it appears.
func TestRecordWrittenAfterResource(t *testing.T) {
	config, root := sharedConfig(t)
	const id = "44444444-4444-4444-8444-444444444444"
	writeKernel(t, root, id, gpuKernel(t, gpu02, "0.40", "20"))
	opts := viewOptions(t, config)
	l := startLive(t, opts)
	s := l.wait(t, "unattributed first", 2*time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k == nil || k.AgentBy != model.AgentByNone {
			return fmt.Errorf("kernel %+v", k)
		}
		return nil
	})
	_ = s
	writeRecord(t, root, id, numa1)
	l.wait(t, "attributed by its record", 2*time.Second, func(s *model.Snapshot) error {
		k := s.Kernel(id)
		if k == nil || k.Agent != numa1 || k.AgentBy != model.AgentByRecord {
			return fmt.Errorf("kernel %+v", k)
		}
		if len(issuesWith(s, model.IssueUnattributed)) != 0 {
			return fmt.Errorf("still unattributed: %v", s.Issues)
		}
		for _, a := range s.Agents {
			if a.ID == numa1 && (a.Kernels != 1 || a.Held[model.SlotCUDAShares].String() != "0.40") {
				return fmt.Errorf("agent %s: %d kernels, held %v", a.ID, a.Kernels, a.Held)
			}
		}
		return nil
	})
}

// TestRecordRewrittenKeepsItsAgent: the agent rewrites recovery.json in
// place; while the file is cut short, the kernel keeps the agent its last
// whole version named (it went unattributed, its agent's totals and the
// node's issues flipping), with an info issue saying so; a record that
// is wrong, not incomplete, is not covered for.
func TestRecordRewrittenKeepsItsAgent(t *testing.T) {
	config, root := sharedConfig(t)
	const id = "55555555-5555-4555-8555-555555555555"
	writeKernel(t, root, id, gpuKernel(t, gpu02, "0.40", "20"))
	writeRecord(t, root, id, numa1)
	l := startLive(t, viewOptions(t, config))
	l.wait(t, "attributed by its record", 2*time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k == nil || k.Agent != numa1 {
			return fmt.Errorf("kernel %+v", k)
		}
		return nil
	})
	path := filepath.Join(root, id, "config", "recovery.json")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, whole[:len(whole)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "cut short: the last whole record stands", 2*time.Second, func(s *model.Snapshot) error {
		k := s.Kernel(id)
		if k == nil || k.Agent != numa1 || k.AgentBy != model.AgentByRecord {
			return fmt.Errorf("kernel %+v", k)
		}
		is := issuesWith(s, model.IssueRecord)
		if len(is) != 1 || is[0].Severity != model.SevInfo || !strings.Contains(is[0].Message, "its last whole version is used") {
			return fmt.Errorf("record issues %v", is)
		}
		if n := len(issuesWith(s, model.IssueUnattributed)); n != 0 {
			return fmt.Errorf("%d unattributed issue(s)", n)
		}
		return nil
	})
	// Not JSON at all: no longer a rewrite in progress.
	if err := os.WriteFile(path, []byte("{\"id\": 12, garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "a broken record is not covered for", 2*time.Second, func(s *model.Snapshot) error {
		k := s.Kernel(id)
		if k == nil || k.AgentBy == model.AgentByRecord {
			return fmt.Errorf("kernel %+v", k)
		}
		is := issuesWith(s, model.IssueRecord)
		if len(is) != 1 || is[0].Severity != model.SevWarning {
			return fmt.Errorf("record issues %v", is)
		}
		return nil
	})
}

// TestFollowConfig: agent.toml replaced by rename (as editors and fgtop do)
// reaches the snapshot within 1 s, with real fsnotify; a broken file keeps
// the last good partition with an issue naming the file; a good one clears
// it.
func TestFollowConfig(t *testing.T) {
	config, root := sharedConfig(t)
	const id = "55555555-5555-4555-8555-555555555555"
	writeKernel(t, root, id, gpuKernel(t, gpu03, "0.20", "5"))
	writeRecord(t, root, id, numa0)
	l := startLive(t, viewOptions(t, config))
	owns := ownsCUDA
	// ConfigHash is the hash of the bytes on disk: a console tells a stale
	// draft from it without reading the file.
	hashOf := func(text string) string {
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}
	orig, _ := os.ReadFile(config)
	l.wait(t, "initial partition", 2*time.Second, func(s *model.Snapshot) error {
		if !owns(s, numa0, gpu03) || owns(s, numa1, gpu03) {
			return fmt.Errorf("agents %+v", s.Agents)
		}
		if s.ConfigHash != hashOf(string(orig)) {
			return fmt.Errorf("config hash %q", s.ConfigHash)
		}
		return nil
	})
	replace := func(text string) {
		t.Helper()
		tmp := config + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, config); err != nil {
			t.Fatal(err)
		}
	}
	moved := strings.Replace(string(orig), `devices = { cuda = ["`+gpu01+`", "`+gpu03+`"] }`, `devices = { cuda = ["`+gpu01+`"] }`, 1)
	moved = strings.Replace(moved, `devices = { cuda = ["`+gpu02+`", "`+gpu04+`"] }`, `devices = { cuda = ["`+gpu02+`", "`+gpu03+`", "`+gpu04+`"] }`, 1)
	if moved == string(orig) {
		t.Fatal("fixture changed: device lists")
	}
	start := time.Now()
	replace(moved)
	l.wait(t, "the moved device", time.Second, func(s *model.Snapshot) error {
		if owns(s, numa0, gpu03) || !owns(s, numa1, gpu03) {
			return fmt.Errorf("agents %+v", s.Agents)
		}
		// numa0's kernel now holds a device its agent no longer owns.
		if d := issuesWith(s, model.IssueDriftNotOwner); len(d) != 1 || d[0].Kernel != id {
			return fmt.Errorf("drift %v", d)
		} else if want := "does not own (it belongs to " + string(numa1) + ")"; !strings.Contains(d[0].Message, want) {
			// The engine's live check is partition.NotOwner, the rule
			// fgtop check applies too.
			return fmt.Errorf("drift message %q lacks %q", d[0].Message, want)
		}
		if s.ConfigHash != hashOf(moved) {
			return fmt.Errorf("config hash %q", s.ConfigHash)
		}
		return nil
	})
	t.Logf("agent.toml change reached the snapshot in %v", time.Since(start))

	replace("[agent\nbroken = ")
	s := l.wait(t, "the broken file's issue", time.Second, func(s *model.Snapshot) error {
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if iss.File == config && strings.Contains(iss.Message, "cannot be used") {
				return nil
			}
		}
		return fmt.Errorf("issues %v", s.Issues)
	})
	if owns(s, numa0, gpu03) || !owns(s, numa1, gpu03) {
		t.Fatalf("a broken file changed the partition: %+v", s.Agents)
	}
	if s.ConfigHash != model.ConfigUnusable {
		t.Fatalf("config hash of a broken file %q; want %q", s.ConfigHash, model.ConfigUnusable)
	}
	replace(string(orig))
	l.wait(t, "back to the original", time.Second, func(s *model.Snapshot) error {
		if !owns(s, numa0, gpu03) || len(issuesWith(s, model.IssueDriftNotOwner)) != 0 || s.ConfigHash != hashOf(string(orig)) {
			return fmt.Errorf("agents %+v issues %v hash %q", s.Agents, s.Issues, s.ConfigHash)
		}
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if strings.Contains(iss.Message, "cannot be used") {
				return fmt.Errorf("stale issue %v", iss)
			}
		}
		return nil
	})
}

// TestTornSettles: a file without a final newline is torn while it
// changes; once it stays unchanged for the settle time it counts, as
// Backend.AI reads it, with a warning; a one-shot Build counts it at once.
func TestTornSettles(t *testing.T) {
	root, opts := fixtureTree(t)
	const id = "66666666-6666-4666-8666-666666666666"
	full := gpuKernel(t, gpu01, "0.70", "3")
	torn := full[:len(full)-1]
	p := writeKernel(t, root, id, torn)

	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if k := kernelOf(t, snap, id); k.State != model.KernelOK || k.Problem == nil || k.Problem.Code != model.IssueNoFinalNewline {
		t.Fatalf("one-shot: %+v", k)
	}
	if v := snap.AllocMap()[gpu01]; v.String() != "0.70" {
		t.Fatalf("one-shot alloc map %v", snap.AllocMap())
	}

	opts.TornSettle = 300 * time.Millisecond
	l := startLive(t, opts)
	l.wait(t, "torn at first", time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k == nil || k.State != model.KernelBroken || k.Problem == nil || !strings.Contains(k.Problem.Message, "no newline") {
			return fmt.Errorf("%+v", k)
		}
		return nil
	})
	l.wait(t, "counted after the settle time", 2*time.Second, func(s *model.Snapshot) error {
		k := s.Kernel(id)
		if k == nil || k.State != model.KernelOK || k.Problem == nil || k.Problem.Code != model.IssueNoFinalNewline {
			return fmt.Errorf("%+v", k)
		}
		if len(issuesWith(s, model.IssueNoFinalNewline)) != 1 {
			return fmt.Errorf("issues %v", s.Issues)
		}
		return nil
	})
	if err := os.WriteFile(p, full, 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "warning gone once whole", 2*time.Second, func(s *model.Snapshot) error {
		if k := s.Kernel(id); k == nil || k.State != model.KernelOK || k.Problem != nil || len(issuesWith(s, model.IssueNoFinalNewline)) != 0 {
			return fmt.Errorf("%+v", k)
		}
		return nil
	})
}

// TestCutShortKeepsLastGood: a kernel's file that loses its allocation
// lines (cut at a line's end, or inside one) while it runs keeps what it
// held, stale and saying so, as a file that does not parse keeps it:
// read as holding nothing, it gave its share back to the device's total
// and to the record (who held GPU3 then lost it). Whole again, it is ok.
func TestCutShortKeepsLastGood(t *testing.T) {
	root, opts := fixtureTree(t)
	const id = "77777777-7777-4777-8777-777777777777"
	full := gpuKernel(t, gpu01, "0.70", "3")
	text := string(full)
	cut := text[:strings.Index(text, "CUDA.SHARES_SHARES=")]
	p := writeKernel(t, root, id, full)
	opts.TornSettle = 200 * time.Millisecond
	l := startLive(t, opts)
	holds := func(s *model.Snapshot, want string) error {
		if v := s.AllocMap()[gpu01]; v.String() != want {
			return fmt.Errorf("GPU %s holds %v, want %s", gpu01, v, want)
		}
		return nil
	}
	l.wait(t, "whole", 2*time.Second, func(s *model.Snapshot) error { return holds(s, "0.70") })
	for _, c := range []struct{ name, text string }{
		{"cut at a line's end", cut},
		{"cut inside a line", cut + "CUDA.SHARES_SHA"},
		// head -c 500: inside MOUNTS, before SLOTS.
		{"cut before SLOTS", text[:500]},
	} {
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		l.wait(t, c.name, 3*time.Second, func(s *model.Snapshot) error {
			k := s.Kernel(id)
			if k == nil || k.State != model.KernelStale || k.Problem == nil ||
				!strings.Contains(k.Problem.Message, "keeping its last good allocation") {
				return fmt.Errorf("kernel %+v problem %+v", k, k.Problem)
			}
			if c.name != "cut before SLOTS" && k.Problem.Code != model.IssueNoAllocation {
				return fmt.Errorf("problem %+v, want no-allocation", k.Problem)
			}
			return holds(s, "0.70")
		})
		// Settled (the torn line read as Backend.AI reads it), still so.
		time.Sleep(500 * time.Millisecond)
		l.wait(t, c.name+", settled", 2*time.Second, func(s *model.Snapshot) error {
			if k := s.Kernel(id); k == nil || k.State != model.KernelStale {
				return fmt.Errorf("%+v", k)
			}
			return holds(s, "0.70")
		})
		if err := os.WriteFile(p, full, 0o644); err != nil {
			t.Fatal(err)
		}
		l.wait(t, "whole again after "+c.name, 2*time.Second, func(s *model.Snapshot) error {
			if k := s.Kernel(id); k == nil || k.State != model.KernelOK || k.Problem != nil {
				return fmt.Errorf("%+v", k)
			}
			return holds(s, "0.70")
		})
	}
}

// TestCutShortFromTheStart: a kernel whose file lacked its allocation
// lines from the first read has no last good allocation: read again
// (still cut, its CPU line there), it is what the file says, with the
// warning, not stale "keeping" what the cut file itself listed.
func TestCutShortFromTheStart(t *testing.T) {
	root, opts := fixtureTree(t)
	const id = "78787878-7878-4878-8878-787878787878"
	text := string(gpuKernel(t, gpu01, "0.70", "3"))
	cut := text[:strings.Index(text, "CUDA.SHARES_SHARES=")] + "CPU_SHARES=3:1\n"
	p := writeKernel(t, root, id, []byte(cut))
	l := startLive(t, opts)
	check := func(s *model.Snapshot) error {
		k := s.Kernel(id)
		if k == nil || k.State != model.KernelOK || k.Problem == nil || k.Problem.Code != model.IssueNoAllocation ||
			strings.Contains(k.Problem.Message, "keeping") {
			return fmt.Errorf("kernel %+v problem %+v", k, k.Problem)
		}
		return nil
	}
	l.wait(t, "first read", 2*time.Second, check)
	again := strings.Replace(cut, "SCRATCH_SIZE=0m", "SCRATCH_SIZE=1m", 1)
	if again == cut {
		t.Fatal("fixture changed: no SCRATCH_SIZE=0m")
	}
	if err := os.WriteFile(p, []byte(again), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	l.wait(t, "read again", 2*time.Second, check)
}

// TestDeviceKernelCounts: every device counts the kernels on it, CPU cores
// and memory included; a kernel with two slots on one device counts once.
func TestDeviceKernelCounts(t *testing.T) {
	_, opts := fixtureTree(t)
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[model.DeviceKey]int{
		{Name: "mem", ID: "root"}: 3, // A, B, C
		{Name: "cpu", ID: "16"}:   1, // C
		{Name: "cuda", ID: gpu04}: 1,
	}
	for k, n := range want {
		if u := snap.Usage[k]; u == nil || u.Kernels != n {
			t.Errorf("%s: %+v, want %d kernels", k, u, n)
		}
	}
	st := newState(&Options{Roots: opts.Roots})
	al := model.Allocations{
		model.SlotCUDAShares: {"g": model.MustDec("0.5")},
		model.SlotCUDADevice: {"g": model.One, "h": model.One},
	}
	st.apply("a", "k", al, +1)
	if st.dev[model.DeviceKey{Name: "cuda", ID: "g"}].kernels != 1 || st.dev[model.DeviceKey{Name: "cuda", ID: "h"}].kernels != 1 {
		t.Fatal("a kernel with two slots on a device counted twice")
	}
	st.apply("a", "k", al, -1)
	if st.dev[model.DeviceKey{Name: "cuda", ID: "g"}].kernels != 0 {
		t.Fatal("not uncounted")
	}
}

// live is an engine running for a test.
type live struct {
	eng *Engine
}

func startLive(t *testing.T, opts Options) *live {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	eng := New(opts)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	})
	select {
	case <-eng.Ready():
	case err := <-done:
		t.Fatalf("engine stopped: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("engine not ready after 5 s")
	}
	return &live{eng: eng}
}

func (l *live) wait(t *testing.T, what string, d time.Duration, cond func(*model.Snapshot) error) *model.Snapshot {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for {
		s := l.eng.Latest()
		if s != nil {
			if err = cond(s); err == nil {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func scratchOpts() scratch.Options { return scratch.Options{Debounce: 5 * time.Millisecond} }

// writeFakeProc makes a /proc tree holding one agent process running
// config, started `start`.
func writeFakeProc(t *testing.T, dir, config string, start time.Time) {
	t.Helper()
	boot := start.Add(-time.Hour).Truncate(time.Second)
	files := map[string]string{
		"stat":         fmt.Sprintf("cpu 1 2 3\nbtime %d\n", boot.Unix()),
		"1/stat":       "1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0",
		"1/cmdline":    "/sbin/init\x00",
		"4242/cmdline": "python3\x00-m\x00ai.backend.agent.server\x00-f\x00" + config + "\x00",
		"4242/stat":    fmt.Sprintf("4242 (python3) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0", start.Sub(boot)/(10*time.Millisecond)),
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		// Replace, so a reader never sees half a file.
		if err := os.WriteFile(p+".tmp", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRestartPending: an agent process that started before agent.toml
// last changed is "restart pending" (with an issue); once it restarts, it
// is current.
func TestRestartPending(t *testing.T) {
	config, _ := sharedConfig(t)
	fi, err := os.Stat(config)
	if err != nil {
		t.Fatal(err)
	}
	proc := t.TempDir()
	writeFakeProc(t, proc, config, fi.ModTime().Add(-time.Minute))
	opts := viewOptions(t, config)
	opts.NoProcs, opts.ProcRoot, opts.RestartEvery = false, proc, 50*time.Millisecond

	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range snap.Agents {
		if a.Restart.State != model.RestartPending || fmt.Sprint(a.Restart.PIDs) != "[4242]" {
			t.Errorf("one-shot: agent %s: %+v", a.ID, a.Restart)
		}
	}
	if len(issuesWith(snap, model.IssueRestartPending)) != 1 {
		t.Errorf("issues %v", snap.Issues)
	}

	l := startLive(t, opts)
	l.wait(t, "pending", time.Second, func(s *model.Snapshot) error {
		if s.Agents[0].Restart.State != model.RestartPending {
			return fmt.Errorf("%+v", s.Agents[0].Restart)
		}
		return nil
	})
	writeFakeProc(t, proc, config, fi.ModTime().Add(time.Minute))
	l.wait(t, "current after the restart", 2*time.Second, func(s *model.Snapshot) error {
		if s.Agents[0].Restart.State != model.RestartCurrent || len(issuesWith(s, model.IssueRestartPending)) != 0 {
			return fmt.Errorf("%+v %v", s.Agents[0].Restart, s.Issues)
		}
		return nil
	})
}

func TestCmpDeviceKey(t *testing.T) {
	keys := []model.DeviceKey{{}, {Name: "cuda"}, {Name: "cuda", ID: "0"}, {Name: "cuda2", ID: "0"}, {Name: "cuda", ID: "01"},
		{Name: "cpu", ID: "10"}, {Name: "cpu", ID: "9"}, {Name: "c", ID: "pu:1"}, {Name: "mem", ID: "root"}, {ID: "x"}}
	for _, a := range keys {
		for _, b := range keys {
			want := strings.Compare(a.String(), b.String())
			if got := cmpDeviceKey(a, b); got != want {
				t.Errorf("cmpDeviceKey(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestOverriddenRootFallback: a --scratch-root that overrides the config's
// roots (its agent is a made-up name) believes any configured agent's
// record, and keeps a kernel without one as the root's own.
func TestOverriddenRootFallback(t *testing.T) {
	config, _ := sharedConfig(t)
	root := t.TempDir()
	const withRec, without = "77777777-7777-4777-8777-777777777777", "88888888-8888-4888-8888-888888888888"
	writeKernel(t, root, withRec, gpuKernel(t, gpu02, "0.30", "20"))
	writeRecord(t, root, withRec, numa1)
	writeKernel(t, root, without, gpuKernel(t, gpu01, "0.30", "2"))
	opts := viewOptions(t, config)
	opts.Roots, opts.RootsOverridden = []scratch.Root{{Path: root, Agent: "made-up"}}, true
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if k := kernelOf(t, snap, withRec); k.Agent != numa1 || k.AgentBy != model.AgentByRecord {
		t.Errorf("with a record: %q by %q", k.Agent, k.AgentBy)
	}
	if k := kernelOf(t, snap, without); k.Agent != "made-up" || k.AgentBy != model.AgentByRoot {
		t.Errorf("without a record: %q by %q", k.Agent, k.AgentBy)
	}
	if c := issuesWith(snap, model.IssueAgentConflict); len(c) != 0 {
		t.Errorf("conflicts %v", c)
	}
}

// TestMadeUpAgentID: an agent.toml without an agent id (Backend.AI makes up
// agent-<uuid4> at every start): the records name that made-up id, and the
// kernel is still the agent's.
func TestMadeUpAgentID(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "scratches")
	config := filepath.Join(dir, "agent.toml")
	text := fmt.Sprintf("[agent]\nbackend = \"docker\"\n\n[container]\nscratch-root = %q\n\n[resource]\nallocation-mode = \"shared\"\n", root)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "99999999-9999-4999-8999-999999999999"
	writeKernel(t, root, id, gpuKernel(t, gpu02, "0.30", "20"))
	writeRecord(t, root, id, "agent-3f1c0a2e-5b7d-4e9f-8a6c-2d4b1e0f9c73")
	snap, err := Build(context.Background(), viewOptions(t, config))
	if err != nil {
		t.Fatal(err)
	}
	k := kernelOf(t, snap, id)
	if len(snap.Agents) != 1 || k.Agent != snap.Agents[0].ID || k.AgentBy != model.AgentByRecord || len(issuesWith(snap, model.IssueAgentConflict)) != 0 {
		t.Fatalf("kernel %q by %q, agents %+v, issues %v", k.Agent, k.AgentBy, snap.Agents, snap.Issues)
	}
}

// TestFollowConfigWithoutInotify: with no inotify instance to be had
// (fs.inotify.max_user_instances used up by other watchers of the user), a
// change of agent.toml still reaches the snapshot within 1 s, by polling,
// and the file is not reported as unusable.
func TestFollowConfigWithoutInotify(t *testing.T) {
	saved := newConfigWatcher
	newConfigWatcher = func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)
	}
	t.Cleanup(func() { newConfigWatcher = saved })
	config, _ := sharedConfig(t)
	l := startLive(t, viewOptions(t, config))
	owns := ownsCUDA
	noConfigErr := func(s *model.Snapshot) error {
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if strings.Contains(iss.Message, "cannot be used") {
				return fmt.Errorf("config reported unusable: %v", iss)
			}
		}
		return nil
	}
	l.wait(t, "initial partition", 2*time.Second, func(s *model.Snapshot) error {
		if !owns(s, numa0, gpu03) {
			return fmt.Errorf("agents %+v", s.Agents)
		}
		return noConfigErr(s)
	})
	orig, _ := os.ReadFile(config)
	moved := strings.Replace(string(orig), `devices = { cuda = ["`+gpu01+`", "`+gpu03+`"] }`, `devices = { cuda = ["`+gpu01+`"] }`, 1)
	moved = strings.Replace(moved, `devices = { cuda = ["`+gpu02+`", "`+gpu04+`"] }`, `devices = { cuda = ["`+gpu02+`", "`+gpu03+`", "`+gpu04+`"] }`, 1)
	if moved == string(orig) {
		t.Fatal("fixture changed: device lists")
	}
	if err := os.WriteFile(config+".tmp", []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(config+".tmp", config); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "the moved device", time.Second, func(s *model.Snapshot) error {
		if owns(s, numa0, gpu03) || !owns(s, numa1, gpu03) {
			return fmt.Errorf("agents %+v", s.Agents)
		}
		return noConfigErr(s)
	})
}

// ownsCUDA reports whether agent owns the cuda device dev in s.
func ownsCUDA(s *model.Snapshot, agent model.AgentID, dev string) bool {
	for _, a := range s.Agents {
		if a.ID == agent {
			return a.OwnsDevice(model.DeviceKey{Name: "cuda", ID: model.DeviceID(dev)})
		}
	}
	return false
}

// TestUnusableAmounts: an amount no device can hold (NaN, Infinity, one
// below zero), which Backend.AI's Decimal reads all the same, is an error
// on its kernel and is left out of the device's total: a NaN added in made
// the total NaN and hid the device's over-capacity, a negative one hid
// another kernel's load. The kernel's other amounts still count.
func TestUnusableAmounts(t *testing.T) {
	for _, bad := range []string{"NaN", "Infinity", "-0.50", "sNaN"} {
		t.Run(bad, func(t *testing.T) {
			root, opts := fixtureTree(t)
			const over, odd = "77777777-7777-4777-8777-777777777777", "88888888-8888-4888-8888-888888888888"
			writeKernel(t, root, over, gpuKernel(t, gpu01, "1.20", "3"))
			writeKernel(t, root, odd, gpuKernel(t, gpu01, bad, "5"))
			snap, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			k := kernelOf(t, snap, odd)
			if k.Problem == nil || k.Problem.Severity != model.SevError || !strings.Contains(k.Problem.Message, "not an amount a device can hold") {
				t.Fatalf("kernel %+v: want an error on its amount", k.Problem)
			}
			if _, ok := k.Alloc[model.SlotCUDAShares]; ok {
				t.Errorf("the unusable amount is held: %v", k.Alloc)
			}
			if _, ok := k.Alloc[model.SlotCPU]; !ok {
				t.Errorf("its core is no longer held: %v", k.Alloc)
			}
			if v := snap.AllocMap()[gpu01]; v.String() != "1.20" {
				t.Errorf("the device holds %v, want 1.20 (the other kernel's)", v)
			}
			found := false
			for _, iss := range issuesWith(snap, model.IssueOverCapacity) {
				found = found || strings.Contains(iss.Message, "1.20 of 1")
			}
			if !found {
				t.Errorf("over-capacity hidden: %v", snap.Issues)
			}
		})
	}
}

package partition

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// configCase is one case of testdata/fixtures/config-cases.json (only the
// fields this test reads).
type configCase struct {
	ID    string `json:"id"`
	Input string `json:"input"`
	Main  struct {
		OK bool `json:"ok"`
	} `json:"main"`
}

// fixtureNode is the mock node of the fixtures (4 mock GPUs of
// mock-accelerator.toml, fractional) on a host large enough for every
// case: 64 cores, 512 GiB.
func fixtureNode(t *testing.T) *model.Snapshot {
	t.Helper()
	src, err := inventory.NewMock(testfix.Dir(t, "backendai", "mock-accelerator.toml"), testfix.Dir(t, "backendai", "mock-accelerator.etcd.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	devs := append([]model.Device(nil), inv.Devices...)
	devs = append(devs, hostDevices(64, nil, 512)...)
	s := snapshot(devs)
	s.HostMemBytes = 512 << 30
	return s
}

// randomRequest is one edit fgtop offers (plan/apply flags, the console's
// keys), picked at random against the config as it is now. history are
// the files this sequence wrote so far (for --from).
func randomRequest(rng *rand.Rand, c *agentconfig.Config, snap *model.Snapshot, history []string) (Request, string) {
	ids := c.AgentIDs()
	agent := func() model.AgentID { return ids[rng.IntN(len(ids))] }
	var devs []model.Device
	for _, d := range snap.Devices {
		if d.Name != "mem" {
			devs = append(devs, d)
		}
	}
	switch op := rng.IntN(12); {
	case op >= 10:
		// --slot AGENT=SLOT=AMOUNT, the slot-based amounts (the console's
		// editor fields make the same requests).
		a := agent()
		slots := KnownSlots(c, InventoryOf(snap))
		slot := slots[rng.IntN(len(slots))]
		var text string
		switch slot {
		case model.SlotCPU:
			text = fmt.Sprint(rng.IntN(9))
		case model.SlotMem:
			text = []string{"1G", "2G", "8G", "1536M", "3g", "10G"}[rng.IntN(6)]
		default:
			text = []string{"0", "0.5", "1.0", "1.25", "2", "2.0", "3.75"}[rng.IntN(7)]
		}
		set, err := ParseSlotSet(string(a) + "=" + string(slot) + "=" + text)
		if err != nil {
			panic(err)
		}
		req := Request{Slots: []SlotSet{set}}
		if rng.IntN(2) == 0 {
			req.Mode = agentconfig.ModeManual
		}
		return req, fmt.Sprintf("--mode %q --slot %s", req.Mode, set)
	case op < 3:
		modes := []string{agentconfig.ModeShared, agentconfig.ModeAutoSplit, agentconfig.ModeManual}
		m := modes[rng.IntN(3)]
		return Request{Mode: m}, "--mode " + m
	case op < 5:
		a := agent()
		spec := fmt.Sprint(rng.IntN(9))
		if c.AllocFormat == agentconfig.FormatDeviceBased {
			lo := rng.IntN(60)
			spec = fmt.Sprintf("%d-%d", lo, lo+rng.IntN(4))
		}
		req := Request{CPU: []CPUSet{{Agent: a, Spec: spec}}}
		if rng.IntN(2) == 0 {
			req.Mode = agentconfig.ModeManual
		}
		return req, fmt.Sprintf("--mode %q --cpu %s=%s", req.Mode, a, spec)
	case op < 7:
		a := agent()
		sizes := []string{"1G", "2G", "8G", "1536M", "3g", "10G", "123456789"}
		sz := sizes[rng.IntN(len(sizes))]
		b, _ := model.ParseFiniteBinarySize(sz)
		req := Request{Mem: []MemSet{{Agent: a, Bytes: b}}}
		if rng.IntN(2) == 0 {
			req.Mode = agentconfig.ModeManual
		}
		return req, fmt.Sprintf("--mode %q --mem %s=%s", req.Mode, a, sz)
	case op < 8:
		d := devs[rng.IntN(len(devs))]
		a := agent()
		mv := Move{Device: Key(d.Key()), Agent: a}
		return Request{Moves: []Move{mv}}, "--move " + mv.Device + "=" + string(a)
	default:
		if len(history) == 0 {
			return Request{Mode: agentconfig.ModeAutoSplit}, "--mode auto-split"
		}
		from := history[rng.IntN(len(history))]
		f, _ := agentconfig.Load(from)
		if f == nil {
			return Request{Mode: agentconfig.ModeManual}, "--mode manual"
		}
		return Request{From: f}, "--from " + filepath.Base(from)
	}
}

// TestEditsKeepMainLoading is the differential property test of every
// edit fgtop offers: for each case of config-cases.json that Backend.AI
// main accepts, random sequences of edits (modes, including slot-based ->
// auto-split -> manual, moves, cpu, mem, --from) go through the engine path
// of `fgtop apply` (Draft, Build, Apply: the real atomic write), every file
// written is kept, and Backend.AI main's own loader (the oracle) must
// accept every one of them. An edit fgtop refuses must leave the file byte
// for byte as it was.
func TestEditsKeepMainLoading(t *testing.T) {
	raw, err := os.ReadFile(testfix.Dir(t, "config-cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []configCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	snap := fixtureNode(t)
	inv := InventoryOf(snap)
	outDir := t.TempDir()
	type written struct{ file, trail string }
	var out []written
	refused, editable, unloadable, slotWrites := 0, 0, 0, 0
	start := time.Now()
	for ci, cs := range cases {
		if !cs.Main.OK {
			continue
		}
		dir := filepath.Join(t.TempDir(), cs.ID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "agent.toml")
		if err := os.WriteFile(path, []byte(cs.Input), 0o640); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(20261125, uint64(ci)))
		var history []string
		trail := []string{cs.ID}
		wroteAny := false
		// Random steps, then always the chain that lost main's form once:
		// auto-split drops the tables, manual writes them again.
		n := 3 + rng.IntN(4)
		for step := range n + 2 {
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cur, _ := agentconfig.Load(path)
			if cur == nil {
				unloadable++
				break
			}
			req, what := randomRequest(rng, cur, snap, history)
			switch step {
			case n:
				req, what = Request{Mode: agentconfig.ModeAutoSplit}, "--mode auto-split"
			case n + 1:
				req, what = Request{Mode: agentconfig.ModeManual}, "--mode manual"
			}
			trail = append(trail, what)
			d, errs := Draft(cur, inv, req)
			p := Build(cur, d, snap, errs...)
			var res *ApplyResult
			var aerr error
			if p.Valid() && p.Changed() {
				res, aerr = Apply(p, ApplyOptions{Actor: operator, Force: true})
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if res == nil {
				if !bytes.Equal(before, after) {
					t.Errorf("%s: refused edit (%s; %v %v) changed the file", strings.Join(trail, " | "), what, p.Errors, aerr)
				}
				if !p.Valid() || aerr != nil {
					refused++
					if os.Getenv("FGTOP_EDIT_DEBUG") != "" {
						t.Logf("REFUSED %s: %q %v", strings.Join(trail, " | "), p.Errors, aerr)
					}
				}
				continue
			}
			if aerr != nil {
				t.Errorf("%s: written but: %v", strings.Join(trail, " | "), aerr)
			}
			keep := filepath.Join(outDir, fmt.Sprintf("%s.%d.toml", cs.ID, step))
			if err := os.WriteFile(keep, after, 0o640); err != nil {
				t.Fatal(err)
			}
			out = append(out, written{keep, strings.Join(trail, " | ")})
			if strings.Contains(what, "--slot ") {
				slotWrites++
			}
			history = append(history, keep)
			wroteAny = true
		}
		if wroteAny {
			editable++
		}
	}
	t.Logf("%d files written from %d cases (%d refused edits, %d cases fgtop cannot load) in %v",
		len(out), editable, refused, unloadable, time.Since(start).Round(time.Millisecond))
	if len(out) < 100 {
		t.Errorf("only %d files written: the edits are not exercised", len(out))
	}
	t.Logf("%d of them written by a --slot edit", slotWrites)
	if slotWrites < 20 {
		t.Errorf("only %d files written by --slot edits: the slot-based amounts are not exercised", slotWrites)
	}

	oracle := testfix.Oracle(t)
	list := filepath.Join(t.TempDir(), "files")
	var names []string
	for _, w := range out {
		names = append(names, w.file)
	}
	if err := os.WriteFile(list, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(oracle, "--files-from", list)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run %s: %v", oracle, err)
	}
	trails := map[string]string{}
	for _, w := range out {
		trails[w.file] = w.trail
	}
	accepted, lines := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v struct {
			File   string            `json:"file"`
			OK     bool              `json:"ok"`
			Errors []json.RawMessage `json:"errors"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("oracle output %q: %v", sc.Text(), err)
		}
		lines++
		if v.OK {
			accepted++
			continue
		}
		b, _ := os.ReadFile(v.File)
		t.Errorf("Backend.AI main rejects a file fgtop wrote (%s):\n%s\nerrors: %s\n%s", trails[v.File], filepath.Base(v.File), v.Errors, b)
	}
	if lines != len(out) {
		t.Fatalf("oracle answered %d of %d files (exit %v): %s", lines, len(out), err, stderr.String())
	}
	t.Logf("Backend.AI main accepts %d of %d files fgtop wrote", accepted, len(out))
}

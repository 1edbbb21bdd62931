package console

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

// simulateNotes is what `fgtop simulate --request req` on the live node s
// (no --agent) says: its table, the per-agent lines under it (without
// their "step 1: " lead), and whether the request counts as placed.
func simulateNotes(t *testing.T, s *model.Snapshot, req string) (table string, agents []string, placed bool) {
	t.Helper()
	sim := &placement.Simulation{Types: model.DefaultSlotTypes(), Source: "test"}
	if _, err := sim.SetLiveNode(s, placement.Live{}, fleet.SettingsFor(s, fleet.Settings{})); err != nil {
		t.Fatal(err)
	}
	// simulate names a live node's devices by id; the console names them
	// as its screen does (GPU3): the words are compared with the names
	// the console gives.
	sim.Labels = names.LabelsByID(s.Devices)
	known := append([]model.SlotName{model.SlotCPU, model.SlotMem}, sim.Slots...)
	steps, _, err := placement.ParseSteps([]string{req}, sim.Types, known)
	if err != nil {
		t.Fatal(err)
	}
	res, err := placement.Run(sim.Node, steps, placement.RunOptions{Live: sim.Live, Manager: sim.Manager})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sim.WriteTable(&b, res, "", func(s string) string { return s }); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "step 1: agent "); ok {
			agents = append(agents, "agent "+rest)
		}
	}
	return b.String(), agents, sim.Unplaced(res) == 0
}

// TestFitAgreesWithSimulate: :fit's answer on a node of two agents (one
// device of each in drift, one over capacity) says for each agent exactly
// what simulate says of it, and calls the request placed, placed only by
// overcommitting or refused as simulate's table does.
func TestFitAgreesWithSimulate(t *testing.T) {
	s := fake.Node(fake.Options{})
	tests := []struct {
		req  string
		want kit.Level // OK: fits; Crit: only by overcommitting; Warn: refused
		says string    // in the footer's short answer
	}{
		{"cuda.shares=0.5", kit.LvlOK, "takes it: cuda.shares GPU"},
		{"cuda.shares=0.5,cpu=2,mem=4g", kit.LvlOK, "cpu "},
		{"cuda.shares=0.8", kit.LvlCrit, "only by OVERCOMMIT"},
		{"cuda.shares=2.5", kit.LvlWarn, "refused"},
		{"cuda.shares=0.5,cpu=20", kit.LvlWarn, "refused"},
		{"cuda.device:20g-mig=1", kit.LvlOK, "MIG"},
		{"cuda.device:10g-mig=1", kit.LvlWarn, "refused"},
		{"mem=200g", kit.LvlWarn, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.req, func(t *testing.T) {
			ans, err := answerFit(s, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			table, simAgents, placed := simulateNotes(t, s, tt.req)
			var ours []string
			for _, l := range ans.Lines {
				if strings.HasPrefix(l.Text, "agent ") {
					ours = append(ours, l.Text)
				}
			}
			if len(simAgents) != len(s.Agents) || !slices.Equal(ours, simAgents) {
				t.Errorf("per agent, :fit says\n  %s\nsimulate says\n  %s\n%s", strings.Join(ours, "\n  "), strings.Join(simAgents, "\n  "), table)
			}
			if placed != (ans.Lvl != kit.LvlWarn) {
				t.Errorf("simulate placed=%v, :fit level %v (%s)\n%s", placed, ans.Lvl, ans.Short, table)
			}
			if byOver := strings.Contains(table, "only by overcommitting") || strings.Contains(table, "on every agent that would take it"); byOver != (ans.Lvl == kit.LvlCrit) {
				t.Errorf("simulate only-by-overcommit=%v, :fit level %v (%s)\n%s", byOver, ans.Lvl, ans.Short, table)
			}
			if ans.Lvl != tt.want || !strings.Contains(ans.Short, tt.says) || !strings.HasPrefix(ans.Short, "fit: ") {
				t.Errorf("short answer %q (level %v), want level %v saying %q", ans.Short, ans.Lvl, tt.want, tt.says)
			}
		})
	}
}

// TestFitBadRequest: a request the node cannot judge is refused in
// fgtop's words, naming the slots the node has.
func TestFitBadRequest(t *testing.T) {
	s := fake.Node(fake.Options{})
	tests := []struct{ req, says string }{
		{"cuda.shres=0.5", "did you mean cuda.shares?"},
		{"rocm.device=1", `unknown slot "rocm.device"`},
		{"cuda.shares=-1", "negative"},
		{"cuda.shares=abc", "cuda.shares"},
		{"free=1", "free=N"},
		{"cuda.shares=0", "asks for nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.req, func(t *testing.T) {
			_, err := answerFit(s, tt.req)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "the node's slots: ") ||
				!strings.Contains(err.Error(), "cuda.device:20g-mig") {
				t.Errorf("error %q: want it to say %q and name the node's slots", err, tt.says)
			}
		})
	}
}

// TestFitCommand drives :fit through Update on a read-only console: the
// answer comes back from a Cmd (not computed in Update), flashes short in
// the footer and opens a detail screen with every agent's answer, which
// esc closes; a bad request flashes an error and opens nothing.
func TestFitCommand(t *testing.T) {
	a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{ReadOnly: true})
	run := func(line string) tea.Msg {
		t.Helper()
		typeKeys(a, ":"+line)
		_, cmd := a.Update(enter)
		if cmd == nil {
			return nil
		}
		msg := cmd()
		if _, ok := msg.(fitMsg); !ok {
			t.Fatalf(":%s: the Cmd gave %T", line, msg)
		}
		if detailOf(a) != nil {
			t.Fatalf(":%s: answered inside Update", line)
		}
		a.Update(msg)
		return msg
	}
	run("fit cuda.shares=0.5")
	ds := detailOf(a)
	if ds == nil || ds.Kind != detFit {
		t.Fatalf("no :fit detail; flash %q", a.Flash.Text)
	}
	if !strings.HasPrefix(a.Flash.Text, "fit: agent ") || !strings.Contains(a.Flash.Text, "takes it: cuda.shares GPU") {
		t.Errorf("flash %q", a.Flash.Text)
	}
	body := stripANSI(a.View().Content)
	for _, ag := range []model.AgentID{fake.Agent0, fake.Agent1} {
		if !strings.Contains(body, "agent "+string(ag)+"'s own") {
			t.Errorf("the detail lacks agent %s:\n%s", ag, body)
		}
	}
	// A new snapshot leaves the answer as asked.
	feed(a, fake.Node(fake.Options{}))
	if got := stripANSI(a.View().Content); !strings.Contains(got, "agent "+string(fake.Agent0)+"'s own") {
		t.Errorf("a new snapshot changed the answer:\n%s", got)
	}
	a.Update(esc)
	if detailOf(a) != nil {
		t.Error("esc left the :fit detail open")
	}

	if msg := run("fit cuda.shres=0.5"); msg == nil || detailOf(a) != nil {
		t.Fatalf("a bad request: msg %v, detail open %v", msg, detailOf(a) != nil)
	}
	if !strings.Contains(a.Flash.Text, "did you mean cuda.shares") {
		t.Errorf("a bad request's flash: %q", a.Flash.Text)
	}
	if run("fit"); !strings.Contains(a.Flash.Text, "usage: :fit") {
		t.Errorf(":fit alone: %q", a.Flash.Text)
	}
}

// FuzzAnswerFit: whatever is typed after :fit (at most the prompt's 256
// characters) is answered or refused in words, never a panic, and an
// answer always has its short text and a line per agent.
func FuzzAnswerFit(f *testing.F) {
	s := fake.Node(fake.Options{})
	for _, seed := range []string{"cuda.shares=0.5", "cuda.shares=0.5,cpu=2,mem=4g", `{"cuda.shares": "1.2"}`, "free=1",
		"cuda.device:20g-mig=1", "mem=1e30", "cuda.shares=0.0000000000000000000000000001", "cpu=-1", ",,=", "cuda.shares=1.2.3"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if utf8.RuneCountInString(text) > maxPromptRunes {
			return
		}
		ans, err := answerFit(s, text)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		n := 0
		for _, l := range ans.Lines {
			if strings.HasPrefix(l.Text, "agent ") {
				n++
			}
		}
		if ans.Short == "" || n != len(s.Agents) {
			t.Fatalf("%q: short %q, %d agent lines", text, ans.Short, n)
		}
	})
}

// BenchmarkAnswerFit is one :fit on a large node (64 GPUs, 2,000
// kernels), the work its Cmd does off the UI loop.
func BenchmarkAnswerFit(b *testing.B) {
	s := fake.Large(64, 2000)
	for b.Loop() {
		if _, err := answerFit(s, "cuda.shares=0.5,cpu=2,mem=4g"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFitQuantumUnknown: on a fractional node that could not read its
// quantum_size, :fit does not round shares by a default that may not be
// the node's; a request without shares is answered as before.
func TestFitQuantumUnknown(t *testing.T) {
	s := fake.Node(fake.Options{})
	s.Allocator.Fractional, s.Allocator.Quantum = true, model.MustDec("0.05")
	if _, err := answerFit(s, "cuda.shares=0.15"); err != nil {
		t.Fatalf("known quantum: %v", err)
	}
	s.Allocator.Quantum = model.Zero
	_, err := answerFit(s, "cuda.shares=0.15,cpu=1")
	if err == nil || !strings.Contains(err.Error(), "quantum_size") || !strings.Contains(err.Error(), "cuda.shares") {
		t.Fatalf("unknown quantum: %v, want an error naming the quantum_size and cuda.shares", err)
	}
	if _, err := answerFit(s, "cpu=1"); err != nil {
		t.Fatalf("no shares asked: %v", err)
	}
}

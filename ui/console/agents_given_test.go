package console

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// TestAgentsPaneSlotBased: an agent of a slot-based partition says what it
// is given of each slot against the node's total ("cuda.shares 2.0 of
// 4.00"), what its kernels hold, held beyond the amount in red, and never
// the shared-mode words.
func TestAgentsPaneSlotBased(t *testing.T) {
	s := fake.Node(fake.Options{})
	if len(s.Agents) == 0 {
		t.Fatal("the fake node has no agents")
	}
	total := model.Zero
	for _, d := range s.Devices {
		if d.Slot == model.SlotCUDAShares {
			total = total.Add(d.Capacity)
		}
	}
	for i := range s.Agents {
		s.Agents[i].Owns = nil
		s.Agents[i].Given = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("2.0"), model.SlotCPU: model.MustDec("15"), model.SlotMem: model.NewDec(120<<30, 0)}
	}
	s.Agents[0].Held = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("2.5")}
	o := render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false), Looks: kit.LookDims{Colours: 8, Shapes: 1}}
	d := render.Derive(s, o, nil)
	var text []string
	crit := ""
	for _, ln := range d.Agents[0].Lines {
		text = append(text, spansText(ln))
		for _, sp := range ln {
			if sp.Lvl == kit.LvlCrit {
				crit += sp.Text
			}
		}
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"every device, not exclusive (slot-based)", "cuda.shares 2.0 of " + total.String() + "  held 2.5", "cpu         15", "mem         120g of "} {
		if !strings.Contains(all, want) {
			t.Errorf("agent lines lack %q:\n%s", want, all)
		}
	}
	if crit != "2.5" {
		t.Errorf("held beyond the amount is not red alone: %q\n%s", crit, all)
	}
	if strings.Contains(all, "shared") {
		t.Errorf("a slot-based agent reads as shared:\n%s", all)
	}
}

// TestSlotBasedAgentDetailOwnsNothing: the detail of an agent that owns no
// device of its own (slot-based) does not list every device under
// "Devices it owns" with every agent's figures, as if they were its.
func TestSlotBasedAgentDetailOwnsNothing(t *testing.T) {
	s := fake.Node(fake.Options{})
	for i := range s.Agents {
		s.Agents[i].Owns = nil
		s.Agents[i].Given = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("2.0")}
	}
	a := testApp(t, 120, 60, s, Options{})
	a.Update(keyCode(tea.KeyTab))
	a.Update(keyCode(tea.KeyTab)) // agents
	a.Update(keyCode(tea.KeyEnter))
	if ds := detailOf(a); ds == nil || ds.Title != "agent "+string(s.Agents[0].ID) {
		t.Fatalf("Enter on the agents pane: %T", a.top())
	}
	out := ansi.Strip(a.View().Content)
	if strings.Contains(out, "Devices it owns") || !strings.Contains(out, "all agents' holdings") {
		t.Errorf("a slot-based agent's detail:\n%s", out)
	}
}

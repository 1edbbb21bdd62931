package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestSuggestionWriteText: the suggestion's text names the slots it kept
// because the node's devices were not given (no --devices: it used to
// suggest cuda.shares=0), and, when no slot is short, says the devices
// refuse instead of "short of []".
func TestSuggestionWriteText(t *testing.T) {
	sg := &Suggestion{Result: &Result{Refused: make([]Refusal, 3)}, Unsized: []model.SlotName{model.SlotCUDAShares}}
	var b strings.Builder
	sg.WriteText(&b, nil)
	text := b.String()
	for _, want := range []string{
		"suggested: cuda.shares kept at today's amounts: the node's devices of them are not listed (give them with --devices)",
		"suggested: no change: no amounts within the node start every recorded session (every agent's amounts cover its peaks; the sessions still refused are refused by the devices (the allocator), whatever the amounts), and none refuse fewer than today's 3",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[]") {
		t.Errorf("an empty list in:\n%s", text)
	}
	b.Reset()
	sg.Short, sg.Unsized = []model.SlotName{model.SlotCUDAShares}, nil
	sg.WriteText(&b, []string{"a=cuda.shares=1.5"})
	if want := "suggested: no amounts within the node start every recorded session (the node is short of cuda.shares for the agents' peaks together); these refuse the fewest, 3,"; !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "weigh the raise") {
		t.Errorf("a raise explained that overheld nothing:\n%s", b.String())
	}
	// A raise over an agent's overheld slot says why (h27demo).
	b.Reset()
	sg.Overheld = []Overheld{{Agent: "i-demo-numa0", Slot: model.SlotCPU, Amount: model.MustDec("15"), Peak: model.MustDec("20"), At: time.Date(2026, 12, 2, 10, 59, 11, 0, time.UTC), Over: 706 * time.Millisecond}}
	sg.WriteText(&b, []string{"i-demo-numa0=cpu=20"})
	if want := "suggested: weigh the raise before applying it: i-demo-numa0's kernels asked 20 cpu at once (their SLOTS, as the manager counts them), above the 15 it was given then ("; !strings.Contains(b.String(), want) ||
		!strings.Contains(b.String(), "released them") || !strings.HasSuffix(b.String(), "\n\n") {
		t.Errorf("missing %q in:\n%s", want, b.String())
	}
}

func TestJoinSlots(t *testing.T) {
	for _, tt := range []struct {
		in   []model.SlotName
		want string
	}{
		{nil, ""},
		{[]model.SlotName{"cpu"}, "cpu"},
		{[]model.SlotName{"cpu", "mem"}, "cpu and mem"},
		{[]model.SlotName{"a", "b", "c"}, "a, b and c"},
	} {
		if got := joinSlots(tt.in); got != tt.want {
			t.Errorf("joinSlots(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSuggestionNoChange: no flags is no change, said as today's amounts
// starting every session or as none refusing fewer.
func TestSuggestionNoChange(t *testing.T) {
	for _, tt := range []struct {
		all  bool
		want string
	}{
		{true, "suggested: no change: today's amounts already start every recorded session\n\n"},
		{false, "suggested: no change: no amounts within the node start every recorded session (every agent's amounts cover its peaks; the sessions still refused are refused by the devices (the allocator), whatever the amounts), and none refuse fewer than today's 0\n\n"},
	} {
		var b strings.Builder
		(&Suggestion{AllServed: tt.all, Result: &Result{}, Kept: []model.SlotName{"cpu", "mem"}}).WriteText(&b, nil)
		want := "suggested: cpu and mem kept at today's amounts: the record lists no devices of them (made without the host's), so it cannot tell their demand\n" + tt.want
		if b.String() != want {
			t.Errorf("all served %v:\n%q\nwant\n%q", tt.all, b.String(), want)
		}
	}
	var b strings.Builder
	(&Suggestion{AllServed: true, Result: &Result{}}).WriteText(&b, []string{"a=cpu=2", "b=cpu=4"})
	if want := "suggested: every recorded session starts under these amounts (the nearest to today's file):\n --slot a=cpu=2 --slot b=cpu=4\n\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}

func TestDocShortfall(t *testing.T) {
	for _, tt := range []struct {
		name string
		doc  Doc
		want string
	}{
		{"all start", Doc{ServesAll: true, Sessions: 4}, ""},
		{"the rules refuse what ran", Doc{Sessions: 4, AsItWas: AsItWasDoc{Refused: 1}}, "the rules would have refused %d of the 4 recorded session(s) under the partition in force, though they ran"},
		{"the proposal refuses", Doc{Sessions: 4, Proposal: true, Refused: make([]RefusalDoc, 2)}, "%d of 4 recorded session(s) would not have started"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want != "" {
				want = fmt.Sprintf(want, tt.doc.RefusedCount())
			}
			if got := tt.doc.Shortfall(); got != want {
				t.Errorf("%q, want %q", got, want)
			}
		})
	}
}

func TestDocSetSuggestion(t *testing.T) {
	var d Doc
	d.SetSuggestion(&Suggestion{Amounts: map[model.AgentID]model.ResourceSlot{"a": {"cuda.shares": model.MustDec("2.0")}}, Kept: []model.SlotName{"cpu"}})
	if got := d.Suggested["a"]["cuda.shares"]; got != "2.0" {
		t.Errorf("amount %q, want 2.0 as written", got)
	}
	if len(d.SuggestedKept) != 1 || d.SuggestedOverheld != "" {
		t.Errorf("doc %+v", d)
	}
}

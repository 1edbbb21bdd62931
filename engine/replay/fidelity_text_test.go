package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestFidelityTextSaysTheyRan: without a proposal the report is the
// fidelity run's, where every session runs where it really ran: an agent
// whose sessions the rules would have refused says they ran and how many
// the rules refuse, never that all start, and the verdict says the same
// number as the disagreements above it; an agent with none says all
// start.
func TestFidelityTextSaysTheyRan(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	// The partition in force made small for i-node-a only: the record saw
	// its sessions run, the rules refuse some.
	tight := *rec
	tight.Epochs = []Epoch{{At: rec.From, Agents: given(rec, map[model.AgentID]string{agentA: "0.5"})}}
	asWas := Run(&tight, tight.AsItWas(), Options{Fidelity: true, Word: Printed})
	refused := map[model.AgentID]int{}
	total := 0
	for _, g := range asWas.Disagreements {
		if g.Refused != "" {
			refused[g.Agent]++
			total++
		}
	}
	if refused[agentA] == 0 || refused[agentB] != 0 {
		t.Fatalf("the tight partition refuses %v: the test needs i-node-a's only", refused)
	}
	doc := NewDoc(&tight, asWas, nil)
	var sb strings.Builder
	if err := doc.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, a := range doc.Agents {
		want := fmt.Sprintf("%s: all %d session(s) start", a.Agent, a.Sessions)
		if n := refused[a.Agent]; n > 0 {
			want = fmt.Sprintf("%s: all %d session(s) ran; the rules would have refused %d of them (as it was, above)", a.Agent, a.Sessions, n)
		}
		if a.Verdict != want || !strings.Contains(out, "  "+want+"\n") {
			t.Errorf("agent %s: verdict %q, want %q in the text:\n%s", a.Agent, a.Verdict, want, out)
		}
		// The JSON's count agrees with the verdict (refused is 0: they ran).
		if a.Refused != 0 || a.RefusedRan != refused[a.Agent] {
			t.Errorf("agent %s: refused %d, refused_though_ran %d, want 0 and %d", a.Agent, a.Refused, a.RefusedRan, refused[a.Agent])
		}
	}
	if want := fmt.Sprintf("verdict: the record saw all %d session(s) run; under the partition in force the rules would have refused %d of them (as it was, above)\n", doc.Sessions, total); !strings.HasSuffix(out, want) {
		t.Errorf("the text does not end with %q:\n%s", want, out)
	}
	if doc.ServesAll || doc.RefusedCount() != total || len(doc.Refused) != 0 {
		t.Errorf("serves all %v, refused %d (want %d), listed %d (want none: they ran)", doc.ServesAll, doc.RefusedCount(), total, len(doc.Refused))
	}
}

// TestDaysSaysBrief: a time over the amount shorter than a second is not
// printed as 0s beside a peak above it.
func TestDaysSaysBrief(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"}, {80 * time.Millisecond, "<1s"}, {600 * time.Millisecond, "1s"}, {4359 * time.Millisecond, "4s"},
		{30 * time.Minute, "30m"}, {26 * time.Hour, "1d2h"},
	} {
		if got := Days(c.d); got != c.want {
			t.Errorf("Days(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestSpanUnderASecond: a span shorter than a second (a record a moment
// long) is printed <1s in the report's first line, not 0 (the tour).
func TestSpanUnderASecond(t *testing.T) {
	from := time.Date(2026, 12, 4, 2, 40, 14, 800_000_000, time.UTC)
	var b strings.Builder
	d := &Doc{From: from, To: from.Add(400 * time.Millisecond)}
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(first, "(<1s)") {
		t.Errorf("first line %q, want the span <1s", first)
	}
}

// TestNearRefusalIsADisagreement: a session that ran and that the rules
// refuse is a disagreement even where another change of its agent's lies
// within OrderSlack of it (where it landed is then not compared, but of
// two arrivals the record cannot order the second is refused either
// way). A fidelity run once let such a session through, saying the rules
// start every session, while the run of the same partition as a
// proposal refused it (the tour).
func TestNearRefusalIsADisagreement(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	tight := *rec
	tight.Epochs = []Epoch{{At: rec.From, Agents: given(rec, map[model.AgentID]string{agentA: "0.5"})}}
	asWas := Run(&tight, tight.AsItWas(), Options{Fidelity: true})
	var x *Disagreement
	for i := range asWas.Disagreements {
		if g := &asWas.Disagreements[i]; g.Refused != "" {
			x = g
			break
		}
	}
	if x == nil {
		t.Fatal("the tight partition refuses nothing: the test needs a refusal")
	}
	// A copy of it arriving 100 ms before it and leaving 50 ms before
	// it: x now arrives within OrderSlack of its agent's departure and of
	// an arrival.
	near := tight
	near.Sessions = nil
	for _, s := range tight.Sessions {
		if s.Kernel == x.Kernel && !s.Before {
			z := s
			z.Kernel += "-near"
			z.Start, z.End, z.Open = s.Start.Add(-100*time.Millisecond), s.Start.Add(-50*time.Millisecond), false
			near.Sessions = append(near.Sessions, z)
		}
		near.Sessions = append(near.Sessions, s)
	}
	fid := Run(&near, near.AsItWas(), Options{Fidelity: true})
	found := false
	for _, g := range fid.Disagreements {
		found = found || g.Kernel == x.Kernel && g.Refused != ""
	}
	if !found {
		t.Errorf("%s, refused by the rules within %v of another change of its agent's, is not a disagreement: %d disagreement(s), %d near", x.Kernel, OrderSlack, len(fid.Disagreements), fid.SameMoment)
	}
	refusedByRun := false
	for _, r := range Run(&near, near.AsItWas(), Options{}).Refused {
		refusedByRun = refusedByRun || r.Kernel == x.Kernel
	}
	if !refusedByRun {
		t.Errorf("the run of the partition in force does not refuse %s: the test's premise", x.Kernel)
	}
}

// TestAgentWithoutSessions: an agent no session of the span went to says
// so, with no slot table's header over no rows and no "all 0 session(s)
// start" (the tour).
func TestAgentWithoutSessions(t *testing.T) {
	if v := (&AgentResult{Agent: agentB}).Verdict(); v != "i-node-b: no session in the span" {
		t.Errorf("verdict %q", v)
	}
	from := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	d := &Doc{From: from, To: from.Add(time.Hour), Agents: []AgentDoc{
		{Agent: agentA, Sessions: 1, Slots: []SlotDoc{{Slot: "cuda.shares", Amount: model.MustDec("1"), Given: true, Peak: model.MustDec("0.5")}}, Verdict: "i-node-a: all 1 session(s) start"},
		{Agent: agentB, Verdict: "i-node-b: no session in the span"},
	}}
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "PEAK DEMAND"); n != 1 {
		t.Errorf("%d slot tables, want i-node-a's only:\n%s", n, out)
	}
	if !strings.Contains(out, "  i-node-b: no session in the span\n") {
		t.Errorf("i-node-b's verdict missing:\n%s", out)
	}
}

// TestEmptySpanVerdict: a span of the record that holds no session says
// so, as each agent's line does, not "all 0 session(s) start".
func TestEmptySpanVerdict(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	empty := *rec
	empty.Sessions = nil
	doc := NewDoc(&empty, Run(&empty, empty.AsItWas(), Options{Fidelity: true, Word: Printed}), nil)
	var sb strings.Builder
	if err := doc.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	if want := "verdict: no session in the span: nothing to judge the partition by\n"; !strings.HasSuffix(out, want) || strings.Contains(out, "all 0 session(s)") {
		t.Errorf("the text does not end with %q:\n%s", want, out)
	}
}

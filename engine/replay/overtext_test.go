package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestOverNotReadAsTheWholeSpan: 100.6 s over the amount in a span of
// 1m49s printed "2m", as the span's own length did: an operator could
// not tell "all the time" from "most of it".
func TestOverNotReadAsTheWholeSpan(t *testing.T) {
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	d := &Doc{Node: "n", From: from, To: from.Add(109 * time.Second),
		Agents: []AgentDoc{{Agent: "a", Sessions: 1, Verdict: "v",
			Slots: []SlotDoc{{Slot: "cuda.shares", OverSeconds: 100.6}, {Slot: "cpu", OverSeconds: 109}}}}}
	var b bytes.Buffer
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "(2m)") {
		t.Errorf("the span is not 2m:\n%s", out)
	}
	var shares, cpu string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "cuda.shares" {
			shares = f[len(f)-2]
		}
		if len(f) >= 4 && f[0] == "cpu" {
			cpu = f[len(f)-2]
		}
	}
	if shares != "1m40s" || cpu != "2m" {
		t.Errorf("over the amount: shares %q (want 1m40s), cpu %q (want 2m, the whole span):\n%s", shares, cpu, out)
	}
	if got := OverText(26*time.Hour, 27*time.Hour); got != "1d2h" {
		t.Errorf("OverText(26h of 27h) = %q", got)
	}
	if got := OverText(24*time.Hour-20*time.Second, 24*time.Hour); got != "23h59m40s" {
		t.Errorf("OverText(just under a day) = %q", got)
	}
}

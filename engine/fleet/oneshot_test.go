package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestNewAnswer: what fleet --once and --fit print and whether they exit
// 1: a request that fits on no live node, or without one any node that
// did not answer, has no figures or is marked; a line for each node that
// is not live or is marked, in fleet order.
func TestNewAnswer(t *testing.T) {
	s := shortNode()
	sum := Summarize(s, Settings{})
	now := time.Unix(1000, 0)
	live := Node{Addr: "live:2222", Name: "live", State: Live, LastSeen: now, Snap: s, Sum: sum}
	stale := Node{Addr: "stale:2222", Name: "stale", State: Stale, Reason: "no answer for 6s", LastSeen: now.Add(-6 * time.Second), Snap: s, Sum: sum}
	dead := Node{Addr: "dead:2222", Name: "dead", State: Unreachable, Reason: "connection refused"}
	flood := live
	flood.Addr, flood.Note = "flood:2222", "floods lines"
	tests := []struct {
		name    string
		nodes   []Node
		fit     string
		lines   []string
		failure string
	}{
		{name: "every node live", nodes: []Node{live}},
		// Its figures are its last, not an answer now (a Prometheus
		// target down): a script must not read 0 as every node answering.
		{name: "a stale node with figures is a failure", nodes: []Node{live, stale},
			lines: []string{"stale:2222: stale: no answer for 6s"}, failure: "some nodes did not answer, are stale, or are marked (see above)"},
		{name: "an unreachable node is", nodes: []Node{live, dead},
			lines: []string{"dead:2222: unreachable: connection refused"}, failure: "some nodes did not answer, are stale, or are marked (see above)"},
		{name: "a marked node is", nodes: []Node{flood, live},
			lines: []string{"flood:2222: floods lines"}, failure: "some nodes did not answer, are stale, or are marked (see above)"},
		{name: "a fit on a live node", nodes: []Node{dead, live}, fit: "cuda.shares=0.5",
			lines: []string{"dead:2222: unreachable: connection refused"}},
		{name: "a fit on no live node", nodes: []Node{stale, dead}, fit: "cuda.shares=0.5",
			lines:   []string{"stale:2222: stale: no answer for 6s", "dead:2222: unreachable: connection refused"},
			failure: "cuda.shares=0.5 fits on no live node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Fleet{Time: now, Nodes: tt.nodes}
			var a Answer
			var doc any
			var text bytes.Buffer
			if tt.fit != "" {
				req, err := ParseRequest(tt.fit)
				if err != nil {
					t.Fatal(err)
				}
				a = NewAnswer(f, true, req, tt.fit, Settings{})
				r := FitJSON(f, req, Settings{})
				doc = r
				WriteFit(&text, r, strings.ToUpper)
			} else {
				a = NewAnswer(f, false, nil, "", Settings{})
				j := ToJSON(f)
				doc = j
				WriteTable(&text, j)
			}
			if tt.fit != "" && tt.failure != "" {
				// Asked of the past, the same answer is said of then.
				past := a
				past.Fit = &JSONFitReport{}
				past.AsAt("2026-11-27T14:02:00Z")
				if want := tt.fit + " fitted on no node as the fleet was at 2026-11-27T14:02:00Z"; past.Failure != want || past.Fit.At == "" {
					t.Errorf("--at: failure %q, want %q", past.Failure, want)
				}
			}
			if fmt.Sprint(a.NodeLines) != fmt.Sprint(tt.lines) || a.Failure != tt.failure {
				t.Errorf("lines %q failure %q\nwant  %q failure %q", a.NodeLines, a.Failure, tt.lines, tt.failure)
			}
			got, _ := json.Marshal(a.Value())
			want, _ := json.Marshal(doc)
			if !bytes.Equal(got, want) {
				t.Errorf("Value\n%s\nwant\n%s", got, want)
			}
			var w bytes.Buffer
			a.WriteText(&w, strings.ToUpper)
			if w.String() != text.String() {
				t.Errorf("WriteText\n%s\nwant\n%s", w.String(), text.String())
			}
		})
	}
}

package placement

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestRunsOutput checks what simulate --case prints of one case and of
// several: a lone case as its own document and table, several as
// {"cases": [...]} and tables a blank line apart, each in the file's order.
func TestRunsOutput(t *testing.T) {
	cases := loadCorpus(t)[:3]
	runs, err := RunCases(cases, CaseOverrides{}, false)
	if err != nil {
		t.Fatal(err)
	}
	docOf := func(r CaseRun) string {
		b, err := json.Marshal(r.Sim.Document(r.Result, r.Case.ID))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tableOf := func(r CaseRun) string {
		var b bytes.Buffer
		if err := r.Sim.WriteTable(&b, r.Result, r.Case.ID, strings.ToUpper); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	tests := []struct {
		name        string
		runs        []CaseRun
		json, table string
	}{
		{name: "one case is its own document", runs: runs[:1], json: docOf(runs[0]), table: tableOf(runs[0])},
		{name: "several are a list", runs: runs,
			json:  `{"schema":"fgtop.simulate-cases/v1","cases":[` + docOf(runs[0]) + "," + docOf(runs[1]) + "," + docOf(runs[2]) + "]}",
			table: tableOf(runs[0]) + "\n" + tableOf(runs[1]) + "\n" + tableOf(runs[2])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(RunsDocument(tt.runs))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.json {
				t.Errorf("RunsDocument\n%s\nwant\n%s", b, tt.json)
			}
			var w bytes.Buffer
			if err := WriteRunTables(&w, tt.runs, strings.ToUpper); err != nil {
				t.Fatal(err)
			}
			if w.String() != tt.table {
				t.Errorf("WriteRunTables\n%s\nwant\n%s", w.String(), tt.table)
			}
		})
	}
}

func TestUnknownAgentHaveText(t *testing.T) {
	tests := []struct {
		have []string
		want string
	}{
		{nil, "none"},
		{[]string{"a"}, "a"},
		{[]string{"i-node-a", "i-node-b"}, "i-node-a, i-node-b"},
	}
	for _, tt := range tests {
		e := &UnknownAgentError{Agent: "x"}
		for _, h := range tt.have {
			e.Have = append(e.Have, model.AgentID(h))
		}
		if got := e.HaveText(); got != tt.want {
			t.Errorf("HaveText of %v = %q, want %q", tt.have, got, tt.want)
		}
	}
}

package placement

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsDeviceList(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		path string
		want bool
	}{
		{"", false}, {"auto", false}, {"nvml", false},
		{file("devices.json", ""), true},
		{file("DEVICES.JSON", "not even json"), true},
		{file("list", "\ufeff \n\t[{\"id\": \"0\"}]"), true},
		{file("one", "{\"id\": \"0\"}"), true},
		// A mock file opens with its top-level keys (or a comment): TOML
		// puts them before any table.
		{file("mock-accelerator.toml", "# mock\nslot_name = \"cuda.shares\"\n[[devices]]\n"), false},
		{file("mock", "slot_name = \"cuda.shares\"\n"), false},
		{file("empty", ""), false},
		{filepath.Join(dir, "missing"), false},
		{dir, false},
	}
	for _, tt := range tests {
		if got := IsDeviceList(tt.path); got != tt.want {
			t.Errorf("IsDeviceList(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestCasesCheckOutput(t *testing.T) {
	tests := []struct {
		name string
		chk  CasesCheck
		json string
		text string
	}{
		{name: "all match", chk: CasesCheck{Cases: 2, Operations: 7},
			json: `{"schema":"fgtop.simulate-check/v1","cases":2,"operations":7,"mismatched_operations":0,"mismatches":[]}`,
			text: "2 case(s), 7 operation(s): all match the recorded results\n"},
		{name: "two mismatches on one op",
			chk: CasesCheck{Cases: 1, Operations: 3, Mismatched: 1, Mismatches: []CaseMismatch{
				{Case: "seed-doc", Mismatch: Mismatch{Step: 2, What: "allocation differs"}},
				{Case: "seed-doc", Mismatch: Mismatch{Step: 2, What: "error kind differs"}}}},
			json: `{"schema":"fgtop.simulate-check/v1","cases":1,"operations":3,"mismatched_operations":1,"mismatches":[{"case":"seed-doc","op":2,"what":"allocation differs"},{"case":"seed-doc","op":2,"what":"error kind differs"}]}`,
			text: "seed-doc op #2: allocation differs\nseed-doc op #2: error kind differs\n1 case(s), 3 operation(s): 1 differ from the recorded results\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.chk.Document())
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.json {
				t.Errorf("Document\n%s\nwant\n%s", b, tt.json)
			}
			var w strings.Builder
			tt.chk.WriteText(&w)
			if w.String() != tt.text {
				t.Errorf("WriteText\n%q\nwant\n%q", w.String(), tt.text)
			}
		})
	}
}

func TestRunCases(t *testing.T) {
	cases := loadCorpus(t)
	runs, err := RunCases(cases, CaseOverrides{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(cases) {
		t.Fatalf("%d runs of %d cases", len(runs), len(cases))
	}
	for i, r := range runs {
		if r.Case != &cases[i] || r.Sim.Source != "case "+cases[i].ID || len(r.Result.Steps) != len(cases[i].Operations) {
			t.Errorf("run %d: case %s, source %q, %d steps of %d", i, r.Case.ID, r.Sim.Source, len(r.Result.Steps), len(cases[i].Operations))
		}
	}
	if chk := CheckCases(runs); chk.Mismatched != 0 || chk.Cases != len(cases) {
		t.Errorf("the corpus run through RunCases: %+v", chk)
	}

	// A case whose devices do not read is bad input, whichever case it is.
	bad := slices.Clone(cases)
	bad[len(bad)-1].SlotType = "no-such-type"
	runs, err = RunCases(bad, CaseOverrides{}, false)
	var be *BadCaseError
	if !errors.As(err, &be) || runs != nil {
		t.Fatalf("a bad case: %d runs, %v (%T), want a *BadCaseError", len(runs), err, err)
	}
}

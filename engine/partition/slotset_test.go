package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestParseSlotSet(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string
	}{
		{"a=cuda.shares=2.0", "a=cuda.shares=2.0", ""},
		{" a = cuda.shares = 1.50 ", "a=cuda.shares=1.50", ""},
		{"a=cpu=15", "a=cpu=15", ""},
		{"a=mem=64G", "a=mem=64g", ""},
		{"a=cuda.device:10g-mig=1", "a=cuda.device:10g-mig=1", ""},
		{"a=cuda.shares=0", "a=cuda.shares=0", ""},
		{"a", "", "want AGENT=SLOT=AMOUNT"},
		{"a=cuda.shares", "", "want AGENT=SLOT=AMOUNT"},
		{"=cuda.shares=1", "", "want AGENT=SLOT=AMOUNT"},
		{"a==1", "", "want AGENT=SLOT=AMOUNT"},
		{"a=cuda.shares=-1", "", "negative"},
		{"a=cuda.shares=x", "", "not a decimal"},
		{"a=cuda.shares=NaN", "", "not a finite amount"},
		{"a=cpu=1.5", "", "whole core count"},
		{"a=cpu=10000000000000000000", "", "cpu=10000000000000000000: more cores than any node has"},
		// Backend.AI's range and quantum, the rule simulate applies to a
		// request: 1e999 and 1E-30 were planned.
		{"a=cuda.shares=1e999", "", "cuda.shares=1e999: too large"},
		{"a=cuda.shares=1E-30", "", "cuda.shares=1E-30: below 0.001"},
		{"a=cuda.shares=0.001", "a=cuda.shares=0.001", ""},
		{"a=cpu=1e999", "", "too large"},
		// A core count is an integer in agent.toml: 12.0 and 1e1 were
		// written as the TOML floats cpu = 12.0 and cpu = 1E+1.
		{"a=cpu=12.0", "a=cpu=12", ""},
		{"a=cpu=1e1", "a=cpu=10", ""},
		{"a=mem=lots", "", "not a size"},
		// As --mem: echoed as written, never as the bytes it parses to.
		{"a=mem=-10g", "", "mem=-10g: -10g is not above zero"},
		{"a=mem=0", "", "mem=0: 0 is not above zero"},
	} {
		got, err := ParseSlotSet(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.err == "" && got.String() != tt.want:
			t.Errorf("%q: %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestCheckSlotSets: a slot the node does not register is refused naming
// the node's slots; with no device source, the slots the file names pass.
func TestCheckSlotSets(t *testing.T) {
	inv := Inventory{Devices: []model.Device{{ID: "0", Name: "cpu", Slot: model.SlotCPU, Capacity: model.One},
		{ID: "g0", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.One}}}
	set, _ := ParseSlotSet("a=cuda.shres=1")
	err := CheckSlotSets([]SlotSet{set}, nil, inv)
	if err == nil || !strings.Contains(err.Error(), `did you mean cuda.shares? (the node's slots: cpu, cuda.shares, mem)`) {
		t.Errorf("typo: %v", err)
	}
	ok, _ := ParseSlotSet("a=cuda.shares=1")
	if err := CheckSlotSets([]SlotSet{ok}, nil, inv); err != nil {
		t.Errorf("known slot: %v", err)
	}
}

func FuzzParseSlotSet(f *testing.F) {
	for _, s := range []string{"a=cuda.shares=2.0", "a=mem=64G", "a=cpu=15", "a==", "x=y=1e999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		set, err := ParseSlotSet(s)
		if err != nil {
			return
		}
		if set.Amount.Sign() < 0 || !set.Amount.IsFinite() || set.Agent == "" || set.Slot == "" {
			t.Fatalf("%q parsed as %+v", s, set)
		}
		// What String writes reads back the same.
		again, err := ParseSlotSet(set.String())
		if err != nil || !again.Amount.Equal(set.Amount) || again.Slot != set.Slot || again.Agent != set.Agent {
			t.Fatalf("%q -> %s -> %+v, %v", s, set, again, err)
		}
	})
}

// TestSplitSlotSet: AGENT=SLOT=AMOUNT is split at its last two "=", so an
// agent id holding one (Backend.AI loads id = "x=1") can be named.
func TestSplitSlotSet(t *testing.T) {
	for in, want := range map[string][4]string{
		"a=cuda.shares=1.5":   {"a", "cuda.shares", "1.5", "true"},
		"x=1=cuda.shares=1.5": {"x=1", "cuda.shares", "1.5", "true"},
		" a = mem = 64G ":     {"a", "mem", "64G", "true"},
		"a=cuda.shares":       {"", "", "", "false"},
		"nothing":             {"", "", "", "false"},
		"==":                  {"", "", "", "true"},
	} {
		a, s, v, ok := SplitSlotSet(in)
		if got := [4]string{a, s, v, map[bool]string{true: "true", false: "false"}[ok]}; got != want {
			t.Errorf("SplitSlotSet(%q) = %q, want %q", in, got, want)
		}
	}
	if set, err := ParseSlotSet("x=1=cuda.shares=1.5"); err != nil || set.Agent != "x=1" {
		t.Errorf("ParseSlotSet: %+v, %v", set, err)
	}
}

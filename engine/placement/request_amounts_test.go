package placement

import (
	"strings"
	"testing"
)

func TestCheckAmounts(t *testing.T) {
	tests := []struct {
		in      string
		err     string // "" when accepted
		nothing bool
	}{
		{"cuda.shares=0.5", "", false},
		{"cuda.shares=-1", "cuda.shares=-1: a negative amount", false},
		{"cuda.shares=0.5,mem=-1g", "mem=-1073741824: a negative amount", false},
		// Backend.AI's range and quantum, as plan and the editor judge an
		// agent's amount: one rule.
		{"cuda.shares=1e999", "cuda.shares=1E+999: too large", false},
		{"cuda.shares=1E-30", "cuda.shares=1E-30: below 0.001", false},
		{"cuda.shares=0.001", "", false},
		{"cuda.shares=0.5000", "", false},
		// Finer than the 0.001 the manager's request keeps: refused with
		// what it would ask, not rounded (the tour).
		{"cuda.shares=0.333333333333333333333333", "finer than the 0.001 Backend.AI keeps of a request's cuda.shares (the manager would ask 0.333)", false},
		{`{"cuda.shares": 0.30000000000000004}`, "(the manager would ask 0.3)", false},
		{"cpu=1.0005", "(the manager would ask 1)", false},
		{"mem=1", "", false},
		{`{"cuda.shares": "-0.01"}`, "negative", false},
		{"", "an empty request", false},
		{"{}", "an empty request", false},
		{"cuda.shares=0", "", true},
		{`{"cuda.shares": "0", "cuda.device": "0"}`, "", true},
		{`{"cuda.device": "0", "cuda.shares": "0.5"}`, "", false},
		{"free=1", "", false},
	}
	for _, tt := range tests {
		st, err := ParseStep(tt.in, nil)
		if err != nil {
			t.Fatalf("ParseStep(%q): %v", tt.in, err)
		}
		err = st.CheckAmounts(nil)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: refused: %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one containing %q", tt.in, err, tt.err)
		}
		if got := st.AsksForNothing(); got != tt.nothing {
			t.Errorf("%q: AsksForNothing = %v, want %v", tt.in, got, tt.nothing)
		}
	}
}

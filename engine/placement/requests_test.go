package placement

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestParseSteps(t *testing.T) {
	known := []model.SlotName{model.SlotCPU, model.SlotMem, model.SlotCUDAShares}
	tests := []struct {
		name    string
		texts   []string
		steps   int
		nothing []string
		err     string // the error's start; "" when none
	}{
		{name: "requests and a free", texts: []string{"cuda.shares=0.5", "cpu=2,mem=4g", "free=1"}, steps: 3},
		{name: "zeros are told, not refused", texts: []string{"cuda.shares=0", "cuda.shares=1", "cpu=0"}, steps: 3, nothing: []string{"cuda.shares=0", "cpu=0"}},
		{name: "a syntax error is ParseStep's", texts: []string{"cuda.shares"}, err: `"cuda.shares": want slot=amount`},
		{name: "a typo that does not parse is the typo", texts: []string{"cuda.shres=lots"}, err: `"cuda.shres=lots": unknown slot "cuda.shres": did you mean cuda.shares?`},
		{name: "a negative amount", texts: []string{"cuda.shares=-1"}, err: `"cuda.shares=-1": cuda.shares=-1: a negative amount`},
		{name: "the zeros before an error are still told", texts: []string{"cpu=0", "cuda.shares=-1", "mem=0"}, nothing: []string{"cpu=0"}, err: `"cuda.shares=-1"`},
		{name: "an unknown slot that parses, after the others are read", texts: []string{"mem=0", "tpu=1", "cpu=-1"}, nothing: []string{"mem=0"}, err: `"cpu=-1"`},
		{name: "an unknown slot that parses", texts: []string{"mem=0", "tpu=1"}, nothing: []string{"mem=0"}, err: `"tpu=1": unknown slot "tpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, nothing, err := ParseSteps(tt.texts, model.DefaultSlotTypes(), known)
			if !slices.Equal(nothing, tt.nothing) {
				t.Errorf("nothing %q, want %q", nothing, tt.nothing)
			}
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) || steps != nil {
					t.Fatalf("ParseSteps = %d steps, %v; want the error %s...", len(steps), err, tt.err)
				}
				return
			}
			if err != nil || len(steps) != tt.steps {
				t.Fatalf("ParseSteps = %d steps, %v; want %d", len(steps), err, tt.steps)
			}
			for i, st := range steps {
				if st.Text != tt.texts[i] {
					t.Errorf("step %d reads %q, want %q", i, st.Text, tt.texts[i])
				}
			}
		})
	}
}

package metrics

import (
	"strings"
	"testing"
)

func TestValidNode(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"gpu-07", true},
		{"노드 1", true},
		{"", false},
		{"a\x1b[31m", false},
		{"a\x7f", false},
		{"tab\there", false},
		{strings.Repeat("n", 253), true},
		{strings.Repeat("n", 254), false},
	} {
		if got := ValidNode(tt.name); got != tt.ok {
			t.Errorf("ValidNode(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

package jsonout

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"object", map[string]int{"a": 1}, "{\n  \"a\": 1\n}\n"},
		{"nil", nil, "null\n"},
		{"does not marshal", func() {}, "{\"error\": \"json: unsupported type: func()\"}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			Write(&b, tt.v)
			if b.String() != tt.want {
				t.Errorf("%q, want %q", b.String(), tt.want)
			}
			if !json.Valid([]byte(b.String())) {
				t.Errorf("not JSON: %q", b.String())
			}
		})
	}
}

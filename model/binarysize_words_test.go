package model

import (
	"strings"
	"testing"
)

// TestBinarySizeErrorWords: the message an operator reads says what is
// wrong without Python's exception class or repr text; Kind keeps the
// class for parity.
func TestBinarySizeErrorWords(t *testing.T) {
	tests := []struct {
		in, kind, want string
	}{
		{"4x", "ValueError", "binary unit"},
		{"g", "ValueError", "binary unit"},
		{"1e400", "ValueError", "whole number of bytes"},
		{"1.5", "ValueError", "whole number of bytes"},
		{"inf", "ValueError", "infinite sizes are not allowed"},
		{"infk", "OverflowError", "infinite sizes are not allowed"},
		{"nank", "ValueError", "not a number"},
		{"snank", "InvalidOperation", "not a number"},
		{"1e999999k", "Overflow", "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseFiniteBinarySize(tt.in)
			be, ok := err.(*BinarySizeError)
			if !ok {
				t.Fatalf("ParseFiniteBinarySize(%q) = %v, want a *BinarySizeError", tt.in, err)
			}
			if be.Kind != tt.kind {
				t.Errorf("kind %s, want %s", be.Kind, tt.kind)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, `"`+tt.in+`"`) {
				t.Errorf("message %q lacks %q or the input", msg, tt.want)
			}
			for _, py := range []string{be.Kind, "<class", "Unconvertible", "('"} {
				if strings.Contains(msg, py) {
					t.Errorf("message %q shows Python's %q", msg, py)
				}
			}
		})
	}
}

package prompt

import (
	"errors"
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tty    bool
		answer string
		want   error
		asked  bool
	}{
		{"no terminal, a pipe saying y", false, "y\n", ErrNoTerminal, false},
		{"y", true, "y\n", nil, true},
		{"YES with blanks", true, "  YES \n", nil, true},
		{"yes without a newline", true, "yes", nil, true},
		{"n", true, "n\n", ErrNotConfirmed, true},
		{"empty", true, "\n", ErrNotConfirmed, true},
		{"end of input", true, "", ErrNotConfirmed, true},
		{"yep", true, "yep\n", ErrNotConfirmed, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := Confirm(strings.NewReader(tt.answer), &out, tt.tty, "apply 2 change(s) to agent.toml?")
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if asked := out.String() == "apply 2 change(s) to agent.toml? [y/N] "; asked != tt.asked {
				t.Errorf("asked %q", out.String())
			}
		})
	}
}

package prompt

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
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
			err := Confirm(context.Background(), strings.NewReader(tt.answer), &out, tt.tty, "apply 2 change(s) to agent.toml?")
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if asked := out.String() == "apply 2 change(s) to agent.toml? [y/N] "; asked != tt.asked {
				t.Errorf("asked %q", out.String())
			}
		})
	}
}

// TestConfirmEndsWithContext: Ctrl-C and SIGTERM end the commands'
// context while the prompt waits for a line that does not come (a
// terminal nobody types on): the answer is no, at once, and what follows
// starts a line of its own. The prompt read on and took the next line
// typed as the answer.
func TestConfirmEndsWithContext(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- Confirm(ctx, in, &out, true, "restore agent.toml?") }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotConfirmed) {
			t.Errorf("error %v, want %v", err, ErrNotConfirmed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the prompt still waits after its context ended")
	}
	if got := out.String(); got != "restore agent.toml? [y/N] \n" {
		t.Errorf("wrote %q", got)
	}
	// Ended before it asks: nothing asked, nothing read.
	if err := Confirm(ctx, strings.NewReader("y\n"), &out, true, "again?"); !errors.Is(err, ErrNotConfirmed) || strings.Contains(out.String(), "again?") {
		t.Errorf("an ended context: error %v, wrote %q", err, out.String())
	}
}

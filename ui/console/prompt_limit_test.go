package console

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestPromptLengthIsLimited: the `/` filter took any length (1 MB cost
// 25 s of CPU, re-filtering at every key); the filter and the command
// line now stop at maxPromptRunes, typed or pasted.
func TestPromptLengthIsLimited(t *testing.T) {
	for _, open := range []string{"/", ":"} {
		t.Run(open, func(t *testing.T) {
			a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{})
			typeKeys(a, open)
			typeKeys(a, strings.Repeat("é", maxPromptRunes+40))
			if n := utf8.RuneCountInString(promptOf(a).Input); n != maxPromptRunes {
				t.Fatalf("typed: the prompt holds %d runes, want %d", n, maxPromptRunes)
			}
			if !strings.Contains(a.Flash.Text, "at most 256") {
				t.Fatalf("flash %q", a.Flash.Text)
			}
			a.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
			a.Update(tea.KeyPressMsg{Code: 'x', Text: strings.Repeat("x", 1<<20)})
			if n := utf8.RuneCountInString(promptOf(a).Input); n != maxPromptRunes {
				t.Fatalf("pasted: the prompt holds %d runes, want %d", n, maxPromptRunes)
			}
			if open == "/" && a.Kernels.Filter != promptOf(a).Input {
				t.Fatalf("the filter is not the prompt")
			}
		})
	}
}

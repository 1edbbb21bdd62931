package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestHelpFilter types after ? and checks the help keeps only the rows
// that match (any case), shows the filter, and that backspace, esc and ?
// behave: esc clears the filter first, then closes.
func TestHelpFilter(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "?")
	full := stripANSI(a.View().Content)
	if !strings.Contains(full, "next pane") || !strings.Contains(full, "reverse sort") {
		t.Fatalf("help lacks its rows:\n%s", full)
	}
	typeKeys(a, "SORT")
	f := helpBody(a)
	mustContain(t, "filtered help", f, "filter: SORT", "reverse sort", "sort column")
	mustNotContain(t, "filtered help", f, "next pane", "Share bars", "free capacity")
	if a.overlay != ovHelp {
		t.Fatal("typing closed the help")
	}
	// q and j are letters here, not quit and scroll.
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	typeKeys(a, "qui")
	if a.helpFilter != "qui" {
		t.Fatalf("filter %q after backspaces and qui", a.helpFilter)
	}
	f = helpBody(a)
	mustContain(t, "qui", f, "filter: qui", "quit")
	mustNotContain(t, "qui", f, "reverse sort")
	typeKeys(a, "zzzz")
	mustContain(t, "no match", stripANSI(a.View().Content), "nothing in the help matches")
	// ? is a letter while a filter is typed.
	typeKeys(a, "?")
	if a.overlay != ovHelp || !strings.HasSuffix(a.helpFilter, "?") {
		t.Fatalf("? with a filter: overlay %v filter %q", a.overlay, a.helpFilter)
	}
	a.Update(keyCode(tea.KeyEscape))
	if a.overlay != ovHelp || a.helpFilter != "" {
		t.Fatalf("first esc: overlay %v filter %q; want help open, filter cleared", a.overlay, a.helpFilter)
	}
	mustNotContain(t, "cleared", stripANSI(a.View().Content), "filter:")
	a.Update(keyCode(tea.KeyEscape))
	if a.overlay != ovNone {
		t.Fatal("second esc did not close the help")
	}
	// Reopened, the help starts unfiltered; the filter takes at most
	// maxPromptRunes runes.
	typeKeys(a, "?")
	if a.helpFilter != "" {
		t.Fatalf("reopened with filter %q", a.helpFilter)
	}
	typeKeys(a, strings.Repeat("x", maxPromptRunes+10))
	if n := len([]rune(a.helpFilter)); n != maxPromptRunes {
		t.Errorf("filter holds %d runes, want %d", n, maxPromptRunes)
	}
	typeKeys(a, "")
	a.Update(keyCode(tea.KeyEscape))
	typeKeys(a, "?")
	if a.overlay != ovNone {
		t.Error("? with no filter did not close the help")
	}
}

// helpBody is the help screen without its footer (whose key hints would
// match any filter).
func helpBody(a *App) string {
	f := stripANSI(a.View().Content)
	return f[:strings.LastIndex(f, "\n")]
}

package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
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
	if helpOf(a) == nil {
		t.Fatal("typing closed the help")
	}
	// q and j are letters here, not quit and scroll, and the footer says
	// so: its way out is esc and ctrl+c, never "q quit".
	foot := stripANSI(a.View().Content)
	foot = foot[strings.LastIndex(foot, "\n")+1:]
	if strings.Contains(foot, "q quit") || !strings.Contains(foot, "ctrl+c quit") || !strings.Contains(foot, "esc") {
		t.Errorf("the help's footer: %q", foot)
	}
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	a.Update(keyCode(tea.KeyBackspace))
	typeKeys(a, "qui")
	if helpOf(a).Filter != "qui" {
		t.Fatalf("filter %q after backspaces and qui", helpOf(a).Filter)
	}
	f = helpBody(a)
	mustContain(t, "qui", f, "filter: qui", "quit")
	mustNotContain(t, "qui", f, "reverse sort")
	typeKeys(a, "zzzz")
	mustContain(t, "no match", stripANSI(a.View().Content), "nothing in the help matches")
	// ? is a letter while a filter is typed.
	typeKeys(a, "?")
	if helpOf(a) == nil || !strings.HasSuffix(helpOf(a).Filter, "?") {
		t.Fatalf("? with a filter: top %T, help %+v", a.top(), helpOf(a))
	}
	a.Update(keyCode(tea.KeyEscape))
	if helpOf(a) == nil || helpOf(a).Filter != "" {
		t.Fatalf("first esc: top %T, help %+v; want help open, filter cleared", a.top(), helpOf(a))
	}
	mustNotContain(t, "cleared", stripANSI(a.View().Content), "filter:")
	a.Update(keyCode(tea.KeyEscape))
	if a.ModalOpen() {
		t.Fatal("second esc did not close the help")
	}
	// Reopened, the help starts unfiltered; the filter takes at most
	// maxPromptRunes runes.
	typeKeys(a, "?")
	if helpOf(a).Filter != "" {
		t.Fatalf("reopened with filter %q", helpOf(a).Filter)
	}
	typeKeys(a, strings.Repeat("x", maxPromptRunes+10))
	if n := len([]rune(helpOf(a).Filter)); n != maxPromptRunes {
		t.Errorf("filter holds %d runes, want %d", n, maxPromptRunes)
	}
	typeKeys(a, "")
	a.Update(keyCode(tea.KeyEscape))
	typeKeys(a, "?")
	if a.ModalOpen() {
		t.Error("? with no filter did not close the help")
	}
}

// helpBody is the help screen without its footer (whose key hints would
// match any filter).
func helpBody(a *App) string {
	f := stripANSI(a.View().Content)
	return f[:strings.LastIndex(f, "\n")]
}

// TestHelpGivesCommandSyntax: the help says how to write :at and :span,
// not only their names.
func TestHelpGivesCommandSyntax(t *testing.T) {
	a := testApp(t, 160, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "?")
	for filter, want := range map[string][]string{
		":at":   {":at TIME", "yesterday 14:02", "-2h"},
		":span": {":span 5m|1h|1d|7d"},
		":live": {":live"},
	} {
		typeKeys(a, filter)
		mustContain(t, filter, helpBody(a), want...)
		a.Update(keyCode(tea.KeyEscape))
	}
}

// TestHelpWrapsAtEightyColumns: at 80 columns the help's rows wrap under
// their meaning instead of being cut, so :at's syntax (which the help
// alone gives) reads whole, and a filter on a word of a continuation line
// shows the row it belongs to. The filter's first row too: it was cut
// "!wo…", losing how a search is inverted.
func TestHelpWrapsAtEightyColumns(t *testing.T) {
	// With --ascii too: "…a104" drawn "...a104" is two cells wider than
	// the wrap counted, and the row was cut "--devic~".
	for _, ascii := range []bool{false, true} {
		a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{ASCII: ascii})
		var help string
		for _, l := range helpLines(a, 80) {
			l = stripANSI(l)
			if kit.Width(l) > 80 {
				t.Errorf("ascii=%v: a help line wider than 80: %q", ascii, l)
			}
			help += strings.TrimSpace(l) + " "
		}
		mustContain(t, fmt.Sprintf("help at 80 columns (ascii=%v)", ascii), help, "yesterday 14:02", "-2h", "[ ] step, :live returns", "(as history --device)", "!word inverts one")
		typeKeys(a, "?")
		typeKeys(a, "returns")
		mustContain(t, "filter on a continuation line", helpBody(a), ":at TIME", "returns")
	}
}

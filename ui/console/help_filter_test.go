package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestHelpFilter: the help keeps the console's habits. j/k scroll, q
// closes it (it did not: every letter typed into a filter, so q meant to
// leave typed "q" and j to scroll typed "j"); / opens the filter line in
// the footer, and only then do letters (q, j and ? too) type: the rows
// that match (any case) stay, enter keeps the filter, esc clears a kept
// one before it closes the help, and esc while typing gives back the one
// from before.
func TestHelpFilter(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "?")
	full := stripANSI(a.View().Content)
	if !strings.Contains(full, "next pane") || !strings.Contains(full, "reverse sort") {
		t.Fatalf("help lacks its rows:\n%s", full)
	}
	foot := func() string {
		f := stripANSI(a.View().Content)
		return f[strings.LastIndex(f, "\n")+1:]
	}
	if f := foot(); !strings.Contains(f, "/ filter") || !strings.Contains(f, "j/k scroll") || !strings.Contains(f, "q/esc back") || strings.Contains(f, "q quit") {
		t.Errorf("the help's footer: %q", f)
	}
	// j and k scroll, G and g go to the end and the top; none types.
	typeKeys(a, "jj")
	if hs := helpOf(a); hs == nil || hs.Filter != "" || hs.off != 2 {
		t.Fatalf("jj: %s; want it scrolled by 2, no filter", helpState(a))
	}
	typeKeys(a, "k")
	if helpOf(a).off != 1 {
		t.Errorf("k: offset %d, want 1", helpOf(a).off)
	}
	typeKeys(a, "G")
	if helpOf(a).off < 2 || helpOf(a).Filter != "" {
		t.Errorf("G: offset %d, filter %q", helpOf(a).off, helpOf(a).Filter)
	}
	typeKeys(a, "g")
	if helpOf(a).off != 0 {
		t.Errorf("g: offset %d, want 0", helpOf(a).off)
	}
	// q leaves the help, not the console.
	if _, cmd := a.Update(keyRune('q')); cmd != nil || a.ModalOpen() {
		t.Fatalf("q on the help: cmd %v, modal %v; want the help closed and no quit", cmd != nil, a.ModalOpen())
	}
	typeKeys(a, "?/SORT")
	f := helpBody(a)
	mustContain(t, "filtered help", f, "filter: SORT", "reverse sort", "sort column")
	mustNotContain(t, "filtered help", f, "next pane", "Share bars", "free capacity")
	// While typing, the footer is the filter line with its keys.
	if f := foot(); !strings.Contains(f, "/SORT_") || !strings.Contains(f, "esc cancel") || !strings.Contains(f, "ctrl+c quit") {
		t.Errorf("the footer while typing: %q", f)
	}
	// A flash does not hide the line being typed.
	a.Flashf(kit.LvlWarn, "new issue: GPU3 over capacity")
	if f := foot(); !strings.Contains(f, "/SORT_") {
		t.Errorf("the footer while typing, with a flash: %q", f)
	}
	a.Flash = kit.Flash{}
	for range 4 {
		a.Update(keyCode(tea.KeyBackspace))
	}
	typeKeys(a, "qui")
	if helpOf(a) == nil || helpOf(a).Filter != "qui" {
		t.Fatalf("filter after backspaces and qui: %s", helpState(a))
	}
	f = helpBody(a)
	mustContain(t, "qui", f, "filter: qui", "quit")
	mustNotContain(t, "qui", f, "reverse sort")
	// ? is a letter while typing.
	typeKeys(a, "?")
	if helpOf(a) == nil || helpOf(a).Filter != "qui?" {
		t.Fatalf("? while typing: %s", helpState(a))
	}
	a.Update(keyCode(tea.KeyBackspace))
	// Enter keeps the filter; j scrolls again, and / goes on typing it.
	a.Update(keyCode(tea.KeyEnter))
	typeKeys(a, "j")
	if hs := helpOf(a); hs == nil || hs.Filter != "qui" || hs.typing {
		t.Fatalf("j after enter: %s; want the filter kept, j not typed", helpState(a))
	}
	if f := foot(); !strings.Contains(f, "esc clear filter") || !strings.Contains(f, "q back") {
		t.Errorf("the footer with a kept filter: %q", f)
	}
	typeKeys(a, "/zzzz")
	mustContain(t, "no match", stripANSI(a.View().Content), "nothing in the help matches")
	// Esc while typing gives back the filter from before.
	a.Update(keyCode(tea.KeyEscape))
	if hs := helpOf(a); hs == nil || hs.Filter != "qui" || hs.typing {
		t.Fatalf("esc while typing: %s; want qui back", helpState(a))
	}
	a.Update(keyCode(tea.KeyEscape))
	if helpOf(a) == nil || helpOf(a).Filter != "" {
		t.Fatalf("esc on a kept filter: %s; want help open, filter cleared", helpState(a))
	}
	mustNotContain(t, "cleared", stripANSI(a.View().Content), "filter:")
	a.Update(keyCode(tea.KeyEscape))
	if a.ModalOpen() {
		t.Fatal("second esc did not close the help")
	}
	// Reopened, the help starts unfiltered, not typing; the filter takes
	// at most maxPromptRunes runes.
	typeKeys(a, "?")
	if helpOf(a).Filter != "" || helpOf(a).typing {
		t.Fatalf("reopened: %s", helpState(a))
	}
	typeKeys(a, "/"+strings.Repeat("x", maxPromptRunes+10))
	if n := len([]rune(helpOf(a).Filter)); n != maxPromptRunes {
		t.Errorf("filter holds %d runes, want %d", n, maxPromptRunes)
	}
	a.Update(keyCode(tea.KeyEscape))
	typeKeys(a, "?")
	if a.ModalOpen() {
		t.Error("? with no filter did not close the help")
	}
}

// helpState says what the help holds (its filter, whether it is typed,
// its offset), or that it is closed.
func helpState(a *App) string {
	hs := helpOf(a)
	if hs == nil {
		return fmt.Sprintf("no help (top %T)", a.top())
	}
	return fmt.Sprintf("help filter %q typing %v offset %d", hs.Filter, hs.typing, hs.off)
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
		typeKeys(a, "/"+filter)
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
		typeKeys(a, "/returns")
		mustContain(t, "filter on a continuation line", helpBody(a), ":at TIME", "returns")
	}
}

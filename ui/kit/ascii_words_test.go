package kit

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// TestASCIIWordsReadNaturally: with --ascii, the mark of keys a footer
// left out was a lone "~" between separators ("s sort column | ~ | ?
// help") and a key that opens a dialog read "A apply~" even at 200
// columns (the tour): both are three dots; a Unicode terminal keeps "…".
func TestASCIIWordsReadNaturally(t *testing.T) {
	bs := []key.Binding{
		key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort column")),
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy selected id")),
		key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
	}
	for _, c := range []struct {
		ascii            bool
		want, nots, more string
	}{
		{true, " | ... | ? help | q quit", "~", "..."},
		{false, " • … • ? help • q quit", "...", "…"},
	} {
		st := testStyles(t, "dark", c.ascii)
		got := stripANSI(ShortHelpOf(st, bs, 60))
		if !strings.HasSuffix(strings.TrimRight(got, " "), c.want) || strings.Contains(got, c.nots) {
			t.Errorf("ascii %v: footer %q, want it to end in %q", c.ascii, got, c.want)
		}
		if w := Width(got); w > 60 {
			t.Errorf("ascii %v: footer %q is %d cells", c.ascii, got, w)
		}

		keys := KeyMapOf(RoleOperator, ScScreen, []Binding{NewBinding(ActHelp, GrpGeneral, ScScreen, ScScreen, []string{"A"}, "A", "apply…").Foot("", "apply…", 0)}).WordsOf(st.G)
		want := "apply" + c.more
		if h := keys.BindingList[0].Key.Help(); h.Desc != want {
			t.Errorf("ascii %v: help words %q, want %q", c.ascii, h.Desc, want)
		}
		if it := keys.FooterIn(ScScreen); len(it) != 1 || it[0].Desc != want {
			t.Errorf("ascii %v: footer words %+v, want %q", c.ascii, it, want)
		}

		var l = NewLine(Paint{})
		PutSpans(l, st, []Span{{LvlPlain, "reading it back…"}}, 40)
		if got, want := stripANSI(l.Finish(40)), "reading it back"+c.more; strings.TrimRight(got, " ") != want {
			t.Errorf("ascii %v: spans %q, want %q", c.ascii, got, want)
		}
	}
}

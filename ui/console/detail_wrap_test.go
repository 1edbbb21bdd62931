package console

import (
	"strings"
	"testing"
	"unicode"

	"github.com/fgtop/fgtop/ui/kit"
)

// TestWrapDetailAtSpaces: a detail line of words breaks between them
// (:fit's answer read "the m / anager" at 80 columns); a word longer than
// a row, a path, is still cut where the row ends.
func TestWrapDetailAtSpaces(t *testing.T) {
	text := "agent i-demo-numa0's own allocator (its kernels only) would not take it: the manager would not send it there: the agent reports 0.20 cuda.shares free (given 2.0, its kernels hold 1.80), 0.5 requested"
	for _, w := range []int{30, 47, 78, 118} {
		rows := wrapDetail([]kit.Span{{Lvl: kit.LvlPlain, Text: text}}, w)
		var words []string
		for i, r := range rows {
			var b strings.Builder
			for _, sp := range r {
				b.WriteString(sp.Text)
			}
			line := b.String()
			if kit.Width(line) > w {
				t.Errorf("w=%d: row %d is %d wide", w, i, kit.Width(line))
			}
			words = append(words, strings.Fields(line)...)
		}
		if got := strings.Join(words, " "); got != text {
			t.Errorf("w=%d: a word was cut:\n%q\nwant\n%q", w, got, text)
		}
	}
	path := "      /var/lib/backend.ai/scratches/5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d/config/resource.txt"
	rows := wrapDetail([]kit.Span{{Lvl: kit.LvlPlain, Text: path}}, 78)
	if len(rows) != 2 || strings.TrimFunc(rows[0][0].Text, unicode.IsSpace) == "" {
		t.Errorf("a path longer than a row: %q, want it cut where the first row ends", rows)
	}
}

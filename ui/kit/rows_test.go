package kit

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/themes"
)

// TestTitleRowKeepsPosition: where a title and its right-hand part do not
// fit together, the title's end is cut and the position stays (it says
// which of how many rows are shown), then the info (esc back) as room
// allows: the whole right-hand part went, the title kept, the refused
// list at 80 columns losing its "1-6/11".
func TestTitleRowKeepsPosition(t *testing.T) {
	st := testStyles(t, themes.Mono, true)
	name := " Refused under the draft "
	title := []Span{{LvlFocus, name}, {LvlDim, " last 37s (all the record holds) of the record "}}
	full := SpansWidth(title)
	info := []Span{{LvlDim, "esc back"}}
	const pos = "1-6/11"
	cases := []struct {
		w                  int
		fullTitle, infoToo bool
		posToo, nameEntire bool
	}{
		{w: 120, fullTitle: true, infoToo: true, posToo: true, nameEntire: true},
		{w: full + 21, fullTitle: true, infoToo: true, posToo: true, nameEntire: true},
		{w: full + 20, infoToo: true, posToo: true, nameEntire: true},
		{w: 80, infoToo: true, posToo: true, nameEntire: true},
		{w: 50, infoToo: true, posToo: true, nameEntire: true},
		{w: 40, infoToo: true, posToo: true},
		{w: 30, posToo: true},
		{w: 23, posToo: true},
		{w: 22},
		{w: 5},
	}
	for _, c := range cases {
		got := stripANSI(TitleRowOf(st, c.w, title, info, 11, 6, 0))
		if n := Width(got); n != c.w {
			t.Errorf("w=%d: %d cells: %q", c.w, n, got)
		}
		has := func(s string) bool { return strings.Contains(got, s) }
		if has(title[1].Text) != c.fullTitle || has("esc back") != c.infoToo || has(pos) != c.posToo || has(name) != c.nameEntire {
			t.Errorf("w=%d: %q: want whole title %v, esc back %v, %s %v, %q whole %v",
				c.w, got, c.fullTitle, c.infoToo, pos, c.posToo, name, c.nameEntire)
		}
		if c.w > 14 && !has(" Refused") {
			t.Errorf("w=%d: %q lost the title's beginning", c.w, got)
		}
	}
	// Without a position or info the title has the row.
	if got := stripANSI(TitleRowOf(st, 40, title, nil, 3, 6, 0)); !strings.Contains(got, " Refused under the draft  last") {
		t.Errorf("no right-hand part: %q", got)
	}
}

// TestTitleRowFirst: the first title that fits whole beside the right-hand
// part (info and position) is drawn, else the last, cut.
func TestTitleRowFirst(t *testing.T) {
	st := testStyles(t, themes.Mono, true)
	titles := [][]Span{{{LvlFocus, " a long title, all of it "}}, {{LvlFocus, " shorter "}}, {{LvlFocus, " s "}}}
	info := []Span{{LvlDim, "esc back"}}
	for _, c := range []struct {
		w, total int
		want     string
	}{{80, 0, " a long title, all of it "}, {40, 0, " a long title, all of it "}, {37, 0, " shorter "}, {40, 11, " shorter "}, {20, 11, " s"}} {
		got := stripANSI(TitleRowFirst(st, c.w, titles, info, c.total, 6, 0))
		if !strings.Contains(got, c.want) || Width(got) != c.w {
			t.Errorf("w %d total %d: %q, want %q in it", c.w, c.total, got, c.want)
		}
	}
}

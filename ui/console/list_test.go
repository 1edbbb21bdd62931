package console

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// testList is a list of n rows (row i takes lines(i) lines when lines is
// set) in a w x h pane with head fixed rows.
func testList(t *testing.T, n *int, lines func(int) int, w, h, head int) *list {
	t.Helper()
	c := &common{Common: &kit.Common{St: testStyles(t, themes.Mono, false), Keys: NewKeyMap(kit.RoleViewer)}, d: &render.Derived{}}
	l := &list{common: c, head: head, Size: func(*render.Derived) int { return *n }, Lines: lines}
	l.SetSize(w, h)
	return l
}

// TestListScroll moves a one-line-per-row list and checks the cursor always
// stays in view, pages keep a row of context, and clamping after the rows
// shrink keeps the cursor on a row.
func TestListScroll(t *testing.T) {
	n := 100
	l := testList(t, &n, nil, 40, 12, 1) // title + head + 10 rows
	inView := func(step string) {
		t.Helper()
		if l.Cursor < l.offset || l.Cursor >= l.offset+l.visible() || l.Cursor < 0 || l.Cursor >= max(n, 1) {
			t.Fatalf("%s: cursor %d offset %d visible %d of %d", step, l.Cursor, l.offset, l.visible(), n)
		}
	}
	steps := []struct {
		Name       string
		Do         func()
		cur, first int
	}{
		{"down 15", func() { l.move(15) }, 15, 6},
		{"page down", func() { l.move(max(l.visible()-1, 1)) }, 24, 15},
		{"up 20", func() { l.move(-20) }, 4, 4},
		{"bottom", func() { l.move(1 << 30) }, 99, 90},
		{"top", func() { l.move(-1 << 30) }, 0, 0},
		{"select 57", func() { l.selectRow(57) }, 57, 48},
		{"select out of range", func() { l.selectRow(100) }, 57, 48},
		// A click in pane coordinates (title, head, then the rows) lands
		// on the row drawn there, wherever the list is scrolled to.
		{"click third shown", func() { l.Update(tea.MouseClickMsg{X: 1, Y: 1 + 1 + 2, Button: tea.MouseLeft}) }, 50, 48},
		{"wheel up", func() { l.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp}) }, 49, 48},
		{"page up", func() { l.Update(keyCode(tea.KeyPgUp)) }, 40, 40},
		{"shrink to 50", func() { n = 50; l.Clamp() }, 40, 40},
		{"bottom key", func() { typeKeysList(l, "G") }, 49, 40},
		{"shrink to 0", func() { n = 0; l.Clamp() }, 0, 0},
	}
	for _, s := range steps {
		s.Do()
		if l.Cursor != s.cur || l.offset != s.first {
			t.Fatalf("%s: cursor %d offset %d, want %d %d", s.Name, l.Cursor, l.offset, s.cur, s.first)
		}
		inView(s.Name)
	}
}

// TestListBlocks: with rows of several lines (the agents pane) the whole
// block under the cursor fits, and a click on any of a block's lines
// selects that block.
func TestListBlocks(t *testing.T) {
	n := 30
	lines := func(i int) int { return i%3 + 1 } // 1, 2, 3, 1, 2, 3...
	l := testList(t, &n, lines, 40, 7, 0)       // title + 6 lines
	for c := 0; c < n; c++ {
		l.selectRow(c)
		used := 0
		for i := l.offset; i <= c; i++ {
			used += lines(i)
		}
		if used > l.Body() || l.offset > c {
			t.Fatalf("cursor %d: blocks %d..%d take %d lines, more than %d", c, l.offset, c, used, l.Body())
		}
	}
	l.offset, l.Cursor = 0, 0
	// Lines 0 | 1 2 | 3 4 5: rows 0, 1, 1, 2, 2, 2.
	for y, want := range []int{0, 1, 1, 2, 2, 2, 3} {
		if got, ok := l.rowAt(y); !ok || got != want {
			t.Errorf("line %d: row %d %v, want %d", y, got, ok, want)
		}
	}
	if _, ok := l.rowAt(-1); ok {
		t.Error("the title line is a row")
	}
	// A click in pane coordinates: y 0 is the title.
	l.Update(tea.MouseClickMsg{X: 3, Y: 5, Button: tea.MouseLeft})
	if l.Cursor != 2 {
		t.Errorf("click on line 4 of the body: cursor %d, want 2", l.Cursor)
	}
	if v := l.visible(); v != 3 {
		t.Errorf("visible blocks from 0 in 6 lines: %d, want 3", v)
	}
}

// TestListFrame: the skeleton draws exactly h rows of w cells at every
// size, with the scroll position in the title when rows are hidden, the
// empty line when there are none and the no-data line before a snapshot.
func TestListFrame(t *testing.T) {
	empty := func() string { return "nothing here" }
	for _, n := range []int{0, 3, 100} {
		for _, h := range []int{0, 1, 2, 3, 12} {
			for _, w := range []int{10, 40} {
				n := n
				l := testList(t, &n, nil, w, h, 1)
				l.move(n / 2)
				head := func() []string { return []string{kit.Fit("HEAD", w, false, "…")} }
				rows := l.frame([]kit.Span{{Lvl: kit.LvlTitle, Text: " T "}}, nil, true, "", head, empty, func(i int, dst []string) []string {
					return append(dst, kit.Fit(fmt.Sprintf("row %d", i), w, false, "…"))
				})
				if len(rows) != h {
					t.Fatalf("n=%d %dx%d: %d rows", n, w, h, len(rows))
				}
				for i, r := range rows {
					if got := ansi.StringWidth(r); got != w {
						t.Fatalf("n=%d %dx%d row %d: %d cells %q", n, w, h, i, got, r)
					}
				}
				text := ansi.Strip(strings.Join(rows, "\n"))
				switch {
				case h >= 3 && n == 0 && !strings.Contains(text, "  nothing"):
					t.Errorf("n=0 h=%d: no empty line: %q", h, text)
				case h == 12 && w == 40 && n == 100 && !strings.Contains(text, "42-51/100"):
					t.Errorf("no scroll position: %q", text)
				case h >= 3 && n > 0 && !strings.Contains(text, fmt.Sprintf("row %d", n/2)):
					t.Errorf("n=%d h=%d: cursor row not drawn: %q", n, h, text)
				}
			}
		}
	}
	n := 5
	l := testList(t, &n, nil, 30, 5, 1)
	head := func() []string { return []string{"HEAD"} }
	rows := l.frame(nil, nil, false, "no snapshot yet", head, empty, nil)
	if len(rows) != 5 || !strings.Contains(ansi.Strip(rows[1]), "no snapshot yet") || strings.Contains(strings.Join(rows, ""), "HEAD") {
		t.Errorf("before data: %q", rows)
	}
}

func typeKeysList(l *list, keys string) {
	for _, r := range keys {
		l.Update(keyRune(r))
	}
}

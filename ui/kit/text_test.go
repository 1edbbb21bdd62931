package kit

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTruncateNeverExceeds cuts ASCII, CJK (2 cells each), emoji and
// combining marks at every width: the result never exceeds it and never
// ends in half a glyph.
func TestTruncateNeverExceeds(t *testing.T) {
	inputs := []string{
		"", "abc", "i-gpu-node01-numa0", "日本語のカーネル名", "GPU🔒lock", "e\u0301e\u0301e\u0301 combining",
		"mixed 日本 and ascii", "\x1b[31mred\x1b[m text",
	}
	for _, s := range inputs {
		for w := 0; w <= 25; w++ {
			for _, ell := range []string{"", "…", "~"} {
				got := Truncate(s, w, ell)
				if gw := ansi.StringWidth(got); gw > w {
					t.Fatalf("truncate(%q, %d, %q) = %q: %d cells", s, w, ell, got, gw)
				}
				if f := Fit(s, w, w%2 == 0, ell); ansi.StringWidth(f) != w {
					t.Fatalf("fit(%q, %d) = %q: %d cells, want exactly %d", s, w, f, ansi.StringWidth(f), w)
				}
			}
		}
	}
}

func TestTruncateKeepsWholeGraphemes(t *testing.T) {
	// 3 cells cannot hold two 2-cell characters: one goes whole.
	if got := Truncate("日本語", 3, ""); got != "日" {
		t.Errorf("truncate = %q, want %q", got, "日")
	}
	if got := Truncate("日本語", 4, "…"); got != "日…" {
		t.Errorf("truncate = %q, want %q", got, "日…")
	}
}

func TestLineFinish(t *testing.T) {
	st := testStyles(t, "dark", false)
	l := NewLine(st.Selected)
	l.Put(st.Warn, "warn")
	l.Gap(2)
	l.Cell(st.Dim, "a long cell that is cut", 8, false, "…")
	out := l.Finish(30)
	if w := ansi.StringWidth(out); w != 30 {
		t.Fatalf("width %d, want 30: %q", w, out)
	}
	if got := ansi.Strip(out); got != "warn  a long …                " {
		t.Errorf("text = %q", got)
	}
}

func TestClampLine(t *testing.T) {
	s := "\x1b[31m日本語\x1b[m abc"
	for w := 0; w < 12; w++ {
		if got := ansi.StringWidth(ClampLine(s, w)); got > w {
			t.Fatalf("clampLine(%d) = %d cells", w, got)
		}
	}
}

// TestFastWidthIsExact compares fastWidth with ansi.StringWidth on the
// console's glyphs, mixed with what falls back.
func TestFastWidthIsExact(t *testing.T) {
	inputs := []string{
		"", "plain", "\x1b[38;5;39m████\x1b[m░░ 1.10/1.00", "└ MIG 3/0", "81°C", "a·b", "▶ x", "×××", "▲▼…",
		"日本", "🔒 read-only", "e\u0301", "█\u0301", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "tab\there",
		"\x1b[1;38;2;1;2;3mtrue\x1b[m", "▓▒░│─",
	}
	for _, s := range inputs {
		if got, want := fastWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("fastWidth(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	}
}

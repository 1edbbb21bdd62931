package ui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// isASCII reports whether s is printable 7-bit text, whose width is its
// length: the common case, measured without decoding graphemes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// width is the number of terminal cells s takes; s may hold ANSI
// sequences.
func width(s string) int {
	if isASCII(s) {
		return len(s)
	}
	return fastWidth(s)
}

// narrowGlyph reports the non-ASCII characters the console draws with
// that are one cell wide in every terminal and never start a cluster with
// what follows: box drawing and block elements, and a few symbols.
func narrowGlyph(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259f: // box drawing, block elements
		return true
	case r == 0xb0, r == 0xb7, r == 0xd7, r == 0x2026, r == 0x25b2, r == 0x25b6, r == 0x25bc,
		r == 0x25a0, r == 0x2190, r == 0x2192: // ■ ← → of the partition editor
		return true
	}
	return false
}

// fastWidth is ansi.StringWidth for the console's own rows without
// grapheme segmentation: SGR sequences count nothing, ASCII and
// narrowGlyph one cell each. Anything else (wide or combining characters,
// other escapes) hands the whole string to ansi.StringWidth, so the result
// is always exact. It keeps the per-row width check of every frame cheap.
func fastWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrowGlyph(r) {
				return ansi.StringWidth(s)
			}
			n++
			i += size
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// truncate cuts s to at most w cells, ending in ell when it had to cut.
// It never splits a grapheme (a wide character is dropped whole).
func truncate(s string, w int, ell string) string {
	if w <= 0 {
		return ""
	}
	if isASCII(s) && isASCII(ell) {
		if len(s) <= w {
			return s
		}
		if len(ell) == w {
			return ell
		}
		if len(ell) > w {
			return s[:w]
		}
		return s[:w-len(ell)] + ell
	}
	if width(s) <= w {
		return s
	}
	switch ew := width(ell); {
	case ew == w:
		// A one-cell column still says it was cut rather than show a
		// first character that reads as a value.
		return ell
	case ew > w:
		ell = ""
	}
	return ansi.Truncate(s, w, ell)
}

// fit returns s cut or padded with spaces to exactly w cells, aligned left
// or right.
func fit(s string, w int, right bool, ell string) string {
	if w <= 0 {
		return ""
	}
	s = truncate(s, w, ell)
	pad := w - width(s)
	if pad <= 0 {
		return s
	}
	if right {
		return spaces(pad) + s
	}
	return s + spaces(pad)
}

const spaceRun = "                                                                                                                                "

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(spaceRun) {
		return spaceRun[:n]
	}
	return strings.Repeat(" ", n)
}

// repeat is strings.Repeat that tolerates n <= 0.
func repeat(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, n)
}

// line assembles one screen row from plain text and paints, tracking its
// width. A base paint (the cursor row's highlight) is re-applied after every
// painted piece, since each piece ends in a full SGR reset.
type line struct {
	b    strings.Builder
	base paint
	w    int
}

func newLine(base paint) *line {
	l := &line{base: base}
	l.b.Grow(512)
	l.b.WriteString(base.on)
	return l
}

// put appends plain text s (no ANSI) in paint p.
func (l *line) put(p paint, s string) {
	l.putW(p, s, width(s))
}

// putW appends s whose width the caller already knows.
func (l *line) putW(p paint, s string, w int) {
	if s == "" {
		return
	}
	if p.on == "" {
		l.b.WriteString(s)
	} else {
		l.b.WriteString(p.on)
		l.b.WriteString(s)
		l.b.WriteString(ansi.ResetStyle)
		l.b.WriteString(l.base.on)
	}
	l.w += w
}

// putRepeat appends n copies of a one-cell glyph in paint p, without
// building the run first.
func (l *line) putRepeat(p paint, glyph string, n int) {
	if n <= 0 {
		return
	}
	l.b.WriteString(p.on)
	for range n {
		l.b.WriteString(glyph)
	}
	if p.on != "" {
		l.b.WriteString(ansi.ResetStyle)
		l.b.WriteString(l.base.on)
	}
	l.w += n
}

// cell appends s cut or padded to exactly w cells.
func (l *line) cell(p paint, s string, w int, right bool, ell string) {
	if w <= 0 {
		return
	}
	l.putW(p, fit(s, w, right, ell), w)
}

// gap appends n spaces in the base paint.
func (l *line) gap(n int) {
	if n > 0 {
		l.b.WriteString(spaces(n))
		l.w += n
	}
}

// finish pads the row to total cells (so a highlight spans the row) and
// closes the base paint.
func (l *line) finish(total int) string {
	l.gap(total - l.w)
	if l.base.on != "" {
		l.b.WriteString(ansi.ResetStyle)
	}
	return l.b.String()
}

// clampLine guarantees a composed row never exceeds w cells, whatever went
// before: ANSI-aware, never cutting mid-grapheme.
func clampLine(s string, w int) string {
	if fastWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "")
}

// truncateLeft keeps the last w cells of s (the end of what is being
// typed).
func truncateLeft(s string, w int) string {
	n := width(s)
	if n <= w {
		return s
	}
	return ansi.TruncateLeft(s, n-w, "")
}

// asciiSubst are the one-cell stand-ins --ascii draws for the few
// non-ASCII characters the console's own words use (arrows in key names,
// the middle dot between items, the multiplication sign of "numa0×2").
var asciiSubst = map[rune]string{
	'→': ">", '←': "<", '↑': "^", '↓': "v", '·': "-", '•': "*", '×': "x",
	'…': "~", '│': "|", '─': "-", '≤': "<", '≥': ">", '°': "o", '▶': ">",
	'–': "-", '—': "-", '‘': "'", '’': "'", '“': "\"", '”': "\"",
}

// asciiOnly is s with every character outside 7-bit ASCII replaced, cell
// for cell, so that --ascii holds for text fgtop did not write (node and
// user names, issue messages) as well as its own: the stand-in above, or
// '?' per cell. Escape sequences are ASCII and pass through.
func asciiOnly(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case asciiSubst[r] != "":
			b.WriteString(asciiSubst[r])
		default:
			b.WriteString(strings.Repeat("?", ansi.StringWidth(string(r))))
		}
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func padRight(s string, w int) string {
	if n := width(s); n < w {
		return s + spaces(w-n)
	}
	return s
}

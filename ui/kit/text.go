package kit

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// IsASCII reports whether s is printable 7-bit text, whose width is its
// length: the common case, measured without decoding graphemes.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Width is the number of terminal cells s takes; s may hold ANSI
// sequences.
func Width(s string) int {
	if IsASCII(s) {
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

// Truncate cuts s to at most w cells, ending in ell when it had to cut.
// It never splits a grapheme (a wide character is dropped whole).
func Truncate(s string, w int, ell string) string {
	if w <= 0 {
		return ""
	}
	if IsASCII(s) && IsASCII(ell) {
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
	if Width(s) <= w {
		return s
	}
	switch ew := Width(ell); {
	case ew == w:
		// A one-cell column still says it was cut rather than show a
		// first character that reads as a value.
		return ell
	case ew > w:
		ell = ""
	}
	return ansi.Truncate(s, w, ell)
}

// Fit returns s cut or padded with spaces to exactly w cells, aligned left
// or right.
func Fit(s string, w int, right bool, ell string) string {
	if w <= 0 {
		return ""
	}
	s = Truncate(s, w, ell)
	pad := w - Width(s)
	if pad <= 0 {
		return s
	}
	if right {
		return Spaces(pad) + s
	}
	return s + Spaces(pad)
}

const spaceRun = "                                                                                                                                "

// Spaces is n blanks (none for n <= 0).
func Spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(spaceRun) {
		return spaceRun[:n]
	}
	return strings.Repeat(" ", n)
}

// Repeat is strings.Repeat that tolerates n <= 0.
func Repeat(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, n)
}

// Line assembles one screen row from plain text and paints, tracking its
// width. A base paint (the cursor row's highlight) is re-applied after every
// painted piece, since each piece ends in a full SGR reset.
type Line struct {
	b    strings.Builder
	Base Paint
	W    int
}

// NewLine starts a row drawn on the base paint.
func NewLine(base Paint) *Line {
	l := &Line{Base: base}
	l.b.Grow(512)
	l.b.WriteString(base.On)
	return l
}

// Put appends plain text s (no ANSI) in paint p.
func (l *Line) Put(p Paint, s string) {
	l.PutW(p, s, Width(s))
}

// PutW appends s whose width the caller already knows.
func (l *Line) PutW(p Paint, s string, w int) {
	if s == "" {
		return
	}
	if p.On == "" {
		l.b.WriteString(s)
	} else {
		l.b.WriteString(p.On)
		l.b.WriteString(s)
		l.b.WriteString(ansi.ResetStyle)
		l.b.WriteString(l.Base.On)
	}
	l.W += w
}

// putRepeat appends n copies of a one-cell glyph in paint p, without
// building the run first.
func (l *Line) putRepeat(p Paint, glyph string, n int) {
	if n <= 0 {
		return
	}
	l.b.WriteString(p.On)
	for range n {
		l.b.WriteString(glyph)
	}
	if p.On != "" {
		l.b.WriteString(ansi.ResetStyle)
		l.b.WriteString(l.Base.On)
	}
	l.W += n
}

// Cell appends s cut or padded to exactly w cells.
func (l *Line) Cell(p Paint, s string, w int, right bool, ell string) {
	if w <= 0 {
		return
	}
	l.PutW(p, Fit(s, w, right, ell), w)
}

// Gap appends n spaces in the base paint.
func (l *Line) Gap(n int) {
	if n > 0 {
		l.b.WriteString(Spaces(n))
		l.W += n
	}
}

// Finish pads the row to total cells (so a highlight spans the row) and
// closes the base paint.
func (l *Line) Finish(total int) string {
	l.Gap(total - l.W)
	if l.Base.On != "" {
		l.b.WriteString(ansi.ResetStyle)
	}
	return l.b.String()
}

// ClampLine guarantees a composed row never exceeds w cells, whatever went
// before: ANSI-aware, never cutting mid-grapheme.
func ClampLine(s string, w int) string {
	if fastWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "")
}

// TruncateLeft keeps the last w cells of s (the end of what is being
// typed).
func TruncateLeft(s string, w int) string {
	n := Width(s)
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

// ASCIIOnly is s with every character outside 7-bit ASCII replaced, cell
// for cell, so that --ascii holds for text fgtop did not write (node and
// user names, issue messages) as well as its own: the stand-in above, or
// '?' per cell. Escape sequences are ASCII and pass through.
func ASCIIOnly(s string) string {
	if sevenBit(s) {
		return s
	}
	// Cell widths belong to grapheme clusters, not runes (a prepended
	// mark or a variation selector changes its neighbour's width), so the
	// stand-ins are chosen per cluster, as the terminal draws them.
	var b strings.Builder
	b.Grow(len(s))
	for s != "" {
		if s[0] < utf8.RuneSelf && (len(s) == 1 || s[1] < utf8.RuneSelf) {
			b.WriteByte(s[0])
			s = s[1:]
			continue
		}
		cluster, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
		if cluster == "" {
			cluster, w = s[:1], 1
		}
		s = s[len(cluster):]
		switch r, n := utf8.DecodeRuneInString(cluster); {
		case sevenBit(cluster):
			b.WriteString(cluster)
		case n == len(cluster) && asciiSubst[r] != "":
			b.WriteString(asciiSubst[r])
		case !utf8.ValidString(cluster):
			b.WriteString(strings.Repeat("?", len(cluster)))
		default:
			b.WriteString(strings.Repeat("?", w))
		}
	}
	return b.String()
}

// sevenBit reports whether every byte of s is below 0x80 (escape
// sequences included, unlike IsASCII).
func sevenBit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Plural is "1 what" or "n whats".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// PadRight pads s with blanks to w cells.
func PadRight(s string, w int) string {
	if n := Width(s); n < w {
		return s + Spaces(w-n)
	}
	return s
}

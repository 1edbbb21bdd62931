package screen

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// A frame that changes most of the screen (the console's help opened or
// closed by a key) costs the renderer about 2-4 ms at 160x48: every
// changed line is parsed into cells, checked for wide cells and diffed
// cell by cell, each cell's pen converted to the colour profile. Those
// lines are written whole instead, each from its own text, which is
// already what the line looks like: the cursor to the line's start, the
// line erased, the text with its styles as the renderer would write them
// (read and written back through ultraviolet's own Style, so the
// colours reach the terminal downsampled and in the same notation). The
// frame is on the terminal in a fraction of the time; the renderer then
// catches up with it, its output thrown away (catchUp, as after a frame
// written from a Transitions), after the write: the key's frame does not
// wait for it.
//
// Only what is certain to look the same is written this way: a
// full-screen frame whose modes did not change, of lines that each start
// with the default pen, hold nothing but SGR sequences and characters
// one cell wide by every measure (ASCII, Latin, Greek, Cyrillic, box
// drawing, blocks, arrows, symbols), and fit the width. Any other line
// in the frame sends the whole frame to the renderer. Shared drawers
// (serve's) never take this path: their frames must end in the
// renderer's canonical state, byte for byte what a twin computes.

// directMinShare is the share of a frame's lines that must have changed
// for the frame to be written directly: below it the renderer's diff is
// cheap and writes fewer bytes (a figure changed within a line).
const directMinShare = 2 // at least 1/directMinShare of the lines

// directable says whether f may be written directly over the frame on
// the terminal, and which of its lines changed. Called with d.mu held.
func (d *drawer) directable(f *frame, lines []string) (changed []int, ok bool) {
	l := d.last
	if d.share != nil || d.canon || l == nil || d.rlast != l || d.cells.RenderBuffer == nil ||
		!f.alt || !l.alt || d.widePending || d.reparse || d.wide && !d.wideOn {
		return nil, false
	}
	if f.width != l.width || f.height != l.height || f.profile != l.profile || f.mouse != l.mouse ||
		f.title != l.title || f.focus != l.focus || f.noPaste != l.noPaste || f.keys != l.keys ||
		(f.cursor == nil) != (l.cursor == nil) {
		return nil, false
	}
	if c := f.cursor; c != nil && (c.X < 0 || c.X >= f.width || c.Y < 0 || c.Y >= f.height) {
		// A terminal clamps a position off the screen, where the renderer
		// wraps it to the next row: they would disagree on the cursor.
		return nil, false
	}
	switch f.profile {
	case colorprofile.TrueColor, colorprofile.ANSI256, colorprofile.ANSI:
	default:
		return nil, false
	}
	h := f.height
	if d.cells.Width() != f.width || d.cells.Height() != h || len(lines) != len(d.lines) || len(lines) < h ||
		!d.indep || !independent(lines) {
		return nil, false
	}
	for y, s := range lines[:h] {
		if s != d.lines[y] {
			changed = append(changed, y)
		}
	}
	if len(changed)*directMinShare < h {
		return nil, false
	}
	return changed, true
}

// direct writes the changed lines of f into out, as directable found
// them, and says whether every one could be: out is to be discarded when
// it says no. Called with d.mu held.
func (d *drawer) direct(out *bytes.Buffer, f *frame, lines []string, changed []int) bool {
	out.Reset()
	if d.synced {
		out.WriteString(ansi.SetModeSynchronizedOutput)
	}
	var shown uv.Style // the terminal's pen, as written (converted)
	for _, y := range changed {
		out.WriteString(ansi.CursorPosition(1, y+1))
		if !shown.IsZero() {
			// Erasing takes the pen's background.
			out.WriteString(ansi.ResetStyle)
			shown = uv.Style{}
		}
		out.WriteString(ansi.EraseEntireLine)
		if !d.directLine(out, lines[y], f.width, f.profile, &shown) {
			return false
		}
	}
	if !shown.IsZero() {
		out.WriteString(ansi.ResetStyle)
	}
	x, y := directCursor(f)
	out.WriteString(ansi.CursorPosition(x+1, y+1))
	if d.synced {
		out.WriteString(ansi.ResetModeSynchronizedOutput)
	}
	return true
}

// directCursor is where a directly written frame leaves the cursor: the
// frame's cursor, or the top left corner.
func directCursor(f *frame) (x, y int) {
	if f.cursor != nil {
		return f.cursor.X, f.cursor.Y
	}
	return 0, 0
}

// directLine writes one line's text and styles, with the styles read and
// written back as the renderer reads and writes them; shown is the pen
// written last. It says no for anything it cannot vouch for.
func (d *drawer) directLine(out *bytes.Buffer, s string, width int, p colorprofile.Profile, shown *uv.Style) bool {
	var pen uv.Style // the line's pen, as read (not converted)
	sgr := ansi.GetParser()
	defer ansi.PutParser(sgr)
	cells := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			params, n, ok := readSGR(s[i:], sgr)
			if !ok {
				return false
			}
			uv.ReadStyle(params, &pen)
			i += n
			continue
		}
		// A run of text, to the next escape.
		j := i
		for j < len(s) && s[j] != 0x1b {
			if b := s[j]; b < utf8.RuneSelf {
				if b < 0x20 || b == 0x7f {
					return false
				}
				j++
				cells++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if !d.oneCell(r) {
				return false
			}
			j += size
			cells++
		}
		if cells > width {
			return false
		}
		want := uv.ConvertStyle(pen, p)
		if !want.Equal(shown) {
			seq := want.Diff(shown)
			if want.IsZero() && len(seq) > len(ansi.ResetStyle) {
				seq = ansi.ResetStyle
			}
			out.WriteString(seq)
			*shown = want
		}
		out.WriteString(s[i:j])
		i = j
	}
	return true
}

// readSGR reads the SGR sequence at the start of s, with ultraviolet's
// parser (as the renderer reads the line), and says how long it is; no
// for any other sequence.
func readSGR(s string, p *ansi.Parser) (params ansi.Params, n int, ok bool) {
	p.Reset()
	seq, _, n, state := ansi.DecodeSequence(s, ansi.NormalState, p)
	if state != ansi.NormalState || n < 3 || !strings.HasPrefix(seq, "\x1b[") {
		return nil, 0, false
	}
	cmd := ansi.Cmd(p.Command())
	if cmd.Final() != 'm' || cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return nil, 0, false
	}
	return p.Params(), n, true
}

// oneCell says r takes one cell by every measure the renderer and the
// terminals use, and starts a grapheme of its own: the scripts and
// symbols a console draws with. Answers are kept: a frame repeats its
// few symbols many times.
func (d *drawer) oneCell(r rune) bool {
	if ok, seen := d.cellRunes[r]; seen {
		return ok
	}
	ok := false
	switch {
	case r == 0xad: // soft hyphen: drawn or not, by terminal
	case r >= 0xa0 && r < 0x300, r >= 0x370 && r < 0x530, r >= 0x1e00 && r < 0x1f00,
		r >= 0x2010 && r < 0x2028, r >= 0x2030 && r < 0x205f, r >= 0x2070 && r < 0x20d0,
		r >= 0x2100 && r < 0x2c00:
		c := string(r)
		ok = ansi.GraphemeWidth.StringWidth(c) == 1 && ansi.WcWidth.StringWidth(c) == 1
	}
	if d.cellRunes == nil {
		d.cellRunes = map[rune]bool{}
	}
	if len(d.cellRunes) < 4096 {
		d.cellRunes[r] = ok
	}
	return ok
}

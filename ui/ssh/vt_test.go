package sshserve

import (
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// term collects what a session printed and replays it on a small screen
// model, so tests can wait for what a person would see rather than for
// bytes, which the renderer's diffs split arbitrarily. It understands the
// cursor, erase, insert/delete, scroll and margin sequences Bubble Tea's
// renderer emits for an xterm; styles and other sequences are ignored.
type term struct {
	mu   sync.Mutex
	w, h int
	out  []byte
}

func newTerm(w, h int) *term { return &term{w: w, h: h} }

// Write records output; it is the session's stdout.
func (t *term) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.out = append(t.out, p...)
	t.mu.Unlock()
	return len(p), nil
}

// raw returns everything printed so far.
func (t *term) raw() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.out)
}

// screen replays the output and returns the screen as lines of text.
func (t *term) screen() string {
	s := &vscreen{w: t.w, h: t.h, bot: t.h - 1, wrap: true}
	s.clear()
	s.feed(t.raw())
	lines := make([]string, t.h)
	for y, row := range s.cells {
		lines[y] = strings.TrimRight(strings.Join(row, ""), " ")
	}
	return strings.Join(lines, "\n")
}

type vscreen struct {
	w, h     int
	cells    [][]string // one grapheme per cell; "" behind a wide one
	x, y     int
	top, bot int // scroll margins
	wrap     bool
	last     string // last printed grapheme, for REP
}

func (s *vscreen) clear() {
	s.cells = make([][]string, s.h)
	for y := range s.cells {
		s.cells[y] = s.blankRow()
	}
}

func (s *vscreen) blankRow() []string {
	r := make([]string, s.w)
	for i := range r {
		r[i] = " "
	}
	return r
}

func (s *vscreen) put(g string, width int) {
	if s.x+width > s.w {
		if !s.wrap {
			s.x = s.w - width
		} else {
			s.x = 0
			s.lineFeed()
		}
	}
	if s.x < 0 || s.y < 0 || s.y >= s.h {
		return
	}
	s.cells[s.y][s.x] = g
	for i := 1; i < width && s.x+i < s.w; i++ {
		s.cells[s.y][s.x+i] = ""
	}
	s.x += width
	s.last = g
}

func (s *vscreen) lineFeed() {
	if s.y == s.bot {
		s.scrollUp(1)
		return
	}
	if s.y < s.h-1 {
		s.y++
	}
}

func (s *vscreen) scrollUp(n int) {
	for range n {
		copy(s.cells[s.top:s.bot+1], s.cells[s.top+1:s.bot+1])
		s.cells[s.bot] = s.blankRow()
	}
}

func (s *vscreen) scrollDown(n int) {
	for range n {
		copy(s.cells[s.top+1:s.bot+1], s.cells[s.top:s.bot])
		s.cells[s.top] = s.blankRow()
	}
}

func (s *vscreen) clampCursor() {
	s.x = min(max(s.x, 0), s.w-1)
	s.y = min(max(s.y, 0), s.h-1)
}

func (s *vscreen) eraseCells(y, from, to int) {
	for x := max(from, 0); x < min(to, s.w); x++ {
		s.cells[y][x] = " "
	}
}

func (s *vscreen) feed(data string) {
	p := ansi.NewParser()
	var state byte
	for len(data) > 0 {
		seq, width, n, st := ansi.DecodeSequence(data, state, p)
		state = st
		data = data[n:]
		switch {
		case width > 0:
			s.put(seq, width)
		case len(seq) == 1:
			switch seq[0] {
			case '\r':
				s.x = 0
			case '\n':
				s.lineFeed()
			case '\b':
				s.x = max(s.x-1, 0)
			case '\t':
				s.x = min((s.x/8+1)*8, s.w-1)
			}
		case ansi.HasCsiPrefix(seq):
			s.csi(p)
		case len(seq) == 2 && seq[0] == ansi.ESC:
			switch seq[1] {
			case 'M': // reverse index
				if s.y == s.top {
					s.scrollDown(1)
				} else if s.y > 0 {
					s.y--
				}
			case 'D':
				s.lineFeed()
			case 'E':
				s.x = 0
				s.lineFeed()
			}
		}
	}
}

func (s *vscreen) csi(p *ansi.Parser) {
	cmd := ansi.Cmd(p.Command())
	n, _ := p.Param(0, 1)
	if n < 1 {
		n = 1
	}
	if cmd.Prefix() == '?' {
		if cmd.Final() == 'h' || cmd.Final() == 'l' {
			set := cmd.Final() == 'h'
			for _, prm := range p.Params() {
				switch prm.Param(0) {
				case 7:
					s.wrap = set
				case 1049, 1047, 47:
					s.clear()
				}
			}
		}
		return
	}
	switch cmd.Final() {
	case 'A':
		s.y -= n
	case 'B', 'e':
		s.y += n
	case 'C', 'a':
		s.x += n
	case 'D':
		s.x -= n
	case 'E':
		s.x, s.y = 0, s.y+n
	case 'F':
		s.x, s.y = 0, s.y-n
	case 'G', '`':
		s.x = n - 1
	case 'd':
		s.y = n - 1
	case 'H', 'f':
		col, _ := p.Param(1, 1)
		s.y, s.x = n-1, max(col, 1)-1
	case 'J':
		mode, _ := p.Param(0, 0)
		switch mode {
		case 0:
			s.eraseCells(s.y, s.x, s.w)
			for y := s.y + 1; y < s.h; y++ {
				s.cells[y] = s.blankRow()
			}
		case 1:
			s.eraseCells(s.y, 0, s.x+1)
			for y := 0; y < s.y; y++ {
				s.cells[y] = s.blankRow()
			}
		default:
			s.clear()
		}
	case 'K':
		mode, _ := p.Param(0, 0)
		switch mode {
		case 0:
			s.eraseCells(s.y, s.x, s.w)
		case 1:
			s.eraseCells(s.y, 0, s.x+1)
		default:
			s.eraseCells(s.y, 0, s.w)
		}
	case 'X':
		s.eraseCells(s.y, s.x, s.x+n)
	case 'b':
		for range n {
			s.put(s.last, 1)
		}
	case '@':
		row := s.cells[s.y]
		n = min(n, s.w-s.x)
		copy(row[s.x+n:], row[s.x:s.w-n])
		s.eraseCells(s.y, s.x, s.x+n)
	case 'P':
		row := s.cells[s.y]
		n = min(n, s.w-s.x)
		copy(row[s.x:], row[s.x+n:])
		s.eraseCells(s.y, s.w-n, s.w)
	case 'L', 'M':
		if s.y < s.top || s.y > s.bot {
			return
		}
		top := s.top
		s.top = s.y
		if cmd.Final() == 'L' {
			s.scrollDown(min(n, s.bot-s.y+1))
		} else {
			s.scrollUp(min(n, s.bot-s.y+1))
		}
		s.top = top
		s.x = 0
	case 'S':
		s.scrollUp(n)
	case 'T':
		s.scrollDown(n)
	case 'r':
		top, _ := p.Param(0, 1)
		bot, _ := p.Param(1, s.h)
		s.top, s.bot = max(top, 1)-1, min(bot, s.h)-1
		if s.top >= s.bot {
			s.top, s.bot = 0, s.h-1
		}
		s.x, s.y = 0, 0
	}
	s.clampCursor()
}

package screen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// emu is a small terminal emulator for what the renderer writes: enough to
// tell whether two byte streams leave the same screen.
type emu struct {
	w, h, x, y int
	wrap       bool
	mapNl      bool
	pen        string
	cells      [][]string // text + "\x00" + pen
	sx, sy     int
}

func newEmu(w, h int, mapNl bool) *emu {
	e := &emu{w: w, h: h, mapNl: mapNl}
	e.clear(0, 0, w*h)
	return e
}

func (e *emu) blank() string { return " \x00" + e.bgOnly() }
func (e *emu) bgOnly() string {
	for _, p := range strings.Split(e.pen, "|") {
		if strings.HasPrefix(p, "bg=") {
			return p
		}
	}
	return ""
}

func (e *emu) clear(x0, y0, n int) {
	if e.cells == nil {
		e.cells = make([][]string, e.h)
		for y := range e.cells {
			e.cells[y] = make([]string, e.w)
		}
	}
	for i := y0*e.w + x0; i < y0*e.w+x0+n && i < e.w*e.h; i++ {
		e.cells[i/e.w][i%e.w] = e.blank()
	}
}

func (e *emu) put(s string, wd int) {
	if e.wrap {
		e.x, e.wrap = 0, false
		e.lf()
	}
	if wd == 2 && e.x == e.w-1 {
		e.cells[e.y][e.x] = e.blank()
		e.x = 0
		e.lf()
	}
	row := e.cells[e.y]
	// overwriting half of a wide character blanks its other half
	for i := e.x; i < e.x+wd && i < e.w; i++ {
		if strings.HasPrefix(row[i], "\x01") && i > 0 {
			row[i-1] = e.blank()
		}
		if i+1 < e.w && strings.HasPrefix(row[i+1], "\x01") {
			row[i+1] = e.blank()
		}
	}
	row[e.x] = s + "\x00" + e.pen
	if wd == 2 {
		row[e.x+1] = "\x01"
	}
	e.x += wd
	if e.x >= e.w {
		e.x, e.wrap = e.w-1, true
	}
}

func (e *emu) lf() {
	if e.y == e.h-1 {
		e.cells = append(e.cells[1:], make([]string, e.w))
		for i := range e.w {
			e.cells[e.h-1][i] = e.blank()
		}
	} else {
		e.y++
	}
}

func (e *emu) sgr(ps []int) {
	m := map[string]string{}
	if e.pen != "" {
		for _, p := range strings.Split(e.pen, "|") {
			k, v, _ := strings.Cut(p, "=")
			m[k] = v
		}
	}
	if len(ps) == 0 {
		ps = []int{0}
	}
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		switch {
		case p == 0:
			m = map[string]string{}
		case p >= 1 && p <= 9:
			m["a"+strconv.Itoa(p)] = "1"
		case p == 22:
			delete(m, "a1")
			delete(m, "a2")
		case p >= 23 && p <= 29:
			delete(m, "a"+strconv.Itoa(p-20))
		case p >= 30 && p <= 37 || p >= 90 && p <= 97:
			m["fg"] = strconv.Itoa(p)
		case p == 39:
			delete(m, "fg")
		case p >= 40 && p <= 47 || p >= 100 && p <= 107:
			m["bg"] = strconv.Itoa(p)
		case p == 49:
			delete(m, "bg")
		case p == 38 || p == 48 || p == 58:
			k := map[int]string{38: "fg", 48: "bg", 58: "ul"}[p]
			if i+1 < len(ps) && ps[i+1] == 5 && i+2 < len(ps) {
				m[k] = "5:" + strconv.Itoa(ps[i+2])
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == 2 && i+4 < len(ps) {
				m[k] = fmt.Sprint("2:", ps[i+2], ":", ps[i+3], ":", ps[i+4])
				i += 4
			}
		}
	}
	var keys []string
	for _, k := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "fg", "bg", "ul"} {
		if v, ok := m[k]; ok {
			keys = append(keys, k+"="+v)
		}
	}
	e.pen = strings.Join(keys, "|")
}

func (e *emu) Write(b []byte) (int, error) {
	s := string(b)
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == 0x1b && len(s) > 1 && s[1] == '[':
			i := 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			e.csi(s[2:i], s[i])
			s = s[i+1:]
		case c == 0x1b && len(s) > 1 && s[1] == ']':
			i := strings.IndexAny(s, "\x07\x1b\\")
			if j := strings.Index(s, "\x1b\\"); j >= 0 && (i < 0 || j <= i) {
				s = s[j+2:]
			} else {
				s = s[strings.IndexByte(s, 7)+1:]
			}
		case c == 0x1b && len(s) > 1 && s[1] == '7':
			e.sx, e.sy = e.x, e.y
			s = s[2:]
		case c == 0x1b && len(s) > 1 && s[1] == '8':
			e.x, e.y, e.wrap = e.sx, e.sy, false
			s = s[2:]
		case c == 0x1b && len(s) > 1 && s[1] == 'M':
			if e.y > 0 {
				e.y--
			} else {
				e.cells = append([][]string{make([]string, e.w)}, e.cells[:e.h-1]...)
				for i := range e.w {
					e.cells[0][i] = e.blank()
				}
			}
			e.wrap = false
			s = s[2:]
		case c == 0x1b && len(s) > 1 && s[1] == 'D':
			e.lf()
			s = s[2:]
		case c == 0x1b && len(s) > 1 && s[1] == 'E':
			e.x = 0
			e.lf()
			s = s[2:]
		case c == 0x1b:
			s = s[2:]
		case c == '\r':
			e.x, e.wrap = 0, false
			s = s[1:]
		case c == '\n':
			if e.mapNl {
				e.x = 0
			}
			e.wrap = false
			e.lf()
			s = s[1:]
		case c == '\b':
			if e.x > 0 {
				e.x--
			}
			e.wrap = false
			s = s[1:]
		case c < 0x20:
			s = s[1:]
		default:
			g, wd := ansi.FirstGraphemeCluster(s, ansi.WcWidth)
			if g == "" {
				g, wd = s[:1], 1
			}
			e.put(g, wd)
			s = s[len(g):]
		}
	}
	return len(b), nil
}

func (e *emu) csi(params string, fin byte) {
	priv := params != "" && strings.ContainsAny(params[:1], "?<>=")
	var ps []int
	if !priv && params != "" {
		for _, f := range strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(f)
			ps = append(ps, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(ps) && ps[i] != 0 {
			return ps[i]
		}
		return def
	}
	if priv {
		if (fin == 'h' || fin == 'l') && (strings.Contains(params, "1049") || strings.Contains(params, "47")) {
			if fin == 'h' {
				e.sx, e.sy = e.x, e.y
			}
			e.pen = ""
			e.clear(0, 0, e.w*e.h)
		}
		return
	}
	clamp := func() {
		e.x = max(0, min(e.x, e.w-1))
		e.y = max(0, min(e.y, e.h-1))
		e.wrap = false
	}
	switch fin {
	case 'H', 'f':
		e.y, e.x = arg(0, 1)-1, arg(1, 1)-1
	case 'd':
		e.y = arg(0, 1) - 1
	case 'G', '`':
		e.x = arg(0, 1) - 1
	case 'A':
		e.y -= arg(0, 1)
	case 'B', 'e':
		e.y += arg(0, 1)
	case 'C', 'a':
		e.x += arg(0, 1)
	case 'D':
		e.x -= arg(0, 1)
	case 'E':
		e.y, e.x = e.y+arg(0, 1), 0
	case 'F':
		e.y, e.x = e.y-arg(0, 1), 0
	case 'K':
		switch arg(0, 0) {
		case 0:
			e.clear(e.x, e.y, e.w-e.x)
		case 1:
			e.clear(0, e.y, e.x+1)
		case 2:
			e.clear(0, e.y, e.w)
		}
		return
	case 'J':
		switch arg(0, 0) {
		case 0:
			e.clear(e.x, e.y, e.w*e.h)
		case 1:
			e.clear(0, 0, e.y*e.w+e.x+1)
		default:
			e.clear(0, 0, e.w*e.h)
		}
		return
	case 'X':
		e.clear(e.x, e.y, min(arg(0, 1), e.w-e.x))
		return
	case 'b':
		// REP: the last character again
		if e.x > 0 {
			last := strings.SplitN(e.cells[e.y][e.x-1], "\x00", 2)[0]
			for range arg(0, 1) {
				e.put(last, 1)
			}
		}
		return
	case '@':
		n := arg(0, 1)
		row := e.cells[e.y]
		copy(row[min(e.x+n, e.w):], row[e.x:])
		for i := e.x; i < min(e.x+n, e.w); i++ {
			row[i] = e.blank()
		}
		return
	case 'P':
		n := arg(0, 1)
		row := e.cells[e.y]
		copy(row[e.x:], row[min(e.x+n, e.w):])
		for i := max(e.w-n, e.x); i < e.w; i++ {
			row[i] = e.blank()
		}
		return
	case 'm':
		if !strings.Contains(params, ">") {
			e.sgr(ps)
		}
		return
	case 'h', 'l', 'u', 'q', 'n', 'c', 't', 'r', 's':
		return
	default:
		panic(fmt.Sprintf("emu: CSI %q %c", params, fin))
	}
	clamp()
}

func (e *emu) screen() string {
	var b strings.Builder
	for _, row := range e.cells {
		for _, c := range row {
			b.WriteString(c)
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	return fmt.Sprintf("%s@%d,%d", b.String(), e.x, e.y)
}

func (e *emu) text() string {
	var b strings.Builder
	for _, row := range e.cells {
		for _, c := range row {
			t, _, _ := strings.Cut(c, "\x00")
			if t != "\x01" {
				b.WriteString(t)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
)

// paint is a style reduced to its SGR prefix, built once per theme. The
// console's rows are assembled from plain text and paints instead of
// lipgloss.Style.Render calls, because Render measures and re-wraps its
// input every time and the main view must draw in well under 2 ms.
type paint struct{ on string }

// render wraps plain text in the paint.
func (p paint) render(s string) string {
	if p.on == "" || s == "" {
		return s
	}
	return p.on + s + ansi.ResetStyle
}

func paintOf(sp themes.Spec) paint {
	if sp.IsZero() {
		return paint{}
	}
	var st ansi.Style
	if sp.Bold {
		st = st.Bold()
	}
	if sp.Faint {
		st = st.Faint()
	}
	if sp.Italic {
		st = st.Italic(true)
	}
	if sp.Underline {
		st = st.Underline(true)
	}
	if sp.Reverse {
		st = st.Reverse(true)
	}
	if sp.FG != nil {
		st = st.ForegroundColor(sp.FG)
	}
	if sp.BG != nil {
		st = st.BackgroundColor(sp.BG)
	}
	return paint{st.String()}
}

func lipglossOf(sp themes.Spec) lipgloss.Style {
	st := lipgloss.NewStyle().Bold(sp.Bold).Faint(sp.Faint).Italic(sp.Italic).
		Underline(sp.Underline).Reverse(sp.Reverse)
	if sp.FG != nil {
		st = st.Foreground(sp.FG)
	}
	if sp.BG != nil {
		st = st.Background(sp.BG)
	}
	return st
}

// Glyphs are the characters the console draws with; ASCII mode swaps
// every one of them for a 7-bit stand-in of the same width.
type Glyphs struct {
	Held, HeldAlt, Free, Over string // share bar cells
	// Patterns are the held cells' shapes, one per kernel look (look i
	// draws Patterns[i%len]): one solid block where colour alone tells
	// kernels apart, several where shapes must (patterned themes, ASCII).
	Patterns []string
	// Mark is a kernel's mark in the kernel list where colour alone tells
	// kernels apart (where shapes do, the mark is the kernel's shape).
	Mark string
	// Drift draws the share of a kernel that holds a device its agent
	// does not own, in the kernel's colour.
	Drift     string
	Spark     []string
	Branch    string // MIG instance under its GPU (2 cells)
	Sep, Rule string // vertical and horizontal rules
	Ellipsis  string
	Cursor    string
	Lock      string // the read-only mark
	Up, Down  string // sort direction
	Degree    string
	Dot       string // separates items in a line
	// Corners of a dialog box.
	CornerTL, CornerTR, CornerBL, CornerBR string
	// Owned marks a device's owner in the partition editor; Gained and
	// Lost mark what the draft changes.
	Owned, Gained, Lost string
	// Hit marks a device row holding a kernel that matches the filter.
	Hit string
}

func unicodeGlyphs(patterned bool) Glyphs {
	g := Glyphs{
		Held: "█", HeldAlt: "█", Free: "░", Over: "█",
		Spark:  []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"},
		Branch: "└ ", Sep: "│", Rule: "─", Ellipsis: "…", Cursor: "▶",
		Lock: "🔒 read-only", Up: "▲", Down: "▼", Degree: "°C", Dot: "·",
		CornerTL: "┌", CornerTR: "┐", CornerBL: "└", CornerBR: "┘",
		Owned: "■", Gained: "+", Lost: "×",
		Patterns: []string{"█"}, Drift: "▞", Mark: "▌", Hit: "•",
	}
	if patterned {
		// Shapes as well as colours: kernels differ in shape, overflow is
		// hatched.
		g.HeldAlt, g.Over = "▓", "×"
		g.Patterns = []string{"█", "▓", "▒", "▄"}
	}
	return g
}

func asciiGlyphs() Glyphs {
	return Glyphs{
		Held: "#", HeldAlt: "=", Free: ".", Over: "!",
		Spark:  []string{" ", ".", ":", "-", "=", "+", "*", "#"},
		Branch: "`-", Sep: "|", Rule: "-", Ellipsis: "~", Cursor: ">",
		Lock: "[read-only]", Up: "^", Down: "v", Degree: "C", Dot: "-",
		CornerTL: "+", CornerTR: "+", CornerBL: "+", CornerBR: "+",
		Owned: "#", Gained: "+", Lost: "x",
		Patterns: []string{"#", "=", "%", "@"}, Drift: "/", Mark: "#", Hit: "*",
	}
}

// Styles is everything the console draws with, built once per program from
// a theme: never shared between programs, never a package-level global
// (over SSH each session has its own theme, colour profile and size).
type Styles struct {
	Theme *themes.Theme
	ASCII bool

	Text, Dim, Title, TitleFocused, Accent, Border, Selected, Badge paint
	OK, Info, Warn, Crit, NA, Free, Over                            paint
	HelpKey, HelpDesc                                               paint
	Segments                                                        []paint

	Help help.Styles
	// Input styles the editor's text fields and typed confirmations.
	Input textinput.Styles
	G     Glyphs
}

// NewStyles builds the styles of one program.
func NewStyles(t *themes.Theme, ascii bool) (*Styles, error) {
	sp, err := t.Parse()
	if err != nil {
		return nil, err
	}
	s := &Styles{
		Theme: t, ASCII: ascii,
		Text: paintOf(sp.Text), Dim: paintOf(sp.Dim), Title: paintOf(sp.Title),
		TitleFocused: paintOf(sp.TitleFocused), Accent: paintOf(sp.Accent), Border: paintOf(sp.Border),
		Selected: paintOf(sp.Selected), Badge: paintOf(sp.Badge),
		OK: paintOf(sp.OK), Info: paintOf(sp.Info), Warn: paintOf(sp.Warn), Crit: paintOf(sp.Crit),
		NA: paintOf(sp.NA), Free: paintOf(sp.Free), Over: paintOf(sp.Over),
		HelpKey: paintOf(sp.HelpKey), HelpDesc: paintOf(sp.HelpDesc),
	}
	for _, seg := range sp.Segments {
		s.Segments = append(s.Segments, paintOf(seg))
	}
	if ascii {
		s.G = asciiGlyphs()
	} else {
		s.G = unicodeGlyphs(t.Patterned)
	}
	hs := help.DefaultStyles(t.Dark)
	key, desc, sep := lipglossOf(sp.HelpKey), lipglossOf(sp.HelpDesc), lipglossOf(sp.Border)
	hs.ShortKey, hs.FullKey = key, key
	hs.ShortDesc, hs.FullDesc = desc, desc
	hs.ShortSeparator, hs.FullSeparator, hs.Ellipsis = sep, sep, sep
	s.Help = hs
	in := textinput.DefaultStyles(t.Dark)
	for _, ss := range []*textinput.StyleState{&in.Focused, &in.Blurred} {
		ss.Text, ss.Prompt = lipglossOf(sp.Text), lipglossOf(sp.Accent)
		ss.Placeholder, ss.Suggestion = lipglossOf(sp.Dim), lipglossOf(sp.Dim)
	}
	// A steady cursor: a blinking one would redraw the frame twice a second
	// for nothing, and make frames depend on timing.
	in.Cursor.Blink = false
	in.Cursor.Color = sp.Accent.FG
	s.Input = in
	return s, nil
}

// maxLooks bounds the kernel looks a palette offers, so a look fits a
// bit set.
const maxLooks = 16

// lookDims is how many colours and shapes kernel looks cycle through.
func (s *Styles) lookDims() lookDims {
	return lookDims{colours: max(len(s.Segments), 1), shapes: max(len(s.G.Patterns), 1)}
}

// lookDims are the two cycles a kernel look is made of: look i has colour
// i%colours and shape i%shapes.
type lookDims struct{ colours, shapes int }

// n is how many distinct looks the cycles combine into (at most maxLooks).
func (d lookDims) n() int {
	c, p := max(d.colours, 1), max(d.shapes, 1)
	n := c
	for n%p != 0 && n < maxLooks {
		n += c
	}
	return min(n, maxLooks)
}

// look is the paint and shape of kernel look i: its segment of a bar and
// its mark in the kernel list.
func (s *Styles) look(i int) (paint, string) {
	i = max(i, 0)
	var p paint
	if len(s.Segments) > 0 {
		p = s.Segments[i%len(s.Segments)]
	}
	g := s.G.Held
	if len(s.G.Patterns) > 0 {
		g = s.G.Patterns[i%len(s.G.Patterns)]
	}
	return p, g
}

// level is how a value compares with its thresholds.
type level uint8

const (
	lvlPlain level = iota
	lvlOK
	lvlWarn
	lvlCrit
	lvlNA
	lvlDim
	lvlAccent
	lvlTitle
	lvlBadge
	lvlInfo
	lvlFocus
	lvlBorder
)

func (s *Styles) level(l level) paint {
	switch l {
	case lvlOK:
		return s.OK
	case lvlWarn:
		return s.Warn
	case lvlCrit:
		return s.Crit
	case lvlNA:
		return s.NA
	case lvlDim:
		return s.Dim
	case lvlAccent:
		return s.Accent
	case lvlTitle:
		return s.Title
	case lvlBadge:
		return s.Badge
	case lvlInfo:
		return s.Info
	case lvlFocus:
		return s.TitleFocused
	case lvlBorder:
		return s.Border
	}
	return s.Text
}

package kit

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
)

// Paint is a style reduced to its SGR prefix, built once per theme. The
// console's rows are assembled from plain text and paints instead of
// lipgloss.Style.Render calls, because Render measures and re-wraps its
// input every time and the main view must draw in well under 2 ms.
type Paint struct{ On string }

// Render wraps plain text in the paint.
func (p Paint) Render(s string) string {
	if p.On == "" || s == "" {
		return s
	}
	return p.On + s + ansi.ResetStyle
}

func paintOf(sp themes.Spec) Paint {
	if sp.IsZero() {
		return Paint{}
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
	return Paint{st.String()}
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
	// does not own, in the kernel's colour; DriftAlt the next one's when
	// two such shares meet, so that they stay two without colour.
	Drift     string
	DriftAlt  string
	Spark     []string
	Branch    string // MIG instance under its GPU (2 cells)
	Sep, Rule string // vertical and horizontal rules
	// Ellipsis marks text cut to fit a cell (one cell); More marks what
	// is left out as words read it: keys a footer dropped, the "…" of a
	// key that opens a dialog ("A apply…"). In 7-bit text a lone "~" for
	// those read as an item of its own (the tour's "| ~ |").
	Ellipsis string
	More     string
	Cursor   string
	Lock     string // the read-only mark
	Up, Down string // sort direction
	Degree   string
	Dot      string // separates items in a line
	// Corners of a dialog box.
	CornerTL, CornerTR, CornerBL, CornerBR string
	// Owned marks a device's owner in the partition editor; Gained and
	// Lost mark what the draft changes.
	Owned, Gained, Lost string
	// Hit marks a device row holding a kernel that matches the filter.
	Hit string
	// To joins a value to what it becomes ("2.0 → 1.5"): a one-cell ">"
	// in 7-bit text reads as a comparison, false for an increase.
	To string
}

// UnicodeGlyphs are the glyphs of a Unicode terminal; patterned gives the
// bar's segments patterns as well as colours.
func UnicodeGlyphs(patterned bool) Glyphs {
	g := Glyphs{
		Held: "█", HeldAlt: "█", Free: "░", Over: "█",
		Spark:  []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"},
		Branch: "└ ", Sep: "│", Rule: "─", Ellipsis: "…", More: "…", Cursor: "▶",
		Lock: "🔒 read-only", Up: "▲", Down: "▼", Degree: "°C", Dot: "·",
		CornerTL: "┌", CornerTR: "┐", CornerBL: "└", CornerBR: "┘",
		Owned: "■", Gained: "+", Lost: "×",
		Patterns: []string{"█"}, Drift: "▞", DriftAlt: "▚", Mark: "▌", Hit: "•", To: "→",
	}
	if patterned {
		// Shapes as well as colours: kernels differ in shape, overflow is
		// hatched.
		g.HeldAlt, g.Over = "▓", "×"
		g.Patterns = []string{"█", "▓", "▒", "▄"}
	}
	return g
}

// ASCIIGlyphs are the 7-bit stand-ins --ascii draws with.
func ASCIIGlyphs() Glyphs {
	return Glyphs{
		Held: "#", HeldAlt: "=", Free: ".", Over: "!",
		Spark:  []string{" ", ".", ":", "-", "=", "+", "*", "#"},
		Branch: "`-", Sep: "|", Rule: "-", Ellipsis: "~", More: "...", Cursor: ">",
		Lock: "[read-only]", Up: "^", Down: "v", Degree: "C", Dot: "-",
		CornerTL: "+", CornerTR: "+", CornerBL: "+", CornerBR: "+",
		Owned: "#", Gained: "+", Lost: "x",
		Patterns: []string{"#", "=", "%", "@"}, Drift: "/", DriftAlt: "\\", Mark: "#", Hit: "*", To: "->",
	}
}

// Styles is everything the console draws with, built once per program from
// a theme: never shared between programs, never a package-level global
// (over SSH each session has its own theme, colour profile and size).
type Styles struct {
	Theme *themes.Theme
	ASCII bool

	Text, Dim, Title, TitleFocused, Accent, Border, Selected, Badge Paint
	OK, Info, Warn, Crit, NA, Free, Over                            Paint
	HelpKey, HelpDesc                                               Paint
	Segments                                                        []Paint

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
		s.G = ASCIIGlyphs()
	} else {
		s.G = UnicodeGlyphs(t.Patterned)
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

// MaxLooks bounds the kernel looks a palette offers, so a look fits a
// bit set.
const MaxLooks = 16

// LookDims is how many colours and shapes kernel looks cycle through.
func (s *Styles) LookDims() LookDims {
	return LookDims{Colours: max(len(s.Segments), 1), Shapes: max(len(s.G.Patterns), 1)}
}

// LookDims are the two cycles a kernel look is made of: look i has colour
// i%colours and shape i%shapes.
type LookDims struct{ Colours, Shapes int }

// N is how many distinct looks the cycles combine into (at most maxLooks).
func (d LookDims) N() int {
	c, p := max(d.Colours, 1), max(d.Shapes, 1)
	n := c
	for n%p != 0 && n < MaxLooks {
		n += c
	}
	return min(n, MaxLooks)
}

// Look is the paint and shape of kernel look i: its segment of a bar and
// its mark in the kernel list.
func (s *Styles) Look(i int) (Paint, string) {
	i = max(i, 0)
	var p Paint
	if len(s.Segments) > 0 {
		p = s.Segments[i%len(s.Segments)]
	}
	g := s.G.Held
	if len(s.G.Patterns) > 0 {
		g = s.G.Patterns[i%len(s.G.Patterns)]
	}
	return p, g
}

// Level is how a value compares with its thresholds.
type Level uint8

// The levels values and text are drawn at.
const (
	LvlPlain Level = iota
	LvlOK
	LvlWarn
	LvlCrit
	LvlNA
	LvlDim
	LvlAccent
	LvlTitle
	LvlBadge
	LvlInfo
	LvlFocus
	LvlBorder
)

// Level is the paint of level l.
func (s *Styles) Level(l Level) Paint {
	switch l {
	case LvlOK:
		return s.OK
	case LvlWarn:
		return s.Warn
	case LvlCrit:
		return s.Crit
	case LvlNA:
		return s.NA
	case LvlDim:
		return s.Dim
	case LvlAccent:
		return s.Accent
	case LvlTitle:
		return s.Title
	case LvlBadge:
		return s.Badge
	case LvlInfo:
		return s.Info
	case LvlFocus:
		return s.TitleFocused
	case LvlBorder:
		return s.Border
	}
	return s.Text
}

package themes

import (
	"fmt"
	"slices"
)

// Theme is a flat set of style specs (see ParseSpec), one per semantic role.
// Field names follow the TOML keys.
type Theme struct {
	// Name is the theme's name ("dark"); a file without one is named after
	// the file.
	Name string `toml:"name"`
	// Dark says the theme is meant for a dark background; it picks the
	// default styles of embedded components such as the help view.
	Dark bool `toml:"dark"`
	// Patterned asks for shapes as well as colours wherever colour alone
	// would carry meaning: alternating glyphs for adjacent bar segments and
	// a distinct glyph for the part beyond capacity. Mono, high-contrast
	// and colour-blind themes set it.
	Patterned bool `toml:"patterned"`

	Text         string `toml:"text"`          // ordinary text
	Dim          string `toml:"dim"`           // secondary text, column headers
	Title        string `toml:"title"`         // pane titles
	TitleFocused string `toml:"title_focused"` // the focused pane's title
	Accent       string `toml:"accent"`        // the node name, key hints
	Border       string `toml:"border"`        // rules and separators
	Selected     string `toml:"selected"`      // the cursor row
	Badge        string `toml:"badge"`         // the read-only lock mark
	OK           string `toml:"ok"`            // healthy values
	Info         string `toml:"info"`          // info-level messages
	Warn         string `toml:"warn"`          // warning values and messages
	Crit         string `toml:"crit"`          // errors, critical values
	NA           string `toml:"na"`            // "N/A": a value that could not be read
	Free         string `toml:"free"`          // the free part of a share bar
	Over         string `toml:"over"`          // the part of a share bar beyond capacity
	HelpKey      string `toml:"help_key"`      // keys in the help view
	HelpDesc     string `toml:"help_desc"`     // descriptions in the help view
	// Segments colour the kernels (or agents) of a stacked share bar in
	// turn; at least one.
	Segments []string `toml:"segments"`
}

// Specs is a theme with every spec parsed.
type Specs struct {
	Text, Dim, Title, TitleFocused, Accent, Border, Selected, Badge Spec
	OK, Info, Warn, Crit, NA, Free, Over, HelpKey, HelpDesc         Spec
	Segments                                                        []Spec
}

// Parse parses every spec of the theme, naming the key of the first bad
// one.
func (t *Theme) Parse() (Specs, error) {
	var s Specs
	fields := []struct {
		key string
		src string
		dst *Spec
	}{
		{"text", t.Text, &s.Text}, {"dim", t.Dim, &s.Dim}, {"title", t.Title, &s.Title},
		{"title_focused", t.TitleFocused, &s.TitleFocused}, {"accent", t.Accent, &s.Accent},
		{"border", t.Border, &s.Border}, {"selected", t.Selected, &s.Selected},
		{"badge", t.Badge, &s.Badge}, {"ok", t.OK, &s.OK}, {"info", t.Info, &s.Info},
		{"warn", t.Warn, &s.Warn}, {"crit", t.Crit, &s.Crit}, {"na", t.NA, &s.NA},
		{"free", t.Free, &s.Free}, {"over", t.Over, &s.Over},
		{"help_key", t.HelpKey, &s.HelpKey}, {"help_desc", t.HelpDesc, &s.HelpDesc},
	}
	for _, f := range fields {
		sp, err := ParseSpec(f.src)
		if err != nil {
			return Specs{}, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = sp
	}
	if len(t.Segments) == 0 {
		return Specs{}, fmt.Errorf("segments: need at least one entry")
	}
	for i, src := range t.Segments {
		sp, err := ParseSpec(src)
		if err != nil {
			return Specs{}, fmt.Errorf("segments[%d]: %w", i, err)
		}
		s.Segments = append(s.Segments, sp)
	}
	return s, nil
}

// Validate reports the first spec that does not parse.
func (t *Theme) Validate() error {
	_, err := t.Parse()
	return err
}

// Clone returns a deep copy, so a caller may change a loaded theme without
// touching the embedded original.
func (t *Theme) Clone() *Theme {
	c := *t
	c.Segments = slices.Clone(t.Segments)
	return &c
}

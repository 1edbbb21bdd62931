package themes

import (
	"errors"
	"image/color"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Spec is one parsed style: colours and text attributes. A nil colour
// means the terminal's default, which keeps the user's own palette.
type Spec struct {
	FG, BG    color.Color
	Bold      bool
	Faint     bool
	Italic    bool
	Underline bool
	Reverse   bool
}

// IsZero reports whether the spec changes nothing.
func (s Spec) IsZero() bool { return s == Spec{} }

// ParseSpec parses a style spec: space-separated tokens, each one of
//
//   - a foreground colour: "#rgb", "#rrggbb" or an ANSI index "0".."255"
//     (0-15 are the terminal's own 16 colours, so user palettes apply);
//   - "on:COLOUR" for a background colour;
//   - an attribute: bold, faint, italic, underline, reverse.
//
// The empty string is the plain terminal style. Colours are the only thing
// a colour profile may strip (NO_COLOR, dumb terminals); attributes stay, so
// themes meant for monochrome use them to keep meaning visible.
func ParseSpec(s string) (Spec, error) {
	var sp Spec
	for _, tok := range strings.Fields(s) {
		switch strings.ToLower(tok) {
		case "bold":
			sp.Bold = true
		case "faint", "dim":
			sp.Faint = true
		case "italic":
			sp.Italic = true
		case "underline":
			sp.Underline = true
		case "reverse":
			sp.Reverse = true
		default:
			if bg, ok := strings.CutPrefix(tok, "on:"); ok {
				c, err := parseColor(bg)
				if err != nil {
					return Spec{}, err
				}
				sp.BG = c
				continue
			}
			c, err := parseColor(tok)
			if err != nil {
				return Spec{}, err
			}
			sp.FG = c
		}
	}
	return sp, nil
}

// parseColor reads "#rgb", "#rrggbb" or an ANSI index. Its errors do not
// quote the value: it comes from a file, and an error must never show a
// file's content (a theme path pointed at a secret would print it).
func parseColor(s string) (color.Color, error) {
	if hex, ok := strings.CutPrefix(s, "#"); ok {
		if len(hex) == 3 {
			hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
		}
		if len(hex) != 6 {
			return nil, errors.New("a colour is #rgb or #rrggbb")
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return nil, errors.New("a #colour is hexadecimal")
		}
		return ansi.TrueColor(uint32(v)), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 {
		return nil, errors.New("not a colour (#rrggbb, 0-255) or an attribute (bold, faint, italic, underline, reverse)")
	}
	if n < 16 {
		return ansi.BasicColor(n), nil
	}
	return ansi.IndexedColor(n), nil
}

package kit

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/fgtop/fgtop/themes"
)

func testStyles(t testing.TB, theme string, ascii bool) *Styles {
	t.Helper()
	st, err := NewStyles(themes.MustBuiltin(theme), ascii)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func stripANSI(s string) string { return ansi.Strip(s) }

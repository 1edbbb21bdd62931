package console

import tea "charm.land/bubbletea/v2"

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func keyRune(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

func keyCode(c rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: c} }

// typeKeys sends each rune of s as a key press.
func typeKeys(a *App, s string) {
	for _, r := range s {
		a.Update(keyRune(r))
	}
}

package console

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// push puts l on the stack, over every layer of its rank or lower and
// under those of a higher one.
func (a *App) push(l kit.Layer) {
	i := len(a.layers)
	for i > 0 && a.layers[i-1].Rank() > l.Rank() {
		i--
	}
	a.layers = slices.Insert(a.layers, i, l)
	a.Invalidate()
}

// prune takes the layers that closed themselves off the stack.
func (a *App) prune() {
	a.layers = slices.DeleteFunc(a.layers, kit.Layer.Closed)
}

// top is the layer that has the keys, or nil when the main screen has
// them.
func (a *App) top() kit.Layer {
	for i := len(a.layers) - 1; i >= 0; i-- {
		if !a.layers[i].Closed() {
			return a.layers[i]
		}
	}
	return nil
}

// ModalOpen reports whether a layer has the keys.
func (a *App) ModalOpen() bool { return a.top() != nil }

// find returns the topmost open layer of type T.
func find[T kit.Layer](a *App) T {
	for i := len(a.layers) - 1; i >= 0; i-- {
		if l, ok := a.layers[i].(T); ok && !l.Closed() {
			return l
		}
	}
	var zero T
	return zero
}

// ed is the open partition editor, or nil.
func (a *App) ed() *editor.Editor { return find[*editor.Editor](a) }

// dlg is the open dialog, or nil.
func (a *App) dlg() *kit.Dialog { return find[*kit.Dialog](a) }

// route gives a key or the wheel to the layer on top, sized as it is
// drawn; false when none is open (the main screen's turn). The wheel
// passes the prompt by: it scrolls what is on screen.
func (a *App) route(msg tea.Msg) (tea.Cmd, bool) {
	for i := len(a.layers) - 1; i >= 0; i-- {
		l := a.layers[i]
		if l.Closed() {
			continue
		}
		if _, wheel := msg.(tea.MouseWheelMsg); wheel && l.Rank() == kit.RankPrompt {
			continue
		}
		a.Invalidate()
		a.sizeLayer(l)
		return l.Update(msg), true
	}
	return nil, false
}

// broadcast gives every open layer the root's news.
func (a *App) broadcast(msg tea.Msg) {
	for _, l := range a.layers {
		if !l.Closed() {
			l.Update(msg)
		}
	}
}

// sizeLayer gives a layer its room: a screen the rows between the header
// and the footer, a dialog the whole screen, the prompt the footer row.
func (a *App) sizeLayer(l kit.Layer) {
	w, h := a.Size()
	switch l.Rank() {
	case kit.RankScreen:
		l.SetSize(w, max(h-a.headerHeight()-1, 0))
	case kit.RankDialog:
		l.SetSize(w, h)
	default:
		l.SetSize(w, 1)
	}
}

// busMsg handles what components sent on the bus; ok is false for any
// other message.
func (a *App) busMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case kit.OpenMsg:
		a.push(msg.L)
	case kit.HelpMsg:
		a.openHelp()
	case kit.QuitMsg:
		return a.Quit(), true
	default:
		return nil, false
	}
	return nil, true
}

// Quit is ctrl+c (and q on the main screen): it quits, except that the
// editor does not drop a draft that changes something on one key (it
// asks first).
func (a *App) Quit() tea.Cmd {
	if ed := a.ed(); ed != nil {
		return ed.Quit()
	}
	return tea.Quit
}

// Rows draws the current screen as exactly h rows meant to be w cells:
// the topmost screen layer (else the main screen) with the header and
// the footer, then the dialogs over it.
func (a *App) Rows(w, h int) []string {
	var rows []string
	base := -1
	for i := len(a.layers) - 1; i >= 0; i-- {
		if l := a.layers[i]; !l.Closed() && l.Rank() == kit.RankScreen {
			base = i
			break
		}
	}
	if base < 0 {
		rows = a.viewMain(w, h)
	} else {
		rows = append(rows, a.viewHeader(w)...) // a copy: the memo keeps the header
		l := a.layers[base]
		l.SetSize(w, max(h-len(rows)-1, 0))
		rows = append(rows, l.View()...)
		for len(rows) < h-1 {
			rows = append(rows, "")
		}
		rows = append(rows[:max(h-1, 0)], a.viewFooter(w))
	}
	for len(rows) < h {
		rows = append(rows, "")
	}
	rows = rows[:h]
	for _, l := range a.layers[base+1:] {
		if !l.Closed() && l.Rank() == kit.RankDialog {
			l.SetSize(w, h)
			rows = kit.OverlayBox(rows, l.View(), w, h)
		}
	}
	return rows
}

// footerHelp is the footer's key help when neither the prompt nor a flash
// takes it: the topmost screen's own, or "" for the main screen's.
func (a *App) footerHelp(w int) string {
	if d := a.topDialog(); d != nil {
		// Under a dialog only its keys act: the screen's (p plan, A
		// apply) were offered and did nothing (the tour).
		return kit.SpansRow(a.St, []kit.Span{{Lvl: kit.LvlDim, Text: d.Hints()}}, w)
	}
	if f := a.footedScreen(); f != nil {
		return f.Footer(w)
	}
	return ""
}

// topDialog is the open dialog on top of the layers, or nil.
func (a *App) topDialog() *kit.Dialog {
	for i := len(a.layers) - 1; i >= 0; i-- {
		l := a.layers[i]
		if l.Closed() {
			continue
		}
		d, _ := l.(*kit.Dialog)
		return d
	}
	return nil
}

// footedScreen is the screen whose footer shows: the topmost screen if it
// has a footer of its own, nil for the main screen's.
func (a *App) footedScreen() kit.Footed {
	for i := len(a.layers) - 1; i >= 0; i-- {
		l := a.layers[i]
		if l.Closed() || l.Rank() != kit.RankScreen {
			continue
		}
		if f, ok := l.(kit.Footed); ok {
			return f
		}
	}
	return nil
}

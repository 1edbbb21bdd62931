package ui

import (
	"slices"

	tea "charm.land/bubbletea/v2"
)

// layer is a component the root stacks over the main screen: a screen
// that hides what is under it (the partition editor, the help, a detail),
// a dialog drawn over what is under it, or the prompt in the footer. Each
// embeds the console's *common, keeps its own state and keys, and asks the
// root for what only the root can do through the bus (common.send): open
// another layer, quit. It closes itself (closer); the root then takes it
// off the stack.
//
// The top layer has the keys and the mouse wheel: the stack, not a chain
// of ifs, says who. A new overlay is a type in its own file and one call
// to push where it opens.
type layer interface {
	// Update handles a key or the wheel while the layer is on top, and the
	// news the root passes to every layer (adoptedMsg, the clock's
	// tickMsg) or to the one it concerns (the desk's messages to the
	// editor).
	Update(msg tea.Msg) tea.Cmd
	// View draws the layer in the size SetSize gave: a screen exactly h
	// rows, none wider than w (a row may be shorter; "" is a blank row),
	// the area between the header and the footer; a dialog its box, which
	// the root centres (on a tiny screen the box keeps its buttons and may
	// outgrow it: the root clips it); the prompt its footer row.
	View() []string
	// SetSize is the room the layer has, given before every View and
	// every key.
	SetSize(w, h int)
	// rank is where the layer stacks (layerRank).
	rank() layerRank
	// closed reports that the layer closed itself.
	closed() bool
}

// layerRank orders the stack: the prompt over a dialog over the screens;
// among screens the newest is on top (the help opened from the editor
// covers it, and esc there goes back to it).
type layerRank uint8

const (
	rankScreen layerRank = iota
	rankDialog
	rankPrompt
)

// footed is a screen with a footer of its own (the editor's keys); the
// others show the footer of what is under them.
type footed interface {
	footer(w int) string
}

// closer is the closing every layer shares.
type closer struct{ done bool }

func (c *closer) close()       { c.done = true }
func (c *closer) closed() bool { return c.done }

// area is the size a layer was given.
type area struct{ w, h int }

// SetSize records the room the layer has.
func (r *area) SetSize(w, h int) { r.w, r.h = w, h }

// Messages components send the root on the bus; it handles them before
// its Update returns.
type (
	// openMsg puts a layer on the stack (a dialog, the help).
	openMsg struct{ l layer }
	// helpMsg opens the help for what is on screen.
	helpMsg struct{}
	// quitMsg is ctrl+c in a layer: quit as the root does, which asks
	// first when the editor holds a draft.
	quitMsg struct{}
	// adoptedMsg tells every layer a new snapshot was adopted.
	adoptedMsg struct{}
)

// bus is how components reach the root without holding it: messages it
// handles before Update returns (send), and commands Update returns (do
// runs the desk's work off the UI loop).
type bus struct {
	outbox []tea.Msg
	later  []tea.Cmd
	// syncCmds runs do's work at once, its message handled before Update
	// returns: for unit tests that drive Update without a program.
	syncCmds bool
}

// send hands the root a message it handles before its Update returns.
func (b *bus) send(m tea.Msg) { b.outbox = append(b.outbox, m) }

// open puts a layer on the root's stack.
func (b *bus) open(l layer) { b.send(openMsg{l}) }

// do runs f off the UI loop: Update returns it with its own command, and
// f's message comes back to Update.
func (b *bus) do(f func() tea.Msg) {
	if b.syncCmds {
		b.send(f())
		return
	}
	b.later = append(b.later, f)
}

// push puts l on the stack, over every layer of its rank or lower and
// under those of a higher one.
func (a *App) push(l layer) {
	i := len(a.layers)
	for i > 0 && a.layers[i-1].rank() > l.rank() {
		i--
	}
	a.layers = slices.Insert(a.layers, i, l)
	a.invalidate()
}

// prune takes the layers that closed themselves off the stack.
func (a *App) prune() {
	a.layers = slices.DeleteFunc(a.layers, layer.closed)
}

// top is the layer that has the keys, or nil when the main screen has
// them.
func (a *App) top() layer {
	for i := len(a.layers) - 1; i >= 0; i-- {
		if !a.layers[i].closed() {
			return a.layers[i]
		}
	}
	return nil
}

// modalOpen reports whether a layer has the keys.
func (a *App) modalOpen() bool { return a.top() != nil }

// find returns the topmost open layer of type T.
func find[T layer](a *App) T {
	for i := len(a.layers) - 1; i >= 0; i-- {
		if l, ok := a.layers[i].(T); ok && !l.closed() {
			return l
		}
	}
	var zero T
	return zero
}

// ed is the open partition editor, or nil.
func (a *App) ed() *editor { return find[*editor](a) }

// dlg is the open dialog, or nil.
func (a *App) dlg() *dialog { return find[*dialog](a) }

// route gives a key or the wheel to the layer on top, sized as it is
// drawn; false when none is open (the main screen's turn). The wheel
// passes the prompt by: it scrolls what is on screen.
func (a *App) route(msg tea.Msg) (tea.Cmd, bool) {
	for i := len(a.layers) - 1; i >= 0; i-- {
		l := a.layers[i]
		if l.closed() {
			continue
		}
		if _, wheel := msg.(tea.MouseWheelMsg); wheel && l.rank() == rankPrompt {
			continue
		}
		a.invalidate()
		a.sizeLayer(l)
		return l.Update(msg), true
	}
	return nil, false
}

// broadcast gives every open layer the root's news.
func (a *App) broadcast(msg tea.Msg) {
	for _, l := range a.layers {
		if !l.closed() {
			l.Update(msg)
		}
	}
}

// sizeLayer gives a layer its room: a screen the rows between the header
// and the footer, a dialog the whole screen, the prompt the footer row.
func (a *App) sizeLayer(l layer) {
	w, h := a.size()
	switch l.rank() {
	case rankScreen:
		l.SetSize(w, max(h-a.headerHeight()-1, 0))
	case rankDialog:
		l.SetSize(w, h)
	default:
		l.SetSize(w, 1)
	}
}

// busMsg handles what components sent on the bus; ok is false for any
// other message.
func (a *App) busMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case openMsg:
		a.push(msg.l)
	case helpMsg:
		a.openHelp()
	case quitMsg:
		return a.quit(), true
	default:
		return nil, false
	}
	return nil, true
}

// quit is ctrl+c (and q on the main screen): it quits, except that the
// editor does not drop a draft that changes something on one key (it
// asks first).
func (a *App) quit() tea.Cmd {
	if ed := a.ed(); ed != nil {
		return ed.quit()
	}
	return tea.Quit
}

// rows draws the current screen as exactly h rows meant to be w cells:
// the topmost screen layer (else the main screen) with the header and
// the footer, then the dialogs over it.
func (a *App) rows(w, h int) []string {
	var rows []string
	base := -1
	for i := len(a.layers) - 1; i >= 0; i-- {
		if l := a.layers[i]; !l.closed() && l.rank() == rankScreen {
			base = i
			break
		}
	}
	if base < 0 {
		rows = a.viewMain(w, h)
	} else {
		rows = a.viewHeader(w)
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
		if !l.closed() && l.rank() == rankDialog {
			l.SetSize(w, h)
			rows = overlayBox(rows, l.View(), w, h)
		}
	}
	return rows
}

// footerHelp is the footer's key help when neither the prompt nor a flash
// takes it: the topmost screen's own, or "" for the main screen's.
func (a *App) footerHelp(w int) string {
	for i := len(a.layers) - 1; i >= 0; i-- {
		l := a.layers[i]
		if l.closed() || l.rank() != rankScreen {
			continue
		}
		if f, ok := l.(footed); ok {
			return f.footer(w)
		}
	}
	return ""
}

package kit

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Layer is a component the root stacks over the main screen: a screen
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
type Layer interface {
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
	Rank() LayerRank
	// closed reports that the layer closed itself.
	Closed() bool
}

// LayerRank orders the stack: the prompt over a dialog over the screens;
// among screens the newest is on top (the help opened from the editor
// covers it, and esc there goes back to it).
type LayerRank uint8

// The ranks, lowest first.
const (
	RankScreen LayerRank = iota
	RankDialog
	RankPrompt
)

// Footed is a screen with a footer of its own (the editor's keys); the
// others show the footer of what is under them.
type Footed interface {
	Footer(w int) string
	// FooterKeep is what its footer keeps beside a flash message (help
	// and quit), least needed first; nil for the flash alone.
	FooterKeep() []key.Binding
}

// Closer is the closing every layer shares.
type Closer struct{ done bool }

// Close marks the layer closed; the root takes it off the stack.
func (c *Closer) Close() { c.done = true }

// Closed reports whether the layer closed itself.
func (c *Closer) Closed() bool { return c.done }

// Area is the size a layer was given.
type Area struct{ W, H int }

// SetSize records the room the layer has.
func (r *Area) SetSize(w, h int) { r.W, r.H = w, h }

// Messages components send the root on the bus; it handles them before
// its Update returns.
type (
	// OpenMsg puts a layer on the stack (a dialog, the help).
	OpenMsg struct{ L Layer }
	// HelpMsg opens the help for what is on screen.
	HelpMsg struct{}
	// QuitMsg is ctrl+c in a layer: quit as the root does, which asks
	// first when the editor holds a draft.
	QuitMsg struct{}
	// AdoptedMsg tells every layer a new snapshot was adopted.
	AdoptedMsg struct{}
	// TickMsg is the clock's once-a-second tick, passed to every layer.
	TickMsg struct{}
)

// bus is how components reach the root without holding it: messages it
// handles before Update returns (send), and commands Update returns (do
// runs the desk's work off the UI loop).
type bus struct {
	Outbox []tea.Msg
	Later  []tea.Cmd
	// syncCmds runs do's work at once, its message handled before Update
	// returns: for unit tests that drive Update without a program.
	SyncCmds bool
}

// Send hands the root a message it handles before its Update returns.
func (b *bus) Send(m tea.Msg) { b.Outbox = append(b.Outbox, m) }

// Open puts a layer on the root's stack.
func (b *bus) Open(l Layer) { b.Send(OpenMsg{l}) }

// Do runs f off the UI loop: Update returns it with its own command, and
// f's message comes back to Update.
func (b *bus) Do(f func() tea.Msg) {
	if b.SyncCmds {
		b.Send(f())
		return
	}
	b.Later = append(b.Later, f)
}

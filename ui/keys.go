package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Role is what the person at the keyboard may do. The key map is built for
// a role: actions a viewer may not take are absent from it, so they neither
// handle keys nor appear in the help (k9s's and nvitop's read-only modes
// remove bindings rather than greying them out). The engine refuses a
// viewer's apply regardless; this is the first of two layers.
type Role uint8

// Roles.
const (
	RoleViewer   Role = iota // read-only: watch mode, SSH keys without a role
	RoleOperator             // may edit and apply partitions
)

func (r Role) String() string {
	if r == RoleOperator {
		return "operator"
	}
	return "viewer"
}

// action is what a key does.
type action uint8

const (
	actNone action = iota
	actQuit
	actHelp
	actFilter
	actCommand
	actBack
	actNextPane
	actPrevPane
	actUp
	actDown
	actTop
	actBottom
	actPageUp
	actPageDown
	actDetail
	actSegments
	actFollow
	actSort
	actSortReverse
	// Operator-only actions below: they change the node.
	actEditPartition
)

// Help groups, in the order the full help shows them.
const (
	grpMove    = "move"
	grpView    = "view"
	grpGeneral = "general"
	grpOperate = "operate"
)

// binding ties a key.Binding to the action it triggers. Mutating bindings
// change the node (partition edit/apply) and exist only for operators.
type binding struct {
	act      action
	key      key.Binding
	group    string
	mutating bool
	short    bool // shown in the one-line footer help
}

// KeyMap is the console's key bindings for one role. The same value
// dispatches key presses and generates the help, so the help cannot list a
// key that does nothing or miss one that does something.
type KeyMap struct {
	role     Role
	bindings []binding
}

// NewKeyMap builds the key map for a role.
func NewKeyMap(role Role) KeyMap {
	b := func(act action, group string, short bool, keys []string, helpKey, desc string) binding {
		return binding{act: act, group: group, short: short,
			key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	all := []binding{
		b(actUp, grpMove, false, []string{"k", "up"}, "k/up", "up"),
		b(actDown, grpMove, false, []string{"j", "down"}, "j/down", "down"),
		b(actTop, grpMove, false, []string{"g", "home"}, "g", "top"),
		b(actBottom, grpMove, false, []string{"G", "end"}, "G", "bottom"),
		b(actPageUp, grpMove, false, []string{"pgup", "ctrl+u"}, "pgup", "page up"),
		b(actPageDown, grpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		b(actNextPane, grpMove, true, []string{"tab"}, "tab", "next pane"),
		b(actPrevPane, grpMove, false, []string{"shift+tab"}, "shift+tab", "previous pane"),
		b(actDetail, grpView, true, []string{"enter"}, "enter", "detail"),
		b(actFilter, grpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(actSort, grpView, true, []string{"s"}, "s", "sort column"),
		b(actSortReverse, grpView, false, []string{"S"}, "S", "reverse sort"),
		b(actFollow, grpView, false, []string{"f"}, "f", "kernels: follow device / all"),
		b(actSegments, grpView, false, []string{"a"}, "a", "bars: per kernel / per agent"),
		b(actCommand, grpGeneral, true, []string{":"}, ":", "command (:sort :theme :q)"),
		b(actBack, grpGeneral, false, []string{"esc"}, "esc", "back / clear"),
		b(actHelp, grpGeneral, true, []string{"?"}, "?", "help"),
		b(actQuit, grpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	}
	operator := []binding{
		b(actEditPartition, grpOperate, true, []string{"e"}, "e", "edit partition"),
	}
	for i := range operator {
		operator[i].mutating = true
	}
	km := KeyMap{role: role, bindings: all}
	if role == RoleOperator {
		km.bindings = append(km.bindings, operator...)
	}
	return km
}

// Role returns the role the key map was built for.
func (k KeyMap) Role() Role { return k.role }

// lookup returns the action bound to a key press.
func (k KeyMap) lookup(msg tea.KeyPressMsg) action {
	for _, b := range k.bindings {
		if key.Matches(msg, b.key) {
			return b.act
		}
	}
	return actNone
}

// Bindings returns every binding of the map.
func (k KeyMap) Bindings() []key.Binding {
	out := make([]key.Binding, len(k.bindings))
	for i, b := range k.bindings {
		out[i] = b.key
	}
	return out
}

// Mutating returns the bindings that change the node: none for a viewer.
func (k KeyMap) Mutating() []key.Binding {
	var out []key.Binding
	for _, b := range k.bindings {
		if b.mutating {
			out = append(out, b.key)
		}
	}
	return out
}

// ShortHelp is the footer's one-line help (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding {
	var out []key.Binding
	for _, b := range k.bindings {
		if b.short {
			out = append(out, b.key)
		}
	}
	return out
}

// FullHelp is the help screen, one column per group (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range []string{grpMove, grpView, grpGeneral, grpOperate} {
		var col []key.Binding
		for _, b := range k.bindings {
			if b.group == g {
				col = append(col, b.key)
			}
		}
		if len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

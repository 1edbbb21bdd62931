package kit

import (
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Role is what the person at the keyboard may do: the engine's role
// (agentconfig.Role), the one the journal records and the desk enforces.
// The key map is built for a role: actions a viewer may not take are
// absent from it, so they neither handle keys nor appear in the help
// (k9s's and nvitop's read-only modes remove bindings rather than greying
// them out). The engine refuses a viewer's apply regardless; this is the
// first of two layers.
type Role = agentconfig.Role

// Roles the console tells apart (an admin's map is an operator's).
const (
	RoleViewer   = agentconfig.RoleViewer   // read-only: watch mode, SSH keys without a role
	RoleOperator = agentconfig.RoleOperator // may edit and apply partitions
)

// Action is what a key does.
type Action uint8

// The actions every screen shares; a screen handles those of its scope.
// A screen's own actions start at ActScreen.
const (
	ActNone Action = iota
	ActQuit
	ActHelp
	ActFilter
	ActCommand
	ActBack
	ActUp
	ActDown
	ActTop
	ActBottom
	ActPageUp
	ActPageDown
	ActDetail
	ActSort
	ActSortReverse
	// A dialog's actions.
	actDlgSwitch
	actDlgLeft
	actDlgRight
	actDlgPress
)

// ActScreen is the first action a screen defines. Screens sharing one key
// map (the console and the editor it opens) take disjoint ranges from it.
const ActScreen Action = 32

// Scope is where a binding works: a screen (the main screen, the
// partition editor's grid, its plan view, its journal view) or a dialog.
// One key may do different things in different scopes (enter opens a
// detail on the main screen and edits a field in the editor); within one
// scope a key does one thing.
type Scope uint8

// ScDialog is a dialog's scope; ScScreen is the first scope bit a screen
// defines (screens sharing a key map take distinct bits from it).
const (
	ScDialog Scope = 1 << iota
	ScScreen
)

// Help groups, in the order the full help shows them after the groups of
// a screen's own (the editor's "edit partition").
const (
	GrpMove    = "move"
	GrpView    = "view"
	GrpGeneral = "general"
	GrpOperate = "operate"
	// grpDialog is not on the help screen: a dialog says its keys itself.
	grpDialog = "dialog"
)

// Binding ties a key.Binding to the action it triggers. Mutating bindings
// change the node (partition edit/apply) and exist only for operators.
type Binding struct {
	Act      Action
	Key      key.Binding
	Group    string
	Mutating bool
	Scope    Scope // where the binding works
	Short    Scope // where it shows in the one-line footer help
	// footKey and footDesc, when set, are what the editor's footer says
	// (shorter than the help's words); footPrio orders what it keeps when
	// the line is too narrow for all: 0 first.
	footKey, footDesc string
	footPrio          int
}

// KeyMap is a screen's key bindings for one role. The same value
// dispatches key presses and generates the help, so the help cannot list a
// key that does nothing or miss one that does something. A binding
// disabled for a while (key.Binding.SetEnabled: the console's editing
// keys in the past) neither handles keys nor shows in a footer or help.
type KeyMap struct {
	role Role
	// home is the scope of the screen the map is for: Lookup, ShortHelp
	// and FullHelp read it.
	home        Scope
	BindingList []Binding
}

// WordsOf is the key map with its help and footer words as a terminal
// of glyphs g reads them: the "…" of a key that opens a dialog ("apply…")
// becomes g.More ("apply..." with --ascii, not "apply~").
func (k KeyMap) WordsOf(g Glyphs) KeyMap {
	if g.More == "…" {
		return k
	}
	fix := func(s string) string { return strings.ReplaceAll(s, "…", g.More) }
	k.BindingList = slices.Clone(k.BindingList)
	for i := range k.BindingList {
		b := &k.BindingList[i]
		h := b.Key.Help()
		b.Key.SetHelp(fix(h.Key), fix(h.Desc))
		b.footKey, b.footDesc = fix(b.footKey), fix(b.footDesc)
	}
	return k
}

// KeyMapOf is the key map of a screen whose scope is home, for a role.
func KeyMapOf(role Role, home Scope, bs []Binding) KeyMap {
	return KeyMap{role: role, home: home, BindingList: bs}
}

// NewBinding is a binding of keys to act in scope sc, shown in the footer
// where short says; helpKey and desc are what the help says.
func NewBinding(act Action, group string, sc, short Scope, keys []string, helpKey, desc string) Binding {
	return Binding{Act: act, Group: group, Scope: sc, Short: short,
		Key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
}

// Foot sets what an editing footer says for the binding (shorter than the
// help's words; "" keeps the help's) and its priority there: 0 is kept
// first when the line is too narrow for all.
func (b Binding) Foot(key, desc string, prio int) Binding {
	b.footKey, b.footDesc, b.footPrio = key, desc, prio
	return b
}

// DialogBindings are a dialog's keys, in the order its hint line says
// them; bindings with the same words show as one ("tab/←/→: switch
// button").
func DialogBindings() []Binding {
	dlg := func(act Action, keys []string, helpKey, desc string, short bool) Binding {
		sh := Scope(0)
		if short {
			sh = ScDialog
		}
		return NewBinding(act, grpDialog, ScDialog, sh, keys, helpKey, desc)
	}
	return []Binding{
		dlg(actDlgSwitch, []string{"tab", "shift+tab"}, "tab", "switch button", true),
		dlg(actDlgLeft, []string{"left", "h"}, "←/h", "switch button", true),
		dlg(actDlgRight, []string{"right", "l"}, "→/l", "switch button", true),
		dlg(actDlgPress, []string{"enter"}, "enter", "press it", true),
		dlg(ActBack, []string{"esc"}, "esc", "cancel", true),
		dlg(ActQuit, []string{"ctrl+c"}, "ctrl+c", "quit (with a draft, a second ctrl+c)", false),
	}
}

// Role returns the role the key map was built for.
func (k KeyMap) Role() Role { return k.role }

// Lookup returns the action bound to a key press on the map's screen.
func (k KeyMap) Lookup(msg tea.KeyPressMsg) Action { return k.LookupIn(k.home, msg) }

// LookupIn returns the action bound to a key press in a scope.
func (k KeyMap) LookupIn(sc Scope, msg tea.KeyPressMsg) Action {
	for _, b := range k.BindingList {
		if b.Scope&sc != 0 && key.Matches(msg, b.Key) {
			return b.Act
		}
	}
	return ActNone
}

// Offers reports whether a binding of act is enabled in the map: what
// a screen may tell of the key outside the footer and help.
func (k KeyMap) Offers(act Action) bool {
	return slices.ContainsFunc(k.BindingList, func(b Binding) bool { return b.Act == act && b.Key.Enabled() })
}

// Disabled is the action of a binding disabled for now that would take
// the key press in a scope (ActNone when none): a screen may say why
// the key does nothing.
func (k KeyMap) Disabled(sc Scope, msg tea.KeyPressMsg) Action {
	for _, b := range k.BindingList {
		if b.Scope&sc != 0 && !b.Key.Enabled() && slices.Contains(b.Key.Keys(), msg.String()) {
			return b.Act
		}
	}
	return ActNone
}

// Bindings returns every binding of the map.
func (k KeyMap) Bindings() []key.Binding {
	out := make([]key.Binding, len(k.BindingList))
	for i, b := range k.BindingList {
		out[i] = b.Key
	}
	return out
}

// Mutating returns the bindings that change the node: none for a viewer.
func (k KeyMap) Mutating() []key.Binding {
	var out []key.Binding
	for _, b := range k.BindingList {
		if b.Mutating {
			out = append(out, b.Key)
		}
	}
	return out
}

// ShortHelp is the map's screen's one-line footer help (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding { return k.ShortHelpIn(k.home) }

// ShortHelpIn is the footer's bindings in scope sc.
func (k KeyMap) ShortHelpIn(sc Scope) []key.Binding {
	var out []key.Binding
	for _, b := range k.BindingList {
		if b.Short&sc != 0 && b.Key.Enabled() {
			out = append(out, b.Key)
		}
	}
	return out
}

// EssentialIn is what a footer in scope sc keeps at any width and beside
// a flash message: its help and quit keys, in the map's order, with the
// footer's words where the binding has them ("ctrl+c quit" in the editor,
// where q is a letter).
func (k KeyMap) EssentialIn(sc Scope) []key.Binding {
	var out []key.Binding
	for _, b := range k.BindingList {
		if b.Short&sc == 0 || !b.Key.Enabled() || (b.Act != ActHelp && b.Act != ActQuit) {
			continue
		}
		h := b.Key.Help()
		if b.footKey != "" {
			h.Key = b.footKey
		}
		if b.footDesc != "" {
			h.Desc = b.footDesc
		}
		out = append(out, key.NewBinding(key.WithKeys(b.Key.Keys()...), key.WithHelp(h.Key, h.Desc)))
	}
	return out
}

// FootItem is one key of a footer line.
type FootItem struct {
	Key, Desc string
	Prio      int
}

// FooterIn is the footer of an editing scope: the keys of the screen's own
// groups (the editor's) first, then leaving, help and quit, each with its
// footer words.
func (k KeyMap) FooterIn(sc Scope) []FootItem { return k.FooterOf(sc, nil) }

// FooterOf is FooterIn with only the bindings whose action keep accepts
// (all where keep is nil): a screen where most keys are refused for now
// offers only those that still act.
func (k KeyMap) FooterOf(sc Scope, keep func(Action) bool) []FootItem {
	var eds, rest []FootItem
	for _, b := range k.BindingList {
		if b.Short&sc == 0 || !b.Key.Enabled() || (keep != nil && !keep(b.Act)) {
			continue
		}
		h := b.Key.Help()
		it := FootItem{Key: h.Key, Desc: h.Desc, Prio: b.footPrio}
		if b.footKey != "" {
			it.Key = b.footKey
		}
		if b.footDesc != "" {
			it.Desc = b.footDesc
		}
		if !sharedGroup(b.Group) {
			eds = append(eds, it)
		} else {
			rest = append(rest, it)
		}
	}
	return append(eds, rest...)
}

// ScopedItem is a binding's footer words with the scopes it works in and
// the action it does.
type ScopedItem struct {
	FootItem
	Scope Scope
	Act   Action
}

// ItemsIn is every binding of group that works in scope sc, in the map's
// order, with its footer words (the help's where it has none): what a
// legend generated from the key map says.
func (k KeyMap) ItemsIn(group string, sc Scope) []ScopedItem {
	var out []ScopedItem
	for _, b := range k.BindingList {
		if b.Group != group || b.Scope&sc == 0 || !b.Key.Enabled() {
			continue
		}
		h := b.Key.Help()
		it := FootItem{Key: h.Key, Desc: h.Desc, Prio: b.footPrio}
		if b.footKey != "" {
			it.Key = b.footKey
		}
		if b.footDesc != "" {
			it.Desc = b.footDesc
		}
		out = append(out, ScopedItem{FootItem: it, Scope: b.Scope, Act: b.Act})
	}
	return out
}

// FullHelp is the map's screen's help, one column per group (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding { return k.FullHelpIn(k.home) }

// FullHelpIn is the help of one scope: only the bindings that work there.
func (k KeyMap) FullHelpIn(sc Scope) [][]key.Binding {
	var out [][]key.Binding
	var groups []string
	for _, b := range k.BindingList {
		if !sharedGroup(b.Group) && b.Group != grpDialog && !slices.Contains(groups, b.Group) {
			groups = append(groups, b.Group)
		}
	}
	for _, g := range append(groups, GrpMove, GrpView, GrpGeneral, GrpOperate) {
		var col []key.Binding
		for _, b := range k.BindingList {
			if b.Group == g && b.Scope&sc != 0 && b.Key.Enabled() {
				col = append(col, b.Key)
			}
		}
		if len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

// sharedGroup reports whether g is one of the groups every screen shares
// (or a dialog's), not a screen's own.
func sharedGroup(g string) bool {
	switch g {
	case GrpMove, GrpView, GrpGeneral, GrpOperate, grpDialog:
		return true
	}
	return false
}

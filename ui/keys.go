package ui

import (
	"slices"

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
	actCopy
	// Operator-only actions below: they change the node.
	actEditPartition
	// The partition editor's actions (operators only).
	actEdPrevAgent
	actEdNextAgent
	actEdToAgent
	actEdMode
	actEdEdit
	actEdUndo
	actEdReset
	actEdPlan
	actEdApply
	actEdJournal
	// A dialog's actions (dialogs open from the editor: operators only).
	actDlgSwitch
	actDlgLeft
	actDlgRight
	actDlgPress
)

// scope is where a binding works: the main screen, the partition editor's
// grid, its plan view, its journal view or a dialog. One key may do different things
// in different scopes (enter opens a detail on the main screen and edits a
// field in the editor); within one scope a key does one thing.
type scope uint8

const (
	scMain scope = 1 << iota
	scEditor
	scPlan
	scJournal
	scDialog

	scEditing = scEditor | scPlan | scJournal
	scAll     = scMain | scEditing
)

// Help groups, in the order the full help shows them.
const (
	grpMove    = "move"
	grpView    = "view"
	grpGeneral = "general"
	grpOperate = "operate"
	grpEdit    = "edit partition"
	// grpDialog is not on the help screen: a dialog says its keys itself.
	grpDialog = "dialog"
)

// binding ties a key.Binding to the action it triggers. Mutating bindings
// change the node (partition edit/apply) and exist only for operators.
type binding struct {
	act      action
	key      key.Binding
	group    string
	mutating bool
	scope    scope // where the binding works
	short    scope // where it shows in the one-line footer help
	// footKey and footDesc, when set, are what the editor's footer says
	// (shorter than the help's words); footPrio orders what it keeps when
	// the line is too narrow for all: 0 first.
	footKey, footDesc string
	footPrio          int
}

// KeyMap is the console's key bindings for one role. The same value
// dispatches key presses and generates the help, so the help cannot list a
// key that does nothing or miss one that does something.
type KeyMap struct {
	role     Role
	bindings []binding
}

// keyMapOf is a key map of a screen's own (the fleet's) for a role.
func keyMapOf(role Role, bs []binding) KeyMap { return KeyMap{role: role, bindings: bs} }

// NewKeyMap builds the key map for a role.
func NewKeyMap(role Role) KeyMap {
	b := func(act action, group string, short bool, keys []string, helpKey, desc string) binding {
		sh := scope(0)
		if short {
			sh = scMain
		}
		return binding{act: act, group: group, scope: scMain, short: sh,
			key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	// in widens a binding to more scopes, short in the listed ones.
	in := func(bd binding, sc, short scope) binding {
		bd.scope |= sc
		bd.short |= short
		return bd
	}
	all := []binding{
		in(b(actUp, grpMove, false, []string{"k", "up"}, "k/up", "up"), scEditing, 0),
		in(b(actDown, grpMove, false, []string{"j", "down"}, "j/down", "down"), scEditing, 0),
		in(b(actTop, grpMove, false, []string{"g", "home"}, "g", "top"), scEditing, 0),
		in(b(actBottom, grpMove, false, []string{"G", "end"}, "G", "bottom"), scEditing, 0),
		in(b(actPageUp, grpMove, false, []string{"pgup", "ctrl+u"}, "pgup", "page up"), scEditing, 0),
		in(b(actPageDown, grpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn", "page down"), scEditing, 0),
		b(actNextPane, grpMove, true, []string{"tab"}, "tab", "next pane"),
		b(actPrevPane, grpMove, false, []string{"shift+tab"}, "shift+tab", "previous pane"),
		b(actDetail, grpView, true, []string{"enter"}, "enter", "detail"),
		b(actFilter, grpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(actSort, grpView, true, []string{"s"}, "s", "sort column"),
		b(actSortReverse, grpView, false, []string{"S"}, "S", "reverse sort"),
		b(actFollow, grpView, false, []string{"f"}, "f", "kernels: follow device / all"),
		b(actSegments, grpView, false, []string{"a"}, "a", "bars: per kernel / per agent"),
		b(actCopy, grpView, false, []string{"y"}, "y", "copy selected id (OSC 52)"),
		b(actCommand, grpGeneral, true, []string{":"}, ":", "command (:sort :theme :q)"),
		in(b(actBack, grpGeneral, false, []string{"esc"}, "esc", "back / clear"), scEditing, scEditing),
		in(b(actHelp, grpGeneral, true, []string{"?"}, "?", "help"), scEditing, scEditing),
		b(actQuit, grpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	}
	// While editing, q is an ordinary letter (no draft is lost to a slip);
	// ctrl+c still quits.
	quitEd := b(actQuit, grpGeneral, false, []string{"ctrl+c"}, "ctrl+c", "quit (asks first with a draft)")
	quitEd.scope, quitEd.short = scEditing, scEditing
	quitEd.footDesc, quitEd.footPrio = "quit", 0
	all = append(all, quitEd)
	// A dialog's keys, in the order its hint line says them; bindings
	// with the same words show as one ("tab/←/→: switch button").
	dlg := func(act action, keys []string, helpKey, desc string, short bool) binding {
		bd := binding{act: act, group: grpDialog, scope: scDialog,
			key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
		if short {
			bd.short = scDialog
		}
		return bd
	}
	all = append(all,
		dlg(actDlgSwitch, []string{"tab", "shift+tab"}, "tab", "switch button", true),
		dlg(actDlgLeft, []string{"left", "h"}, "←", "switch button", true),
		dlg(actDlgRight, []string{"right", "l"}, "→", "switch button", true),
		dlg(actDlgPress, []string{"enter"}, "enter", "press it", true),
		dlg(actBack, []string{"esc"}, "esc", "cancel", true),
		dlg(actQuit, []string{"ctrl+c"}, "ctrl+c", "quit (with a draft, a second ctrl+c)", false),
	)
	for i := range all {
		switch all[i].act {
		case actBack:
			all[i].footDesc, all[i].footPrio = "back", 1
		case actHelp:
			// Help and quit show at any width, as on the main screen.
			all[i].footPrio = 0
		}
	}

	operator := []binding{
		b(actEditPartition, grpOperate, true, []string{"e"}, "e", "edit partition"),
	}
	ed := func(act action, sc, short scope, keys []string, helpKey, desc string) binding {
		return binding{act: act, group: grpEdit, scope: sc, short: short,
			key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	digits := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	foot := func(bd binding, k, desc string, prio int) binding {
		bd.footKey, bd.footDesc, bd.footPrio = k, desc, prio
		return bd
	}
	operator = append(operator,
		// ← and → show as one footer item.
		foot(ed(actEdPrevAgent, scEditor, scEditor, []string{"left", "h"}, "←/h", "device to previous agent"), "←/→", "move device", 3),
		ed(actEdNextAgent, scEditor, 0, []string{"right", "l"}, "→/l", "device to next agent"),
		ed(actEdToAgent, scEditor, 0, digits, "1-9", "device to agent N"),
		foot(ed(actEdMode, scEditor, scEditor, []string{"m"}, "m", "mode shared/auto-split/manual"), "", "mode", 4),
		foot(ed(actEdEdit, scEditor, scEditor, []string{"enter"}, "enter", "edit cpu/mem row"), "", "edit cpu/mem", 3),
		foot(ed(actEdUndo, scEditor, scEditor, []string{"u"}, "u", "undo"), "", "", 1),
		ed(actEdReset, scEditor, 0, []string{"r"}, "r", "reset draft"),
		foot(ed(actEdPlan, scEditing, scEditor|scPlan, []string{"p"}, "p", "plan / review"), "", "plan", 0),
		foot(ed(actEdApply, scEditor|scPlan, scEditor|scPlan, []string{"A"}, "A", "apply…"), "", "", 0),
		ed(actEdJournal, scEditor|scPlan, 0, []string{"J"}, "J", "journal"),
	)
	for i := range operator {
		operator[i].mutating = true
	}
	km := KeyMap{role: role, bindings: all}
	if role.CanWrite() {
		km.bindings = append(km.bindings, operator...)
		return km
	}
	// A viewer never enters the editor: its map keeps only the main
	// screen's bindings, so no editing scope exists in it at all.
	km.bindings = slices.DeleteFunc(km.bindings, func(b binding) bool { return b.scope&scMain == 0 })
	for i := range km.bindings {
		km.bindings[i].scope &= scMain
		km.bindings[i].short &= scMain
	}
	return km
}

// Role returns the role the key map was built for.
func (k KeyMap) Role() Role { return k.role }

// lookup returns the action bound to a key press on the main screen.
func (k KeyMap) lookup(msg tea.KeyPressMsg) action { return k.lookupIn(scMain, msg) }

// lookupIn returns the action bound to a key press in a scope.
func (k KeyMap) lookupIn(sc scope, msg tea.KeyPressMsg) action {
	for _, b := range k.bindings {
		if b.scope&sc != 0 && key.Matches(msg, b.key) {
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

// ShortHelp is the main screen's one-line footer help (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding { return k.shortHelpIn(scMain) }

func (k KeyMap) shortHelpIn(sc scope) []key.Binding {
	var out []key.Binding
	for _, b := range k.bindings {
		if b.short&sc != 0 {
			out = append(out, b.key)
		}
	}
	return out
}

// footItem is one key of a footer line.
type footItem struct {
	key, desc string
	prio      int
}

// footerIn is the footer of an editing scope: the editor's own keys first,
// then leaving, help and quit, each with its footer words.
func (k KeyMap) footerIn(sc scope) []footItem {
	var eds, rest []footItem
	for _, b := range k.bindings {
		if b.short&sc == 0 {
			continue
		}
		h := b.key.Help()
		it := footItem{key: h.Key, desc: h.Desc, prio: b.footPrio}
		if b.footKey != "" {
			it.key = b.footKey
		}
		if b.footDesc != "" {
			it.desc = b.footDesc
		}
		if b.group == grpEdit {
			eds = append(eds, it)
		} else {
			rest = append(rest, it)
		}
	}
	return append(eds, rest...)
}

// FullHelp is the main screen's help, one column per group (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding { return k.fullHelpIn(scMain) }

// fullHelpIn is the help of one scope: only the bindings that work there.
func (k KeyMap) fullHelpIn(sc scope) [][]key.Binding {
	var out [][]key.Binding
	for _, g := range []string{grpEdit, grpMove, grpView, grpGeneral, grpOperate} {
		var col []key.Binding
		for _, b := range k.bindings {
			if b.group == g && b.scope&sc != 0 {
				col = append(col, b.key)
			}
		}
		if len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

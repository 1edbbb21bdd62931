package kit

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

// Action is what a key does.
type Action uint8

// The actions keys are bound to; a screen handles those of its scope.
const (
	ActNone Action = iota
	ActQuit
	ActHelp
	ActFilter
	ActCommand
	ActBack
	ActNextPane
	ActPrevPane
	ActUp
	ActDown
	ActTop
	ActBottom
	ActPageUp
	ActPageDown
	ActDetail
	ActSegments
	ActFollow
	ActSort
	ActSortReverse
	ActCopy
	// Operator-only actions below: they change the node.
	ActEditPartition
	ActDemoRestart
	// The partition editor's actions (operators only).
	ActEdPrevAgent
	ActEdNextAgent
	ActEdToAgent
	ActEdMode
	ActEdEdit
	ActEdUndo
	ActEdReset
	ActEdPlan
	ActEdApply
	ActEdJournal
	// A dialog's actions (dialogs open from the editor: operators only).
	actDlgSwitch
	actDlgLeft
	actDlgRight
	actDlgPress
)

// Scope is where a binding works: the main screen, the partition editor's
// grid, its plan view, its journal view or a dialog. One key may do different things
// in different scopes (enter opens a detail on the main screen and edits a
// field in the editor); within one scope a key does one thing.
type Scope uint8

// The scopes bindings work in.
const (
	ScMain Scope = 1 << iota
	ScEditor
	ScPlan
	ScJournal
	ScDialog

	// ScSlotGrid is the editor's grid on a slot-based file (Backend.AI
	// main's form): agents are given amounts, devices are not exclusive,
	// so the device-move keys do not exist there.
	ScSlotGrid

	scGrids   = ScEditor | ScSlotGrid
	scEditing = scGrids | ScPlan | ScJournal
	ScAll     = ScMain | scEditing
)

// Help groups, in the order the full help shows them.
const (
	GrpMove    = "move"
	GrpView    = "view"
	GrpGeneral = "general"
	GrpOperate = "operate"
	grpEdit    = "edit partition"
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

// KeyMap is the console's key bindings for one role. The same value
// dispatches key presses and generates the help, so the help cannot list a
// key that does nothing or miss one that does something.
type KeyMap struct {
	role        Role
	BindingList []Binding
}

// KeyMapOf is a key map of a screen's own (the fleet's) for a role.
func KeyMapOf(role Role, bs []Binding) KeyMap { return KeyMap{role: role, BindingList: bs} }

// NewKeyMap builds the key map for a role.
func NewKeyMap(role Role) KeyMap {
	b := func(act Action, group string, short bool, keys []string, helpKey, desc string) Binding {
		sh := Scope(0)
		if short {
			sh = ScMain
		}
		return Binding{Act: act, Group: group, Scope: ScMain, Short: sh,
			Key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	// in widens a binding to more scopes, short in the listed ones.
	in := func(bd Binding, sc, short Scope) Binding {
		bd.Scope |= sc
		bd.Short |= short
		return bd
	}
	all := []Binding{
		in(b(ActUp, GrpMove, false, []string{"k", "up"}, "k/up", "up"), scEditing, 0),
		in(b(ActDown, GrpMove, false, []string{"j", "down"}, "j/down", "down"), scEditing, 0),
		in(b(ActTop, GrpMove, false, []string{"g", "home"}, "g", "top"), scEditing, 0),
		in(b(ActBottom, GrpMove, false, []string{"G", "end"}, "G", "bottom"), scEditing, 0),
		in(b(ActPageUp, GrpMove, false, []string{"pgup", "ctrl+u"}, "pgup", "page up"), scEditing, 0),
		in(b(ActPageDown, GrpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn", "page down"), scEditing, 0),
		b(ActNextPane, GrpMove, true, []string{"tab"}, "tab", "next pane"),
		b(ActPrevPane, GrpMove, false, []string{"shift+tab"}, "shift+tab", "previous pane"),
		b(ActDetail, GrpView, true, []string{"enter"}, "enter", "detail"),
		b(ActFilter, GrpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(ActSort, GrpView, true, []string{"s"}, "s", "sort column"),
		b(ActSortReverse, GrpView, false, []string{"S"}, "S", "reverse sort"),
		b(ActFollow, GrpView, false, []string{"f"}, "f", "kernels: follow device / all"),
		b(ActSegments, GrpView, false, []string{"a"}, "a", "bars: per kernel / per agent"),
		b(ActCopy, GrpView, false, []string{"y"}, "y", "copy selected id (OSC 52)"),
		b(ActCommand, GrpGeneral, true, []string{":"}, ":", "command (:sort :theme :q)"),
		in(b(ActBack, GrpGeneral, false, []string{"esc"}, "esc", "back / clear"), scEditing, scEditing),
		in(b(ActHelp, GrpGeneral, true, []string{"?"}, "?", "help"), scEditing, scEditing),
		b(ActQuit, GrpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	}
	// While editing, q is an ordinary letter (no draft is lost to a slip);
	// ctrl+c still quits.
	quitEd := b(ActQuit, GrpGeneral, false, []string{"ctrl+c"}, "ctrl+c", "quit (asks first with a draft)")
	quitEd.Scope, quitEd.Short = scEditing, scEditing
	quitEd.footDesc, quitEd.footPrio = "quit", 0
	all = append(all, quitEd)
	// A dialog's keys, in the order its hint line says them; bindings
	// with the same words show as one ("tab/←/→: switch button").
	dlg := func(act Action, keys []string, helpKey, desc string, short bool) Binding {
		bd := Binding{Act: act, Group: grpDialog, Scope: ScDialog,
			Key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
		if short {
			bd.Short = ScDialog
		}
		return bd
	}
	all = append(all,
		dlg(actDlgSwitch, []string{"tab", "shift+tab"}, "tab", "switch button", true),
		dlg(actDlgLeft, []string{"left", "h"}, "←", "switch button", true),
		dlg(actDlgRight, []string{"right", "l"}, "→", "switch button", true),
		dlg(actDlgPress, []string{"enter"}, "enter", "press it", true),
		dlg(ActBack, []string{"esc"}, "esc", "cancel", true),
		dlg(ActQuit, []string{"ctrl+c"}, "ctrl+c", "quit (with a draft, a second ctrl+c)", false),
	)
	for i := range all {
		switch all[i].Act {
		case ActBack:
			all[i].footDesc, all[i].footPrio = "back", 1
		case ActHelp:
			// Help and quit show at any width, as on the main screen.
			all[i].footPrio = 0
		}
	}

	operator := []Binding{
		b(ActEditPartition, GrpOperate, true, []string{"e"}, "e", "edit partition"),
	}
	ed := func(act Action, sc, short Scope, keys []string, helpKey, desc string) Binding {
		return Binding{Act: act, Group: grpEdit, Scope: sc, Short: short,
			Key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	digits := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	foot := func(bd Binding, k, desc string, prio int) Binding {
		bd.footKey, bd.footDesc, bd.footPrio = k, desc, prio
		return bd
	}
	operator = append(operator,
		// ← and → show as one footer item.
		foot(ed(ActEdPrevAgent, ScEditor, ScEditor, []string{"left", "h"}, "←/h", "device to previous agent"), "←/→", "move device", 3),
		ed(ActEdNextAgent, ScEditor, 0, []string{"right", "l"}, "→/l", "device to next agent"),
		ed(ActEdToAgent, ScEditor, 0, digits, "1-9", "device to agent N"),
		foot(ed(ActEdMode, scGrids, scGrids, []string{"m"}, "m", "mode shared/auto-split/manual"), "", "mode", 4),
		foot(ed(ActEdEdit, ScEditor, ScEditor, []string{"enter"}, "enter", "edit cpu/mem row"), "", "edit cpu/mem", 3),
		foot(ed(ActEdEdit, ScSlotGrid, ScSlotGrid, []string{"enter"}, "enter", "edit the selected amount (cpu, mem, a device slot)"), "", "edit amount", 3),
		foot(ed(ActEdUndo, scGrids, scGrids, []string{"u"}, "u", "undo"), "", "", 1),
		ed(ActEdReset, scGrids, 0, []string{"r"}, "r", "reset draft"),
		foot(ed(ActEdPlan, scEditing, scGrids|ScPlan, []string{"p"}, "p", "plan / review"), "", "plan", 0),
		foot(ed(ActEdApply, scGrids|ScPlan, scGrids|ScPlan, []string{"A"}, "A", "apply…"), "", "", 0),
		ed(ActEdJournal, scGrids|ScPlan, 0, []string{"J"}, "J", "journal"),
	)
	for i := range operator {
		operator[i].Mutating = true
	}
	km := KeyMap{role: role, BindingList: all}
	if role.CanWrite() {
		km.BindingList = append(km.BindingList, operator...)
		return km
	}
	// A viewer never enters the editor: its map keeps only the main
	// screen's bindings, so no editing scope exists in it at all.
	km.BindingList = slices.DeleteFunc(km.BindingList, func(b Binding) bool { return b.Scope&ScMain == 0 })
	for i := range km.BindingList {
		km.BindingList[i].Scope &= ScMain
		km.BindingList[i].Short &= ScMain
	}
	return km
}

// WithDemoRestart adds the demo's key that restarts its simulated agents
// (only a demo console has it: elsewhere the agents are real processes).
func (k KeyMap) WithDemoRestart() KeyMap {
	if !k.role.CanWrite() {
		return k
	}
	bd := Binding{Act: ActDemoRestart, Group: GrpOperate, Scope: ScMain, Short: ScMain, Mutating: true,
		Key: key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "demo: restart the agents whose partition changed"))}
	k.BindingList = append(slices.Clone(k.BindingList), bd)
	return k
}

// Role returns the role the key map was built for.
func (k KeyMap) Role() Role { return k.role }

// Lookup returns the action bound to a key press on the main screen.
func (k KeyMap) Lookup(msg tea.KeyPressMsg) Action { return k.LookupIn(ScMain, msg) }

// LookupIn returns the action bound to a key press in a scope.
func (k KeyMap) LookupIn(sc Scope, msg tea.KeyPressMsg) Action {
	for _, b := range k.BindingList {
		if b.Scope&sc != 0 && key.Matches(msg, b.Key) {
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

// ShortHelp is the main screen's one-line footer help (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding { return k.ShortHelpIn(ScMain) }

// ShortHelpIn is the footer's bindings in scope sc.
func (k KeyMap) ShortHelpIn(sc Scope) []key.Binding {
	var out []key.Binding
	for _, b := range k.BindingList {
		if b.Short&sc != 0 {
			out = append(out, b.Key)
		}
	}
	return out
}

// FootItem is one key of a footer line.
type FootItem struct {
	Key, Desc string
	Prio      int
}

// FooterIn is the footer of an editing scope: the editor's own keys first,
// then leaving, help and quit, each with its footer words.
func (k KeyMap) FooterIn(sc Scope) []FootItem {
	var eds, rest []FootItem
	for _, b := range k.BindingList {
		if b.Short&sc == 0 {
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
		if b.Group == grpEdit {
			eds = append(eds, it)
		} else {
			rest = append(rest, it)
		}
	}
	return append(eds, rest...)
}

// FullHelp is the main screen's help, one column per group (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding { return k.FullHelpIn(ScMain) }

// FullHelpIn is the help of one scope: only the bindings that work there.
func (k KeyMap) FullHelpIn(sc Scope) [][]key.Binding {
	var out [][]key.Binding
	for _, g := range []string{grpEdit, GrpMove, GrpView, GrpGeneral, GrpOperate} {
		var col []key.Binding
		for _, b := range k.BindingList {
			if b.Group == g && b.Scope&sc != 0 {
				col = append(col, b.Key)
			}
		}
		if len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

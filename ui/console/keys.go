package console

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/kit"
)

// The main screen's own actions.
const (
	ActNextPane kit.Action = kit.ActScreen + iota
	ActPrevPane
	ActSegments
	ActFollow
	ActCopy
	// Operator-only actions below: they change the node.
	ActEditPartition
	ActDemoRestart
)

// ScMain is the main screen's scope.
const ScMain = kit.ScScreen

// ScAll is every scope of a console: the main screen's and the editor's.
const ScAll = ScMain | editor.Scopes

// NewKeyMap builds a console's key map for a role: the main screen's keys,
// the dialogs', and for an operator the partition editor's.
func NewKeyMap(role kit.Role) kit.KeyMap {
	b := func(act kit.Action, group string, short bool, keys []string, helpKey, desc string) kit.Binding {
		sh := kit.Scope(0)
		if short {
			sh = ScMain
		}
		return kit.NewBinding(act, group, ScMain, sh, keys, helpKey, desc)
	}
	// in widens a binding to more scopes, short in the listed ones.
	in := func(bd kit.Binding, sc, short kit.Scope) kit.Binding {
		bd.Scope |= sc
		bd.Short |= short
		return bd
	}
	editing := editor.Scopes
	all := []kit.Binding{
		in(b(kit.ActUp, kit.GrpMove, false, []string{"k", "up"}, "k/up", "up"), editing, 0),
		in(b(kit.ActDown, kit.GrpMove, false, []string{"j", "down"}, "j/down", "down"), editing, 0),
		in(b(kit.ActTop, kit.GrpMove, false, []string{"g", "home"}, "g/home", "top"), editing, 0),
		in(b(kit.ActBottom, kit.GrpMove, false, []string{"G", "end"}, "G/end", "bottom"), editing, 0),
		in(b(kit.ActPageUp, kit.GrpMove, false, []string{"pgup", "ctrl+u"}, "pgup/^u", "page up"), editing, 0),
		in(b(kit.ActPageDown, kit.GrpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn/^d", "page down"), editing, 0),
		b(ActNextPane, kit.GrpMove, true, []string{"tab"}, "tab", "next pane"),
		b(ActPrevPane, kit.GrpMove, false, []string{"shift+tab"}, "shift+tab", "previous pane"),
		b(kit.ActDetail, kit.GrpView, true, []string{"enter"}, "enter", "detail"),
		b(kit.ActFilter, kit.GrpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(kit.ActSort, kit.GrpView, true, []string{"s"}, "s", "sort column"),
		b(kit.ActSortReverse, kit.GrpView, false, []string{"S"}, "S", "reverse sort"),
		b(ActFollow, kit.GrpView, false, []string{"f"}, "f", "kernels: follow device / all"),
		b(ActSegments, kit.GrpView, false, []string{"a"}, "a", "bars: per kernel / per agent"),
		b(ActCopy, kit.GrpView, false, []string{"y"}, "y", "copy selected id (OSC 52)"),
		b(kit.ActCommand, kit.GrpGeneral, true, []string{":"}, ":", "command (the help lists them)"),
		// Back and help show at any width in the editor's footer, as on
		// the main screen.
		in(b(kit.ActBack, kit.GrpGeneral, false, []string{"esc"}, "esc", "back / clear"), editing, editing).Foot("", "back", 1),
		in(b(kit.ActHelp, kit.GrpGeneral, true, []string{"?"}, "?", "help"), editing, editing).Foot("", "", 0),
		b(kit.ActQuit, kit.GrpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	}
	// While editing, q is an ordinary letter (no draft is lost to a slip);
	// ctrl+c still quits.
	quitEd := kit.NewBinding(kit.ActQuit, kit.GrpGeneral, editing, editing, []string{"ctrl+c"}, "ctrl+c", "quit (asks first with a draft)").Foot("", "quit", 0)
	all = append(all, quitEd)
	all = append(all, kit.DialogBindings()...)
	if role.CanWrite() {
		edit := b(ActEditPartition, kit.GrpOperate, true, []string{"e"}, "e", "edit partition")
		edit.Mutating = true
		all = append(append(all, edit), editor.Bindings()...)
		return kit.KeyMapOf(role, ScMain, all)
	}
	// A viewer never enters the editor: its map keeps only the main
	// screen's bindings, so no editing scope exists in it at all.
	all = slices.DeleteFunc(all, func(b kit.Binding) bool { return b.Scope&ScMain == 0 })
	for i := range all {
		all[i].Scope &= ScMain
		all[i].Short &= ScMain
	}
	return kit.KeyMapOf(role, ScMain, all)
}

// withDemoRestart adds the demo's key that restarts its simulated agents
// (only a demo console has it: elsewhere the agents are real processes).
// withQuitAs says what q does in a console opened inside another (the
// fleet's node): it goes back there, and the footer and help say so
// instead of "q quit".
func withQuitAs(k kit.KeyMap, desc string) kit.KeyMap {
	k.BindingList = slices.Clone(k.BindingList)
	for i := range k.BindingList {
		if b := &k.BindingList[i]; b.Act == kit.ActQuit && slices.Contains(b.Key.Keys(), "q") {
			b.Key.SetHelp("q", desc)
		}
	}
	return k
}

func withDemoRestart(k kit.KeyMap) kit.KeyMap {
	if !k.Role().CanWrite() {
		return k
	}
	bd := kit.NewBinding(ActDemoRestart, kit.GrpOperate, ScMain, ScMain, []string{"R"}, "R", "demo: restart the agents whose partition changed")
	bd.Mutating = true
	k.BindingList = append(slices.Clone(k.BindingList), bd)
	return k
}

// viewerRefusal is what a viewer is told of a key press that is an
// operator's key on this screen, in full and in short (for a narrow
// footer), or "" when it is not one. The key stays out of the viewer's
// map, footer and help; this only answers the press, so that it is not
// taken for a key that did nothing for no reason.
func viewerRefusal(msg tea.KeyPressMsg, demo bool) (text, short string) {
	// An operator's main-screen key map, demo restart included: what the
	// key would have done there. Made per press (a viewer's press of an
	// operator's key is rare), not kept in a package variable shared by
	// every SSH session.
	for _, b := range withDemoRestart(NewKeyMap(kit.RoleOperator)).BindingList {
		if !b.Mutating || b.Scope&ScMain == 0 || (b.Act == ActDemoRestart && !demo) ||
			!slices.Contains(b.Key.Keys(), msg.String()) {
			continue
		}
		h := b.Key.Help()
		return "read-only: " + h.Key + " (" + h.Desc + ") is an operator's key, in a console on the node that is not read-only; nothing was changed",
			"read-only: " + h.Key + " is an operator's key; nothing was changed"
	}
	return "", ""
}

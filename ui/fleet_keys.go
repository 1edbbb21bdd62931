package ui

import (
	"charm.land/bubbles/v2/key"
)

// scFleet is the fleet table's scope: its bindings live in a KeyMap of
// their own (newFleetKeyMap), built from the same binding type, so the
// fleet's help is generated from the keys that work there.
const scFleet scope = 1 << 7

// newFleetKeyMap is the fleet console's key map. The fleet is read-only:
// no binding changes a node.
func newFleetKeyMap() KeyMap {
	b := func(act action, group string, short bool, keys []string, helpKey, desc string) binding {
		sh := scope(0)
		if short {
			sh = scFleet
		}
		return binding{act: act, group: group, scope: scFleet, short: sh,
			key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	return keyMapOf(RoleViewer, []binding{
		b(actUp, grpMove, false, []string{"k", "up"}, "k/up", "up"),
		b(actDown, grpMove, false, []string{"j", "down"}, "j/down", "down"),
		b(actTop, grpMove, false, []string{"g", "home"}, "g", "top"),
		b(actBottom, grpMove, false, []string{"G", "end"}, "G", "bottom"),
		b(actPageUp, grpMove, false, []string{"pgup", "ctrl+u"}, "pgup", "page up"),
		b(actPageDown, grpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		b(actDetail, grpView, true, []string{"enter"}, "enter", "open node (read-only)"),
		b(actFilter, grpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(actSort, grpView, true, []string{"s"}, "s", "sort column"),
		b(actSortReverse, grpView, false, []string{"S"}, "S", "reverse sort"),
		b(actCommand, grpGeneral, true, []string{":"}, ":", "command (:fit :sort :q)"),
		b(actBack, grpGeneral, false, []string{"esc"}, "esc", "back / clear fit and filter"),
		b(actHelp, grpGeneral, true, []string{"?"}, "?", "help"),
		b(actQuit, grpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	})
}

package fleet

import (
	"charm.land/bubbles/v2/key"

	"github.com/fgtop/fgtop/ui/kit"
)

// scFleet is the fleet table's scope: its bindings live in a KeyMap of
// their own (newFleetKeyMap), built from the same binding type, so the
// fleet's help is generated from the keys that work there.
const scFleet = kit.ScScreen

// newFleetKeyMap is the fleet console's key map. The fleet is read-only:
// no binding changes a node.
func newFleetKeyMap() kit.KeyMap {
	b := func(act kit.Action, group string, short bool, keys []string, helpKey, desc string) kit.Binding {
		sh := kit.Scope(0)
		if short {
			sh = scFleet
		}
		return kit.Binding{Act: act, Group: group, Scope: scFleet, Short: sh,
			Key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))}
	}
	return kit.KeyMapOf(kit.RoleViewer, scFleet, []kit.Binding{
		b(kit.ActUp, kit.GrpMove, false, []string{"k", "up"}, "k/up", "up"),
		b(kit.ActDown, kit.GrpMove, false, []string{"j", "down"}, "j/down", "down"),
		b(kit.ActTop, kit.GrpMove, false, []string{"g", "home"}, "g/home", "top"),
		b(kit.ActBottom, kit.GrpMove, false, []string{"G", "end"}, "G/end", "bottom"),
		b(kit.ActPageUp, kit.GrpMove, false, []string{"pgup", "ctrl+u"}, "pgup/^u", "page up"),
		b(kit.ActPageDown, kit.GrpMove, false, []string{"pgdown", "ctrl+d"}, "pgdn/^d", "page down"),
		b(kit.ActDetail, kit.GrpView, true, []string{"enter"}, "enter", "open node (read-only)"),
		b(kit.ActFilter, kit.GrpView, true, []string{"/"}, "/", "filter (!x inverts)"),
		b(kit.ActSort, kit.GrpView, true, []string{"s"}, "s", "sort column"),
		b(kit.ActSortReverse, kit.GrpView, false, []string{"S"}, "S", "reverse sort"),
		b(actPastPrev, kit.GrpView, false, []string{"["}, "[", "past: a step earlier (:at TIME, :live)"),
		b(actPastNext, kit.GrpView, false, []string{"]"}, "]", "past: a step later, to live"),
		b(kit.ActCommand, kit.GrpGeneral, true, []string{":"}, ":", "command (:fit :at :live :sort :q)"),
		b(kit.ActBack, kit.GrpGeneral, false, []string{"esc"}, "esc", "back / clear fit and filter"),
		b(kit.ActHelp, kit.GrpGeneral, true, []string{"?"}, "?", "help"),
		b(kit.ActQuit, kit.GrpGeneral, true, []string{"q", "ctrl+c"}, "q", "quit"),
	})
}

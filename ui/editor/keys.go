package editor

import "github.com/fgtop/fgtop/ui/kit"

// The editor's actions (operators only), after the console's in the key
// map they share.
const (
	ActEdPrevAgent kit.Action = kit.ActScreen + 16 + iota
	ActEdNextAgent
	ActEdToAgent
	ActEdMode
	ActEdEdit
	ActEdUndo
	ActEdReset
	ActEdPlan
	ActEdApply
	ActEdJournal
	// ActEdRefused opens the sessions the draft would have refused, and
	// ActEdSuggest fills the draft with replay's suggestion (replay.go):
	// a console with a history record has them.
	ActEdRefused
	ActEdSuggest
	// ActEdRollback undoes the last apply (the journal's view): what
	// `fgtop rollback` does, for an operator with no shell on the node.
	ActEdRollback
)

// The editor's scopes: its grid (device-based), its plan view, its
// journal view, and its grid on a slot-based file.
const (
	ScEditor kit.Scope = kit.ScScreen << (1 + iota)
	ScPlan
	ScJournal
	// ScSlotGrid is the editor's grid on a slot-based file (Backend.AI
	// main's form): agents are given amounts, devices are not exclusive,
	// so the device-move keys do not exist there.
	ScSlotGrid
	// ScRefused is the list of the sessions the draft would have refused.
	ScRefused

	scGrids = ScEditor | ScSlotGrid
	// Scopes are all the editor's scopes: the keys that move, go back,
	// help and quit work in each.
	Scopes = scGrids | ScPlan | ScJournal | ScRefused
)

// GrpEdit is the help group of the editor's own keys.
const GrpEdit = "edit partition"

// Bindings are the editor's own keys, which change the node: the key map
// of an operator's console has them, a viewer's does not.
func Bindings() []kit.Binding {
	ed := func(act kit.Action, sc, short kit.Scope, keys []string, helpKey, desc string) kit.Binding {
		return kit.NewBinding(act, GrpEdit, sc, short, keys, helpKey, desc)
	}
	digits := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	bs := []kit.Binding{
		// ← and → show as one footer item.
		ed(ActEdPrevAgent, ScEditor, ScEditor, []string{"left", "h"}, "←/h", "device to previous agent").Foot("←/→", "move device", 3),
		ed(ActEdNextAgent, ScEditor, 0, []string{"right", "l"}, "→/l", "device to next agent"),
		ed(ActEdToAgent, ScEditor, 0, digits, "1-9", "device to agent N"),
		ed(ActEdMode, scGrids, scGrids, []string{"m"}, "m", "mode shared/auto-split/manual").Foot("", "mode", 4),
		ed(ActEdEdit, ScEditor, ScEditor, []string{"enter"}, "enter", "edit cpu/mem row").Foot("", "edit cpu/mem", 3),
		ed(ActEdEdit, ScSlotGrid, ScSlotGrid, []string{"enter"}, "enter", "edit the selected amount (cpu, mem, a device slot)").Foot("", "edit amount", 3),
		ed(ActEdUndo, scGrids, scGrids, []string{"u"}, "u", "undo").Foot("", "", 1),
		ed(ActEdReset, scGrids, 0, []string{"r"}, "r", "reset draft"),
		ed(ActEdPlan, Scopes, scGrids|ScPlan, []string{"p"}, "p", "plan / review").Foot("", "plan", 0),
		ed(ActEdApply, scGrids|ScPlan, scGrids|ScPlan, []string{"A"}, "A", "apply…").Foot("", "", 0),
		ed(ActEdJournal, scGrids|ScPlan, 0, []string{"J"}, "J", "journal"),
		ed(ActEdRollback, ScJournal, ScJournal, []string{"U"}, "U", "undo the last apply (roll back)…").Foot("", "undo apply", 0),
	}
	for i := range bs {
		bs[i].Mutating = true
	}
	return bs
}

// ReplayBindings are the editor's keys of the replay's line, for an
// operator's console that has a history record: R lists the sessions the
// draft would have refused, S fills the draft with the amounts that would
// have started them (slot-based grid). Both change nothing on the node by
// themselves, but S edits the draft, so a viewer's map never has them
// (a viewer has no editor at all).
func ReplayBindings() []kit.Binding {
	bs := []kit.Binding{
		kit.NewBinding(ActEdRefused, GrpEdit, scGrids, 0, []string{"R"}, "R", "sessions of the last 7d the draft would have refused").Foot("", "refused", 5),
		kit.NewBinding(ActEdSuggest, GrpEdit, ScSlotGrid, 0, []string{"S"}, "S", "fill the draft with the amounts that start every recorded session").Foot("", "suggest", 5),
	}
	for i := range bs {
		bs[i].Mutating = true
	}
	return bs
}

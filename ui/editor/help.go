package editor

import (
	"slices"
	"strings"

	"github.com/fgtop/fgtop/ui/kit"
)

// gridKeys are the editor's own keys that work on the grid it shows now
// (not those that also work on the plan view: p, A, J), in the words of
// the key map that handles them (the footer's, where it has its own), so
// the legend and the help cannot offer a key that does nothing there.
func (e *Editor) gridKeys() []kit.FootItem {
	sc := e.gridScope()
	var out []kit.FootItem
	for _, it := range e.Keys.ItemsIn(GrpEdit, sc) {
		if it.Scope&ScPlan == 0 {
			out = append(out, it.FootItem)
		}
	}
	return out
}

// legendFirst are the actions the grid's legend says first, in this
// order: at 80 columns the legend was cut after "m mode", so how to edit
// the selected row was not on the screen without ? (the tour).
var legendFirst = []kit.Action{ActEdEdit, ActEdApply, kit.ActBack, kit.ActHelp}

// legendKeys are the keys the grid's legend says, in the key map's words:
// legendFirst's, then the grid's other keys (gridKeys) in the map's order.
func (e *Editor) legendKeys() []kit.FootItem {
	sc := e.gridScope()
	items := append(e.Keys.ItemsIn(GrpEdit, sc), e.Keys.ItemsIn(kit.GrpGeneral, sc)...)
	var out []kit.FootItem
	for _, act := range legendFirst {
		if i := slices.IndexFunc(items, func(it kit.ScopedItem) bool { return it.Act == act }); i >= 0 {
			out = append(out, items[i].FootItem)
		}
	}
	for _, it := range e.gridKeys() {
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

// gridScope is the scope of the grid the draft's format gives.
func (e *Editor) gridScope() kit.Scope {
	if e.slotGrid() {
		return ScSlotGrid
	}
	return ScEditor
}

// keysText is items as "key desc" joined by sep.
func keysText(items []kit.FootItem, sep string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.Key + " " + it.Desc
	}
	return strings.Join(parts, sep)
}

// SlotBased reports whether the editor edits a slot-based file (Backend.AI
// main's form: amounts per agent and slot, devices not exclusive).
func (e *Editor) SlotBased() bool { return e.slotGrid() }

// HelpNotes are what the help screen says under the editor's keys: what
// its grid shows and its rules, for the format it edits, and its keys
// there as the key map words them.
func (e *Editor) HelpNotes() []kit.Span {
	g := e.St.G
	var out []kit.Span
	note := func(lvl kit.Level, s string) { out = append(out, kit.Span{Lvl: lvl, Text: s}) }
	if e.slotGrid() {
		note(kit.LvlPlain, "slot-based (Backend.AI main's form): each agent is given an amount of every slot the node registers: cpu (a core count), mem (a size) and each device slot (cuda.shares, cuda.device, MIG slots); devices are not exclusive: every agent allocates over every device")
		note(kit.LvlPlain, "a row is one agent's amount of one slot (was: the file's), the node's total, the other agents' amounts, and what its kernels hold now (red above the amount)")
		note(kit.LvlPlain, "amounts need allocation-mode manual (m); auto-split shows the deal it would make")
		note(kit.LvlPlain, "cpu takes a core count (15); mem a size with a unit (120G, 96GiB; a bare number is bytes), not below the config's memory-align-size; a device slot an amount (2.0); the field says how it reads what you type and the plan's verdict, and what does not parse never enters the draft")
		note(kit.LvlPlain, "keys on this grid: "+keysText(e.gridKeys(), " · "))
		note(kit.LvlPlain, "apply opens a dialog whose default is Cancel; when live kernels are affected, it asks you to type that agent's id (tab to Apply, then Enter)")
	} else {
		note(kit.LvlPlain, g.Owned+"  the agent owns the device in the draft   "+g.Gained+g.Owned+" it gains it   "+g.Lost+"  it loses it")
		note(kit.LvlPlain, "LIVE: what kernels hold on the device now; ! marks kernels of an agent that will not own it (a move away from them, or left after an apply)")
		note(kit.LvlPlain, "moves, cpu and mem need allocation-mode manual (m); auto-split shows the deal it would make")
		note(kit.LvlPlain, "cpu takes core ranges (0-7,16), each core once; mem a size with a unit (120G, 96GiB; a bare number is bytes), not below the config's memory-align-size; the field says how it reads what you type, and what does not parse never enters the draft")
		note(kit.LvlPlain, "apply opens a dialog whose default is Cancel; when live kernels would be left on devices their agent loses, it asks you to type that agent's id (tab to Apply, then Enter)")
	}
	if e.replayOn() {
		note(kit.LvlPlain, "under the verdict: the last "+spanText(ReplaySpan)+" of the history record replayed under the draft after each edit (off the screen's loop; plan --replay's rules): which agents' sessions would not have started, and why (R lists them, esc back)")
		if e.slotGrid() {
			note(kit.LvlPlain, "S fills the draft with the amounts under which every recorded session would have started (plan --suggest's; u undoes)")
		}
	}
	note(kit.LvlPlain, "the plan is judged by Backend.AI main's loader, or by the BEP-1044 draft's when you chose its device-based format; the verdict says which")
	note(kit.LvlPlain, "one operator edits at a time; another apply makes your draft STALE until you review it (p)")
	note(kit.LvlPlain, "q is a letter here; esc leaves, ctrl+c quits (with a draft it asks first)")
	if e.Desk != nil {
		note(kit.LvlPlain, "U in the journal (J) undoes the last apply, after a dialog whose default is Cancel (refused where the restored partition would strand live kernels); from a shell: "+RollbackCommand(e.Desk.Path()))
	}
	note(kit.LvlDim, "the agents read agent.toml only at start-up: restart them after an apply")
	return out
}

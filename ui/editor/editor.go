package editor

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// The partition editor (operators only; `e`). The draft is a
// partition.Request, the same one the CLI's plan and apply flags build; every
// edit pushes the previous request on the undo stack and re-plans through
// the desk's session, so what the grid shows is always what Plan says the
// file would give (the auto-split preview is simply the plan's Next
// partition). The UI writes nothing itself: Session.Apply does, for the
// console's Actor, and refuses stale drafts and viewers whatever is shown.

// edView is what the editor shows.
type edView uint8

// What the editor shows: the grid, the plan, the journal.
const (
	EdGrid edView = iota
	EdPlan
	edJournal
	// edRefused is the sessions the draft would have refused (R).
	edRefused
)

// The dialogs' kinds (kit.Dialog.Kind) the editor and the console's desk
// open.
const (
	DlgApply    uint8 = iota // apply the draft's plan
	DlgDiscard               // leave the editor, losing the draft
	DlgTakeOver              // take the draft from another operator
	DlgFormat                // which format manual mode writes tables in
	DlgRollback              // undo the last apply
)

// EdRowKind is what an editor row edits.
type EdRowKind uint8

// The rows the editor has: a device's owner, an agent's CPU, its memory,
// (slot-based) an agent's amount of one slot.
const (
	RowDevice EdRowKind = iota
	RowCPU
	RowMem
	// RowSlot is an agent's amount of one slot in a slot-based file.
	RowSlot
)

// EdRow is one selectable row of the grid: a device, an agent's cpu or
// mem, or (slot-based) an agent's amount of a slot.
type EdRow struct {
	Kind  EdRowKind
	Key   model.DeviceKey // RowDevice
	Agent int             // rowCPU, rowMem, RowSlot: index into plan.Next.Agents
	Dev   int             // index into derived.devs, or -1
	Slot  model.SlotName  // RowSlot
}

// journalRows is how many journal records the journal view shows.
const journalRows = 50

// Editor is the open partition editor, a screen over the main one: the
// desk session, the draft and its plan, and the editor's own view state.
// The desk's work runs off the UI loop (editor_cmds.go); its messages come
// back through the root, which passes this editor those of its session.
type Editor struct {
	*kit.Common
	// derive is what the console derived from its adopted snapshot (nil
	// before the first): the editor lists the same devices.
	Derive func() *render.Derived
	kit.Closer
	kit.Area
	Desk *partition.Desk
	Work *DeskWork
	// dlg is the last dialog the editor opened (a lost draft closes an
	// apply dialog).
	dlg *kit.Dialog

	Sess *partition.Session
	Req  partition.Request
	undo []partition.Request
	Plan *partition.Plan
	// planSnap is the snapshot the plan's holders were read from; a newer
	// one re-plans on the next tick.
	planSnap *model.Snapshot

	Showing edView
	Rows    []EdRow
	Cursor  int
	off     int
	// planOff and jourOff scroll the plan and journal views.
	planOff int
	jourOff int
	// jourWrite is the desk's latest write when last polled: a new one
	// reloads the journal view, which kept saying "nothing applied yet"
	// after another hand's apply (the tour).
	jourWrite partition.Hold
	// applyWrite is jourWrite when the apply dialog opened; staleShut: a
	// draft gone stale closed that dialog, and until p its notice names
	// the first write after applyWrite once a poll brings it (the engine
	// sees the file change before the desk's poll names the hand).
	applyWrite partition.Hold
	staleShut  bool

	// input is the cpu or mem field being typed, on row inputRow;
	// inputCheck is what its text means, re-checked on every key.
	Input      *textinput.Model
	inputRow   int
	InputCheck FieldCheck
	checkField func(string) FieldCheck

	// stale says why the draft may not be applied until reviewed; lost
	// says why the session is gone (taken over, closed).
	Stale string
	Lost  string
	// result is what the last apply did, shown under the grid: its first
	// line wraps over two rows; a further line (how to undo it) leads the
	// verdict's row, so the command is not split between rows.
	result [][]kit.Span
	// applying is set while an apply runs (in a tea.Cmd): a second one
	// is refused until the first one's result is in.
	Applying bool

	journal []agentconfig.JournalRecord
	// undoNote is what the last U said (a refusal and the kernels it
	// names, a rollback's outcome), at the head of the journal view.
	undoNote [][]kit.Span
	// wrote is the sha256 of the version this editor's last apply or
	// rollback wrote: whether the agents run it is drawn live
	// (restartAdvice).
	wrote string
	// journalWhat is what each journal record changed (journalChanges).
	journalWhat []string
	journalBad  int
	journalErr  string

	// rp is the draft's replay against the history record (replay.go).
	rp replayState
}

// agentShort names the plan's agents as the rest of the console does.
func (e *Editor) agentShorts() []string {
	if e.Plan == nil || e.Plan.Next == nil {
		return nil
	}
	ags := make([]model.Agent, len(e.Plan.Next.Agents))
	for i, a := range e.Plan.Next.Agents {
		ags[i].ID = a.ID
	}
	short := render.AgentShortNames(ags)
	out := make([]string, len(ags))
	for i, a := range ags {
		out[i] = short[a.ID]
	}
	return out
}

// changeSummary says what the draft changes against the file it is based
// on, in an operator's terms: the mode, the accelerators that move, the
// agents whose cpu or mem changes. It counts the plan, not the keys
// pressed: an edit undone by a later one is no change.
func (e *Editor) changeSummary() string {
	p := e.Plan
	if p == nil || p.Current == nil || p.Next == nil {
		return "no change"
	}
	var parts []string
	if p.ModeFrom != p.ModeTo {
		parts = append(parts, "mode "+p.ModeFrom+" "+e.St.G.To+" "+p.ModeTo)
	}
	devs := 0
	for _, m := range p.Moves {
		if m.Key.Name != "cpu" && m.Key.Name != "mem" {
			devs++
		}
	}
	switch {
	case p.Current.Exclusive && !p.Next.Exclusive:
		// Every device "changes owner" when the partition is shared: the
		// count would say nothing.
		parts = append(parts, "every device shared by every agent")
	case devs > 0:
		parts = append(parts, kit.Plural(devs, "device move"))
	}
	cpu, mem := 0, 0
	for i := range p.Next.Agents {
		n := &p.Next.Agents[i]
		c := p.Current.Agent(n.ID)
		if c == nil {
			continue
		}
		if cpuText(p, n) != cpuText(p, c) {
			cpu++
		}
		if !memAmount(p.Current, c).Equal(memAmount(p.Next, n)) {
			mem++
		}
	}
	if cpu > 0 {
		parts = append(parts, "cpu of "+kit.Plural(cpu, "agent"))
	}
	if p.Format == agentconfig.FormatSlotBased {
		changed := map[model.SlotName]int{}
		var order []model.SlotName
		for i := range p.Next.Agents {
			n := &p.Next.Agents[i]
			c := p.Current.Agent(n.ID)
			if c == nil {
				continue
			}
			for _, slot := range deviceSlotsOf(p.Next) {
				if !c.Capacity[slot].Equal(n.Capacity[slot]) {
					if changed[slot] == 0 {
						order = append(order, slot)
					}
					changed[slot]++
				}
			}
		}
		for _, slot := range order {
			parts = append(parts, string(slot)+" of "+kit.Plural(changed[slot], "agent"))
		}
	}
	if mem > 0 {
		parts = append(parts, "mem of "+kit.Plural(mem, "agent"))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// Dirty reports whether the draft changes anything.
func (e *Editor) Dirty() bool { return !e.Req.Empty() }

// cloneRequest copies a request's slices so the undo stack never shares
// them with the draft.
func cloneRequest(r partition.Request) partition.Request {
	r.Moves = slices.Clone(r.Moves)
	r.CPU = slices.Clone(r.CPU)
	r.Mem = slices.Clone(r.Mem)
	r.Slots = slices.Clone(r.Slots)
	return r
}

// Replan re-plans the draft against the session's base and the latest
// snapshot, and rebuilds the grid's rows.
func (e *Editor) Replan() {
	e.Plan = e.Sess.Plan(e.Req)
	if e.Plan.Valid() {
		e.DropFlash(invalidPlanFlash)
	}
	e.planSnap = e.Snap
	e.Rows = e.editorRows()
	e.Cursor = min(e.Cursor, max(len(e.Rows)-1, 0))
	e.scheduleReplay()
	e.Invalidate()
}

// editorRows lists the grid's rows: every accelerator of the node (MIG
// instances under their GPU), then any device the partitions name that
// the node does not have, then each agent's cpu and mem.
func (e *Editor) editorRows() []EdRow {
	if e.slotGrid() {
		return e.slotRows()
	}
	var rows []EdRow
	seen := map[model.DeviceKey]bool{}
	if e.data() != nil {
		for i := range e.data().Devs {
			rows = append(rows, EdRow{Kind: RowDevice, Key: e.data().Devs[i].Key, Dev: i})
			seen[e.data().Devs[i].Key] = true
		}
	}
	var extra []model.DeviceKey
	for _, part := range []*partition.Partition{e.Plan.Current, e.Plan.Next} {
		if part == nil {
			continue
		}
		for _, ap := range part.Agents {
			for n, ids := range ap.Owns {
				if n == "cpu" || n == "mem" {
					continue
				}
				for _, id := range ids {
					k := model.DeviceKey{Name: n, ID: id}
					if !seen[k] {
						seen[k] = true
						extra = append(extra, k)
					}
				}
			}
		}
	}
	slices.SortFunc(extra, func(x, y model.DeviceKey) int {
		return agentconfig.NaturalCompare(partition.Key(x), partition.Key(y))
	})
	for _, k := range extra {
		rows = append(rows, EdRow{Kind: RowDevice, Key: k, Dev: -1})
	}
	if e.Plan.Next != nil {
		for i := range e.Plan.Next.Agents {
			rows = append(rows, EdRow{Kind: RowCPU, Agent: i, Dev: -1})
		}
		for i := range e.Plan.Next.Agents {
			rows = append(rows, EdRow{Kind: RowMem, Agent: i, Dev: -1})
		}
	}
	return rows
}

// edit replaces the draft with next (the previous one goes on the undo
// stack) and re-plans.
func (e *Editor) edit(next partition.Request) {
	if e.refuseWhileApplying() {
		return
	}
	e.undo = append(e.undo, cloneRequest(e.Req))
	e.Req = next
	e.result = nil
	e.Replan()
}

// refuseWhileApplying says so and reports true while an apply runs: the
// draft being written is not changed under it (its outcome empties it).
func (e *Editor) refuseWhileApplying() bool {
	if !e.Applying {
		return false
	}
	e.Flashf(kit.LvlWarn, "an apply is in progress: the draft changes again once its result is in")
	return true
}

// manualOnly says why a device, cpu or mem edit cannot be made in the
// draft's mode, or "".
func (e *Editor) manualOnly(what string) string {
	p := e.Plan
	if p.Format == agentconfig.FormatSlotBased && what == "move" {
		return "slot-based format: devices are not exclusive, so they cannot be moved; set the agents' cpu counts and mem instead"
	}
	if p.ModeTo != agentconfig.ModeManual {
		return what + " needs allocation-mode manual (the draft is " + p.ModeTo + "): press m until it says manual; the partition in effect is the starting point"
	}
	return ""
}

// moveSelected gives the selected device to agent index to (clamped);
// delta != 0 moves it relative to its current owner instead.
func (e *Editor) moveSelected(to, delta int) {
	if e.Cursor >= len(e.Rows) || e.Rows[e.Cursor].Kind != RowDevice {
		e.Flashf(kit.LvlInfo, "select a device row to move it (cpu and mem rows are edited with enter)")
		return
	}
	if why := e.manualOnly("moving a device"); why != "" {
		e.Flashf(kit.LvlWarn, why)
		return
	}
	n := len(e.Plan.Next.Agents)
	k := e.Rows[e.Cursor].Key
	if delta != 0 {
		cur := -1
		for i := range e.Plan.Next.Agents {
			if e.Plan.Next.Agents[i].OwnsDevice(k) {
				cur = i
				break
			}
		}
		switch {
		case cur < 0 && delta > 0:
			to = 0
		case cur < 0:
			to = n - 1
		default:
			to = cur + delta
		}
	}
	if to < 0 || to >= n {
		if delta == 0 {
			e.Flashf(kit.LvlInfo, "there is no agent "+strconv.Itoa(to+1)+": the config has "+kit.Plural(n, "agent"))
		}
		return
	}
	target := e.Plan.Next.Agents[to].ID
	if owners := e.Plan.Next.Owners(k); len(owners) == 1 && owners[0] == target {
		return
	}
	spec := partition.Key(k)
	next := cloneRequest(e.Req)
	next.Moves = slices.DeleteFunc(next.Moves, func(m partition.Move) bool { return m.Device == spec })
	// Moving a device back to where the file has it drops the move, so the
	// draft says only what changes.
	if owners := e.Plan.Current.Owners(k); !(next.Mode == "" && len(owners) == 1 && owners[0] == target) {
		next.Moves = append(next.Moves, partition.Move{Device: spec, Agent: target})
	}
	e.edit(next)
}

// cycleMode switches the draft's mode: shared, auto-split, manual. Leaving
// manual drops the draft's moves and cpu/mem edits (they only exist in
// manual; u brings them back).
func (e *Editor) cycleMode() {
	modes := []string{agentconfig.ModeShared, agentconfig.ModeAutoSplit, agentconfig.ModeManual}
	i := slices.Index(modes, e.Plan.ModeTo)
	nextMode := modes[(i+1)%len(modes)]
	next := cloneRequest(e.Req)
	next.Mode = nextMode
	base := e.Sess.Base()
	if nextMode == base.Mode {
		next.Mode = ""
	}
	dropped := nextMode != agentconfig.ModeManual && (len(next.Moves)+len(next.CPU)+len(next.Mem)+len(next.Slots) > 0)
	if nextMode != agentconfig.ModeManual {
		// The format only matters for tables manual writes.
		next.Moves, next.CPU, next.Mem, next.Slots, next.Format = nil, nil, nil, nil, ""
	}
	if next.Mode == agentconfig.ModeManual && base.FormatGuessed && next.Format == "" {
		// The file does not say which format: ask, main's by default.
		e.askFormat(next)
		return
	}
	e.edit(next)
	msg := "mode " + nextMode
	switch nextMode {
	case agentconfig.ModeAutoSplit:
		msg += ": the grid previews the auto-split deal"
	case agentconfig.ModeShared:
		msg += ": every agent sees every device"
	default:
		msg += ": the partition in effect is the starting point"
	}
	if dropped {
		msg += "; device moves and cpu/mem edits dropped (u undoes)"
	}
	e.Flashf(kit.LvlInfo, msg)
}

// askFormat asks which format manual mode writes the allocation tables of
// a file that has none in: Backend.AI main's slot-based form (the left
// button, focused: Enter takes it) or the BEP-1044 device-based draft.
func (e *Editor) askFormat(next partition.Request) {
	e.openDialog(&kit.Dialog{Kind: DlgFormat, Cancelled: "cancelled: the mode is unchanged", Title: "Manual mode: which format?",
		CancelLabel: "Main's slot-based", OKLabel: "BEP-1044 device-based",
		Left: func() { e.chooseFormat(next, agentconfig.FormatSlotBased) },
		OK:   func() tea.Cmd { e.chooseFormat(next, agentconfig.FormatDeviceBased); return nil },
		Body: [][]kit.Span{
			{{Lvl: kit.LvlPlain, Text: "agent.toml has no allocation tables, so it does not say which format to write them in."}},
			{},
			{{Lvl: kit.LvlAccent, Text: "Main's slot-based"}, {Lvl: kit.LvlPlain, Text: " (cpu = a core count, devices = { \"cuda.shares\" = \"2.0\" }): what Backend.AI main loads. Each agent starts from an even split."}},
			{{Lvl: kit.LvlWarn, Text: "BEP-1044 device-based"}, {Lvl: kit.LvlPlain, Text: " (cpu = [core ids], devices = { cuda = [ids] }): " + agentconfig.DraftFormatWarning + "; only the unmerged PR #8463 loads it."}},
		},
	})
}

// openDialog puts a dialog the editor asks over it.
func (e *Editor) openDialog(d *kit.Dialog) {
	d.Common = e.Common
	e.dlg = d
	e.Open(d)
}

// chooseFormat switches the draft to manual in format f.
func (e *Editor) chooseFormat(next partition.Request, f agentconfig.Format) {
	if e.Closed() {
		return
	}
	next.Format = f
	e.edit(next)
	if f == agentconfig.FormatDeviceBased {
		e.Flashf(kit.LvlWarn, "mode manual, BEP-1044 device-based: "+agentconfig.DraftFormatWarning)
		return
	}
	e.Flashf(kit.LvlInfo, "mode manual, main's slot-based form: each agent starts from an even split")
}

// startInput opens the text field of the selected cpu or mem row.
func (e *Editor) startInput() tea.Cmd {
	if e.Cursor >= len(e.Rows) {
		return nil
	}
	r := e.Rows[e.Cursor]
	if r.Kind == RowDevice {
		e.Flashf(kit.LvlInfo, "enter edits the cpu and mem rows; move a device with ←/→ or its agent's number")
		return nil
	}
	what := "editing cpu"
	switch r.Kind {
	case RowMem:
		what = "editing mem"
	case RowSlot:
		what = "editing " + string(r.Slot)
	}
	if why := e.manualOnly(what); why != "" {
		e.Flashf(kit.LvlWarn, why)
		return nil
	}
	ti := textinput.New()
	ti.Prompt = ""
	ti.SetStyles(e.St.Input)
	ti.CharLimit = 256
	ti.SetValue(e.fieldValue(r))
	ti.CursorEnd()
	check := e.fieldChecker(r)
	ti.Validate = func(s string) error { return check(s).Err }
	e.Input, e.inputRow, e.InputCheck, e.checkField = &ti, e.Cursor, check(ti.Value()), check
	return ti.Focus()
}

// fieldValue is what a cpu or mem row holds in the draft, as typed.
func (e *Editor) fieldValue(r EdRow) string {
	ap := &e.Plan.Next.Agents[r.Agent]
	if r.Kind == RowSlot {
		return slotValue(ap, r.Slot)
	}
	if r.Kind == RowMem {
		if ap.Mem.IsZero() {
			return ""
		}
		return model.FormatBinarySize(ap.Mem)
	}
	if e.Plan.Format == agentconfig.FormatSlotBased {
		return ap.Capacity[model.SlotCPU].String()
	}
	if ap.Owns == nil {
		return ""
	}
	return partition.IDRanges(ap.Owns["cpu"])
}

// FieldCheck is what a cpu or mem field's text means, worked out as it is
// typed: Hint says how it is read ("= 512 MiB"), Warn what is allowed but
// likely a slip (a size with no unit is bytes), Err why it is refused.
type FieldCheck struct {
	Hint string
	Warn string
	Err  error
}

// spans is the check as shown after the field.
func (c FieldCheck) spans() []kit.Span {
	var out []kit.Span
	if c.Hint != "" {
		out = append(out, kit.Span{Lvl: kit.LvlAccent, Text: c.Hint})
	}
	if c.Err != nil {
		if len(out) > 0 {
			out = append(out, kit.Span{Lvl: kit.LvlDim, Text: " · "})
		}
		return append(out, kit.Span{Lvl: kit.LvlCrit, Text: c.Err.Error()})
	}
	if c.Warn != "" {
		if len(out) > 0 {
			out = append(out, kit.Span{Lvl: kit.LvlDim, Text: " · "})
		}
		out = append(out, kit.Span{Lvl: kit.LvlWarn, Text: c.Warn})
	}
	return out
}

// fieldChecker checks a cpu or mem field as it is typed; what it refuses
// never enters the draft.
func (e *Editor) fieldChecker(r EdRow) func(string) FieldCheck {
	if r.Kind == RowSlot {
		return e.slotChecker(r)
	}
	if r.Kind == RowMem {
		total := e.Plan.Next.MemTotal
		var align model.Dec
		if b := e.Sess.Base(); b != nil {
			align = b.MemoryAlignSize
		}
		return func(s string) FieldCheck {
			return checkMem(strings.TrimSpace(s), total, align)
		}
	}
	if e.Plan.Format == agentconfig.FormatSlotBased {
		return func(s string) FieldCheck {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 {
				return FieldCheck{Err: errors.New("the slot-based format takes a core count, e.g. 15")}
			}
			return FieldCheck{Hint: "= " + kit.Plural(n, "core")}
		}
	}
	cores := map[model.DeviceID]bool{}
	if e.Snap != nil {
		for _, d := range e.Snap.Devices {
			if d.Name == "cpu" {
				cores[d.ID] = true
			}
		}
	}
	return func(s string) FieldCheck { return checkCPU(s, cores) }
}

// checkMem reads a mem field with the CLI's rules (partition.ParseMem,
// partition.CheckMem): what --mem refuses, the field refuses.
func checkMem(s string, total, align model.Dec) FieldCheck {
	v, warn, err := partition.ParseMem(s)
	if err != nil {
		return FieldCheck{Err: err}
	}
	c := FieldCheck{Hint: "= " + humanBytes(v), Warn: warn}
	if err := partition.CheckMem(v, total, align); err != nil {
		c.Err, c.Warn = err, ""
	}
	return c
}

// humanBytes says a byte count the way an operator reads it.
var humanBytes = partition.HumanBytes

// checkCPU reads a cpu field: core ranges, each core once, every core on
// this node (when the node's cores are known).
func checkCPU(s string, cores map[model.DeviceID]bool) FieldCheck {
	parts := strings.Split(s, ",")
	for i, part := range parts {
		if strings.TrimSpace(part) == "" {
			where := "an empty part"
			switch {
			case len(parts) == 1:
				return FieldCheck{Err: errors.New("no cores: write ranges such as 0-7,16")}
			case i == len(parts)-1:
				where = "a trailing comma"
			case i == 0:
				where = "a leading comma"
			}
			return FieldCheck{Err: fmt.Errorf("%s in the list: remove it", where)}
		}
	}
	ids, err := partition.ParseIDRanges(s)
	if err != nil {
		return FieldCheck{Err: err}
	}
	seen := make(map[model.DeviceID]bool, len(ids))
	var twice []model.DeviceID
	for _, id := range ids {
		if seen[id] && !slices.Contains(twice, id) {
			twice = append(twice, id)
		}
		seen[id] = true
	}
	if len(twice) > 0 {
		return FieldCheck{Err: fmt.Errorf("core %s listed twice", partition.IDRanges(twice))}
	}
	if len(cores) > 0 {
		var unknown []model.DeviceID
		for _, id := range ids {
			if !cores[id] {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			return FieldCheck{Err: fmt.Errorf("no core %s on this node (it has %d)", partition.IDRanges(unknown), len(cores))}
		}
	}
	return FieldCheck{Hint: "= " + kit.Plural(len(ids), "core")}
}

// commitInput puts a valid field into the draft; an invalid one stays
// open with its error.
func (e *Editor) commitInput() {
	ti := e.Input
	val := strings.TrimSpace(ti.Value())
	if c := e.checkField(val); c.Err != nil {
		e.InputCheck = c
		e.Invalidate()
		return
	}
	r := e.Rows[e.inputRow]
	e.Input = nil
	if val == e.fieldValue(r) {
		return
	}
	id := e.Plan.Next.Agents[r.Agent].ID
	if r.Kind == RowSlot {
		next, ok := e.withSlot(r, val)
		if ok {
			e.edit(next)
		}
		return
	}
	next := cloneRequest(e.Req)
	if r.Kind == RowMem {
		v, _ := model.ParseFiniteBinarySize(val)
		next.Mem = slices.DeleteFunc(next.Mem, func(m partition.MemSet) bool { return m.Agent == id })
		next.Mem = append(next.Mem, partition.MemSet{Agent: id, Bytes: v})
	} else {
		next.CPU = slices.DeleteFunc(next.CPU, func(c partition.CPUSet) bool { return c.Agent == id })
		next.CPU = append(next.CPU, partition.CPUSet{Agent: id, Spec: val})
	}
	e.edit(next)
}

// inputKey handles a key while a field is open: enter sets it, esc
// cancels, anything else edits the text (and is validated at once).
func (e *Editor) inputKey(msg tea.KeyPressMsg) tea.Cmd {
	e.Invalidate()
	switch msg.String() {
	case "enter":
		e.commitInput()
		return nil
	case "esc":
		e.Input = nil
		return nil
	case "ctrl+c":
		e.Input = nil
		return e.Quit()
	}
	ti, cmd := e.Input.Update(msg)
	e.Input = &ti
	e.InputCheck = e.checkField(ti.Value())
	return cmd
}

// undoEdit restores the draft before the last edit.
func (e *Editor) undoEdit() {
	if e.refuseWhileApplying() {
		return
	}
	if len(e.undo) == 0 {
		e.Flashf(kit.LvlInfo, "nothing to undo")
		return
	}
	e.Req = e.undo[len(e.undo)-1]
	e.undo = e.undo[:len(e.undo)-1]
	e.Replan()
}

// resetDraft empties the draft (u brings it back).
func (e *Editor) resetDraft() {
	if !e.Dirty() {
		e.Flashf(kit.LvlInfo, "the draft is empty: the grid shows the file as it is")
		return
	}
	e.edit(partition.Request{})
	e.Flashf(kit.LvlInfo, "draft reset to the file as it is (u undoes)")
}

// invalidPlanFlash begins the footer's answer to apply on an invalid
// plan; an edit that makes the plan valid takes it away.
const invalidPlanFlash = "the plan is invalid under "

// askApply opens the apply dialog, default Cancel; a plan that strands live
// kernels also needs the affected agent's id typed.
func (e *Editor) askApply() {
	p := e.Plan
	switch {
	case e.Lost != "":
		e.Flashf(kit.LvlCrit, "not applied: "+e.Lost)
		return
	case e.Applying:
		e.Flashf(kit.LvlWarn, "an apply is in progress: wait for its result before applying again")
		return
	case e.Stale != "":
		e.Flashf(kit.LvlWarn, "the draft is stale ("+e.Stale+"): press p to review the recomputed plan before applying")
		return
	case !p.Valid():
		e.Flashf(kit.LvlCrit, invalidPlanFlash+p.JudgeLabel()+" ("+kit.Plural(len(p.Errors), "error")+"): "+FirstLine(p.Errors[0])+" (p shows them all)")
		return
	case !p.Changed():
		e.Flashf(kit.LvlInfo, "the draft changes nothing: there is nothing to apply")
		return
	}
	d := &kit.Dialog{Kind: DlgApply, Title: "Apply the draft", OKLabel: "Apply", More: "esc, then p: the whole plan"}
	e.applyWrite, e.staleShut = e.jourWrite, false
	d.OK = func() tea.Cmd {
		if !e.Closed() {
			e.DoApply(p, d.Expect != "")
		}
		return nil
	}
	to := " " + e.St.G.To + " "
	d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlPlain, Text: "Write " + kit.Plural(len(p.Edits), "change") + " to "}, {Lvl: kit.LvlAccent, Text: p.Config}, {Lvl: kit.LvlPlain, Text: "?"}})
	for _, ag := range p.Agents {
		var parts []string
		if len(ag.Gains) > 0 {
			parts = append(parts, "gains "+strings.Join(ag.Gains, ", "))
		}
		if len(ag.Losses) > 0 {
			parts = append(parts, "loses "+strings.Join(ag.Losses, ", "))
		}
		// As the grid says it: in shared mode the node's available
		// memory, not "not partitioned".
		if was, now := memAmount(p.Current, p.Current.Agent(ag.Agent)), memAmount(p.Next, p.Next.Agent(ag.Agent)); !was.Equal(now) {
			parts = append(parts, "mem "+memOrNone(was)+to+memOrNone(now))
		}
		if p.Format == agentconfig.FormatSlotBased {
			// A slot-based edit changes amounts, not devices: without
			// these the dialog asked to write changes it did not name.
			for _, c := range ag.Capacity {
				if c.Slot != model.SlotMem {
					parts = append(parts, string(c.Slot)+" "+c.From.String()+to+c.To.String())
				}
			}
		}
		if len(parts) > 0 {
			d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + string(ag.Agent) + ": "}, {Lvl: kit.LvlDim, Text: strings.Join(parts, "; ")}})
		}
	}
	if p.ModeFrom != p.ModeTo {
		d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlPlain, Text: "  allocation-mode " + p.ModeFrom + to + p.ModeTo}})
	}
	if len(p.Warnings) > 0 {
		// The plan's warnings (memory beyond the host's, a rule the
		// current file breaks): an operator who presses A without p
		// confirms them here or nowhere.
		d.Body = append(d.Body, []kit.Span{}, []kit.Span{{Lvl: kit.LvlWarn, Text: "Warnings (" + strconv.Itoa(len(p.Warnings)) + "):"}})
		for _, w := range p.Warnings {
			d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + FirstLine(w)}})
		}
	}
	if un := p.Unchecked(); len(un) > 0 {
		d.Body = append(d.Body, []kit.Span{}, []kit.Span{{Lvl: kit.LvlWarn, Text: "Not checked on this node:"}})
		for _, l := range un {
			d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + l}})
		}
	}
	if aff := p.Affected(); len(aff) > 0 {
		d.Expect = affectedAgents(p)
		d.Body = append(d.Body, []kit.Span{}, []kit.Span{{Lvl: kit.LvlCrit, Text: "Live kernels are affected"}, {Lvl: kit.LvlPlain, Text: " (they keep running where they are until they end):"}})
		for _, l := range aff {
			d.Body = append(d.Body, []kit.Span{{Lvl: kit.LvlWarn, Text: "  " + l}})
		}
		d.Body = append(d.Body, []kit.Span{})
		ask := "To apply anyway, type the id of the agent whose kernels are affected: "
		if strings.Contains(d.Expect, " ") {
			ask = "To apply anyway, type the ids of the agents whose kernels are affected, separated by spaces: "
		}
		d.Ask = [][]kit.Span{{{Lvl: kit.LvlPlain, Text: ask}, {Lvl: kit.LvlAccent, Text: d.Expect}}}
		ti := textinput.New()
		ti.Prompt = "> "
		ti.SetStyles(e.St.Input)
		ti.CharLimit = 512
		ti.Focus()
		d.Input = &ti
	}
	d.Foot = append(d.Foot, []kit.Span{}, []kit.Span{{Lvl: kit.LvlDim, Text: "The agents read agent.toml only at start-up: restart them afterwards."}})
	e.openDialog(d)
}

// affectedAgents is what the typed confirmation asks for: the ids of the
// agents whose live kernels the plan strands (they lose the devices those
// kernels hold, or capacity below what they hold), space-separated. The
// losing agent is asked rather than the gaining one because it always
// exists (a device can move to no agent) and its kernels are the ones at
// stake.
func affectedAgents(p *partition.Plan) string {
	var ids []string
	add := func(id model.AgentID) {
		if !slices.Contains(ids, string(id)) {
			ids = append(ids, string(id))
		}
	}
	for _, m := range p.Moves {
		for _, h := range m.Holders {
			if h.Stranded {
				add(h.Agent)
			}
		}
	}
	for _, s := range p.Strained {
		add(s.Agent)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// sessionError marks the draft stale or lost after a refusal.
func (e *Editor) sessionError(err error) {
	switch {
	case err == nil:
	case errors.Is(err, partition.ErrStale):
		e.Stale = e.staleReason(err)
	case errors.Is(err, partition.ErrTakenOver), errors.Is(err, partition.ErrClosed):
		e.Lost = FirstLine(err.Error())
	}
	e.Invalidate()
}

// staleReason is why the draft is stale, naming the config by its base
// name (the full path is in the editor's title).
func (e *Editor) staleReason(err error) string {
	s := strings.TrimPrefix(FirstLine(err.Error()), partition.ErrStale.Error()+": ")
	if d := e.Desk; d != nil {
		s = strings.ReplaceAll(s, d.Path(), filepath.Base(d.Path()))
	}
	return s
}

// Rank stacks the editor with the screens.
func (e *Editor) Rank() kit.LayerRank { return kit.RankScreen }

// Owns reports whether the desk message of session s is this editor's.
func (e *Editor) Owns(s *partition.Session) bool { return e.Sess == s }

// Scope is the key scope of what the editor shows.
func (e *Editor) Scope() kit.Scope {
	switch e.Showing {
	case EdPlan:
		return ScPlan
	case edJournal:
		return ScJournal
	case edRefused:
		return ScRefused
	}
	if e.slotGrid() {
		return ScSlotGrid
	}
	return ScEditor
}

// Update handles a key, the wheel, the clock tick and the desk's
// messages of this editor's session (the root passes them).
func (e *Editor) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return e.Key(msg)
	case tea.MouseWheelMsg:
		delta := kit.WheelDelta(tea.Mouse(msg))
		switch e.Showing {
		case EdPlan:
			e.planOff = max(e.planOff+delta, 0)
		case edJournal:
			e.jourOff = max(e.jourOff+delta, 0)
		case edRefused:
			e.refMove(delta, delta > 0)
		default:
			if e.Input == nil {
				e.moveEdCursor(delta)
			}
		}
		e.Invalidate()
	case kit.TickMsg, kit.AdoptedMsg:
		// Every adopted snapshot, not just the clock: a snapshot that
		// carries the base's hash ends the engine's lag, and one missed
		// between two ticks would hide a later return to the old file.
		e.check()
	case ReplayMsg:
		e.replayMsg(msg)
	default:
		e.deskMsg(msg)
	}
	return nil
}

// notHere says, for a main-screen key that the editor does not take,
// why it does nothing here and what to do instead: a key that did nothing
// and said nothing left the tour guessing.
var notHere = map[string]string{
	"q": "q does not quit in the editor: esc leaves it, ctrl+c quits",
	"/": "/ filters on the main screen: esc leaves the editor",
	":": ": commands are on the main screen: esc leaves the editor",
}

// Key handles a key while the editor is on top.
func (e *Editor) Key(msg tea.KeyPressMsg) tea.Cmd {
	if e.Input != nil {
		return e.inputKey(msg)
	}
	act := e.Keys.LookupIn(e.Scope(), msg)
	if act == kit.ActQuit {
		return e.Quit()
	}
	e.Invalidate()
	if why, ok := notHere[msg.String()]; ok && act == kit.ActNone {
		e.Flashf(kit.LvlInfo, why)
		return nil
	}
	if e.Showing != EdGrid {
		switch act {
		case kit.ActBack:
			e.Showing = EdGrid
		case kit.ActHelp:
			e.Send(kit.HelpMsg{})
		case ActEdApply:
			e.askApply()
		case ActEdJournal:
			e.Showing, e.jourOff = edJournal, 0
			e.loadJournal()
		case ActEdPlan:
			e.review()
		case ActEdRollback:
			e.askRollback()
		default:
			off := &e.planOff
			switch e.Showing {
			case edJournal:
				off = &e.jourOff
			case edRefused:
				e.refKey(act)
				return nil
			}
			e.Scroll(off, act)
		}
		return nil
	}
	if !e.acts(act) {
		e.Flashf(kit.LvlCrit, "you no longer hold the draft ("+e.Lost+"): esc leaves")
		return nil
	}
	if delta, ok := kit.CursorDelta(act, e.edVisible()); ok {
		e.moveEdCursor(delta)
		return nil
	}
	switch act {
	case kit.ActBack:
		if e.Dirty() && e.Lost == "" {
			e.askDiscard(false)
			return nil
		}
		e.leave()
	case kit.ActHelp:
		e.Send(kit.HelpMsg{})
	case ActEdPrevAgent:
		e.moveSelected(0, -1)
	case ActEdNextAgent:
		e.moveSelected(0, 1)
	case ActEdToAgent:
		if n, err := strconv.Atoi(msg.String()); err == nil {
			e.moveSelected(n-1, 0)
		}
	case ActEdMode:
		e.cycleMode()
	case ActEdEdit:
		return e.startInput()
	case ActEdUndo:
		e.undoEdit()
	case ActEdReset:
		e.resetDraft()
	case ActEdPlan:
		e.review()
	case ActEdApply:
		e.askApply()
	case ActEdJournal:
		e.Showing, e.jourOff = edJournal, 0
		e.loadJournal()
	case ActEdRefused:
		e.openRefused()
	case ActEdSuggest:
		e.suggest()
	}
	return nil
}

// askDiscard asks, default Cancel, whether to drop the draft and leave
// the editor, or quit the console when the question comes from ctrl+c.
func (e *Editor) askDiscard(quit bool) {
	d := &kit.Dialog{Kind: DlgDiscard, Cancelled: "cancelled: nothing written; the draft is kept", Title: "Leave the editor", OKLabel: "Discard", Quit: quit,
		OK: func() tea.Cmd {
			e.leave()
			if quit {
				return tea.Quit
			}
			e.Flashf(kit.LvlInfo, "draft discarded: nothing written")
			return nil
		},
		Body: [][]kit.Span{{{Lvl: kit.LvlPlain, Text: "Discard the draft (" + e.changeSummary() + ": " + kit.Plural(len(e.Plan.Edits), "file change") + " not applied) and leave?"}}}}
	if quit {
		d.Title, d.OKLabel = "Quit fgtop", "Discard and quit"
		d.Body = [][]kit.Span{{{Lvl: kit.LvlPlain, Text: "Discard the draft (" + e.changeSummary() + ": " + kit.Plural(len(e.Plan.Edits), "file change") + " not applied) and quit?"}},
			{}, {{Lvl: kit.LvlDim, Text: "ctrl+c again quits at once."}}}
	}
	e.openDialog(d)
}

// Quit is ctrl+c (and q outside the editor): it quits, giving the draft
// back, except that a draft that changes something is not dropped by one
// key: the Discard question comes first (default Cancel), and a second
// ctrl+c answers it.
func (e *Editor) Quit() tea.Cmd {
	if e.Dirty() && e.Lost == "" {
		e.askDiscard(true)
		e.Invalidate()
		return nil
	}
	e.leave()
	return tea.Quit
}

func (e *Editor) moveEdCursor(delta int) {
	if len(e.Rows) == 0 {
		return
	}
	e.Cursor = min(max(e.Cursor+delta, 0), len(e.Rows)-1)
}

// FirstLine is the first line of s (an error's, for the flash line).
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimRight(s[:i], ": ")
	}
	return s
}

func memOrNone(d model.Dec) string {
	if d.IsZero() {
		return "not partitioned"
	}
	return model.FormatBinarySize(d)
}

// memAmount is the memory an agent of part is given: its own amount or,
// in shared mode where it has none, the node's available memory (total
// less reserved-mem), which every agent is given whole (main's SHARED
// agent_slot); zero when that is unknown too.
func memAmount(part *partition.Partition, ap *partition.AgentPart) model.Dec {
	if ap == nil {
		return model.Zero
	}
	if !ap.Mem.IsZero() {
		return ap.Mem
	}
	if part != nil {
		if v := part.Available[model.SlotMem]; !v.IsZero() {
			return v
		}
	}
	return ap.Capacity[model.SlotMem]
}

// memText is memAmount as the editor shows it.
func memText(part *partition.Partition, ap *partition.AgentPart) string {
	return memOrNone(memAmount(part, ap))
}

// data is what the console derived from its adopted snapshot, or nil.
func (e *Editor) data() *render.Derived {
	if e.Derive == nil {
		return nil
	}
	return e.Derive()
}

package ui

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

const (
	edGrid edView = iota
	edPlan
	edJournal
)

// edRowKind is what an editor row edits.
type edRowKind uint8

const (
	rowDevice edRowKind = iota
	rowCPU
	rowMem
)

// edRow is one selectable row of the grid: a device, or an agent's cpu or
// mem.
type edRow struct {
	kind  edRowKind
	key   model.DeviceKey // rowDevice
	agent int             // rowCPU, rowMem: index into plan.Next.Agents
	dev   int             // index into derived.devs, or -1
}

// journalRows is how many journal records the journal view shows.
const journalRows = 50

// editor is the open partition editor, a screen over the main one: the
// desk session, the draft and its plan, and the editor's own view state.
// The desk's work runs off the UI loop (editor_cmds.go); its messages come
// back through the root, which passes this editor those of its session.
type editor struct {
	*kitCommon
	// derive is what the console derived from its adopted snapshot (nil
	// before the first): the editor lists the same devices.
	derive func() *derived
	closer
	area
	desk *partition.Desk
	work *deskWork
	// dlg is the last dialog the editor opened (a lost draft closes an
	// apply dialog).
	dlg *dialog

	sess *partition.Session
	req  partition.Request
	undo []partition.Request
	plan *partition.Plan
	// planSnap is the snapshot the plan's holders were read from; a newer
	// one re-plans on the next tick.
	planSnap *model.Snapshot

	view   edView
	rows   []edRow
	cursor int
	off    int
	// planOff and jourOff scroll the plan and journal views.
	planOff int
	jourOff int

	// input is the cpu or mem field being typed, on row inputRow;
	// inputCheck is what its text means, re-checked on every key.
	input      *textinput.Model
	inputRow   int
	inputCheck fieldCheck
	checkField func(string) fieldCheck

	// stale says why the draft may not be applied until reviewed; lost
	// says why the session is gone (taken over, closed).
	stale string
	lost  string
	// result is what the last apply did, shown under the grid.
	result []span
	// applying is set while an apply runs (in a tea.Cmd): a second one
	// is refused until the first one's result is in.
	applying bool

	journal    []agentconfig.JournalRecord
	journalBad int
	journalErr string
}

// agentShort names the plan's agents as the rest of the console does.
func (e *editor) agentShorts() []string {
	if e.plan == nil || e.plan.Next == nil {
		return nil
	}
	ags := make([]model.Agent, len(e.plan.Next.Agents))
	for i, a := range e.plan.Next.Agents {
		ags[i].ID = a.ID
	}
	short := agentShortNames(ags)
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
func (e *editor) changeSummary() string {
	p := e.plan
	if p == nil || p.Current == nil || p.Next == nil {
		return "no change"
	}
	var parts []string
	if p.ModeFrom != p.ModeTo {
		parts = append(parts, "mode "+p.ModeFrom+" → "+p.ModeTo)
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
		parts = append(parts, plural(devs, "device move"))
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
		if !c.Mem.Equal(n.Mem) {
			mem++
		}
	}
	if cpu > 0 {
		parts = append(parts, "cpu of "+plural(cpu, "agent"))
	}
	if mem > 0 {
		parts = append(parts, "mem of "+plural(mem, "agent"))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// dirty reports whether the draft changes anything.
func (e *editor) dirty() bool { return !e.req.Empty() }

// cloneRequest copies a request's slices so the undo stack never shares
// them with the draft.
func cloneRequest(r partition.Request) partition.Request {
	r.Moves = slices.Clone(r.Moves)
	r.CPU = slices.Clone(r.CPU)
	r.Mem = slices.Clone(r.Mem)
	return r
}

// replan re-plans the draft against the session's base and the latest
// snapshot, and rebuilds the grid's rows.
func (e *editor) replan() {
	e.plan = e.sess.Plan(e.req)
	e.planSnap = e.snap
	e.rows = e.editorRows()
	e.cursor = min(e.cursor, max(len(e.rows)-1, 0))
	e.invalidate()
}

// editorRows lists the grid's rows: every accelerator of the node (MIG
// instances under their GPU), then any device the partitions name that
// the node does not have, then each agent's cpu and mem.
func (e *editor) editorRows() []edRow {
	var rows []edRow
	seen := map[model.DeviceKey]bool{}
	if e.data() != nil {
		for i := range e.data().devs {
			rows = append(rows, edRow{kind: rowDevice, key: e.data().devs[i].key, dev: i})
			seen[e.data().devs[i].key] = true
		}
	}
	var extra []model.DeviceKey
	for _, part := range []*partition.Partition{e.plan.Current, e.plan.Next} {
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
		rows = append(rows, edRow{kind: rowDevice, key: k, dev: -1})
	}
	if e.plan.Next != nil {
		for i := range e.plan.Next.Agents {
			rows = append(rows, edRow{kind: rowCPU, agent: i, dev: -1})
		}
		for i := range e.plan.Next.Agents {
			rows = append(rows, edRow{kind: rowMem, agent: i, dev: -1})
		}
	}
	return rows
}

// edit replaces the draft with next (the previous one goes on the undo
// stack) and re-plans.
func (e *editor) edit(next partition.Request) {
	if e.refuseWhileApplying() {
		return
	}
	e.undo = append(e.undo, cloneRequest(e.req))
	e.req = next
	e.result = nil
	e.replan()
}

// refuseWhileApplying says so and reports true while an apply runs: the
// draft being written is not changed under it (its outcome empties it).
func (e *editor) refuseWhileApplying() bool {
	if !e.applying {
		return false
	}
	e.flashf(lvlWarn, "an apply is in progress: the draft changes again once its result is in")
	return true
}

// manualOnly says why a device, cpu or mem edit cannot be made in the
// draft's mode, or "".
func (e *editor) manualOnly(what string) string {
	p := e.plan
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
func (e *editor) moveSelected(to, delta int) {
	if e.cursor >= len(e.rows) || e.rows[e.cursor].kind != rowDevice {
		e.flashf(lvlInfo, "select a device row to move it (cpu and mem rows are edited with enter)")
		return
	}
	if why := e.manualOnly("moving a device"); why != "" {
		e.flashf(lvlWarn, why)
		return
	}
	n := len(e.plan.Next.Agents)
	k := e.rows[e.cursor].key
	if delta != 0 {
		cur := -1
		for i := range e.plan.Next.Agents {
			if e.plan.Next.Agents[i].OwnsDevice(k) {
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
			e.flashf(lvlInfo, "there is no agent "+strconv.Itoa(to+1)+": the config has "+plural(n, "agent"))
		}
		return
	}
	target := e.plan.Next.Agents[to].ID
	if owners := e.plan.Next.Owners(k); len(owners) == 1 && owners[0] == target {
		return
	}
	spec := partition.Key(k)
	next := cloneRequest(e.req)
	next.Moves = slices.DeleteFunc(next.Moves, func(m partition.Move) bool { return m.Device == spec })
	// Moving a device back to where the file has it drops the move, so the
	// draft says only what changes.
	if owners := e.plan.Current.Owners(k); !(next.Mode == "" && len(owners) == 1 && owners[0] == target) {
		next.Moves = append(next.Moves, partition.Move{Device: spec, Agent: target})
	}
	e.edit(next)
}

// cycleMode switches the draft's mode: shared, auto-split, manual. Leaving
// manual drops the draft's moves and cpu/mem edits (they only exist in
// manual; u brings them back).
func (e *editor) cycleMode() {
	modes := []string{agentconfig.ModeShared, agentconfig.ModeAutoSplit, agentconfig.ModeManual}
	i := slices.Index(modes, e.plan.ModeTo)
	nextMode := modes[(i+1)%len(modes)]
	next := cloneRequest(e.req)
	next.Mode = nextMode
	base := e.sess.Base()
	if nextMode == base.Mode {
		next.Mode = ""
	}
	dropped := nextMode != agentconfig.ModeManual && (len(next.Moves)+len(next.CPU)+len(next.Mem) > 0)
	if nextMode != agentconfig.ModeManual {
		// The format only matters for tables manual writes.
		next.Moves, next.CPU, next.Mem, next.Format = nil, nil, nil, ""
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
	e.flashf(lvlInfo, msg)
}

// askFormat asks which format manual mode writes the allocation tables of
// a file that has none in: Backend.AI main's slot-based form (the left
// button, focused: Enter takes it) or the BEP-1044 device-based draft.
func (e *editor) askFormat(next partition.Request) {
	e.openDialog(&dialog{kind: dlgFormat, title: "Manual mode: which format?",
		cancelLabel: "Main's slot-based", okLabel: "BEP-1044 device-based",
		left: func() { e.chooseFormat(next, agentconfig.FormatSlotBased) },
		ok:   func() tea.Cmd { e.chooseFormat(next, agentconfig.FormatDeviceBased); return nil },
		body: [][]span{
			{{lvlPlain, "agent.toml has no allocation tables, so it does not say which format to write them in."}},
			{},
			{{lvlAccent, "Main's slot-based"}, {lvlPlain, " (cpu = a core count, devices = { \"cuda.shares\" = \"2.0\" }): what Backend.AI main loads. Each agent starts from an even split."}},
			{{lvlWarn, "BEP-1044 device-based"}, {lvlPlain, " (cpu = [core ids], devices = { cuda = [ids] }): " + agentconfig.DraftFormatWarning + "; only the unmerged PR #8463 loads it."}},
		},
	})
}

// openDialog puts a dialog the editor asks over it.
func (e *editor) openDialog(d *dialog) {
	d.kitCommon = e.kitCommon
	e.dlg = d
	e.open(d)
}

// chooseFormat switches the draft to manual in format f.
func (e *editor) chooseFormat(next partition.Request, f agentconfig.Format) {
	if e.closed() {
		return
	}
	next.Format = f
	e.edit(next)
	if f == agentconfig.FormatDeviceBased {
		e.flashf(lvlWarn, "mode manual, BEP-1044 device-based: "+agentconfig.DraftFormatWarning)
		return
	}
	e.flashf(lvlInfo, "mode manual, main's slot-based form: each agent starts from an even split")
}

// startInput opens the text field of the selected cpu or mem row.
func (e *editor) startInput() tea.Cmd {
	if e.cursor >= len(e.rows) {
		return nil
	}
	r := e.rows[e.cursor]
	if r.kind == rowDevice {
		e.flashf(lvlInfo, "enter edits the cpu and mem rows; move a device with ←/→ or its agent's number")
		return nil
	}
	what := "editing cpu"
	if r.kind == rowMem {
		what = "editing mem"
	}
	if why := e.manualOnly(what); why != "" {
		e.flashf(lvlWarn, why)
		return nil
	}
	ti := textinput.New()
	ti.Prompt = ""
	ti.SetStyles(e.st.Input)
	ti.CharLimit = 256
	ti.SetValue(e.fieldValue(r))
	ti.CursorEnd()
	check := e.fieldChecker(r)
	ti.Validate = func(s string) error { return check(s).err }
	e.input, e.inputRow, e.inputCheck, e.checkField = &ti, e.cursor, check(ti.Value()), check
	return ti.Focus()
}

// fieldValue is what a cpu or mem row holds in the draft, as typed.
func (e *editor) fieldValue(r edRow) string {
	ap := &e.plan.Next.Agents[r.agent]
	if r.kind == rowMem {
		if ap.Mem.IsZero() {
			return ""
		}
		return model.FormatBinarySize(ap.Mem)
	}
	if e.plan.Format == agentconfig.FormatSlotBased {
		return ap.Capacity[model.SlotCPU].String()
	}
	if ap.Owns == nil {
		return ""
	}
	return partition.IDRanges(ap.Owns["cpu"])
}

// fieldCheck is what a cpu or mem field's text means, worked out as it is
// typed: hint says how it is read ("= 512 MiB"), warn what is allowed but
// likely a slip (a size with no unit is bytes), err why it is refused.
type fieldCheck struct {
	hint, warn string
	err        error
}

// spans is the check as shown after the field.
func (c fieldCheck) spans() []span {
	var out []span
	if c.hint != "" {
		out = append(out, span{lvlAccent, c.hint})
	}
	if c.err != nil {
		if len(out) > 0 {
			out = append(out, span{lvlDim, " · "})
		}
		return append(out, span{lvlCrit, c.err.Error()})
	}
	if c.warn != "" {
		if len(out) > 0 {
			out = append(out, span{lvlDim, " · "})
		}
		out = append(out, span{lvlWarn, c.warn})
	}
	return out
}

// fieldChecker checks a cpu or mem field as it is typed; what it refuses
// never enters the draft.
func (e *editor) fieldChecker(r edRow) func(string) fieldCheck {
	if r.kind == rowMem {
		total := e.plan.Next.MemTotal
		var align model.Dec
		if b := e.sess.Base(); b != nil {
			align = b.MemoryAlignSize
		}
		return func(s string) fieldCheck {
			return checkMem(strings.TrimSpace(s), total, align)
		}
	}
	if e.plan.Format == agentconfig.FormatSlotBased {
		return func(s string) fieldCheck {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 {
				return fieldCheck{err: errors.New("the slot-based format takes a core count, e.g. 15")}
			}
			return fieldCheck{hint: "= " + plural(n, "core")}
		}
	}
	cores := map[model.DeviceID]bool{}
	if e.snap != nil {
		for _, d := range e.snap.Devices {
			if d.Name == "cpu" {
				cores[d.ID] = true
			}
		}
	}
	return func(s string) fieldCheck { return checkCPU(s, cores) }
}

// checkMem reads a mem field with the CLI's rules (partition.ParseMem,
// partition.CheckMem): what --mem refuses, the field refuses.
func checkMem(s string, total, align model.Dec) fieldCheck {
	v, warn, err := partition.ParseMem(s)
	if err != nil {
		return fieldCheck{err: err}
	}
	c := fieldCheck{hint: "= " + humanBytes(v), warn: warn}
	if err := partition.CheckMem(v, total, align); err != nil {
		c.err, c.warn = err, ""
	}
	return c
}

// humanBytes says a byte count the way an operator reads it.
var humanBytes = partition.HumanBytes

// checkCPU reads a cpu field: core ranges, each core once, every core on
// this node (when the node's cores are known).
func checkCPU(s string, cores map[model.DeviceID]bool) fieldCheck {
	parts := strings.Split(s, ",")
	for i, part := range parts {
		if strings.TrimSpace(part) == "" {
			where := "an empty part"
			switch {
			case len(parts) == 1:
				return fieldCheck{err: errors.New("no cores: write ranges such as 0-7,16")}
			case i == len(parts)-1:
				where = "a trailing comma"
			case i == 0:
				where = "a leading comma"
			}
			return fieldCheck{err: fmt.Errorf("%s in the list: remove it", where)}
		}
	}
	ids, err := partition.ParseIDRanges(s)
	if err != nil {
		return fieldCheck{err: err}
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
		return fieldCheck{err: fmt.Errorf("core %s listed twice", partition.IDRanges(twice))}
	}
	if len(cores) > 0 {
		var unknown []model.DeviceID
		for _, id := range ids {
			if !cores[id] {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			return fieldCheck{err: fmt.Errorf("no core %s on this node (it has %d)", partition.IDRanges(unknown), len(cores))}
		}
	}
	return fieldCheck{hint: "= " + plural(len(ids), "core")}
}

// commitInput puts a valid field into the draft; an invalid one stays
// open with its error.
func (e *editor) commitInput() {
	ti := e.input
	val := strings.TrimSpace(ti.Value())
	if c := e.checkField(val); c.err != nil {
		e.inputCheck = c
		e.invalidate()
		return
	}
	r := e.rows[e.inputRow]
	e.input = nil
	if val == e.fieldValue(r) {
		return
	}
	id := e.plan.Next.Agents[r.agent].ID
	next := cloneRequest(e.req)
	if r.kind == rowMem {
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
func (e *editor) inputKey(msg tea.KeyPressMsg) tea.Cmd {
	e.invalidate()
	switch msg.String() {
	case "enter":
		e.commitInput()
		return nil
	case "esc":
		e.input = nil
		return nil
	case "ctrl+c":
		e.input = nil
		return e.quit()
	}
	ti, cmd := e.input.Update(msg)
	e.input = &ti
	e.inputCheck = e.checkField(ti.Value())
	return cmd
}

// undoEdit restores the draft before the last edit.
func (e *editor) undoEdit() {
	if e.refuseWhileApplying() {
		return
	}
	if len(e.undo) == 0 {
		e.flashf(lvlInfo, "nothing to undo")
		return
	}
	e.req = e.undo[len(e.undo)-1]
	e.undo = e.undo[:len(e.undo)-1]
	e.replan()
}

// resetDraft empties the draft (u brings it back).
func (e *editor) resetDraft() {
	if !e.dirty() {
		e.flashf(lvlInfo, "the draft is empty: the grid shows the file as it is")
		return
	}
	e.edit(partition.Request{})
	e.flashf(lvlInfo, "draft reset to the file as it is (u undoes)")
}

// askApply opens the apply dialog, default Cancel; a plan that strands live
// kernels also needs the affected agent's id typed.
func (e *editor) askApply() {
	p := e.plan
	switch {
	case e.lost != "":
		e.flashf(lvlCrit, "not applied: "+e.lost)
		return
	case e.applying:
		e.flashf(lvlWarn, "an apply is in progress: wait for its result before applying again")
		return
	case e.stale != "":
		e.flashf(lvlWarn, "the draft is stale ("+e.stale+"): press p to review the recomputed plan before applying")
		return
	case !p.Valid():
		e.flashf(lvlCrit, "the plan is invalid ("+plural(len(p.Errors), "error")+"): "+firstLine(p.Errors[0])+" (p shows them all)")
		return
	case !p.Changed():
		e.flashf(lvlInfo, "the draft changes nothing: there is nothing to apply")
		return
	}
	d := &dialog{kind: dlgApply, title: "Apply the draft", okLabel: "Apply"}
	d.ok = func() tea.Cmd {
		if !e.closed() {
			e.doApply(p, d.expect != "")
		}
		return nil
	}
	d.body = append(d.body, []span{{lvlPlain, "Write " + plural(len(p.Edits), "change") + " to "}, {lvlAccent, p.Config}, {lvlPlain, "?"}})
	for _, ag := range p.Agents {
		var parts []string
		if len(ag.Gains) > 0 {
			parts = append(parts, "gains "+strings.Join(ag.Gains, ", "))
		}
		if len(ag.Losses) > 0 {
			parts = append(parts, "loses "+strings.Join(ag.Losses, ", "))
		}
		if !ag.MemFrom.Equal(ag.MemTo) {
			parts = append(parts, "mem "+memOrNone(ag.MemFrom)+" → "+memOrNone(ag.MemTo))
		}
		if len(parts) > 0 {
			d.body = append(d.body, []span{{lvlPlain, "  " + string(ag.Agent) + ": "}, {lvlDim, strings.Join(parts, "; ")}})
		}
	}
	if p.ModeFrom != p.ModeTo {
		d.body = append(d.body, []span{{lvlPlain, "  allocation-mode " + p.ModeFrom + " → " + p.ModeTo}})
	}
	if aff := p.Affected(); len(aff) > 0 {
		d.expect = affectedAgents(p)
		d.body = append(d.body, []span{}, []span{{lvlCrit, "Live kernels are affected"}, {lvlPlain, " (they keep running where they are until they end):"}})
		for _, l := range aff {
			d.body = append(d.body, []span{{lvlWarn, "  " + l}})
		}
		d.body = append(d.body, []span{})
		ask := "To apply anyway, type the id of the agent whose kernels are affected: "
		if strings.Contains(d.expect, " ") {
			ask = "To apply anyway, type the ids of the agents whose kernels are affected, separated by spaces: "
		}
		d.ask = [][]span{{{lvlPlain, ask}, {lvlAccent, d.expect}}}
		ti := textinput.New()
		ti.Prompt = "> "
		ti.SetStyles(e.st.Input)
		ti.CharLimit = 512
		ti.Focus()
		d.input = &ti
	}
	d.foot = append(d.foot, []span{}, []span{{lvlDim, "The agents read agent.toml only at start-up: restart them afterwards."}})
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
func (e *editor) sessionError(err error) {
	switch {
	case err == nil:
	case errors.Is(err, partition.ErrStale):
		e.stale = e.staleReason(err)
	case errors.Is(err, partition.ErrTakenOver), errors.Is(err, partition.ErrClosed):
		e.lost = firstLine(err.Error())
	}
	e.invalidate()
}

// staleReason is why the draft is stale, naming the config by its base
// name (the full path is in the editor's title).
func (e *editor) staleReason(err error) string {
	s := strings.TrimPrefix(firstLine(err.Error()), partition.ErrStale.Error()+": ")
	if d := e.desk; d != nil {
		s = strings.ReplaceAll(s, d.Path(), filepath.Base(d.Path()))
	}
	return s
}

func (e *editor) rank() layerRank { return rankScreen }

// owns reports whether the desk message of session s is this editor's.
func (e *editor) owns(s *partition.Session) bool { return e.sess == s }

// scope is the key scope of what the editor shows.
func (e *editor) scope() scope {
	switch e.view {
	case edPlan:
		return scPlan
	case edJournal:
		return scJournal
	}
	return scEditor
}

// Update handles a key, the wheel, the clock tick and the desk's
// messages of this editor's session (the root passes them).
func (e *editor) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return e.key(msg)
	case tea.MouseWheelMsg:
		delta := wheelDelta(tea.Mouse(msg))
		switch e.view {
		case edPlan:
			e.planOff = max(e.planOff+delta, 0)
		case edJournal:
			e.jourOff = max(e.jourOff+delta, 0)
		default:
			if e.input == nil {
				e.moveEdCursor(delta)
			}
		}
		e.invalidate()
	case tickMsg:
		e.check()
	default:
		e.deskMsg(msg)
	}
	return nil
}

// key handles a key while the editor is on top.
func (e *editor) key(msg tea.KeyPressMsg) tea.Cmd {
	if e.input != nil {
		return e.inputKey(msg)
	}
	act := e.keys.lookupIn(e.scope(), msg)
	if act == actQuit {
		return e.quit()
	}
	e.invalidate()
	if act == actNone && msg.String() == "q" {
		e.flashf(lvlInfo, "q does not quit in the editor: esc leaves it, ctrl+c quits")
		return nil
	}
	if e.view != edGrid {
		switch act {
		case actBack:
			e.view = edGrid
		case actHelp:
			e.send(helpMsg{})
		case actEdApply:
			e.askApply()
		case actEdJournal:
			e.view, e.jourOff = edJournal, 0
			e.loadJournal()
		case actEdPlan:
			e.review()
		default:
			off := &e.planOff
			if e.view == edJournal {
				off = &e.jourOff
			}
			e.scroll(off, act)
		}
		return nil
	}
	if e.lost != "" && act != actBack && act != actHelp && act != actEdJournal {
		e.flashf(lvlCrit, "you no longer hold the draft ("+e.lost+"): esc leaves")
		return nil
	}
	if delta, ok := cursorDelta(act, e.edVisible()); ok {
		e.moveEdCursor(delta)
		return nil
	}
	switch act {
	case actBack:
		if e.dirty() && e.lost == "" {
			e.askDiscard(false)
			return nil
		}
		e.leave()
	case actHelp:
		e.send(helpMsg{})
	case actEdPrevAgent:
		e.moveSelected(0, -1)
	case actEdNextAgent:
		e.moveSelected(0, 1)
	case actEdToAgent:
		if n, err := strconv.Atoi(msg.String()); err == nil {
			e.moveSelected(n-1, 0)
		}
	case actEdMode:
		e.cycleMode()
	case actEdEdit:
		return e.startInput()
	case actEdUndo:
		e.undoEdit()
	case actEdReset:
		e.resetDraft()
	case actEdPlan:
		e.review()
	case actEdApply:
		e.askApply()
	case actEdJournal:
		e.view, e.jourOff = edJournal, 0
		e.loadJournal()
	}
	return nil
}

// askDiscard asks, default Cancel, whether to drop the draft and leave
// the editor, or quit the console when the question comes from ctrl+c.
func (e *editor) askDiscard(quit bool) {
	d := &dialog{kind: dlgDiscard, title: "Leave the editor", okLabel: "Discard", quit: quit,
		ok: func() tea.Cmd {
			e.leave()
			if quit {
				return tea.Quit
			}
			e.flashf(lvlInfo, "draft discarded: nothing written")
			return nil
		},
		body: [][]span{{{lvlPlain, "Discard the draft (" + e.changeSummary() + ": " + plural(len(e.plan.Edits), "file change") + " not applied) and leave?"}}}}
	if quit {
		d.title, d.okLabel = "Quit fgtop", "Discard and quit"
		d.body = [][]span{{{lvlPlain, "Discard the draft (" + e.changeSummary() + ": " + plural(len(e.plan.Edits), "file change") + " not applied) and quit?"}},
			{}, {{lvlDim, "ctrl+c again quits at once."}}}
	}
	e.openDialog(d)
}

// quit is ctrl+c (and q outside the editor): it quits, giving the draft
// back, except that a draft that changes something is not dropped by one
// key: the Discard question comes first (default Cancel), and a second
// ctrl+c answers it.
func (e *editor) quit() tea.Cmd {
	if e.dirty() && e.lost == "" {
		e.askDiscard(true)
		e.invalidate()
		return nil
	}
	e.leave()
	return tea.Quit
}

func (e *editor) moveEdCursor(delta int) {
	if len(e.rows) == 0 {
		return
	}
	e.cursor = min(max(e.cursor+delta, 0), len(e.rows)-1)
}

func firstLine(s string) string {
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

// data is what the console derived from its adopted snapshot, or nil.
func (e *editor) data() *derived {
	if e.derive == nil {
		return nil
	}
	return e.derive()
}

package editor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// The editor's grid on a slot-based file, Backend.AI main's form: each
// agent is given an amount of every slot (cpu, mem, every device slot the
// node registers), and devices are not exclusive, so there is nothing to
// move. One row per agent and slot, with the node's total, the other
// agents' amounts and what the agent's kernels hold beside it; a field
// says, as it is typed, what the plan would then be.

// slotGrid reports whether the draft is in the slot-based format.
func (e *Editor) slotGrid() bool {
	return e.Plan != nil && e.Plan.Format == agentconfig.FormatSlotBased
}

// deviceSlotsOf lists the node's device slots (not cpu or mem), and those
// the agents are given where the node's accelerators are unknown, sorted.
func deviceSlotsOf(p *partition.Partition) []model.SlotName {
	if p == nil {
		return nil
	}
	var out []model.SlotName
	add := func(s model.SlotName) {
		if s != model.SlotCPU && s != model.SlotMem && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for s := range p.Totals {
		add(s)
	}
	for i := range p.Agents {
		for s := range p.Agents[i].Capacity {
			add(s)
		}
	}
	slices.Sort(out)
	return out
}

// gridSlots are the slots the grid edits: the device slots, then cpu and
// mem.
func (e *Editor) gridSlots() []model.SlotName {
	return append(deviceSlotsOf(e.Plan.Next), model.SlotCPU, model.SlotMem)
}

// slotRows is one row per slot and agent.
func (e *Editor) slotRows() []EdRow {
	var rows []EdRow
	if e.Plan.Next == nil {
		return nil
	}
	for _, slot := range e.gridSlots() {
		for i := range e.Plan.Next.Agents {
			rows = append(rows, EdRow{Kind: RowSlot, Agent: i, Dev: -1, Slot: slot})
		}
	}
	return rows
}

// slotValue is an agent's amount of slot as a field holds it.
func slotValue(ap *partition.AgentPart, slot model.SlotName) string {
	if ap == nil {
		return ""
	}
	if slot == model.SlotMem {
		if ap.Mem.IsZero() {
			return ""
		}
		return model.FormatBinarySize(ap.Mem)
	}
	v, ok := ap.Capacity[slot]
	if !ok {
		return ""
	}
	return v.String()
}

// sameAmount reports whether the current and next versions of an agent
// give it the same amount of slot, by value (mem as memAmount).
func (e *Editor) sameAmount(a, b *partition.AgentPart, slot model.SlotName) bool {
	if slot == model.SlotMem {
		return memAmount(e.Plan.Current, a).Equal(memAmount(e.Plan.Next, b))
	}
	av, aok := a.Capacity[slot]
	bv, bok := b.Capacity[slot]
	return aok == bok && av.Equal(bv)
}

// slotAmountText is an amount as the grid shows it.
func slotAmountText(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem {
		return kit.FmtBytesDec(v)
	}
	return v.String()
}

// heldAmountText is slotAmountText for what kernels hold: a whole-unit
// slot's whole amount without the fraction digits a resource.txt may give
// it ("1", not "1.00"), as the console prints it.
func heldAmountText(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem {
		return kit.FmtBytesDec(v)
	}
	return kit.FmtWhole(slot, v)
}

// withSlot is the draft with row r's agent given val of r's slot; a value
// equal to the file's drops the agent's set for that slot, so the draft
// says only what changes.
func (e *Editor) withSlot(r EdRow, val string) (partition.Request, bool) {
	id := e.Plan.Next.Agents[r.Agent].ID
	set, err := partition.ParseSlotSet(string(id) + "=" + string(r.Slot) + "=" + val)
	if err != nil {
		return partition.Request{}, false
	}
	next := cloneRequest(e.Req)
	next.Slots = slices.DeleteFunc(next.Slots, func(s partition.SlotSet) bool { return s.Agent == id && s.Slot == r.Slot })
	same := false
	if cur := e.Plan.Current.Agent(id); cur != nil && next.Mode == "" {
		if r.Slot == model.SlotMem {
			same = cur.Mem.Equal(set.Amount)
		} else if v, ok := cur.Capacity[r.Slot]; ok {
			same = v.Equal(set.Amount) && v.String() == set.Amount.String()
		}
	}
	if !same {
		next.Slots = append(next.Slots, set)
	}
	return next, true
}

// slotChecker checks a slot field as it is typed, then plans the draft
// with it: the hint says what it is against the node, and a plan the
// value makes invalid is said at once (as a warning: another field may
// be about to make room).
func (e *Editor) slotChecker(r EdRow) func(string) FieldCheck {
	total, known := e.Plan.Next.Totals[r.Slot]
	var align model.Dec
	if b := e.Sess.Base(); b != nil {
		align = b.MemoryAlignSize
	}
	return func(s string) FieldCheck {
		s = strings.TrimSpace(s)
		var c FieldCheck
		switch r.Slot {
		case model.SlotMem:
			c = checkMem(s, e.Plan.Next.MemTotal, align)
		case model.SlotCPU:
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return FieldCheck{Err: errors.New("the slot-based format takes a core count, e.g. 15")}
			}
			c = FieldCheck{Hint: "= " + kit.Plural(n, "core") + " of " + total.String()}
		default:
			v, err := model.ParseDec(s)
			if s == "" {
				return FieldCheck{Err: errors.New("an amount is needed, e.g. 2.0")}
			}
			if err != nil {
				return FieldCheck{Err: fmt.Errorf("%q is not an amount: a decimal, e.g. 2.0", s)}
			}
			// The one rule of plan and simulate (model.CheckAmount).
			if err := model.CheckAmount(r.Slot, v, false); err != nil {
				return FieldCheck{Err: err}
			}
			c = FieldCheck{Hint: "of " + total.String()}
			if !known {
				c.Hint = "the node's total is unknown"
			}
		}
		if c.Err != nil {
			return c
		}
		next, ok := e.withSlot(r, s)
		if !ok {
			return FieldCheck{Err: errors.New("not an amount of " + string(r.Slot))}
		}
		p := e.Sess.Plan(next)
		switch {
		case !p.Valid():
			c.Warn = "plan INVALID under " + p.JudgeLabel() + ": " + FirstLine(p.Errors[0])
			if most, ok := slotLimit(p.Next, r.Agent, r.Slot); ok {
				// The fix before the agent's arithmetic: how much this
				// agent can have, in the slot's unit.
				name := string(p.Next.Agents[r.Agent].ID)
				if sh := e.agentShorts(); r.Agent < len(sh) {
					name = sh[r.Agent]
				}
				c.Warn = name + " can have at most " + most + " with the others as they are · " + c.Warn
			}
		case c.Warn == "":
			c.Hint += " · plan valid under " + p.JudgeLabel()
		}
		return c
	}
}

// slotLimit is the most of slot agent i of part can be given with the
// other agents' amounts as they are, as the agent's over-allocation check
// counts them (each amount less the reservation, at most the available
// total), said in the slot's unit; false when the others leave it all.
func slotLimit(part *partition.Partition, i int, slot model.SlotName) (string, bool) {
	if part == nil || i >= len(part.Agents) {
		return "", false
	}
	total, ok := part.Totals[slot]
	if !ok {
		return "", false
	}
	avail, ok := part.Available[slot]
	if !ok {
		avail = total
	}
	others := model.Zero
	for j, a := range part.Agents {
		if conf, ok := a.Capacity[slot]; ok && j != i {
			others = others.Add(avail.Sub(model.Max(total.Sub(conf), model.Zero)))
		}
	}
	most := model.Max(model.Min(total.Sub(others), total), model.Zero)
	if !most.Less(total) {
		return "", false
	}
	if slot == model.SlotMem {
		return agentconfig.SizeAtMost(most), true
	}
	return most.String(), true
}

// heldBeyond reports whether an agent's kernels hold more of slot than
// its amount. Memory of amount 0 is not partitioned (shared mode): the
// agent's is the node's, and nothing held is beyond it.
func heldBeyond(slot model.SlotName, amount, held model.Dec) bool {
	if slot == model.SlotMem && amount.IsZero() {
		return false
	}
	return amount.Less(held)
}

// heldBy is what the kernels of agent id hold of slot now.
func (e *Editor) heldBy(id model.AgentID, slot model.SlotName) model.Dec {
	if e.Snap == nil {
		return model.Zero
	}
	for i := range e.Snap.Agents {
		if e.Snap.Agents[i].ID == id {
			return e.Snap.Agents[i].Held[slot]
		}
	}
	return model.Zero
}

// gridSlotRow draws an agent's amount of a slot (or the field being
// typed), then the node's total, the other agents' amounts and what the
// agent's kernels hold, in red beyond the amount.
func (e *Editor) gridSlotRow(i int, r EdRow, shorts []string, cols edCols, w int, sel bool) string {
	st := e.St
	l := kit.RowStart(e.St, sel, sel)
	labelP := st.Text
	if r.Agent > 0 {
		labelP = st.Dim
	}
	l.Cell(labelP, string(r.Slot), cols.Label-1, false, st.G.Ellipsis)
	l.Gap(1)
	aw := 4
	for j, s := range shorts {
		aw = max(aw, kit.Width(s)+len(strconv.Itoa(j+1))+2)
	}
	l.Cell(st.Text, strconv.Itoa(r.Agent+1)+" "+shorts[r.Agent], aw, false, st.G.Ellipsis)
	room := w - l.W - 1
	if e.Input != nil && e.inputRow == i {
		e.Input.SetWidth(max(min(room-2, 40, kit.Width(e.Input.Value())+1), 8))
		v := e.Input.View()
		l.PutW(kit.Paint{}, v, kit.Width(v))
		if sp := e.InputCheck.spans(); len(sp) > 0 {
			l.Gap(2)
			kit.PutSpans(l, st, sp, w-l.W)
		}
		return kit.ClampLine(l.Finish(w), w)
	}
	next := &e.Plan.Next.Agents[r.Agent]
	val := slotValue(next, r.Slot)
	amount := next.Capacity[r.Slot]
	if r.Slot == model.SlotMem {
		amount = next.Mem
	}
	shown := val
	if r.Slot == model.SlotMem {
		shown = memText(e.Plan.Next, next)
	}
	was := ""
	if cur := e.Plan.Current.Agent(next.ID); cur != nil && !e.sameAmount(cur, next, r.Slot) {
		// By value: 2.0 in the file and 2.00 made by a split are one
		// amount, not a change.
		was = slotValue(cur, r.Slot)
		if r.Slot == model.SlotMem {
			was = memText(e.Plan.Current, cur)
		}
	}
	lvl := kit.LvlPlain
	if was != "" {
		lvl = kit.LvlAccent
	}
	sp := []kit.Span{{Lvl: lvl, Text: kit.PadRight(shown, 8)}}
	if was != "" {
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: " (was " + was + ")"})
	}
	if total, ok := e.Plan.Next.Totals[r.Slot]; ok {
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  of " + slotAmountText(r.Slot, total)})
	} else {
		// The node's accelerators are unknown (no GPU source).
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  of ?"})
	}
	var others []string
	for j := range e.Plan.Next.Agents {
		if j == r.Agent {
			continue
		}
		o := &e.Plan.Next.Agents[j]
		text := slotAmountText(r.Slot, o.Capacity[r.Slot])
		if r.Slot == model.SlotMem {
			text = memText(e.Plan.Next, o)
		}
		others = append(others, shorts[j]+" "+text)
	}
	if len(others) > 0 {
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: " · others " + strings.Join(others, ", ")})
	}
	held := e.heldBy(next.ID, r.Slot)
	hl := kit.LvlPlain
	if heldBeyond(r.Slot, amount, held) {
		hl = kit.LvlCrit
	}
	sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: " · held "}, kit.Span{Lvl: hl, Text: heldAmountText(r.Slot, held)})
	kit.PutSpans(l, st, sp, room)
	return l.Finish(w)
}

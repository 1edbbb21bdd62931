package ui

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// The editor's grid on a slot-based file, Backend.AI main's form: each
// agent is given an amount of every slot (cpu, mem, every device slot the
// node registers), and devices are not exclusive, so there is nothing to
// move. One row per agent and slot, with the node's total, the other
// agents' amounts and what the agent's kernels hold beside it; a field
// says, as it is typed, what the plan would then be.

// slotGrid reports whether the draft is in the slot-based format.
func (e *editor) slotGrid() bool {
	return e.plan != nil && e.plan.Format == agentconfig.FormatSlotBased
}

// deviceSlotsOf lists the node's device slots (not cpu or mem), sorted.
func deviceSlotsOf(p *partition.Partition) []model.SlotName {
	if p == nil {
		return nil
	}
	var out []model.SlotName
	for s := range p.Totals {
		if s != model.SlotCPU && s != model.SlotMem {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// gridSlots are the slots the grid edits: the device slots, then cpu and
// mem.
func (e *editor) gridSlots() []model.SlotName {
	return append(deviceSlotsOf(e.plan.Next), model.SlotCPU, model.SlotMem)
}

// slotRows is one row per slot and agent.
func (e *editor) slotRows() []edRow {
	var rows []edRow
	if e.plan.Next == nil {
		return nil
	}
	for _, slot := range e.gridSlots() {
		for i := range e.plan.Next.Agents {
			rows = append(rows, edRow{kind: rowSlot, agent: i, dev: -1, slot: slot})
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

// slotAmountText is an amount as the grid shows it.
func slotAmountText(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem {
		return fmtBytesDec(v)
	}
	return v.String()
}

// withSlot is the draft with row r's agent given val of r's slot; a value
// equal to the file's drops the agent's set for that slot, so the draft
// says only what changes.
func (e *editor) withSlot(r edRow, val string) (partition.Request, bool) {
	id := e.plan.Next.Agents[r.agent].ID
	set, err := partition.ParseSlotSet(string(id) + "=" + string(r.slot) + "=" + val)
	if err != nil {
		return partition.Request{}, false
	}
	next := cloneRequest(e.req)
	next.Slots = slices.DeleteFunc(next.Slots, func(s partition.SlotSet) bool { return s.Agent == id && s.Slot == r.slot })
	same := false
	if cur := e.plan.Current.Agent(id); cur != nil && next.Mode == "" {
		if r.slot == model.SlotMem {
			same = cur.Mem.Equal(set.Amount)
		} else if v, ok := cur.Capacity[r.slot]; ok {
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
func (e *editor) slotChecker(r edRow) func(string) fieldCheck {
	total := e.plan.Next.Totals[r.slot]
	var align model.Dec
	if b := e.sess.Base(); b != nil {
		align = b.MemoryAlignSize
	}
	return func(s string) fieldCheck {
		s = strings.TrimSpace(s)
		var c fieldCheck
		switch r.slot {
		case model.SlotMem:
			c = checkMem(s, e.plan.Next.MemTotal, align)
		case model.SlotCPU:
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return fieldCheck{err: errors.New("the slot-based format takes a core count, e.g. 15")}
			}
			c = fieldCheck{hint: "= " + plural(n, "core") + " of " + total.String()}
		default:
			v, err := model.ParseDec(s)
			switch {
			case s == "" || err != nil:
				return fieldCheck{err: errors.New("an amount is needed, e.g. 2.0")}
			case !v.IsFinite():
				return fieldCheck{err: errors.New("not a finite amount")}
			case v.Sign() < 0:
				return fieldCheck{err: errors.New("a negative amount: Backend.AI refuses it")}
			}
			c = fieldCheck{hint: "of " + total.String()}
		}
		if c.err != nil {
			return c
		}
		next, ok := e.withSlot(r, s)
		if !ok {
			return fieldCheck{err: errors.New("not an amount of " + string(r.slot))}
		}
		p := e.sess.Plan(next)
		switch {
		case !p.Valid():
			c.warn = "plan INVALID: " + firstLine(p.Errors[0])
		case c.warn == "":
			c.hint += " · plan valid"
		}
		return c
	}
}

// heldBy is what the kernels of agent id hold of slot now.
func (e *editor) heldBy(id model.AgentID, slot model.SlotName) model.Dec {
	if e.snap == nil {
		return model.Zero
	}
	for i := range e.snap.Agents {
		if e.snap.Agents[i].ID == id {
			return e.snap.Agents[i].Held[slot]
		}
	}
	return model.Zero
}

// gridSlotRow draws an agent's amount of a slot (or the field being
// typed), then the node's total, the other agents' amounts and what the
// agent's kernels hold, in red beyond the amount.
func (e *editor) gridSlotRow(i int, r edRow, shorts []string, cols edCols, w int, sel bool) string {
	st := e.st
	l := rowStart(e.st, sel, sel)
	labelP := st.Text
	if r.agent > 0 {
		labelP = st.Dim
	}
	l.cell(labelP, string(r.slot), cols.label, false, st.G.Ellipsis)
	aw := 4
	for j, s := range shorts {
		aw = max(aw, width(s)+len(strconv.Itoa(j+1))+2)
	}
	l.cell(st.Text, strconv.Itoa(r.agent+1)+" "+shorts[r.agent], aw, false, st.G.Ellipsis)
	room := w - l.w - 1
	if e.input != nil && e.inputRow == i {
		e.input.SetWidth(max(min(room-2, 40, width(e.input.Value())+1), 8))
		v := e.input.View()
		l.putW(paint{}, v, width(v))
		if sp := e.inputCheck.spans(); len(sp) > 0 {
			l.gap(2)
			putSpans(l, st, sp, w-l.w)
		}
		return clampLine(l.finish(w), w)
	}
	next := &e.plan.Next.Agents[r.agent]
	val := slotValue(next, r.slot)
	amount := next.Capacity[r.slot]
	if r.slot == model.SlotMem {
		amount = next.Mem
	}
	shown := val
	if r.slot == model.SlotMem {
		shown = memOrNone(next.Mem)
	}
	was := ""
	if cur := e.plan.Current.Agent(next.ID); cur != nil {
		if c := slotValue(cur, r.slot); c != val {
			was = c
			if r.slot == model.SlotMem {
				was = memOrNone(cur.Mem)
			}
		}
	}
	lvl := lvlPlain
	if was != "" {
		lvl = lvlAccent
	}
	sp := []span{{lvl, padRight(shown, 8)}}
	if was != "" {
		sp = append(sp, span{lvlDim, " (was " + was + ")"})
	}
	if total, ok := e.plan.Next.Totals[r.slot]; ok {
		sp = append(sp, span{lvlDim, "  of " + slotAmountText(r.slot, total)})
	}
	var others []string
	for j := range e.plan.Next.Agents {
		if j == r.agent {
			continue
		}
		o := &e.plan.Next.Agents[j]
		v := o.Capacity[r.slot]
		if r.slot == model.SlotMem {
			v = o.Mem
		}
		others = append(others, shorts[j]+" "+slotAmountText(r.slot, v))
	}
	if len(others) > 0 {
		sp = append(sp, span{lvlDim, " · others " + strings.Join(others, ", ")})
	}
	held := e.heldBy(next.ID, r.slot)
	hl := lvlPlain
	if amount.Less(held) {
		hl = lvlCrit
	}
	sp = append(sp, span{lvlDim, " · held "}, span{hl, slotAmountText(r.slot, held)})
	putSpans(l, st, sp, room)
	return l.finish(w)
}

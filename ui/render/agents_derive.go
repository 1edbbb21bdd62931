package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// deriveAgents builds each agent's lines: its partition per plugin (which
// devices, how much capacity) against what its kernels hold, and its drift
// count.
func (d *Derived) deriveAgents(short map[model.AgentID]string) {
	s := d.Snap
	drift := map[model.AgentID]int{}
	for _, is := range s.Issues {
		if strings.HasPrefix(is.Code, "drift-") && is.Agent != "" {
			drift[is.Agent]++
		}
	}
	for i := range s.Agents {
		a := &s.Agents[i]
		r := AgentRow{A: a, Short: short[a.ID], Drift: drift[a.ID]}
		r.Header = []kit.Span{{Lvl: kit.LvlPlain, Text: string(a.ID)}, {Lvl: kit.LvlDim, Text: "  " + kit.Plural(a.Kernels, "kernel")}}
		if r.Drift > 0 {
			r.Header = append(r.Header, kit.Span{Lvl: kit.LvlWarn, Text: "  drift " + strconv.Itoa(r.Drift)})
		}
		// Whether the agent runs the partition shown (it reads agent.toml
		// only at start); nothing without a config.
		switch a.Restart.State {
		case model.RestartPending:
			r.Header = append(r.Header, kit.Span{Lvl: kit.LvlWarn, Text: "  restart pending"})
		case model.RestartUnknown:
			r.Header = append(r.Header, kit.Span{Lvl: kit.LvlDim, Text: "  restart: cannot tell"})
		case model.RestartNotRunning:
			r.Header = append(r.Header, kit.Span{Lvl: kit.LvlDim, Text: "  not running"})
		}
		if sp, ok := HealthSpan(a.Health); ok {
			r.Header = append(r.Header, kit.Span{Lvl: sp.Lvl, Text: "  " + sp.Text})
		}
		switch {
		case a.Owns == nil && a.Given != nil:
			r.Lines = append(r.Lines, d.givenLines(a)...)
		case a.Owns == nil:
			r.Lines = append(r.Lines, d.sharedLine(a))
		default:
			r.Lines = append(r.Lines, d.partitionLines(a)...)
		}
		d.Agents = append(d.Agents, r)
	}
}

// sharedLine is an agent that sees every device (shared mode, or no
// partition known): what it holds.
func (d *Derived) sharedLine(a *model.Agent) []kit.Span {
	out := []kit.Span{{Lvl: kit.LvlDim, Text: "  all devices (shared)  held "}}
	var parts []string
	for _, slot := range a.Held.Names() {
		if a.Held[slot].IsZero() {
			continue
		}
		parts = append(parts, slotShort(slot)+" "+agentAmount(slot, a.Held[slot]))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing")
	}
	return append(out, kit.Span{Lvl: kit.LvlPlain, Text: strings.Join(parts, " "+d.G.Dot+" ")})
}

// givenLines are an agent of a slot-based partition (Backend.AI main's
// form): it allocates from every device, and is given an amount of each
// slot, shown against the node's total and what its kernels hold
// ("cuda.shares 2.0 of 4.0  held 0.90").
func (d *Derived) givenLines(a *model.Agent) [][]kit.Span {
	totals := model.ResourceSlot{}
	for i := range d.Snap.Devices {
		dv := &d.Snap.Devices[i]
		totals[dv.Slot] = totals[dv.Slot].Add(dv.Capacity)
	}
	if _, ok := totals[model.SlotMem]; !ok && d.Snap.HostMemBytes > 0 {
		totals[model.SlotMem] = model.NewDec(d.Snap.HostMemBytes, 0)
	}
	slots := make([]model.SlotName, 0, len(a.Given))
	for slot := range a.Given {
		slots = append(slots, slot)
	}
	slices.SortFunc(slots, func(x, y model.SlotName) int {
		if rx, ry := nameRank(x.DeviceName()), nameRank(y.DeviceName()); rx != ry {
			return rx - ry
		}
		return strings.Compare(string(x), string(y))
	})
	out := [][]kit.Span{{{Lvl: kit.LvlDim, Text: "  every device, not exclusive (slot-based); given:"}}}
	w := 0
	for _, slot := range slots {
		w = max(w, kit.Width(string(slot)))
	}
	for _, slot := range slots {
		given, held := a.Given[slot], a.Held[slot]
		amt := func(v model.Dec) string { return agentAmount(slot, v) }
		lvl := kit.LvlPlain
		if given.Less(held) {
			lvl = kit.LvlCrit
		}
		line := []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), w) + " "}, {Lvl: kit.LvlPlain, Text: amt(given)}}
		if total, ok := totals[slot]; ok {
			line = append(line, kit.Span{Lvl: kit.LvlDim, Text: " of " + amt(total)})
		}
		line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  held "}, kit.Span{Lvl: lvl, Text: amt(held)})
		out = append(out, line)
	}
	return out
}

// partitionLines are one line per plugin the agent owns devices of, then
// memory.
func (d *Derived) partitionLines(a *model.Agent) [][]kit.Span {
	s := d.Snap
	names := make([]model.DeviceName, 0, len(a.Owns))
	for n := range a.Owns {
		if n != "mem" {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(x, y model.DeviceName) int {
		rx, ry := nameRank(x), nameRank(y)
		if rx != ry {
			return rx - ry
		}
		return strings.Compare(string(x), string(y))
	})
	var out [][]kit.Span
	for _, n := range names {
		ids := a.Owns[n]
		line := []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(n), 4) + " "}}
		if n == "cpu" {
			line = append(line, kit.Span{Lvl: kit.LvlPlain, Text: kit.CompressIDs(ids) + " (" + strconv.Itoa(len(ids)) + ")"})
		} else {
			line = append(line, kit.Span{Lvl: kit.LvlPlain, Text: d.deviceTags(n, ids)})
		}
		// Owned capacity per slot, against held.
		capBySlot := map[model.SlotName]model.Dec{}
		// A slot with an owned device of unknown capacity has no total:
		// "held/?", never held against the others' sum. So has a slot
		// held on such a device: a mock GPU whose settings were not read
		// is registered in a guessed mode, and shares held on it are no
		// "1.40/0" against the guessed whole device.
		unknown := map[model.SlotName]bool{}
		for i := range s.Devices {
			dv := &s.Devices[i]
			if dv.Name == n && a.OwnsDevice(dv.Key()) && dv.CapacityUnknown {
				unknown[dv.Slot] = true
				if _, ok := capBySlot[dv.Slot]; !ok {
					capBySlot[dv.Slot] = model.Zero
				}
				if u := s.Usage[dv.Key()]; u != nil {
					for slot, v := range u.Held {
						if !v.IsZero() {
							unknown[slot] = true
						}
					}
				}
			}
			if dv.Name == n && a.OwnsDevice(dv.Key()) && dv.Capacity.Sign() > 0 {
				capBySlot[dv.Slot] = capBySlot[dv.Slot].Add(dv.Capacity)
			}
		}
		for slot, v := range a.Held {
			if slot.DeviceName() == n && !v.IsZero() {
				if _, ok := capBySlot[slot]; !ok {
					capBySlot[slot] = model.Zero
				}
			}
		}
		slots := make([]model.SlotName, 0, len(capBySlot))
		for slot := range capBySlot {
			slots = append(slots, slot)
		}
		slices.SortFunc(slots, func(x, y model.SlotName) int {
			if rx, ry := SlotRank(x), SlotRank(y); rx != ry {
				return rx - ry
			}
			return strings.Compare(string(x), string(y))
		})
		for _, slot := range slots {
			held, capacity := a.Held[slot], capBySlot[slot]
			lvl, capText := kit.LvlPlain, agentAmount(slot, capacity)
			if unknown[slot] {
				capText = "?"
			} else if capacity.Less(held) {
				lvl = kit.LvlCrit
			}
			label := slotShort(slot)
			if label == string(n) {
				label = "held" // "cpu ... cpu 7/16" says cpu twice
			}
			line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  " + label + " "},
				kit.Span{Lvl: lvl, Text: agentAmount(slot, held) + "/" + capText})
		}
		out = append(out, line)
	}
	held := a.Held[model.SlotMem]
	if a.Mem.Sign() > 0 {
		lvl := kit.LvlPlain
		if a.Mem.Less(held) {
			lvl = kit.LvlCrit
		}
		out = append(out, []kit.Span{{Lvl: kit.LvlDim, Text: "  mem  "}, {Lvl: kit.LvlPlain, Text: kit.FmtBytesDec(a.Mem)},
			{Lvl: kit.LvlDim, Text: "  held "}, {Lvl: lvl, Text: kit.FmtBytesDec(held) + "/" + kit.FmtBytesDec(a.Mem)}})
	} else {
		out = append(out, []kit.Span{{Lvl: kit.LvlDim, Text: "  mem  not partitioned  held "}, {Lvl: kit.LvlPlain, Text: kit.FmtBytesDec(held)}})
	}
	return out
}

// deviceTags names owned devices as the devices pane does ("GPU0,GPU2"),
// MIG instances folded into their GPU, unknown ids abbreviated.
func (d *Derived) deviceTags(n model.DeviceName, ids []model.DeviceID) string {
	var tags []string
	for _, id := range ids {
		di, ok := d.DevIndex[model.DeviceKey{Name: n, ID: id}]
		switch {
		case !ok:
			tags = append(tags, "?"+kit.Truncate(string(id), 10, d.G.Ellipsis))
		case d.Devs[di].Child:
			// Listed with its GPU already when the GPU is owned too.
			parent := d.Snap.Device(model.DeviceKey{Name: n, ID: d.Devs[di].Dev.Parent})
			if parent == nil || !slices.Contains(ids, parent.ID) {
				tags = append(tags, d.Devs[di].Tag)
			}
		default:
			tags = append(tags, d.Devs[di].Tag)
		}
	}
	return strings.Join(tags, ",")
}

func nameRank(n model.DeviceName) int {
	switch n {
	case "cpu":
		return 1
	case "mem":
		return 2
	}
	return 0
}

// slotShort is a slot's name in agent lines: "shares", "devices",
// "10g-mig", "cpu", "mem".
func slotShort(s model.SlotName) string {
	switch {
	case s == model.SlotCUDAShares:
		return "shares"
	case s == model.SlotCUDADevice:
		return "devices"
	case s.MinorType() != "":
		return s.MinorType()
	}
	return string(s)
}

// HealthSpan is an agent's GET /health in a few words: "up 26.4.1",
// "up 26.4.1 degraded", "down", "unreachable"; ok is false before the
// first check.
func HealthSpan(h model.AgentHealth) (kit.Span, bool) {
	switch h.State {
	case model.AgentUp:
		text := "up"
		if h.Version != "" {
			text += " " + h.Version
		}
		if h.Status != "" && h.Status != "ok" {
			return kit.Span{Lvl: kit.LvlWarn, Text: text + " " + h.Status}, true
		}
		return kit.Span{Lvl: kit.LvlOK, Text: text}, true
	case model.AgentDown:
		return kit.Span{Lvl: kit.LvlCrit, Text: "down"}, true
	case model.AgentUnreachable:
		return kit.Span{Lvl: kit.LvlWarn, Text: "unreachable"}, true
	}
	return kit.Span{}, false
}

// agentAmount is an agent's sum of a slot as the devices pane prints a
// device's: bytes in binary units, a whole-unit slot's whole amount
// without fraction digits (kernels' resource.txt may write a MIG slice
// held as "1.00": the agent then held "1.00" beside a given "1").
func agentAmount(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem || model.DefaultSlotTypes().TypeOf(slot) == model.SlotTypeBytes {
		return kit.FmtBytesDec(v)
	}
	return kit.FmtWhole(slot, v)
}

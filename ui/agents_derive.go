package ui

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// deriveAgents builds each agent's lines: its partition per plugin (which
// devices, how much capacity) against what its kernels hold, and its drift
// count.
func (d *derived) deriveAgents(short map[model.AgentID]string) {
	s := d.snap
	drift := map[model.AgentID]int{}
	for _, is := range s.Issues {
		if strings.HasPrefix(is.Code, "drift-") && is.Agent != "" {
			drift[is.Agent]++
		}
	}
	for i := range s.Agents {
		a := &s.Agents[i]
		r := agentRow{a: a, short: short[a.ID], drift: drift[a.ID]}
		r.header = []span{{lvlPlain, string(a.ID)}, {lvlDim, "  " + plural(a.Kernels, "kernel")}}
		if r.drift > 0 {
			r.header = append(r.header, span{lvlWarn, "  drift " + strconv.Itoa(r.drift)})
		}
		// Whether the agent runs the partition shown (it reads agent.toml
		// only at start); nothing without a config.
		switch a.Restart.State {
		case model.RestartPending:
			r.header = append(r.header, span{lvlWarn, "  restart pending"})
		case model.RestartUnknown:
			r.header = append(r.header, span{lvlDim, "  restart: cannot tell"})
		case model.RestartNotRunning:
			r.header = append(r.header, span{lvlDim, "  not running"})
		}
		if a.Owns == nil {
			r.lines = append(r.lines, d.sharedLine(a))
		} else {
			r.lines = append(r.lines, d.partitionLines(a)...)
		}
		d.agents = append(d.agents, r)
	}
}

// sharedLine is an agent that sees every device (shared mode, or no
// partition known): what it holds.
func (d *derived) sharedLine(a *model.Agent) []span {
	out := []span{{lvlDim, "  all devices (shared)  held "}}
	var parts []string
	for _, slot := range a.Held.Names() {
		if a.Held[slot].IsZero() {
			continue
		}
		parts = append(parts, slotShort(slot)+" "+fmtSlot(slot, a.Held[slot]))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing")
	}
	return append(out, span{lvlPlain, strings.Join(parts, " "+d.g.Dot+" ")})
}

// partitionLines are one line per plugin the agent owns devices of, then
// memory.
func (d *derived) partitionLines(a *model.Agent) [][]span {
	s := d.snap
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
	var out [][]span
	for _, n := range names {
		ids := a.Owns[n]
		line := []span{{lvlDim, "  " + padRight(string(n), 4) + " "}}
		if n == "cpu" {
			line = append(line, span{lvlPlain, compressIDs(ids) + " (" + strconv.Itoa(len(ids)) + ")"})
		} else {
			line = append(line, span{lvlPlain, d.deviceTags(n, ids)})
		}
		// Owned capacity per slot, against held.
		capBySlot := map[model.SlotName]model.Dec{}
		for i := range s.Devices {
			dv := &s.Devices[i]
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
			if rx, ry := slotRank(x), slotRank(y); rx != ry {
				return rx - ry
			}
			return strings.Compare(string(x), string(y))
		})
		for _, slot := range slots {
			held, capacity := a.Held[slot], capBySlot[slot]
			lvl := lvlPlain
			if capacity.Less(held) {
				lvl = lvlCrit
			}
			label := slotShort(slot)
			if label == string(n) {
				label = "held" // "cpu ... cpu 7/16" says cpu twice
			}
			line = append(line, span{lvlDim, "  " + label + " "},
				span{lvl, fmtSlot(slot, held) + "/" + fmtSlot(slot, capacity)})
		}
		out = append(out, line)
	}
	held := a.Held[model.SlotMem]
	if a.Mem.Sign() > 0 {
		lvl := lvlPlain
		if a.Mem.Less(held) {
			lvl = lvlCrit
		}
		out = append(out, []span{{lvlDim, "  mem  "}, {lvlPlain, fmtBytesDec(a.Mem)},
			{lvlDim, "  held "}, {lvl, fmtBytesDec(held) + "/" + fmtBytesDec(a.Mem)}})
	} else {
		out = append(out, []span{{lvlDim, "  mem  not partitioned  held "}, {lvlPlain, fmtBytesDec(held)}})
	}
	return out
}

// deviceTags names owned devices as the devices pane does ("GPU0,GPU2"),
// MIG instances folded into their GPU, unknown ids abbreviated.
func (d *derived) deviceTags(n model.DeviceName, ids []model.DeviceID) string {
	var tags []string
	for _, id := range ids {
		di, ok := d.devIndex[model.DeviceKey{Name: n, ID: id}]
		switch {
		case !ok:
			tags = append(tags, "?"+truncate(string(id), 10, d.g.Ellipsis))
		case d.devs[di].child:
			// Listed with its GPU already when the GPU is owned too.
			parent := d.snap.Device(model.DeviceKey{Name: n, ID: d.devs[di].dev.Parent})
			if parent == nil || !slices.Contains(ids, parent.ID) {
				tags = append(tags, d.devs[di].tag)
			}
		default:
			tags = append(tags, d.devs[di].tag)
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

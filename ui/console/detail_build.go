package console

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// blank is an empty detail line.
var blank = detailLine{}

// text is a one-span line.
func text(l kit.Level, s string) detailLine { return detailLine{spans: []kit.Span{{Lvl: l, Text: s}}} }

// kv is a line of "key value" pairs, keys dim.
func kv(pairs ...string) detailLine {
	var sp []kit.Span
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: "  "})
		}
		sp = append(sp, kit.Span{Lvl: kit.LvlDim, Text: pairs[i] + " "}, kit.Span{Lvl: kit.LvlPlain, Text: pairs[i+1]})
	}
	return detailLine{spans: sp}
}

// section is a section heading.
func section(title string) detailLine {
	return detailLine{spans: []kit.Span{{Lvl: kit.LvlTitle, Text: title}}}
}

// deviceDetail is everything about one device: identity, capacity and
// every slot held, who holds it (with their resource.txt), telemetry,
// processes and the kernels they belong to, issues naming it.
func deviceDetail(d *render.Derived, di int) []detailLine {
	r := &d.Devs[di]
	dv := r.Dev
	s := d.Snap
	out := []detailLine{
		{spans: []kit.Span{{Lvl: kit.LvlTitle, Text: r.Label}, {Lvl: kit.LvlDim, Text: "  " + r.Key.String()}}},
	}
	idl := []string{"model", orDash(dv.Model), "NUMA", numa(dv.NUMANode)}
	if dv.MemoryBytes > 0 {
		idl = append(idl, "memory", kit.FmtBytesDec(model.NewDec(dv.MemoryBytes, 0)))
	}
	if dv.Processors > 0 {
		idl = append(idl, "SMs", strconv.Itoa(dv.Processors))
	}
	out = append(out, kv(idl...))
	if dv.UUID != "" {
		out = append(out, kv("uuid", dv.UUID))
	}
	if dv.IsMIG() {
		out = append(out, kv("MIG instance of", string(dv.Parent)))
	}
	owner := r.Owner
	if owner == "" {
		owner = "-"
	}
	capLine := []kit.Span{{Lvl: kit.LvlDim, Text: "capacity "}, {Lvl: kit.LvlPlain, Text: r.Capacity + " " + string(dv.Slot)},
		{Lvl: kit.LvlDim, Text: "  held "}}
	if r.Over {
		capLine = append(capLine, kit.Span{Lvl: kit.LvlCrit, Text: r.Held + " (over capacity)"})
	} else {
		capLine = append(capLine, kit.Span{Lvl: kit.LvlPlain, Text: r.Held})
	}
	capLine = append(capLine, kit.Span{Lvl: kit.LvlDim, Text: "  owner "}, kit.Span{Lvl: r.OwnerLvl, Text: owner})
	out = append(out, detailLine{spans: capLine})
	if p := s.Plugin; p != nil && dv.Name == "cuda" {
		// Which plugin's rules made this id, slot and capacity, and why.
		out = append(out, kv("registered as", pluginName(p.Kind), "by", p.Source, "settings", p.Settings))
		if p.Detail != "" {
			out = append(out, text(kit.LvlDim, "  "+p.Detail))
		}
		// The header says etcd is unreachable; here, what that means for
		// this device's figures.
		if !p.SettingsOK && strings.HasPrefix(p.Settings, "etcd ") {
			why := "etcd unreachable: registered as the last settings read say, if any were"
			if dv.CapacityUnknown {
				why = "etcd unreachable, no settings ever read: capacity unknown"
			}
			out = append(out, text(kit.LvlCrit, "  "+why))
		}
	}
	if r.HasBar {
		out = append(out, detailLine{bar: r})
	}

	u := s.Usage[r.Key]
	out = append(out, blank, section("Held per slot"))
	if u == nil || len(u.Held) == 0 {
		out = append(out, text(kit.LvlDim, "  nothing"))
	} else {
		for _, slot := range u.Held.Names() {
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), 22)}, {Lvl: kit.LvlPlain, Text: kit.FmtSlot(slot, u.Held[slot])}}})
		}
	}
	if dv.Name == "cuda" {
		out = append(out, allocMapLines(s, u, dv.ID)...)
	}
	out = append(out, blank, section("Holdings"))
	if hs := u.Holdings(); len(hs) == 0 {
		out = append(out, text(kit.LvlDim, "  no kernel holds anything here"))
	} else {
		for _, h := range hs {
			path := ""
			if ki, ok := d.KernelIndex(h.Kernel); ok {
				path = d.Kernels[ki].K.Path
			}
			out = append(out, detailLine{spans: []kit.Span{
				{Lvl: kit.LvlPlain, Text: "  " + d.ShortID(h.Kernel)}, {Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(h.Slot), 14)},
				{Lvl: kit.LvlAccent, Text: padLeft(kit.FmtSlot(h.Slot, h.Amount), 6)}, {Lvl: kit.LvlDim, Text: "  " + agentOrUnknown(h.Agent)},
			}})
			if path != "" {
				out = append(out, text(kit.LvlDim, "      "+path))
			}
		}
	}
	out = append(out, blank, section("Telemetry"))
	out = append(out, telemetryLines(d, dv.Telemetry, &r.Tele)...)
	if len(r.Children) > 0 {
		out = append(out, blank, section("MIG instances"))
		for _, ci := range r.Children {
			c := &d.Devs[ci]
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(c.Label, 10)},
				{Lvl: kit.LvlDim, Text: kit.PadRight(c.Dev.Model, 28)}, {Lvl: kit.LvlPlain, Text: c.Held + "/" + c.Capacity + " " + string(c.Dev.Slot)}}})
		}
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Device == r.Key })...)
	return out
}

// allocMapLines are the device's entries in Backend.AI's gpu_alloc_map, in
// both forms agents report: the current per-device ratio (as printed, and
// exactly), and the absolute sum older agents report.
func allocMapLines(s *model.Snapshot, u *model.DeviceUsage, id model.DeviceID) []detailLine {
	out := []detailLine{blank, section("Backend.AI gpu_alloc_map")}
	if u == nil || len(u.Held) == 0 {
		return append(out, text(kit.LvlDim, "  absent: nothing is held here"))
	}
	if s.AllocRatioUnknown(id) {
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight("ratio (current)", 18)},
			{Lvl: kit.LvlNA, Text: "? (capacity unknown)"}}})
	} else {
		ratio := s.DeviceAllocRatio(id)
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight("ratio (current)", 18)},
			{Lvl: kit.LvlPlain, Text: model.QuantizeAllocRatio(ratio).String()}, {Lvl: kit.LvlDim, Text: "  exact " + ratio.String()}}})
	}
	abs, any := model.Zero, false
	for _, slot := range []model.SlotName{model.SlotCUDAShares, model.SlotCUDADevice} {
		if v, ok := u.Held[slot]; ok {
			abs, any = abs.Add(v), true
		}
	}
	absText := "absent (no cuda.shares or cuda.device held)"
	if any {
		absText = abs.String()
	}
	out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight("absolute (old)", 18)}, {Lvl: kit.LvlPlain, Text: absText}}})
	return out
}

// agentOrUnknown names a kernel's agent, or says that it cannot be told.
func agentOrUnknown(a model.AgentID) string {
	if a == "" {
		return "agent unknown"
	}
	return string(a)
}

func telemetryLines(d *render.Derived, t *model.Telemetry, c *kit.TeleCells) []detailLine {
	if t == nil {
		return []detailLine{text(kit.LvlNA, "  N/A: this device source reports no telemetry")}
	}
	out := []detailLine{{spans: []kit.Span{
		{Lvl: kit.LvlDim, Text: "  util "}, {Lvl: c.Util.Lvl, Text: c.Util.Text},
		{Lvl: kit.LvlDim, Text: "  mem-util "}, optU32(t.UtilMem, "%"),
		{Lvl: kit.LvlDim, Text: "  mem "}, {Lvl: c.Mem.Lvl, Text: c.Mem.Text},
		{Lvl: kit.LvlDim, Text: "  temp "}, {Lvl: c.Temp.Lvl, Text: c.Temp.Text},
		{Lvl: kit.LvlDim, Text: "  power "}, {Lvl: c.Power.Lvl, Text: c.Power.Text}, {Lvl: kit.LvlDim, Text: " of "}, optPower(t.PowerCapMW),
		{Lvl: kit.LvlDim, Text: "  MIG "}, optBool(t.MIGMode),
	}}}
	if t.Lost {
		out = append(out, text(kit.LvlCrit, "  the driver reports this GPU as lost"))
	}
	for _, e := range t.Errors {
		out = append(out, text(kit.LvlWarn, "  "+e))
	}
	out = append(out, blank, section("Processes"))
	if len(t.Processes) == 0 {
		out = append(out, text(kit.LvlDim, "  none"))
	}
	for _, p := range t.Processes {
		mem := kit.NAReading()
		if p.UsedMem.Valid {
			mem = kit.Reading{Text: kit.Gib(p.UsedMem.V, 1) + "G", Lvl: kit.LvlPlain}
		}
		out = append(out, detailLine{spans: []kit.Span{
			{Lvl: kit.LvlPlain, Text: "  " + padLeft(strconv.Itoa(int(p.PID)), 7)}, {Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(p.Name, 16)},
			{Lvl: mem.Lvl, Text: padLeft(mem.Text, 7)}, optU32Pad(p.SMUtil, "%", 5), {Lvl: kit.LvlDim, Text: "  "}, processOwner(d, p),
		}})
	}
	if len(t.Processes) > 0 && t.ProcUtil.Valid && !t.ProcUtil.V {
		out = append(out, text(kit.LvlNA, "  per-process utilisation N/A here (MIG, or the driver has none): memory only"))
	}
	return out
}

// processOwner says whose a GPU process is.
func processOwner(d *render.Derived, p model.Process) kit.Span {
	switch p.Owner {
	case model.ProcKernel:
		return kit.Span{Lvl: kit.LvlPlain, Text: "kernel " + d.ShortID(p.Kernel)}
	case model.ProcForeign:
		if p.Container != "" {
			return kit.Span{Lvl: kit.LvlWarn, Text: "not Backend.AI's: container " + cut12(p.Container) + " no kernel names"}
		}
		return kit.Span{Lvl: kit.LvlWarn, Text: "not Backend.AI's: host process"}
	case model.ProcGone:
		return kit.Span{Lvl: kit.LvlDim, Text: "exited before /proc could be read"}
	case model.ProcReused:
		return kit.Span{Lvl: kit.LvlDim, Text: "PID reused by a newer process: credited to nobody"}
	case model.ProcUnknown:
		return kit.Span{Lvl: kit.LvlNA, Text: "cannot tell: " + orDash(p.Detail)}
	}
	if p.Kernel != "" {
		return kit.Span{Lvl: kit.LvlPlain, Text: "kernel " + d.ShortID(p.Kernel)}
	}
	return kit.Span{Lvl: kit.LvlWarn, Text: "not mapped to a kernel"}
}

func cut12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func optU32Pad(o model.Opt[uint32], unit string, w int) kit.Span {
	sp := optU32(o, unit)
	sp.Text = padLeft(sp.Text, w)
	return sp
}

func optU32(o model.Opt[uint32], unit string) kit.Span {
	if !o.Valid {
		return kit.Span{Lvl: kit.LvlNA, Text: "N/A"}
	}
	return kit.Span{Lvl: kit.LvlPlain, Text: strconv.Itoa(int(o.V)) + unit}
}

func optPower(o model.Opt[uint32]) kit.Span {
	if !o.Valid {
		return kit.Span{Lvl: kit.LvlNA, Text: "N/A"}
	}
	return kit.Span{Lvl: kit.LvlPlain, Text: strconv.Itoa(int((o.V+500)/1000)) + "W"}
}

func optBool(o model.Opt[bool]) kit.Span {
	switch {
	case !o.Valid:
		return kit.Span{Lvl: kit.LvlNA, Text: "N/A"}
	case o.V:
		return kit.Span{Lvl: kit.LvlPlain, Text: "on"}
	}
	return kit.Span{Lvl: kit.LvlPlain, Text: "off"}
}

// ageClock words ages at now and keeps the earliest instant one of them
// turns over: a detail is built from a snapshot, and on a node at rest no
// new one comes to make "seen 5s ago" read 6s (the tour).
type ageClock struct {
	now, next time.Time
	// fixed: now is a moment of the past, which time does not move.
	fixed bool
}

func (c *ageClock) age(since time.Time) string {
	text, next := kit.AgeAt(c.now, since)
	if !c.fixed && !next.IsZero() && (c.next.IsZero() || next.Before(c.next)) {
		c.next = next
	}
	return text
}

// seenText is how long ago the node first saw a kernel; "not known"
// where that is not known (a fleet's node sends no such time: it reads
// the file's, which a kernel found by the start-up scan lacks).
func seenText(clk *ageClock, seen time.Time) string {
	if seen.IsZero() {
		return "not known"
	}
	return clk.age(seen) + " ago"
}

// kernelDetail is everything about one kernel: its file, state, what it
// requested and what it holds on each device, its GPU processes, issues
// naming it.
func kernelDetail(d *render.Derived, ki int, clk *ageClock) []detailLine {
	kr := &d.Kernels[ki]
	k := kr.K
	out := []detailLine{
		{spans: []kit.Span{{Lvl: kit.LvlTitle, Text: string(k.ID)}}},
		{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "agent "}, {Lvl: kit.LvlPlain, Text: string(k.Agent)}, {Lvl: kit.LvlDim, Text: "  state "}, {Lvl: kr.StateLvl, Text: string(k.State)},
			{Lvl: kit.LvlDim, Text: "  seen "}, {Lvl: kit.LvlPlain, Text: seenText(clk, k.Seen)}}},
		kv("resource.txt", k.Path),
	}
	if !k.ModTime.IsZero() {
		out = append(out, kv("modified", k.ModTime.UTC().Format(time.RFC3339)))
	}
	if k.Legacy {
		out = append(out, text(kit.LvlDim, "pre-24.12 layout (CID first, spaced JSON)"))
	}
	if k.Problem != nil {
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlWarn, Text: "problem "}, {Lvl: kit.LvlPlain, Text: k.Problem.String()}}})
	}
	out = append(out, ownerLines(k)...)
	out = append(out, useLines(d, k, clk)...)
	out = append(out, blank, section("Requested (SLOTS)"))
	if len(k.Slots) == 0 {
		out = append(out, text(kit.LvlDim, "  nothing"))
	}
	for _, slot := range k.Slots.Names() {
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), 22)}, {Lvl: kit.LvlPlain, Text: kit.FmtSlot(slot, k.Slots[slot])}}})
	}
	out = append(out, blank, section("Allocated per device (*_SHARES)"))
	if len(k.Alloc) == 0 {
		out = append(out, text(kit.LvlDim, "  nothing"))
	}
	slots := make([]model.SlotName, 0, len(k.Alloc))
	for slot := range k.Alloc {
		slots = append(slots, slot)
	}
	slices.Sort(slots)
	for _, slot := range slots {
		m := k.Alloc[slot]
		ids := make([]model.DeviceID, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		var sum model.Dec
		for _, id := range ids {
			sum = sum.Add(m[id])
		}
		if slot.DeviceName() == "cpu" && len(ids) > 1 {
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), 22)},
				{Lvl: kit.LvlPlain, Text: "cores " + kit.CompressIDs(ids)}, {Lvl: kit.LvlDim, Text: "  total "}, {Lvl: kit.LvlAccent, Text: kit.FmtSlot(slot, sum)}}})
			continue
		}
		slices.Sort(ids)
		for _, id := range ids {
			name := string(id)
			if di, ok := d.DevIndex[model.DeviceKey{Name: slot.DeviceName(), ID: id}]; ok {
				name = d.Devs[di].Tag + " (" + string(id) + ")"
			}
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), 22)},
				{Lvl: kit.LvlAccent, Text: padLeft(kit.FmtSlot(slot, m[id]), 6)}, {Lvl: kit.LvlDim, Text: "  on "}, {Lvl: kit.LvlPlain, Text: name}}})
		}
	}
	if len(k.UnifiedDevices) > 0 {
		var parts []string
		for _, u := range k.UnifiedDevices {
			parts = append(parts, u[0]+":"+u[1])
		}
		out = append(out, kv("unified devices", strings.Join(parts, ", ")))
	}
	out = append(out, blank, section("GPU processes"))
	found := false
	for di := range d.Devs {
		dv := d.Devs[di].Dev
		if dv.Telemetry == nil {
			continue
		}
		for _, p := range dv.Telemetry.Processes {
			if p.Kernel != k.ID {
				continue
			}
			found = true
			mem := "N/A"
			if p.UsedMem.Valid {
				mem = kit.Gib(p.UsedMem.V, 1) + "G"
			}
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(d.Devs[di].Label, 9)},
				{Lvl: kit.LvlPlain, Text: padLeft(strconv.Itoa(int(p.PID)), 7) + "  " + kit.PadRight(p.Name, 16)}, {Lvl: kit.LvlPlain, Text: padLeft(mem, 7)},
				optU32Pad(p.SMUtil, "%", 5)}})
		}
	}
	if !found {
		msg := "  none seen (NVML maps processes where it can)"
		if k.Container == "" {
			msg = "  none mapped: resource.txt has no CID= line yet, so its container is unknown"
		}
		out = append(out, text(kit.LvlDim, msg))
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Kernel == k.ID })...)
	return out
}

// issueDetail shows an issue in full, with where it comes from.
func issueDetail(d *render.Derived, i int) []detailLine {
	r := &d.Issues[i]
	is := r.Is
	out := []detailLine{
		{spans: []kit.Span{r.Sev, {Lvl: kit.LvlPlain, Text: " " + is.Code}}},
		{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: is.Message}}},
	}
	if r.Where != "" {
		out = append(out, kv("file", r.Where))
	}
	if is.Device.ID != "" {
		name := is.Device.String()
		if di, ok := d.DevIndex[is.Device]; ok {
			name = d.Devs[di].Label + " (" + name + ")"
		}
		out = append(out, kv("device", name))
	}
	if is.Kernel != "" {
		out = append(out, kv("kernel", string(is.Kernel)))
	}
	if is.Agent != "" {
		out = append(out, kv("agent", string(is.Agent)))
	}
	return out
}

func issuesAbout(d *render.Derived, match func(*model.Issue) bool) []detailLine {
	var out []detailLine
	for i := range d.Issues {
		if match(d.Issues[i].Is) {
			if out == nil {
				out = append(out, blank, section("Issues"))
			}
			out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: "  "}, d.Issues[i].Sev, {Lvl: kit.LvlPlain, Text: " " + d.Issues[i].Text}}})
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func numa(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

func padLeft(s string, w int) string {
	if n := kit.Width(s); n < w {
		return kit.Spaces(w-n) + s
	}
	return s
}

// ownerLines say whose the kernel is, from its recovery.json, and which
// container it runs in (its CID= line).
func ownerLines(k *model.Kernel) []detailLine {
	var out []detailLine
	if r := k.Record; r != nil {
		out = append(out, kv("owner user", orDash(r.OwnerUserID), "project", orDash(r.OwnerProjectID)),
			kv("session", orDash(r.SessionID), "type", orDash(r.SessionType)),
			kv("image", orDash(r.Image), "arch", orDash(r.Architecture)))
	} else {
		out = append(out, text(kit.LvlDim, "no recovery.json: owner and session unknown (agents before 25.12 write none)"))
	}
	if k.Container != "" {
		out = append(out, kv("container", k.Container))
	}
	return out
}

// useLines are the kernel's allocated against used: per device its share
// beside what its processes use, and whether it holds but idles.
func useLines(d *render.Derived, k *model.Kernel, clk *ageClock) []detailLine {
	u := k.Use
	if u == nil {
		return nil
	}
	out := []detailLine{blank, section("Allocated against used")}
	for _, du := range u.Devices {
		name := du.Device.String()
		heldText := du.Held.String()
		if di, ok := d.DevIndex[du.Device]; ok {
			name = d.Devs[di].Label
			heldText = kit.FmtWhole(d.Devs[di].Dev.Slot, du.Held)
		}
		capacity := du.Capacity.String()
		if du.CapacityUnknown {
			capacity = "?"
		}
		held := heldText + "/" + capacity
		if du.Held.Sign() == 0 {
			held = "nothing held"
		}
		mem := "-"
		if du.MemUsed.Valid {
			mem = kit.Gib(du.MemUsed.V, 1) + "G"
		}
		procs := strconv.Itoa(du.Procs) + " proc"
		if du.Procs != 1 {
			procs += "s"
		}
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(name, 9)}, {Lvl: kit.LvlDim, Text: "held "}, {Lvl: kit.LvlAccent, Text: kit.PadRight(held, 12)},
			{Lvl: kit.LvlDim, Text: " used "}, {Lvl: kit.LvlPlain, Text: padLeft(mem, 6)}, optU32Pad(du.Util, "%", 5), {Lvl: kit.LvlDim, Text: "  " + procs}}})
	}
	switch {
	case u.Idle:
		out = append(out, text(kit.LvlWarn, "  holding but idle: 0 % since "+u.IdleSince.UTC().Format("15:04:05")+" ("+clk.age(u.IdleSince)+")"))
	case !u.IdleSince.IsZero():
		out = append(out, text(kit.LvlDim, "  at 0 % for "+clk.age(u.IdleSince)+" (marked idle after --idle-after)"))
	case u.MemOnly:
		out = append(out, text(kit.LvlNA, "  utilisation N/A: the driver gives its processes' memory only"))
	}
	return out
}

// agentDetail is an agent's partition against what its kernels hold: its
// block from the agents pane, whether its process runs the agent.toml on
// disk, what it holds per slot, the devices it owns with their holders'
// totals, its kernels, and the issues about it.
func agentDetail(d *render.Derived, ai int) []detailLine {
	r := &d.Agents[ai]
	ag := r.A
	out := []detailLine{{spans: []kit.Span{{Lvl: kit.LvlTitle, Text: string(ag.ID)}, {Lvl: kit.LvlDim, Text: "  " + kit.Plural(ag.Kernels, "kernel")}}}}
	if ag.ScratchRoot != "" {
		out = append(out, kv("scratch root", ag.ScratchRoot))
	}
	if st := ag.Restart.State; st != "" {
		lvl := kit.LvlPlain
		if st == model.RestartPending {
			lvl = kit.LvlWarn
		}
		line := []kit.Span{{Lvl: kit.LvlDim, Text: "agent process "}, {Lvl: lvl, Text: string(st)}}
		if ag.Restart.Detail != "" {
			line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  " + ag.Restart.Detail})
		}
		out = append(out, detailLine{spans: line})
	}
	if sp, ok := render.HealthSpan(ag.Health); ok {
		line := []kit.Span{{Lvl: kit.LvlDim, Text: "health "}, sp}
		if ag.Health.URL != "" {
			line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  " + ag.Health.URL})
		}
		if ag.Health.Detail != "" {
			line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  " + ag.Health.Detail})
		}
		out = append(out, detailLine{spans: line})
	}
	out = append(out, blank, section("Partition"))
	if ag.Owns == nil && ag.Given == nil {
		out = append(out, text(kit.LvlDim, "  every device (shared mode, or no partition known)"))
	}
	for _, ln := range r.Lines {
		out = append(out, detailLine{spans: append([]kit.Span{{Lvl: kit.LvlPlain, Text: "  "}}, ln...)})
	}
	out = append(out, blank, section("Held per slot"))
	if len(ag.Held) == 0 {
		out = append(out, text(kit.LvlDim, "  nothing"))
	}
	for _, slot := range ag.Held.Names() {
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlDim, Text: "  " + kit.PadRight(string(slot), 22)}, {Lvl: kit.LvlPlain, Text: kit.FmtSlot(slot, ag.Held[slot])}}})
	}
	devTitle := "Devices it owns"
	if ag.Owns == nil {
		// Not its own: a slot-based or shared agent allocates from every
		// device, and the figures below are every agent's kernels. Under
		// "Devices it owns" GPU2's 1.60 of two agents read as this one's.
		devTitle = "Devices it allocates from: every one, not exclusive (all agents' holdings)"
	}
	out = append(out, blank, section(devTitle))
	owned := 0
	for i := range d.Devs {
		dr := &d.Devs[i]
		if ag.Owns != nil && !ag.OwnsDevice(dr.Key) {
			continue
		}
		owned++
		lvl := kit.LvlPlain
		if dr.Over {
			lvl = kit.LvlCrit
		}
		out = append(out, detailLine{spans: []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(dr.Label, 10)},
			{Lvl: lvl, Text: dr.Held + "/" + dr.Capacity + " " + string(dr.Dev.Slot)}}})
		if dr.HasBar {
			out = append(out, detailLine{bar: dr})
		}
	}
	if owned == 0 {
		out = append(out, text(kit.LvlDim, "  none"))
	}
	out = append(out, blank, section("Kernels"))
	n := 0
	for i := range d.Kernels {
		kr := &d.Kernels[i]
		if kr.K.Agent != ag.ID {
			continue
		}
		n++
		line := []kit.Span{{Lvl: kit.LvlPlain, Text: "  " + kit.PadRight(kr.Short, 10)}, {Lvl: kr.StateLvl, Text: kit.PadRight(string(kr.K.State), 8)}}
		for j, slot := range d.SlotCols {
			if j < len(kr.SlotVals) && kr.SlotVals[j] != "" {
				line = append(line, kit.Span{Lvl: kit.LvlDim, Text: "  " + string(slot) + " "}, kit.Span{Lvl: kit.LvlPlain, Text: kr.SlotVals[j]})
			}
		}
		out = append(out, detailLine{spans: line})
	}
	if n == 0 {
		out = append(out, text(kit.LvlDim, "  none"))
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Agent == ag.ID })...)
	return out
}

package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
)

// blank is an empty detail line.
var blank = detailLine{}

// text is a one-span line.
func text(l level, s string) detailLine { return detailLine{spans: []span{{l, s}}} }

// kv is a line of "key value" pairs, keys dim.
func kv(pairs ...string) detailLine {
	var sp []span
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			sp = append(sp, span{lvlDim, "  "})
		}
		sp = append(sp, span{lvlDim, pairs[i] + " "}, span{lvlPlain, pairs[i+1]})
	}
	return detailLine{spans: sp}
}

// section is a section heading.
func section(title string) detailLine { return detailLine{spans: []span{{lvlTitle, title}}} }

// deviceDetail is everything about one device: identity, capacity and
// every slot held, who holds it (with their resource.txt), telemetry,
// processes and the kernels they belong to, issues naming it.
func deviceDetail(d *derived, di int) []detailLine {
	r := &d.devs[di]
	dv := r.dev
	s := d.snap
	out := []detailLine{
		{spans: []span{{lvlTitle, r.label}, {lvlDim, "  " + r.key.String()}}},
	}
	idl := []string{"model", orDash(dv.Model), "NUMA", numa(dv.NUMANode)}
	if dv.MemoryBytes > 0 {
		idl = append(idl, "memory", fmtBytesDec(model.NewDec(dv.MemoryBytes, 0)))
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
	owner := r.owner
	if owner == "" {
		owner = "-"
	}
	capLine := []span{{lvlDim, "capacity "}, {lvlPlain, r.capacity + " " + string(dv.Slot)},
		{lvlDim, "  held "}}
	if r.over {
		capLine = append(capLine, span{lvlCrit, r.held + " (over capacity)"})
	} else {
		capLine = append(capLine, span{lvlPlain, r.held})
	}
	capLine = append(capLine, span{lvlDim, "  owner "}, span{r.ownerLvl, owner})
	out = append(out, detailLine{spans: capLine})
	if p := s.Plugin; p != nil && dv.Name == "cuda" {
		// Which plugin's rules made this id, slot and capacity, and why.
		out = append(out, kv("registered as", pluginName(p.Kind), "by", p.Source, "settings", p.Settings))
		if p.Detail != "" {
			out = append(out, text(lvlDim, "  "+p.Detail))
		}
		// The header says etcd is unreachable; here, what that means for
		// this device's figures.
		if !p.SettingsOK && strings.HasPrefix(p.Settings, "etcd ") {
			why := "etcd unreachable: registered as the last settings read say, if any were"
			if dv.CapacityUnknown {
				why = "etcd unreachable, no settings ever read: capacity unknown"
			}
			out = append(out, text(lvlCrit, "  "+why))
		}
	}
	if r.hasBar {
		out = append(out, detailLine{bar: r})
	}

	u := s.Usage[r.key]
	out = append(out, blank, section("Held per slot"))
	if u == nil || len(u.Held) == 0 {
		out = append(out, text(lvlDim, "  nothing"))
	} else {
		for _, slot := range u.Held.Names() {
			out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight(string(slot), 22)}, {lvlPlain, fmtSlot(slot, u.Held[slot])}}})
		}
	}
	if dv.Name == "cuda" {
		out = append(out, allocMapLines(s, u, dv.ID)...)
	}
	out = append(out, blank, section("Holdings"))
	if hs := u.Holdings(); len(hs) == 0 {
		out = append(out, text(lvlDim, "  no kernel holds anything here"))
	} else {
		for _, h := range hs {
			path := ""
			if ki, ok := d.kernelIndex(h.Kernel); ok {
				path = d.kernels[ki].k.Path
			}
			out = append(out, detailLine{spans: []span{
				{lvlPlain, "  " + shortKernel(h.Kernel)}, {lvlDim, "  " + padRight(string(h.Slot), 14)},
				{lvlAccent, padLeft(fmtSlot(h.Slot, h.Amount), 6)}, {lvlDim, "  " + agentOrUnknown(h.Agent)},
			}})
			if path != "" {
				out = append(out, text(lvlDim, "      "+path))
			}
		}
	}
	out = append(out, blank, section("Telemetry"))
	out = append(out, telemetryLines(dv.Telemetry, &r.tele)...)
	if len(r.children) > 0 {
		out = append(out, blank, section("MIG instances"))
		for _, ci := range r.children {
			c := &d.devs[ci]
			out = append(out, detailLine{spans: []span{{lvlPlain, "  " + padRight(c.label, 10)},
				{lvlDim, padRight(c.dev.Model, 28)}, {lvlPlain, c.held + "/" + c.capacity + " " + string(c.dev.Slot)}}})
		}
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Device == r.key })...)
	return out
}

// allocMapLines are the device's entries in Backend.AI's gpu_alloc_map, in
// both forms agents report: the current per-device ratio (as printed, and
// exactly), and the absolute sum older agents report.
func allocMapLines(s *model.Snapshot, u *model.DeviceUsage, id model.DeviceID) []detailLine {
	out := []detailLine{blank, section("Backend.AI gpu_alloc_map")}
	if u == nil || len(u.Held) == 0 {
		return append(out, text(lvlDim, "  absent: nothing is held here"))
	}
	if s.AllocRatioUnknown(id) {
		out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight("ratio (current)", 18)},
			{lvlNA, "? (capacity unknown)"}}})
	} else {
		ratio := s.DeviceAllocRatio(id)
		out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight("ratio (current)", 18)},
			{lvlPlain, model.QuantizeAllocRatio(ratio).String()}, {lvlDim, "  exact " + ratio.String()}}})
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
	out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight("absolute (old)", 18)}, {lvlPlain, absText}}})
	return out
}

// agentOrUnknown names a kernel's agent, or says that it cannot be told.
func agentOrUnknown(a model.AgentID) string {
	if a == "" {
		return "agent unknown"
	}
	return string(a)
}

func telemetryLines(t *model.Telemetry, c *teleCells) []detailLine {
	if t == nil {
		return []detailLine{text(lvlNA, "  N/A: this device source reports no telemetry")}
	}
	out := []detailLine{{spans: []span{
		{lvlDim, "  util "}, {c.util.lvl, c.util.text},
		{lvlDim, "  mem-util "}, optU32(t.UtilMem, "%"),
		{lvlDim, "  mem "}, {c.mem.lvl, c.mem.text},
		{lvlDim, "  temp "}, {c.temp.lvl, c.temp.text},
		{lvlDim, "  power "}, {c.power.lvl, c.power.text}, {lvlDim, " of "}, optPower(t.PowerCapMW),
		{lvlDim, "  MIG "}, optBool(t.MIGMode),
	}}}
	if t.Lost {
		out = append(out, text(lvlCrit, "  the driver reports this GPU as lost"))
	}
	for _, e := range t.Errors {
		out = append(out, text(lvlWarn, "  "+e))
	}
	out = append(out, blank, section("Processes"))
	if len(t.Processes) == 0 {
		out = append(out, text(lvlDim, "  none"))
	}
	for _, p := range t.Processes {
		mem := naReading
		if p.UsedMem.Valid {
			mem = reading{gib(p.UsedMem.V, 1) + "G", lvlPlain}
		}
		out = append(out, detailLine{spans: []span{
			{lvlPlain, "  " + padLeft(strconv.Itoa(int(p.PID)), 7)}, {lvlPlain, "  " + padRight(p.Name, 16)},
			{mem.lvl, padLeft(mem.text, 7)}, optU32Pad(p.SMUtil, "%", 5), {lvlDim, "  "}, processOwner(p),
		}})
	}
	if len(t.Processes) > 0 && t.ProcUtil.Valid && !t.ProcUtil.V {
		out = append(out, text(lvlNA, "  per-process utilisation N/A here (MIG, or the driver has none): memory only"))
	}
	return out
}

// processOwner says whose a GPU process is.
func processOwner(p model.Process) span {
	switch p.Owner {
	case model.ProcKernel:
		return span{lvlPlain, "kernel " + shortKernel(p.Kernel)}
	case model.ProcForeign:
		if p.Container != "" {
			return span{lvlWarn, "not Backend.AI's: container " + cut12(p.Container) + " no kernel names"}
		}
		return span{lvlWarn, "not Backend.AI's: host process"}
	case model.ProcGone:
		return span{lvlDim, "exited before /proc could be read"}
	case model.ProcReused:
		return span{lvlDim, "PID reused by a newer process: credited to nobody"}
	case model.ProcUnknown:
		return span{lvlNA, "cannot tell: " + orDash(p.Detail)}
	}
	if p.Kernel != "" {
		return span{lvlPlain, "kernel " + shortKernel(p.Kernel)}
	}
	return span{lvlWarn, "not mapped to a kernel"}
}

func cut12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func optU32Pad(o model.Opt[uint32], unit string, w int) span {
	sp := optU32(o, unit)
	sp.text = padLeft(sp.text, w)
	return sp
}

func optU32(o model.Opt[uint32], unit string) span {
	if !o.Valid {
		return span{lvlNA, "N/A"}
	}
	return span{lvlPlain, strconv.Itoa(int(o.V)) + unit}
}

func optPower(o model.Opt[uint32]) span {
	if !o.Valid {
		return span{lvlNA, "N/A"}
	}
	return span{lvlPlain, strconv.Itoa(int((o.V+500)/1000)) + "W"}
}

func optBool(o model.Opt[bool]) span {
	switch {
	case !o.Valid:
		return span{lvlNA, "N/A"}
	case o.V:
		return span{lvlPlain, "on"}
	}
	return span{lvlPlain, "off"}
}

// kernelDetail is everything about one kernel: its file, state, what it
// requested and what it holds on each device, its GPU processes, issues
// naming it.
func kernelDetail(d *derived, ki int, now time.Time) []detailLine {
	kr := &d.kernels[ki]
	k := kr.k
	out := []detailLine{
		{spans: []span{{lvlTitle, string(k.ID)}}},
		{spans: []span{{lvlDim, "agent "}, {lvlPlain, string(k.Agent)}, {lvlDim, "  state "}, {kr.stateLvl, string(k.State)},
			{lvlDim, "  seen "}, {lvlPlain, fmtAge(now.Sub(k.Seen)) + " ago"}}},
		kv("resource.txt", k.Path),
	}
	if !k.ModTime.IsZero() {
		out = append(out, kv("modified", k.ModTime.UTC().Format(time.RFC3339)))
	}
	if k.Legacy {
		out = append(out, text(lvlDim, "pre-24.12 layout (CID first, spaced JSON)"))
	}
	if k.Problem != nil {
		out = append(out, detailLine{spans: []span{{lvlWarn, "problem "}, {lvlPlain, k.Problem.String()}}})
	}
	out = append(out, ownerLines(k)...)
	out = append(out, useLines(d, k, now)...)
	out = append(out, blank, section("Requested (SLOTS)"))
	if len(k.Slots) == 0 {
		out = append(out, text(lvlDim, "  nothing"))
	}
	for _, slot := range k.Slots.Names() {
		out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight(string(slot), 22)}, {lvlPlain, fmtSlot(slot, k.Slots[slot])}}})
	}
	out = append(out, blank, section("Allocated per device (*_SHARES)"))
	if len(k.Alloc) == 0 {
		out = append(out, text(lvlDim, "  nothing"))
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
			out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight(string(slot), 22)},
				{lvlPlain, "cores " + compressIDs(ids)}, {lvlDim, "  total "}, {lvlAccent, fmtSlot(slot, sum)}}})
			continue
		}
		slices.Sort(ids)
		for _, id := range ids {
			name := string(id)
			if di, ok := d.devIndex[model.DeviceKey{Name: slot.DeviceName(), ID: id}]; ok {
				name = d.devs[di].tag + " (" + string(id) + ")"
			}
			out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight(string(slot), 22)},
				{lvlAccent, padLeft(fmtSlot(slot, m[id]), 6)}, {lvlDim, "  on "}, {lvlPlain, name}}})
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
	for di := range d.devs {
		dv := d.devs[di].dev
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
				mem = gib(p.UsedMem.V, 1) + "G"
			}
			out = append(out, detailLine{spans: []span{{lvlPlain, "  " + padRight(d.devs[di].label, 9)},
				{lvlPlain, padLeft(strconv.Itoa(int(p.PID)), 7) + "  " + padRight(p.Name, 16)}, {lvlPlain, padLeft(mem, 7)},
				optU32Pad(p.SMUtil, "%", 5)}})
		}
	}
	if !found {
		msg := "  none seen (NVML maps processes where it can)"
		if k.Container == "" {
			msg = "  none mapped: resource.txt has no CID= line yet, so its container is unknown"
		}
		out = append(out, text(lvlDim, msg))
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Kernel == k.ID })...)
	return out
}

// issueDetail shows an issue in full, with where it comes from.
func issueDetail(d *derived, i int) []detailLine {
	r := &d.issues[i]
	is := r.is
	out := []detailLine{
		{spans: []span{r.sev, {lvlPlain, " " + is.Code}}},
		{spans: []span{{lvlPlain, is.Message}}},
	}
	if r.where != "" {
		out = append(out, kv("file", r.where))
	}
	if is.Device.ID != "" {
		name := is.Device.String()
		if di, ok := d.devIndex[is.Device]; ok {
			name = d.devs[di].label + " (" + name + ")"
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

func issuesAbout(d *derived, match func(*model.Issue) bool) []detailLine {
	var out []detailLine
	for i := range d.issues {
		if match(d.issues[i].is) {
			if out == nil {
				out = append(out, blank, section("Issues"))
			}
			out = append(out, detailLine{spans: []span{{lvlPlain, "  "}, d.issues[i].sev, {lvlPlain, " " + d.issues[i].text}}})
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
	if n := width(s); n < w {
		return spaces(w-n) + s
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
		out = append(out, text(lvlDim, "no recovery.json: owner and session unknown (agents before 25.12 write none)"))
	}
	if k.Container != "" {
		out = append(out, kv("container", k.Container))
	}
	return out
}

// useLines are the kernel's allocated against used: per device its share
// beside what its processes use, and whether it holds but idles.
func useLines(d *derived, k *model.Kernel, now time.Time) []detailLine {
	u := k.Use
	if u == nil {
		return nil
	}
	out := []detailLine{blank, section("Allocated against used")}
	for _, du := range u.Devices {
		name := du.Device.String()
		if di, ok := d.devIndex[du.Device]; ok {
			name = d.devs[di].label
		}
		capacity := du.Capacity.String()
		if du.CapacityUnknown {
			capacity = "?"
		}
		held := du.Held.String() + "/" + capacity
		if du.Held.Sign() == 0 {
			held = "nothing held"
		}
		mem := "-"
		if du.MemUsed.Valid {
			mem = gib(du.MemUsed.V, 1) + "G"
		}
		procs := strconv.Itoa(du.Procs) + " proc"
		if du.Procs != 1 {
			procs += "s"
		}
		out = append(out, detailLine{spans: []span{{lvlPlain, "  " + padRight(name, 9)}, {lvlDim, "held "}, {lvlAccent, padRight(held, 12)},
			{lvlDim, " used "}, {lvlPlain, padLeft(mem, 6)}, optU32Pad(du.Util, "%", 5), {lvlDim, "  " + procs}}})
	}
	switch {
	case u.Idle:
		out = append(out, text(lvlWarn, "  holding but idle: 0 % since "+u.IdleSince.UTC().Format("15:04:05")+" ("+fmtAge(now.Sub(u.IdleSince))+")"))
	case !u.IdleSince.IsZero():
		out = append(out, text(lvlDim, "  at 0 % for "+fmtAge(now.Sub(u.IdleSince))+" (marked idle after --idle-after)"))
	case u.MemOnly:
		out = append(out, text(lvlNA, "  utilisation N/A: the driver gives its processes' memory only"))
	}
	return out
}

// agentDetail is an agent's partition against what its kernels hold: its
// block from the agents pane, whether its process runs the agent.toml on
// disk, what it holds per slot, the devices it owns with their holders'
// totals, its kernels, and the issues about it.
func agentDetail(d *derived, ai int) []detailLine {
	r := &d.agents[ai]
	ag := r.a
	out := []detailLine{{spans: []span{{lvlTitle, string(ag.ID)}, {lvlDim, "  " + plural(ag.Kernels, "kernel")}}}}
	if ag.ScratchRoot != "" {
		out = append(out, kv("scratch root", ag.ScratchRoot))
	}
	if st := ag.Restart.State; st != "" {
		lvl := lvlPlain
		if st == model.RestartPending {
			lvl = lvlWarn
		}
		line := []span{{lvlDim, "agent process "}, {lvl, string(st)}}
		if ag.Restart.Detail != "" {
			line = append(line, span{lvlDim, "  " + ag.Restart.Detail})
		}
		out = append(out, detailLine{spans: line})
	}
	if sp, ok := healthSpan(ag.Health); ok {
		line := []span{{lvlDim, "health "}, sp}
		if ag.Health.URL != "" {
			line = append(line, span{lvlDim, "  " + ag.Health.URL})
		}
		if ag.Health.Detail != "" {
			line = append(line, span{lvlDim, "  " + ag.Health.Detail})
		}
		out = append(out, detailLine{spans: line})
	}
	out = append(out, blank, section("Partition"))
	if ag.Owns == nil && ag.Given == nil {
		out = append(out, text(lvlDim, "  every device (shared mode, or no partition known)"))
	}
	for _, ln := range r.lines {
		out = append(out, detailLine{spans: append([]span{{lvlPlain, "  "}}, ln...)})
	}
	out = append(out, blank, section("Held per slot"))
	if len(ag.Held) == 0 {
		out = append(out, text(lvlDim, "  nothing"))
	}
	for _, slot := range ag.Held.Names() {
		out = append(out, detailLine{spans: []span{{lvlDim, "  " + padRight(string(slot), 22)}, {lvlPlain, fmtSlot(slot, ag.Held[slot])}}})
	}
	out = append(out, blank, section("Devices it owns"))
	owned := 0
	for i := range d.devs {
		dr := &d.devs[i]
		if ag.Owns != nil && !ag.OwnsDevice(dr.key) {
			continue
		}
		owned++
		lvl := lvlPlain
		if dr.over {
			lvl = lvlCrit
		}
		out = append(out, detailLine{spans: []span{{lvlPlain, "  " + padRight(dr.label, 10)},
			{lvl, dr.held + "/" + dr.capacity + " " + string(dr.dev.Slot)}}})
		if dr.hasBar {
			out = append(out, detailLine{bar: dr})
		}
	}
	if owned == 0 {
		out = append(out, text(lvlDim, "  none"))
	}
	out = append(out, blank, section("Kernels"))
	n := 0
	for i := range d.kernels {
		kr := &d.kernels[i]
		if kr.k.Agent != ag.ID {
			continue
		}
		n++
		line := []span{{lvlPlain, "  " + padRight(kr.short, 10)}, {kr.stateLvl, padRight(string(kr.k.State), 8)}}
		for j, slot := range d.slotCols {
			if j < len(kr.slotVals) && kr.slotVals[j] != "" {
				line = append(line, span{lvlDim, "  " + string(slot) + " "}, span{lvlPlain, kr.slotVals[j]})
			}
		}
		out = append(out, detailLine{spans: line})
	}
	if n == 0 {
		out = append(out, text(lvlDim, "  none"))
	}
	out = append(out, issuesAbout(d, func(is *model.Issue) bool { return is.Agent == ag.ID })...)
	return out
}

package ui

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// deriveKernels formats each kernel's row (memoised per kernel value)
// and finds the slot columns the table needs.
func (d *derived) deriveKernels(short map[model.AgentID]string, c *deriveCache) {
	ks := d.snap.Kernels()
	d.kernels = make([]kernRow, len(ks))
	cached := make([]*kernCached, len(ks))
	for i, k := range ks {
		kc := c.kernel(k)
		cached[i] = kc
		for _, sv := range kc.slots {
			if !slices.Contains(d.slotCols, sv.slot) {
				d.slotCols = append(d.slotCols, sv.slot)
			}
		}
		d.states.add(k.State)
	}
	slices.SortFunc(d.slotCols, func(a, b model.SlotName) int {
		ra, rb := slotRank(a), slotRank(b)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(string(a), string(b))
	})
	vals := make([]string, len(ks)*len(d.slotCols))
	fl := make([]float64, len(ks)*len(d.slotCols))
	for i, k := range ks {
		kc := cached[i]
		r := kernRow{k: k, short: kc.short, agent: short[k.Agent], stateLvl: kc.stateLvl, w: &kc.who}
		if r.agent == "" {
			r.agent = string(k.Agent)
		}
		if k.Agent == "" && k.AgentBy == model.AgentByNone {
			// A record that contradicts its root, or a shared root without
			// a record: an issue says which.
			r.agent = "?"
		}
		n := len(d.slotCols)
		r.slotVals, r.slotF = vals[i*n:(i+1)*n:(i+1)*n], fl[i*n:(i+1)*n:(i+1)*n]
		for _, sv := range kc.slots {
			ci := slices.Index(d.slotCols, sv.slot)
			r.slotVals[ci], r.slotF[ci] = sv.text, sv.f
		}
		d.kernels[i] = r
	}
}

// kernelIndex finds a kernel in the snapshot's id-sorted list.
func (d *derived) kernelIndex(id model.KernelID) (int, bool) {
	return slices.BinarySearchFunc(d.snap.Kernels(), id, func(k *model.Kernel, id model.KernelID) int {
		return strings.Compare(string(k.ID), string(id))
	})
}

// stateCounts counts kernels per state.
type stateCounts struct{ ok, stale, broken, pending, other int }

// add counts one kernel.
func (c *stateCounts) add(s model.KernelState) {
	switch s {
	case model.KernelOK:
		c.ok++
	case model.KernelStale:
		c.stale++
	case model.KernelBroken:
		c.broken++
	case model.KernelPending:
		c.pending++
	default:
		c.other++
	}
}

// deriveDeviceKernels links devices and kernels both ways: which kernels
// hold what on a device, which devices a kernel touches.
func (d *derived) deriveDeviceKernels(c *deriveCache) {
	s := d.snap
	devsOf := make([][]int, len(d.kernels))
	for di := range d.devs {
		r := &d.devs[di]
		u := s.Usage[r.key]
		if u == nil {
			continue
		}
		uc := c.usage(u)
		for n, id := range uc.kernOf {
			ki, ok := d.kernelIndex(id)
			if !ok {
				continue
			}
			r.kernels = append(r.kernels, ki)
			r.onDev = append(r.onDev, uc.sums[n])
			r.onDevF = append(r.onDevF, uc.kernAmts[n])
			devsOf[ki] = append(devsOf[ki], di)
		}
	}
	var b strings.Builder
	for ki := range d.kernels {
		r := &d.kernels[ki]
		kc := c.kern[r.k]
		if kc.tagSig == d.tagSig && slices.Equal(kc.devIdx, devsOf[ki]) {
			r.devs, r.nDevs, r.search = kc.devs, len(kc.devIdx), kc.search
			continue
		}
		b.Reset()
		for n, di := range devsOf[ki] {
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.devs[di].tag)
		}
		r.devs, r.nDevs = b.String(), len(devsOf[ki])
		w := r.w
		r.search = strings.ToLower(string(r.k.ID)+" "+string(r.k.Agent)+" "+string(r.k.State)+" "+r.devs) +
			" " + w.fUser + " " + w.fProject + " " + w.fSession + " " + w.fType + " " + w.fImage
		kc.tagSig, kc.devIdx, kc.devs, kc.search = d.tagSig, devsOf[ki], r.devs, r.search
	}
}

// slotRank orders kernel table columns: accelerators first (what the tool
// is about), then cpu and mem, then anything else.
func slotRank(s model.SlotName) int {
	switch {
	case s == model.SlotCUDAShares:
		return 0
	case s == model.SlotCUDADevice:
		return 1
	case s.IsAccelerator():
		return 2
	case s == model.SlotCPU:
		return 3
	case s == model.SlotMem:
		return 4
	}
	return 5
}

// slotHeader is a kernel table column title for a slot.
func slotHeader(s model.SlotName) string {
	switch s {
	case model.SlotCUDAShares:
		return "SHARES"
	case model.SlotCUDADevice:
		return "GPUS"
	case model.SlotCPU:
		return "CPU"
	case model.SlotMem:
		return "MEM"
	}
	if m := s.MinorType(); m != "" {
		return strings.ToUpper(m)
	}
	return strings.ToUpper(string(s))
}

// agentShortNames strips the prefix all agent ids share up to a '-' or
// '.', so "i-gpu-node01-numa0" and "...-numa1" read "numa0" and "numa1" in
// narrow columns. One agent keeps its id.
func agentShortNames(ags []model.Agent) map[model.AgentID]string {
	out := map[model.AgentID]string{}
	if len(ags) < 2 {
		for _, a := range ags {
			out[a.ID] = string(a.ID)
		}
		return out
	}
	prefix := string(ags[0].ID)
	for _, a := range ags[1:] {
		id := string(a.ID)
		n := 0
		for n < len(prefix) && n < len(id) && prefix[n] == id[n] {
			n++
		}
		prefix = prefix[:n]
	}
	cut := strings.LastIndexAny(prefix, "-._")
	for _, a := range ags {
		sh := string(a.ID)[cut+1:]
		if sh == "" {
			sh = string(a.ID)
		}
		out[a.ID] = sh
	}
	return out
}

// deriveIssues formats the issues pane's rows and gives each issue an
// identity that survives snapshots, for "new issue" flashes.
func (d *derived) deriveIssues() {
	for i := range d.snap.Issues {
		is := &d.snap.Issues[i]
		r := issueRow{is: is, text: is.Code + ": " + is.Message}
		switch is.Severity {
		case model.SevError:
			r.sev = span{lvlCrit, "ERR"}
		case model.SevWarning:
			r.sev = span{lvlWarn, "WRN"}
		default:
			r.sev = span{lvlOK, "INF"}
		}
		if is.File != "" {
			r.where = is.File
			if is.Line > 0 {
				r.where += ":" + strconv.Itoa(is.Line)
			}
		}
		r.id = is.Severity.String() + "|" + is.Code + "|" + is.File + "|" + strconv.Itoa(is.Line) + "|" +
			string(is.Kernel) + "|" + is.Device.String() + "|" + is.Message
		d.issues = append(d.issues, r)
	}
}

// deriveHost sums cpu cores and memory into the one summary line.
func (d *derived) deriveHost() {
	s := d.snap
	h := &d.host
	var cpuCap, cpuHeld, memCap, memHeld model.Dec
	for i := range s.Devices {
		dv := &s.Devices[i]
		switch dv.Name {
		case "cpu":
			h.hasCPU = true
			h.cores++
			cpuCap = cpuCap.Add(dv.Capacity)
			cpuHeld = cpuHeld.Add(s.Usage[dv.Key()].Total())
		case "mem":
			h.hasMem = true
			memCap = memCap.Add(dv.Capacity)
			memHeld = memHeld.Add(s.Usage[dv.Key()].Total())
		}
	}
	if !h.hasMem && s.HostMemBytes > 0 {
		h.hasMem = true
		memCap = model.NewDec(s.HostMemBytes, 0)
	}
	h.cpuHeld, h.cpuCap = cpuHeld.String(), cpuCap.String()
	h.cpuHeldF, h.cpuCapF = cpuHeld.Float64(), cpuCap.Float64()
	h.cpuOver = cpuCap.Less(cpuHeld)
	h.memHeld, h.memCap = fmtBytesDec(memHeld), fmtBytesDec(memCap)
	h.memHeldB, h.memCapB = memHeld.Float64(), memCap.Float64()
	h.memOver = memCap.Less(memHeld)
}

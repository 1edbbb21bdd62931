package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// deriveKernels formats each kernel's row (memoised per kernel value)
// and finds the slot columns the table needs: the slots the node's devices
// offer and any other a kernel holds.
func (d *Derived) deriveKernels(short map[model.AgentID]string, c *DeriveCache) {
	ks := d.Snap.Kernels()
	d.Kernels = make([]KernRow, len(ks))
	cached := make([]*kernCached, len(ks))
	for i, k := range ks {
		kc := c.kernel(k)
		cached[i] = kc
		for _, sv := range kc.Slots {
			if !slices.Contains(d.SlotCols, sv.slot) {
				d.SlotCols = append(d.SlotCols, sv.slot)
			}
		}
		d.States.add(k.State)
	}
	// The node's own slots too, held or not: the table's columns are then
	// the node's and the width's, and stay put while kernels come and go
	// (a MIG column appeared only while a slice was held, and pushed
	// others out at 80 columns).
	for i := range d.Snap.Devices {
		dv := &d.Snap.Devices[i]
		if dv.Capacity.IsZero() && !dv.CapacityUnknown {
			continue // a MIG-mode GPU: only its slices are allocatable
		}
		if dv.Slot != "" && !slices.Contains(d.SlotCols, dv.Slot) {
			d.SlotCols = append(d.SlotCols, dv.Slot)
		}
	}
	slices.SortFunc(d.SlotCols, func(a, b model.SlotName) int {
		ra, rb := SlotRank(a), SlotRank(b)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(string(a), string(b))
	})
	vals := make([]string, len(ks)*len(d.SlotCols))
	fl := make([]float64, len(ks)*len(d.SlotCols))
	for i, k := range ks {
		kc := cached[i]
		r := KernRow{K: k, Short: kc.Short, Agent: short[k.Agent], StateLvl: kc.StateLvl, W: &kc.Who}
		if r.Agent == "" {
			r.Agent = string(k.Agent)
		}
		if k.Agent == "" && k.AgentBy == model.AgentByNone {
			// A record that contradicts its root, or a shared root without
			// a record: an issue says which.
			r.Agent = "?"
		}
		n := len(d.SlotCols)
		r.SlotVals, r.SlotF = vals[i*n:(i+1)*n:(i+1)*n], fl[i*n:(i+1)*n:(i+1)*n]
		for _, sv := range kc.Slots {
			ci := slices.Index(d.SlotCols, sv.slot)
			r.SlotVals[ci], r.SlotF[ci] = sv.Text, sv.f
		}
		d.Kernels[i] = r
	}
	TellShortIDsApart(d.Kernels)
}

// TellShortIDsApart lengthens the short ids of rows (sorted by kernel id)
// whose 8-character prefixes are alike to the prefix that tells each from
// its neighbours: two kernels must never read the same at 3 a.m. Ids that
// are alike whole (a test's, or a file named twice) stay as they are. The
// rows being sorted, alike prefixes are neighbours: one pass.
func TellShortIDsApart(rows []KernRow) {
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].Short == rows[i].Short {
			j++
		}
		if j-i > 1 {
			for k := i; k < j; k++ {
				id, need := string(rows[k].K.ID), 0
				if k > i {
					need = common(id, string(rows[k-1].K.ID)) + 1
				}
				if k+1 < j {
					need = max(need, common(id, string(rows[k+1].K.ID))+1)
				}
				rows[k].Short = id[:min(max(need, len(rows[k].Short)), len(id))]
			}
		}
		i = j
	}
}

// ShortID is a kernel's id as the kernels pane prints it (lengthened
// where 8 characters would read as another kernel's, TellShortIDsApart),
// for every other place that names a kernel shortly; a kernel the
// snapshot does not list gets the plain 8 characters.
func (d *Derived) ShortID(id model.KernelID) string {
	if i, ok := d.KernelIndex(id); ok && i < len(d.Kernels) {
		return d.Kernels[i].Short
	}
	return kit.ShortKernel(id)
}

// KernelIndex finds a kernel in the snapshot's id-sorted list.
func (d *Derived) KernelIndex(id model.KernelID) (int, bool) {
	return slices.BinarySearchFunc(d.Snap.Kernels(), id, func(k *model.Kernel, id model.KernelID) int {
		return strings.Compare(string(k.ID), string(id))
	})
}

// stateCounts counts kernels per state.
type stateCounts struct{ OK, Stale, Broken, pending, other int }

// add counts one kernel.
func (c *stateCounts) add(s model.KernelState) {
	switch s {
	case model.KernelOK:
		c.OK++
	case model.KernelStale:
		c.Stale++
	case model.KernelBroken:
		c.Broken++
	case model.KernelPending:
		c.pending++
	default:
		c.other++
	}
}

// deriveDeviceKernels links devices and kernels both ways: which kernels
// hold what on a device, which devices a kernel touches.
func (d *Derived) deriveDeviceKernels(c *DeriveCache) {
	s := d.Snap
	devsOf := make([][]int, len(d.Kernels))
	for di := range d.Devs {
		r := &d.Devs[di]
		u := s.Usage[r.Key]
		if u == nil {
			continue
		}
		uc := c.usage(u)
		for n, id := range uc.kernOf {
			ki, ok := d.KernelIndex(id)
			if !ok {
				continue
			}
			r.Kernels = append(r.Kernels, ki)
			r.OnDev = append(r.OnDev, uc.sums[n])
			r.OnDevF = append(r.OnDevF, uc.KernAmts[n])
			devsOf[ki] = append(devsOf[ki], di)
		}
	}
	var b strings.Builder
	for ki := range d.Kernels {
		r := &d.Kernels[ki]
		kc := c.kern[r.K]
		if kc.tagSig == d.tagSig && slices.Equal(kc.devIdx, devsOf[ki]) {
			r.Devs, r.NDevs, r.search = kc.Devs, len(kc.devIdx), kc.search
			continue
		}
		b.Reset()
		for n, di := range devsOf[ki] {
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(d.Devs[di].Tag)
		}
		r.Devs, r.NDevs = b.String(), len(devsOf[ki])
		w := r.W
		r.search = strings.ToLower(string(r.K.ID)+" "+string(r.K.Agent)+" "+string(r.K.State)+" "+r.Devs) +
			" " + w.FUser + " " + w.fProject + " " + w.FSession + " " + w.FType + " " + w.fImage
		kc.tagSig, kc.devIdx, kc.Devs, kc.search = d.tagSig, devsOf[ki], r.Devs, r.search
	}
}

// SlotRank orders kernel table columns: accelerators first (what the tool
// is about), then cpu and mem, then anything else.
func SlotRank(s model.SlotName) int {
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

// SlotHeader is a kernel table column title for a slot.
func SlotHeader(s model.SlotName) string {
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

// AgentShortNames strips the prefix all agent ids share up to a '-' or
// '.', so "i-gpu-node01-numa0" and "...-numa1" read "numa0" and "numa1" in
// narrow columns. One agent keeps its id.
func AgentShortNames(ags []model.Agent) map[model.AgentID]string {
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
func (d *Derived) deriveIssues() {
	names, labels := d.deviceNames()
	for i := range d.Snap.Issues {
		is := &d.Snap.Issues[i]
		msg, short := is.Message, is.Message
		if names != nil && strings.Contains(msg, ":") {
			msg, short = names.Replace(msg), labels.Replace(short)
		}
		if id := string(is.Kernel); len(id) > kernelShort {
			// The kernels pane's short id; inside a path it is marked as
			// cut, where a bare prefix read as a path that does not
			// exist. The detail and the WHERE column keep the whole.
			if sh := d.ShortID(is.Kernel); sh != id {
				r := strings.NewReplacer(id+"/", sh+d.G.Ellipsis+"/", id, sh)
				msg, short = r.Replace(msg), r.Replace(short)
			}
		}
		r := IssueRow{Is: is, Text: is.Code + ": " + msg, Short: shortIssue(short)}
		switch is.Severity {
		case model.SevError:
			r.Sev = kit.Span{Lvl: kit.LvlCrit, Text: "ERR"}
		case model.SevWarning:
			r.Sev = kit.Span{Lvl: kit.LvlWarn, Text: "WRN"}
		default:
			r.Sev = kit.Span{Lvl: kit.LvlOK, Text: "INF"}
		}
		if is.File != "" {
			r.Where = is.File
			if is.Line > 0 {
				r.Where += ":" + strconv.Itoa(is.Line)
			}
		}
		r.ID = is.Identity()
		d.Issues = append(d.Issues, r)
	}
}

// kernelShort is how much of a kernel id an issue's row keeps, as the
// kernels pane does.
const kernelShort = 8

// deviceNames rewrites the device keys an issue's message names
// ("cuda:c59395cd-...-2d04") as the devices pane names them, the label
// first and the id abbreviated ("GPU3 (…2d04)"): at 80 columns a full UUID
// pushed the amounts off the line. nil without accelerators.
func (d *Derived) deviceNames() (full, labels *strings.Replacer) {
	if len(d.Snap.Issues) == 0 || len(d.Devs) == 0 {
		return nil, nil
	}
	rows := make([]*DevRow, len(d.Devs))
	for i := range d.Devs {
		rows[i] = &d.Devs[i]
	}
	// The replacer tries its pairs in order: a longer key first, so that
	// cuda:10 is not read as cuda:1 and a 0.
	slices.SortStableFunc(rows, func(a, b *DevRow) int { return len(b.Key.ID) - len(a.Key.ID) })
	pairs := make([]string, 0, 2*len(rows))
	short := make([]string, 0, 2*len(rows))
	for _, r := range rows {
		name := r.Label
		if r.Abbrev != "" && r.Abbrev != r.Label {
			name += " (" + r.Abbrev + ")"
		}
		pairs = append(pairs, r.Key.String(), name)
		short = append(short, r.Key.String(), r.Label)
	}
	return strings.NewReplacer(pairs...), strings.NewReplacer(short...)
}

// shortIssue is an issue's message for a narrow line (IssueRow.Short).
func shortIssue(msg string) string {
	msg = strings.Replace(msg, " is held beyond its capacity:", " over capacity:", 1)
	// What follows the figures in parentheses (each agent's part) is
	// the issues pane's and the detail's to say.
	if colon := strings.Index(msg, ": "); colon >= 0 {
		if paren := strings.Index(msg[colon:], " ("); paren >= 0 {
			msg = msg[:colon+paren]
		}
	}
	return msg
}

// deriveHost sums cpu cores and memory into the one summary line.
func (d *Derived) deriveHost() {
	s := d.Snap
	h := &d.Host
	var cpuCap, cpuHeld, memCap, memHeld model.Dec
	for i := range s.Devices {
		dv := &s.Devices[i]
		switch dv.Name {
		case "cpu":
			h.HasCPU = true
			h.Cores++
			cpuCap = cpuCap.Add(dv.Capacity)
			cpuHeld = cpuHeld.Add(s.Usage[dv.Key()].Total())
		case "mem":
			h.HasMem = true
			memCap = memCap.Add(dv.Capacity)
			memHeld = memHeld.Add(s.Usage[dv.Key()].Total())
		}
	}
	if !h.HasMem && s.HostMemBytes > 0 {
		h.HasMem = true
		memCap = model.NewDec(s.HostMemBytes, 0)
	}
	h.CPUHeld, h.CPUCap = cpuHeld.String(), cpuCap.String()
	h.CPUHeldF, h.CPUCapF = cpuHeld.Float64(), cpuCap.Float64()
	h.CPUOver = cpuCap.Less(cpuHeld)
	h.MemHeld, h.MemCap = kit.FmtBytesDec(memHeld), kit.FmtBytesDec(memCap)
	h.MemHeldB, h.MemCapB = memHeld.Float64(), memCap.Float64()
	h.MemOver = memCap.Less(memHeld)
}

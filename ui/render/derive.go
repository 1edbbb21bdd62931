package render

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"

	"github.com/fgtop/fgtop/ui/kit"
)

// Derived is everything the views need from one snapshot, computed once
// when the snapshot is adopted: formatted figures, bar amounts, kernel
// cells, ownership. Views only pick rows and lay them out, so a frame costs
// the same at 10 kernels and at 10,000.
type Derived struct {
	// Gen identifies the derivation the rows were made in: one made from
	// the previous snapshot's, where only the telemetry moved, keeps its
	// Gen, so equal Gens mean every row is the same but the device rows'
	// Dev and Tele. A view may keep what it drew from them by Gen.
	Gen      *Gen
	Snap     *model.Snapshot
	Devs     []DevRow // accelerators, each GPU followed by its MIG instances
	DevIndex map[model.DeviceKey]int
	Host     HostSummary
	Kernels  []KernRow        // snapshot order (by id)
	SlotCols []model.SlotName // slots the devices offer or a kernel holds, in column order
	Agents   []AgentRow
	agentIdx map[model.AgentID]int
	Issues   []IssueRow
	States   stateCounts
	G        kit.Glyphs
	tagSig   uint64 // identifies the device tags kernel rows were built with
	DevMeas  DevMeasures
	KernMeas KernMeasures
}

// Gen is a derivation's identity (Derived.Gen): compared by pointer.
type Gen struct{ _ byte }

// DevRow is one accelerator row of the devices pane.
type DevRow struct {
	Key    model.DeviceKey
	Dev    *model.Device
	devIdx int    // Dev's index in Snap.Devices
	Label  string // "GPU0", "MIG 3/0"
	Tag    string // how kernel rows name it: "GPU0", "GPU4:3/0"
	Abbrev string // shortest unique id form: "…2d01", "GPU-5eed"
	Child  bool   // a MIG instance listed under its GPU
	NMIG   int    // MIG instances under this GPU

	Held, Capacity string // exact decimals: "1.10", "1.00"
	Over           bool
	CapF           float64
	// capUnknown: the device's capacity is not known (fractional plugin
	// settings never read): figures say "held/?", no bar, no percentage.
	CapUnknown bool
	HasBar     bool

	// Stacked bar amounts: per holding kernel (holdings order) and per agent.
	KernAmts []float64
	kernOf   []model.KernelID
	// kernLook is each holding kernel's look (colour and shape), the one
	// its row in the kernel list is marked with; kernDrift says which
	// hold the device though their agent does not own it.
	KernLook  []uint8
	kernDrift []bool
	agentAmts []float64
	agentOf   []int // index into derived.agents, or -1

	Owner    string
	OwnerLvl kit.Level
	Drift    bool // an issue says a kernel drifted onto this device

	Tele kit.TeleCells

	// Kernels holding anything here (indices into derived.kernels) and what
	// each holds on this device.
	Kernels  []int
	OnDev    []string
	OnDevF   []float64
	procs    int
	Children []int // MIG rows (indices into devs)
}

// HostSummary is the cpu and mem line.
type HostSummary struct {
	Cores             int
	CPUHeld, CPUCap   string
	cpuFrac           float64
	MemHeld, MemCap   string
	memFrac           float64
	CPUOver, MemOver  bool
	HasCPU, HasMem    bool
	CPUHeldF, CPUCapF float64
	MemHeldB, MemCapB float64
}

// KernRow is one kernel, its cells formatted.
type KernRow struct {
	K        *model.Kernel
	Short    string
	Agent    string   // the agent's short name
	SlotVals []string // aligned with derived.slotCols
	SlotF    []float64
	Devs     string // accelerators it holds anything on: "GPU1,GPU2"
	NDevs    int
	StateLvl kit.Level
	// look is the kernel's colour and shape on the device bars.
	Look   uint8
	search string // lower-case haystack for the filter
	// w is its owner, session and use cells (shared with the cache).
	W *kernWho
}

// AgentRow is one agent: header and partition lines.
type AgentRow struct {
	A      *model.Agent
	Short  string
	Drift  int
	Header []kit.Span
	Lines  [][]kit.Span
}

// IssueRow is one issue, formatted.
type IssueRow struct {
	Is   *model.Issue
	ID   string // identity across snapshots, for "new issue" flashes
	Sev  kit.Span
	Text string
	// Short is Text for a narrow line: the device by its label alone, no
	// issue code, "over capacity" for "is held beyond its capacity", the
	// amounts kept and what follows them in parentheses left to the pane.
	Short string
	Where string
}

// DeriveOptions are the presentation settings derive depends on.
type DeriveOptions struct {
	Th kit.Thresholds
	G  kit.Glyphs
	// looks are the kernel looks the styles tell apart (Styles.lookDims).
	Looks kit.LookDims
}

// Derive computes a snapshot's view data. c memoises what depends only on
// one immutable kernel or device usage (the engine shares unchanged ones
// between snapshots), so a snapshot where one kernel changed costs little;
// nil is an empty cache.
func Derive(s *model.Snapshot, o DeriveOptions, c *DeriveCache) *Derived {
	if c == nil {
		c = NewDeriveCache()
	}
	if p := c.prev; p != nil && sameOptions(&c.prevOpts, &o) && sameButTelemetry(p.Snap, s) {
		c.Reused++
		c.prev = p.retelemetry(s, o)
		return c.prev
	}
	c.Full++
	c.begin()
	defer c.End(s.NumKernels(), len(s.Usage))
	d := &Derived{
		Gen: new(Gen), Snap: s, DevIndex: map[model.DeviceKey]int{},
		agentIdx: map[model.AgentID]int{}, G: o.G,
	}
	shortAgents := AgentShortNames(s.Agents)
	for i := range s.Agents {
		d.agentIdx[s.Agents[i].ID] = i
	}
	d.deriveDevices(o, shortAgents, c)
	d.deriveKernels(shortAgents, c)
	d.deriveDeviceKernels(c)
	d.deriveLooks(c, o.Looks)
	d.deriveAgents(shortAgents)
	d.deriveIssues()
	d.deriveHost()
	d.DevMeas = d.DevMeasures()
	d.KernMeas = d.KernMeasures()
	c.prev, c.prevOpts = d, o
	return d
}

func (d *Derived) deriveDevices(o DeriveOptions, short map[model.AgentID]string, c *DeriveCache) {
	s := d.Snap
	// GPUs first, each followed by its MIG instances; instances whose GPU
	// the inventory lacks come last, on their own.
	var gpus, orphans []int
	children := map[model.DeviceID][]int{}
	ids := map[model.DeviceID]bool{}
	for i := range s.Devices {
		if dv := &s.Devices[i]; dv.IsAccelerator() && !dv.IsMIG() {
			ids[dv.ID] = true
		}
	}
	for i := range s.Devices {
		dv := &s.Devices[i]
		switch {
		case !dv.IsAccelerator():
		case dv.IsMIG() && ids[dv.Parent]:
			children[dv.Parent] = append(children[dv.Parent], i)
		case dv.IsMIG():
			orphans = append(orphans, i)
		default:
			gpus = append(gpus, i)
		}
	}
	var order []int
	for _, i := range gpus {
		order = append(order, i)
		order = append(order, children[s.Devices[i].ID]...)
	}
	order = append(order, orphans...)

	var full []string
	for _, i := range order {
		full = append(full, string(s.Devices[i].ID))
	}
	abbrev := kit.UniqueAbbrev(full, o.G.Ellipsis)
	labels := GPULabels(s.Devices, gpus)
	driftDev := map[model.DeviceKey]bool{}
	type devKernel struct {
		Dev model.DeviceKey
		K   model.KernelID
	}
	driftKern := map[devKernel]bool{}
	for _, is := range s.Issues {
		if strings.HasPrefix(is.Code, "drift-") && is.Device.ID != "" {
			driftDev[is.Device] = true
			if is.Kernel != "" {
				driftKern[devKernel{is.Device, is.Kernel}] = true
			}
		}
	}

	parentRow := -1
	for n, i := range order {
		dv := &s.Devices[i]
		r := DevRow{Key: dv.Key(), Dev: dv, devIdx: i, Abbrev: abbrev[n], Child: dv.IsMIG() && ids[dv.Parent]}
		if dv.IsMIG() {
			r.Label = "MIG " + kit.MIGSuffix(dv.ID)
			r.Tag = kit.MIGSuffix(dv.ID)
			if r.Child && parentRow >= 0 {
				r.Tag = d.Devs[parentRow].Label + ":" + r.Tag
				d.Devs[parentRow].NMIG++
				d.Devs[parentRow].Children = append(d.Devs[parentRow].Children, len(d.Devs))
			}
		} else {
			r.Label = labels[i]
			r.Tag = r.Label
			parentRow = len(d.Devs)
		}
		u := s.Usage[r.Key]
		total := u.Total()
		r.Held, r.Capacity = kit.FmtWhole(dv.Slot, total), dv.Capacity.String()
		r.CapF = dv.Capacity.Float64()
		r.Over = dv.Capacity.Less(total)
		r.HasBar = dv.Capacity.Sign() > 0 || total.Sign() > 0
		if dv.CapacityUnknown {
			// Never a bar against a made-up capacity.
			r.Capacity, r.CapF, r.Over, r.HasBar, r.CapUnknown = "?", 0, false, false, true
		}
		if u != nil {
			d.barAmounts(&r, c.usage(u))
		}
		if len(driftKern) > 0 {
			for _, k := range r.kernOf {
				r.kernDrift = append(r.kernDrift, driftKern[devKernel{r.Key, k}])
			}
		}
		r.Owner, r.OwnerLvl = d.ownerOf(r.Key, short)
		r.Drift = driftDev[r.Key]
		r.Tele = kit.FormatTelemetry(dv.Telemetry, o.Th, o.G.Degree)
		if dv.Telemetry != nil {
			r.procs = len(dv.Telemetry.Processes)
		}
		d.DevIndex[r.Key] = len(d.Devs)
		d.Devs = append(d.Devs, r)
	}
	h := fnv.New64a()
	for i := range d.Devs {
		h.Write([]byte(d.Devs[i].Tag))
		h.Write([]byte{0})
	}
	d.tagSig = h.Sum64()
}

// GPULabels names GPUs as nvidia-smi does, by index ("GPU0"), and other
// accelerators by plugin and index ("rocm1"); when indices collide it falls
// back to the plugin name and position. The labels are names.GPULabels',
// which every command resolves (history --device GPU1).
func GPULabels(devs []model.Device, idx []int) map[int]string { return names.GPULabels(devs, idx) }

func (d *Derived) barAmounts(r *DevRow, uc *usageCached) {
	r.kernOf, r.KernAmts = uc.kernOf, uc.KernAmts
	pos := map[int]int{}
	for n, ag := range uc.agentOf {
		ai, ok := d.agentIdx[ag]
		if !ok {
			ai = -1
		}
		if p, ok := pos[ai]; ok {
			r.agentAmts[p] += uc.agentAmts[n]
			continue
		}
		pos[ai] = len(r.agentAmts)
		r.agentAmts = append(r.agentAmts, uc.agentAmts[n])
		r.agentOf = append(r.agentOf, ai)
	}
}

// ownerOf names the agent whose partition holds the device: one agent, all
// of them ("shared"), none ("unowned": a warning), or several without all
// (a configuration problem).
func (d *Derived) ownerOf(k model.DeviceKey, short map[model.AgentID]string) (string, kit.Level) {
	ags := d.Snap.Agents
	if len(ags) == 0 {
		return "", kit.LvlPlain
	}
	var owners []int
	for i := range ags {
		if ags[i].OwnsDevice(k) {
			owners = append(owners, i)
		}
	}
	switch {
	case len(owners) == 0:
		return "unowned", kit.LvlWarn
	case len(owners) == len(ags) && len(ags) > 1:
		return "shared", kit.LvlDim
	case len(owners) == 1:
		return short[ags[owners[0]].ID], kit.LvlPlain
	}
	return strconv.Itoa(len(owners)) + " agents", kit.LvlWarn
}

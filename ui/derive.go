package ui

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// derived is everything the views need from one snapshot, computed once
// when the snapshot is adopted: formatted figures, bar amounts, kernel
// cells, ownership. Views only pick rows and lay them out, so a frame costs
// the same at 10 kernels and at 10,000.
type derived struct {
	snap     *model.Snapshot
	devs     []devRow // accelerators, each GPU followed by its MIG instances
	devIndex map[model.DeviceKey]int
	host     hostSummary
	kernels  []kernRow        // snapshot order (by id)
	slotCols []model.SlotName // slots any kernel holds, in column order
	agents   []agentRow
	agentIdx map[model.AgentID]int
	issues   []issueRow
	states   stateCounts
	g        Glyphs
	tagSig   uint64 // identifies the device tags kernel rows were built with
	devMeas  devMeasures
	kernMeas kernMeasures
}

// devRow is one accelerator row of the devices pane.
type devRow struct {
	key    model.DeviceKey
	dev    *model.Device
	label  string // "GPU0", "MIG 3/0"
	tag    string // how kernel rows name it: "GPU0", "GPU4:3/0"
	abbrev string // shortest unique id form: "…2d01", "GPU-5eed"
	child  bool   // a MIG instance listed under its GPU
	nMIG   int    // MIG instances under this GPU

	held, capacity string // exact decimals: "1.10", "1.00"
	over           bool
	capF           float64
	// capUnknown: the device's capacity is not known (fractional plugin
	// settings never read): figures say "held/?", no bar, no percentage.
	capUnknown bool
	hasBar     bool

	// Stacked bar amounts: per holding kernel (holdings order) and per agent.
	kernAmts []float64
	kernOf   []model.KernelID
	// kernLook is each holding kernel's look (colour and shape), the one
	// its row in the kernel list is marked with; kernDrift says which
	// hold the device though their agent does not own it.
	kernLook  []uint8
	kernDrift []bool
	agentAmts []float64
	agentOf   []int // index into derived.agents, or -1

	owner    string
	ownerLvl level
	drift    bool // an issue says a kernel drifted onto this device

	tele teleCells

	// Kernels holding anything here (indices into derived.kernels) and what
	// each holds on this device.
	kernels  []int
	onDev    []string
	onDevF   []float64
	procs    int
	children []int // MIG rows (indices into devs)
}

// hostSummary is the cpu and mem line.
type hostSummary struct {
	cores             int
	cpuHeld, cpuCap   string
	cpuFrac           float64
	memHeld, memCap   string
	memFrac           float64
	cpuOver, memOver  bool
	hasCPU, hasMem    bool
	cpuHeldF, cpuCapF float64
	memHeldB, memCapB float64
}

// kernRow is one kernel, its cells formatted.
type kernRow struct {
	k        *model.Kernel
	short    string
	agent    string   // the agent's short name
	slotVals []string // aligned with derived.slotCols
	slotF    []float64
	devs     string // accelerators it holds anything on: "GPU1,GPU2"
	nDevs    int
	stateLvl level
	// look is the kernel's colour and shape on the device bars.
	look   uint8
	search string // lower-case haystack for the filter
	// w is its owner, session and use cells (shared with the cache).
	w *kernWho
}

// agentRow is one agent: header and partition lines.
type agentRow struct {
	a      *model.Agent
	short  string
	drift  int
	header []span
	lines  [][]span
}

// issueRow is one issue, formatted.
type issueRow struct {
	is    *model.Issue
	id    string // identity across snapshots, for "new issue" flashes
	sev   span
	text  string
	where string
}

// deriveOptions are the presentation settings derive depends on.
type deriveOptions struct {
	th Thresholds
	g  Glyphs
	// looks are the kernel looks the styles tell apart (Styles.lookDims).
	looks lookDims
}

// derive computes a snapshot's view data. c memoises what depends only on
// one immutable kernel or device usage (the engine shares unchanged ones
// between snapshots), so a snapshot where one kernel changed costs little;
// nil is an empty cache.
func derive(s *model.Snapshot, o deriveOptions, c *deriveCache) *derived {
	if c == nil {
		c = newDeriveCache()
	}
	c.begin()
	defer c.end(s.NumKernels(), len(s.Usage))
	d := &derived{
		snap: s, devIndex: map[model.DeviceKey]int{},
		agentIdx: map[model.AgentID]int{}, g: o.g,
	}
	shortAgents := agentShortNames(s.Agents)
	for i := range s.Agents {
		d.agentIdx[s.Agents[i].ID] = i
	}
	d.deriveDevices(o, shortAgents, c)
	d.deriveKernels(shortAgents, c)
	d.deriveDeviceKernels(c)
	d.deriveLooks(c, o.looks)
	d.deriveAgents(shortAgents)
	d.deriveIssues()
	d.deriveHost()
	d.devMeas = d.devMeasures()
	d.kernMeas = d.kernMeasures()
	return d
}

func (d *derived) deriveDevices(o deriveOptions, short map[model.AgentID]string, c *deriveCache) {
	s := d.snap
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
	abbrev := uniqueAbbrev(full, o.g.Ellipsis)
	labels := gpuLabels(s.Devices, gpus)
	driftDev := map[model.DeviceKey]bool{}
	type devKernel struct {
		dev model.DeviceKey
		k   model.KernelID
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
		r := devRow{key: dv.Key(), dev: dv, abbrev: abbrev[n], child: dv.IsMIG() && ids[dv.Parent]}
		if dv.IsMIG() {
			r.label = "MIG " + migSuffix(dv.ID)
			r.tag = migSuffix(dv.ID)
			if r.child && parentRow >= 0 {
				r.tag = d.devs[parentRow].label + ":" + r.tag
				d.devs[parentRow].nMIG++
				d.devs[parentRow].children = append(d.devs[parentRow].children, len(d.devs))
			}
		} else {
			r.label = labels[i]
			r.tag = r.label
			parentRow = len(d.devs)
		}
		u := s.Usage[r.key]
		total := u.Total()
		r.held, r.capacity = total.String(), dv.Capacity.String()
		r.capF = dv.Capacity.Float64()
		r.over = dv.Capacity.Less(total)
		r.hasBar = dv.Capacity.Sign() > 0 || total.Sign() > 0
		if dv.CapacityUnknown {
			// Never a bar against a made-up capacity.
			r.capacity, r.capF, r.over, r.hasBar, r.capUnknown = "?", 0, false, false, true
		}
		if u != nil {
			d.barAmounts(&r, c.usage(u))
		}
		if len(driftKern) > 0 {
			for _, k := range r.kernOf {
				r.kernDrift = append(r.kernDrift, driftKern[devKernel{r.key, k}])
			}
		}
		r.owner, r.ownerLvl = d.ownerOf(r.key, short)
		r.drift = driftDev[r.key]
		r.tele = formatTelemetry(dv.Telemetry, o.th, o.g.Degree)
		if dv.Telemetry != nil {
			r.procs = len(dv.Telemetry.Processes)
		}
		d.devIndex[r.key] = len(d.devs)
		d.devs = append(d.devs, r)
	}
	h := fnv.New64a()
	for i := range d.devs {
		h.Write([]byte(d.devs[i].tag))
		h.Write([]byte{0})
	}
	d.tagSig = h.Sum64()
}

// gpuLabels names GPUs as nvidia-smi does, by index ("GPU0"), and other
// accelerators by plugin and index ("rocm1"); when indices collide it falls
// back to the plugin name and position.
func gpuLabels(devs []model.Device, idx []int) map[int]string {
	out := map[int]string{}
	seen := map[string]bool{}
	clash := false
	for _, i := range idx {
		dv := &devs[i]
		l := string(dv.Name) + strconv.Itoa(dv.Index)
		if dv.Name == "cuda" {
			l = "GPU" + strconv.Itoa(dv.Index)
		}
		if seen[l] {
			clash = true
		}
		seen[l] = true
		out[i] = l
	}
	if clash {
		for n, i := range idx {
			out[i] = string(devs[i].Name) + "#" + strconv.Itoa(n)
		}
	}
	return out
}

func (d *derived) barAmounts(r *devRow, uc *usageCached) {
	r.kernOf, r.kernAmts = uc.kernOf, uc.kernAmts
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
func (d *derived) ownerOf(k model.DeviceKey, short map[model.AgentID]string) (string, level) {
	ags := d.snap.Agents
	if len(ags) == 0 {
		return "", lvlPlain
	}
	var owners []int
	for i := range ags {
		if ags[i].OwnsDevice(k) {
			owners = append(owners, i)
		}
	}
	switch {
	case len(owners) == 0:
		return "unowned", lvlWarn
	case len(owners) == len(ags) && len(ags) > 1:
		return "shared", lvlDim
	case len(owners) == 1:
		return short[ags[owners[0]].ID], lvlPlain
	}
	return strconv.Itoa(len(owners)) + " agents", lvlWarn
}

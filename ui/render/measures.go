package render

import (
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// DevMeasures are the widths of a snapshot's device cells, measured once
// per snapshot.
type DevMeasures struct {
	Label, Abbrev, Model, Figs, Owner int
	// FigsTitle titles the figures' column: "SHARES" where a GPU is
	// counted in fGPU shares, "GPUS" where the GPUs are whole devices
	// (cuda_open, the mock plugin's discrete mode), as the kernels pane
	// titles their amounts (SlotHeader).
	FigsTitle string
}

// DevMeasures measures the device cells of the snapshot.
func (d *Derived) DevMeasures() DevMeasures {
	m := DevMeasures{Label: len("DEVICE"), Figs: len("SHARES")}
	shares, whole := false, false
	for i := range d.Devs {
		r := &d.Devs[i]
		shares = shares || r.Dev.Slot == model.SlotCUDAShares
		whole = whole || r.Dev.Slot == model.SlotCUDADevice
		lw := kit.Width(r.Label)
		if r.Child {
			lw += 2
		}
		m.Label = max(m.Label, lw)
		m.Abbrev = max(m.Abbrev, kit.Width(r.Abbrev))
		m.Model = max(m.Model, kit.Width(r.Dev.Model))
		m.Figs = max(m.Figs, len(r.Held)+1+len(r.Capacity))
		ow := kit.Width(r.Owner)
		if r.Drift {
			ow++
		}
		m.Owner = max(m.Owner, ow)
	}
	m.FigsTitle = SlotHeader(model.SlotCUDAShares)
	if whole && !shares {
		m.FigsTitle = SlotHeader(model.SlotCUDADevice)
	}
	m.Label = min(m.Label, 12)
	m.Model = min(m.Model, 20)
	m.Owner = min(m.Owner, 14)
	if m.Owner > 0 {
		// The column's title is never cut ("OWNE").
		m.Owner = max(m.Owner, len("OWNER"))
	}
	return m
}

// KernMeasures are the widths of a snapshot's kernel cells, measured once
// per snapshot.
type KernMeasures struct {
	// ID is the id column's width: 8, more where two kernels' first 8
	// characters are alike (TellShortIDsApart).
	ID, Agent, Devs, On int
	Slots               []int
	// who: some kernel has a record (owner, session); use: some kernel's
	// use is known; gmem is the GMEM column's width.
	Who, Use bool
	Gmem     int
}

// KernMeasures measures the kernel cells of the snapshot.
func (d *Derived) KernMeasures() KernMeasures {
	m := KernMeasures{ID: 8, Agent: 5, Devs: 7, Slots: make([]int, len(d.SlotCols)), Gmem: 4}
	for c, s := range d.SlotCols {
		m.Slots[c] = len(SlotHeader(s)) + 1
	}
	for i := range d.Kernels {
		r := &d.Kernels[i]
		m.ID = max(m.ID, len(r.Short))
		m.Agent = max(m.Agent, kit.Width(r.Agent))
		m.Devs = max(m.Devs, kit.Width(r.Devs))
		m.Who = m.Who || r.K.Record != nil
		if r.K.Use != nil {
			m.Use = true
			m.Gmem = max(m.Gmem, len(r.W.Gmem))
		}
		for c, v := range r.SlotVals {
			m.Slots[c] = max(m.Slots[c], len(v))
		}
	}
	m.On = 4
	for i := range d.Devs {
		for _, v := range d.Devs[i].OnDev {
			m.On = max(m.On, len(v))
		}
	}
	m.Agent = min(m.Agent, 16)
	m.Devs = min(m.Devs, 32)
	for c := range m.Slots {
		m.Slots[c] = min(m.Slots[c], 10)
	}
	return m
}

// BarLooks is what a device's bar draws: per kernel, each in its own look
// with drifted kernels marked, or per agent (a), each agent in the look of
// its position.
func (r *DevRow) BarLooks(byAgent bool) ([]float64, func(int) int, func(int) bool) {
	if byAgent {
		return r.agentAmts, func(i int) int { return max(r.agentOf[i], 0) }, nil
	}
	look := func(i int) int {
		if i < len(r.KernLook) {
			return int(r.KernLook[i])
		}
		return i
	}
	var drifted func(int) bool
	if len(r.kernDrift) > 0 {
		drifted = func(i int) bool { return i < len(r.kernDrift) && r.kernDrift[i] }
	}
	return r.KernAmts, look, drifted
}

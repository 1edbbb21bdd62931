package ui

// devMeasures are the widths of a snapshot's device cells, measured once
// per snapshot.
type devMeasures struct{ label, abbrev, model, figs, owner int }

func (d *derived) devMeasures() devMeasures {
	m := devMeasures{label: len("DEVICE"), figs: len("SHARES")}
	for i := range d.devs {
		r := &d.devs[i]
		lw := width(r.label)
		if r.child {
			lw += 2
		}
		m.label = max(m.label, lw)
		m.abbrev = max(m.abbrev, width(r.abbrev))
		m.model = max(m.model, width(r.dev.Model))
		m.figs = max(m.figs, len(r.held)+1+len(r.capacity))
		ow := width(r.owner)
		if r.drift {
			ow++
		}
		m.owner = max(m.owner, ow)
	}
	m.label = min(m.label, 12)
	m.model = min(m.model, 20)
	m.owner = min(m.owner, 14)
	if m.owner > 0 {
		// The column's title is never cut ("OWNE").
		m.owner = max(m.owner, len("OWNER"))
	}
	return m
}

// kernMeasures are the widths of a snapshot's kernel cells, measured once
// per snapshot.
type kernMeasures struct {
	agent, devs, on int
	slots           []int
	// who: some kernel has a record (owner, session); use: some kernel's
	// use is known; gmem is the GMEM column's width.
	who, use bool
	gmem     int
}

func (d *derived) kernMeasures() kernMeasures {
	m := kernMeasures{agent: 5, devs: 7, slots: make([]int, len(d.slotCols)), gmem: 4}
	for c, s := range d.slotCols {
		m.slots[c] = len(slotHeader(s)) + 1
	}
	for i := range d.kernels {
		r := &d.kernels[i]
		m.agent = max(m.agent, width(r.agent))
		m.devs = max(m.devs, width(r.devs))
		m.who = m.who || r.k.Record != nil
		if r.k.Use != nil {
			m.use = true
			m.gmem = max(m.gmem, len(r.w.gmem))
		}
		for c, v := range r.slotVals {
			m.slots[c] = max(m.slots[c], len(v))
		}
	}
	m.on = 4
	for i := range d.devs {
		for _, v := range d.devs[i].onDev {
			m.on = max(m.on, len(v))
		}
	}
	m.agent = min(m.agent, 16)
	m.devs = min(m.devs, 32)
	for c := range m.slots {
		m.slots[c] = min(m.slots[c], 10)
	}
	return m
}

// barLooks is what a device's bar draws: per kernel, each in its own look
// with drifted kernels marked, or per agent (a), each agent in the look of
// its position.
func (r *devRow) barLooks(byAgent bool) ([]float64, func(int) int, func(int) bool) {
	if byAgent {
		return r.agentAmts, func(i int) int { return max(r.agentOf[i], 0) }, nil
	}
	look := func(i int) int {
		if i < len(r.kernLook) {
			return int(r.kernLook[i])
		}
		return i
	}
	var drifted func(int) bool
	if len(r.kernDrift) > 0 {
		drifted = func(i int) bool { return i < len(r.kernDrift) && r.kernDrift[i] }
	}
	return r.kernAmts, look, drifted
}

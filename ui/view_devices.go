package ui

import (
	"strconv"
)

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

// devCols are the widths of the device row's columns; 0 hides a column.
type devCols struct {
	label, bar, figs, owner, util, mem, temp, power, sparkA, sparkU, abbrev, model int
	memLong                                                                        bool
}

const (
	barMin     = 16
	barComfort = 28
	barMax     = 40
	sparkMin   = 8
	sparkMax   = 24
)

// deviceColumns chooses which columns fit in w cells, most important first
// (the bar and its figures, then owner and telemetry, then history and
// identity), and gives what is left to the bar and then the sparklines.
// Pure, so it is tested at every width.
func deviceColumns(w int, m devMeasures) devCols {
	c := devCols{label: m.label, figs: m.figs, bar: barMin}
	used := 2 + c.label + 1 + c.bar + 1 + c.figs
	if used > w {
		c.bar = max(w-(used-c.bar), 4)
		return c
	}
	try := func(cells int, set func()) {
		if cells > 0 && used+1+cells <= w {
			used += 1 + cells
			set()
		}
	}
	grow := func(v *int, upTo int) {
		if *v == 0 {
			return
		}
		n := min(w-used, max(upTo-*v, 0))
		*v += n
		used += n
	}
	try(m.owner, func() { c.owner = m.owner })
	try(4, func() { c.util = 4 })
	try(6, func() { c.mem = 6 })
	try(4, func() { c.temp = 4 })
	try(5, func() { c.power = 5 })
	try(sparkMin, func() { c.sparkA = sparkMin })
	if c.mem > 0 && used+4 <= w {
		used += 4
		c.mem, c.memLong = 10, true
	}
	// A readable bar before history and identity columns.
	grow(&c.bar, barComfort)
	try(sparkMin, func() { c.sparkU = sparkMin })
	try(m.abbrev, func() { c.abbrev = m.abbrev })
	try(m.model, func() { c.model = m.model })
	grow(&c.bar, barMax)
	grow(&c.sparkA, sparkMax)
	grow(&c.sparkU, sparkMax)
	return c
}

// viewDevices draws the devices pane: title, column header, one row per
// accelerator (MIG instances under their GPU) and the cpu/mem line.
func (a *App) viewDevices(r rect) []string {
	out := make([]string, 0, r.h)
	d := a.d
	n := 0
	if d != nil {
		n = len(d.devs) + 1
	}
	info := []span{{lvlDim, "bars per kernel"}}
	if a.segByAgent {
		info = []span{{lvlDim, "bars per agent"}}
	}
	out = append(out, a.titleRow(r.w, a.paneTitle(paneDevices, strconv.Itoa(max(n-1, 0))), info, n, r.h-2, a.offset[paneDevices]))
	if r.h < 2 {
		return out[:r.h]
	}
	if d == nil {
		return append(out, a.emptyRow(r.w, "no snapshot yet"))
	}
	c := deviceColumns(r.w, d.devMeas)
	out = append(out, a.deviceHeader(c, r.w))
	off := a.offset[paneDevices]
	for i := off; i < n && len(out) < r.h; i++ {
		sel := a.focus == paneDevices && i == a.cursor[paneDevices]
		// The cursor mark stays whether or not the kernels follow it and
		// whichever pane has focus: keys (enter, f) still act on it.
		mark := i == a.cursor[paneDevices]
		if i == len(d.devs) {
			out = append(out, a.hostRow(c, r.w, sel, mark))
			continue
		}
		out = append(out, a.deviceRow(&d.devs[i], c, r.w, sel, mark))
	}
	return out
}

func (a *App) deviceHeader(c devCols, w int) string {
	l := newLine(paint{})
	p := a.st.Dim
	l.gap(2)
	l.cell(p, "DEVICE", c.label, false, a.st.G.Ellipsis)
	l.gap(1)
	held := "HELD/CAPACITY"
	if a.segByAgent {
		held = "HELD PER AGENT"
	}
	l.cell(p, held, c.bar, false, a.st.G.Ellipsis)
	l.gap(1)
	l.cell(p, "SHARES", c.figs, true, a.st.G.Ellipsis)
	opt := func(cw int, s string, right bool) {
		if cw > 0 {
			l.gap(1)
			l.cell(p, s, cw, right, a.st.G.Ellipsis)
		}
	}
	opt(c.owner, "OWNER", false)
	opt(c.util, "UTIL", true)
	opt(c.mem, "MEM", true)
	opt(c.temp, "TEMP", true)
	opt(c.power, "POWER", true)
	// The history columns: what was held and how busy the GPU was, one
	// sample a second (UTIL once: the "UTIL UTIL" header).
	opt(c.sparkA, "ALLOC", false)
	opt(c.sparkU, "BUSY", false)
	opt(c.abbrev, "ID", false)
	opt(c.model, "MODEL", false)
	return l.finish(w)
}

// rowStart begins a list row: the selection background when highlighted,
// then the cursor mark (or its blank) in the first two cells.
func (a *App) rowStart(highlighted, marked bool) *line { return rowStartOf(a.st, highlighted, marked) }

// rowStartOf is rowStart for any component's styles.
func rowStartOf(st *Styles, highlighted, marked bool) *line {
	base := paint{}
	if highlighted {
		base = st.Selected
	}
	l := newLine(base)
	if marked {
		l.putW(st.Accent, st.G.Cursor, 1)
		l.gap(1)
	} else {
		l.gap(2)
	}
	return l
}

// deviceRow draws one accelerator.
func (a *App) deviceRow(r *devRow, c devCols, w int, selected, marked bool) string {
	st := a.st
	l := a.rowStart(selected, marked)
	label := r.label
	if r.child {
		label = st.G.Branch + label
	}
	l.cell(st.Text, label, c.label, false, st.G.Ellipsis)
	l.gap(1)
	switch {
	case r.hasBar:
		amts, look, drifted := r.barLooks(a.segByAgent)
		st.renderBar(l, barLayout(amts, r.capF, c.bar), look, drifted)
	case r.nMIG > 0:
		l.cell(st.Dim, "MIG "+a.st.G.Dot+" "+plural(r.nMIG, "instance"), c.bar, false, st.G.Ellipsis)
	default:
		l.gap(c.bar)
	}
	l.gap(1)
	figLvl := lvlPlain
	switch {
	case r.over:
		figLvl = lvlCrit
	case r.held == "0":
		figLvl = lvlDim
	}
	if r.hasBar {
		l.cell(st.level(figLvl), r.held+"/"+r.capacity, c.figs, true, st.G.Ellipsis)
	} else {
		l.gap(c.figs)
	}
	if c.owner > 0 {
		l.gap(1)
		ow := c.owner
		if r.drift {
			ow--
		}
		l.cell(st.level(r.ownerLvl), r.owner, ow, false, st.G.Ellipsis)
		if r.drift {
			l.putW(st.Warn, "!", 1)
		}
	}
	t := &r.tele
	reading := func(cw int, rd reading) {
		if cw > 0 {
			l.gap(1)
			l.cell(st.level(rd.lvl), rd.text, cw, true, st.G.Ellipsis)
		}
	}
	reading(c.util, t.util)
	if c.memLong {
		reading(c.mem, t.mem)
	} else {
		reading(c.mem, t.memShort)
	}
	reading(c.temp, t.temp)
	reading(c.power, t.power)
	h := a.hist[r.key]
	if c.sparkA > 0 {
		l.gap(1)
		var rg *ring
		if h != nil {
			rg = &h.alloc
		}
		l.putW(st.Accent, sparkline(rg, c.sparkA, st.G.Spark), c.sparkA)
	}
	if c.sparkU > 0 {
		l.gap(1)
		var rg *ring
		if h != nil {
			rg = &h.util
		}
		l.putW(st.Dim, sparkline(rg, c.sparkU, st.G.Spark), c.sparkU)
	}
	if c.abbrev > 0 {
		l.gap(1)
		l.cell(st.Dim, r.abbrev, c.abbrev, false, st.G.Ellipsis)
	}
	if c.model > 0 {
		l.gap(1)
		l.cell(st.Dim, r.dev.Model, c.model, false, st.G.Ellipsis)
	}
	return l.finish(w)
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

// hostRow is the cpu and memory summary: one line, not a row per core.
func (a *App) hostRow(c devCols, w int, selected, marked bool) string {
	st := a.st
	h := &a.d.host
	l := a.rowStart(selected, marked)
	if !h.hasCPU && !h.hasMem {
		l.put(st.Dim, "no cpu or memory devices")
		return l.finish(w)
	}
	lvl := func(over bool) paint {
		if over {
			return st.Crit
		}
		return st.Text
	}
	if h.hasCPU {
		l.cell(st.Text, "CPU", c.label, false, "")
		l.gap(1)
		st.renderBar(l, barLayout([]float64{h.cpuHeldF}, h.cpuCapF, c.bar), func(int) int { return 0 }, nil)
		l.gap(1)
		l.cell(lvl(h.cpuOver), h.cpuHeld+"/"+h.cpuCap, c.figs, true, st.G.Ellipsis)
		l.put(st.Dim, " "+plural(h.cores, "core"))
	}
	if h.hasMem {
		figs := h.memHeld + "/" + h.memCap
		rest := w - l.w - 2 - 4 - 1 - width(figs)
		if rest >= 4 {
			l.gap(2)
			l.put(st.Text, "MEM ")
			bw := min(rest, c.bar)
			st.renderBar(l, barLayout([]float64{h.memHeldB}, h.memCapB, bw), func(int) int { return 1 }, nil)
			l.gap(1)
			l.put(lvl(h.memOver), figs)
		} else {
			l.gap(2)
			l.put(lvl(h.memOver), "MEM "+figs)
		}
	}
	return l.finish(w)
}

func (a *App) emptyRow(w int, text string) string {
	l := newLine(paint{})
	l.gap(2)
	l.cell(a.st.Dim, text, w-2, false, a.st.G.Ellipsis)
	return l.finish(w)
}

// paneTitle is a pane's name and count, in the focused or plain title
// style.
func (a *App) paneTitle(p pane, count string) []span {
	lvl := lvlTitle
	if a.focus == p {
		lvl = lvlFocus
	}
	t := " " + p.title() + " "
	if count != "" {
		// "Kernels (7)": a bare count after a name reads as part of it
		// ("Kernels on GPU0 1").
		t += "(" + count + ") "
	}
	return []span{{lvl, t}}
}

// titleRow draws a pane's title row: the title spans, a rule, optional
// info and the scroll position when not every row fits.
func (a *App) titleRow(w int, title, info []span, total, visible, offset int) string {
	return titleRowOf(a.st, w, title, info, total, visible, offset)
}

// titleRowOf is a pane's title rule: title on the left, info and the
// scroll position on the right. The node and fleet consoles share it.
func titleRowOf(st *Styles, w int, title, info []span, total, visible, offset int) string {
	l := newLine(paint{})
	l.putW(st.Border, st.G.Rule, 1)
	putSpans(l, st, title, max(w-2, 0))
	var right []span
	if total > visible && visible > 0 {
		from, to := offset+1, min(offset+visible, total)
		right = append(right, span{lvlDim, strconv.Itoa(from) + "-" + strconv.Itoa(to) + "/" + strconv.Itoa(total)})
	}
	if len(info) > 0 {
		if len(right) > 0 {
			info = append(append([]span{}, info...), span{lvlDim, "  "})
		}
		right = append(info, right...)
	}
	if len(right) > 0 {
		right = append(append([]span{{lvlDim, " "}}, right...), span{lvlDim, " "})
	}
	rw := spansWidth(right)
	if l.w+rw+2 > w {
		right, rw = nil, 0
	}
	fill := max(w-l.w-rw-1, 0)
	l.putW(st.Border, repeat(st.G.Rule, fill), fill)
	putSpans(l, st, right, rw)
	if l.w < w {
		l.putW(st.Border, st.G.Rule, 1)
	}
	return l.finish(w)
}

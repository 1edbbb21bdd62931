package ui

import "time"

// The row renderers of the main screen's panes, like lazygit's
// presentation package: pure functions from derived data, columns, styles
// and a width to styled text exactly w cells wide. The panes pick rows and
// call these; present_test.go checks them at several widths.

// deviceHeaderRow is the devices pane's column header.
func deviceHeaderRow(st *Styles, c devCols, byAgent bool, w int) string {
	l := newLine(paint{})
	p := st.Dim
	l.gap(2)
	l.cell(p, "DEVICE", c.label, false, st.G.Ellipsis)
	l.gap(1)
	held := "HELD/CAPACITY"
	if byAgent {
		held = "HELD PER AGENT"
	}
	l.cell(p, held, c.bar, false, st.G.Ellipsis)
	l.gap(1)
	l.cell(p, "SHARES", c.figs, true, st.G.Ellipsis)
	opt := func(cw int, s string, right bool) {
		if cw > 0 {
			l.gap(1)
			l.cell(p, s, cw, right, st.G.Ellipsis)
		}
	}
	opt(c.owner, "OWNER", false)
	opt(c.util, "UTIL", true)
	opt(c.mem, "MEM", true)
	opt(c.temp, "TEMP", true)
	opt(c.power, "POWER", true)
	// The history columns: what was held and how busy the GPU was, one
	// sample a second (UTIL once: the issue's "UTIL UTIL" header).
	opt(c.sparkA, "ALLOC", false)
	opt(c.sparkU, "BUSY", false)
	opt(c.abbrev, "ID", false)
	opt(c.model, "MODEL", false)
	return l.finish(w)
}

// deviceRowOf draws one accelerator: its bar per kernel (or per agent when
// byAgent), figures, owner, telemetry and history (h, nil when none yet).
//
// hit marks a row that holds a kernel matching the filter, in the cell
// after the cursor.
func deviceRowOf(st *Styles, r *devRow, h *devHistory, c devCols, byAgent bool, w int, selected, marked, hit bool) string {
	l := rowStart(st, selected, marked)
	if hit {
		l = newLine(l.base)
		if marked {
			l.putW(st.Accent, st.G.Cursor, 1)
		} else {
			l.gap(1)
		}
		l.putW(st.Accent, st.G.Hit, 1)
	}
	label := r.label
	if r.child {
		label = st.G.Branch + label
	}
	l.cell(st.Text, label, c.label, false, st.G.Ellipsis)
	l.gap(1)
	switch {
	case r.hasBar:
		amts, look, drifted := r.barLooks(byAgent)
		st.renderBar(l, barLayout(amts, r.capF, c.bar), look, drifted)
	case r.nMIG > 0:
		l.cell(st.Dim, "MIG "+st.G.Dot+" "+plural(r.nMIG, "instance"), c.bar, false, st.G.Ellipsis)
	case r.capUnknown:
		l.cell(st.Dim, "capacity unknown", c.bar, false, st.G.Ellipsis)
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
	if r.hasBar || r.capUnknown {
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
	spark := func(cw int, p paint, series func(*devHistory) *ring) {
		if cw > 0 {
			l.gap(1)
			var rg *ring
			if h != nil {
				rg = series(h)
			}
			l.putW(p, sparkline(rg, cw, st.G.Spark), cw)
		}
	}
	spark(c.sparkA, st.Accent, func(h *devHistory) *ring { return &h.alloc })
	spark(c.sparkU, st.Dim, func(h *devHistory) *ring { return &h.util })
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

// hostRowOf is the cpu and memory summary: one line, not a row per core.
func hostRowOf(st *Styles, h *hostSummary, c devCols, w int, selected, marked bool) string {
	l := rowStart(st, selected, marked)
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
	// tail puts s if it fits in what is left of the row, else what fits
	// and the ellipsis: a narrow pane cuts the line, never overflows.
	tail := func(p paint, s string) {
		if room := w - l.w; room > 0 {
			if sw := width(s); sw <= room {
				l.putW(p, s, sw)
			} else {
				l.cell(p, s, room, false, st.G.Ellipsis)
			}
		}
	}
	if h.hasCPU {
		l.cell(st.Text, "CPU", c.label, false, "")
		l.gap(1)
		st.renderBar(l, barLayout([]float64{h.cpuHeldF}, h.cpuCapF, c.bar), func(int) int { return 0 }, nil)
		l.gap(1)
		l.cell(lvl(h.cpuOver), h.cpuHeld+"/"+h.cpuCap, c.figs, true, st.G.Ellipsis)
		tail(st.Dim, " "+plural(h.cores, "core"))
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
		} else if w-l.w > 2 {
			l.gap(2)
			tail(lvl(h.memOver), "MEM "+figs)
		}
	}
	return l.finish(w)
}

// kernelHeaderRow is the kernels table's column header, the sorted column
// accented with its direction.
func kernelHeaderRow(st *Styles, cols []kernCol, sortCol string, desc bool, w int) string {
	h := newLine(paint{})
	h.gap(2)
	for i, c := range cols {
		if i > 0 {
			h.gap(1)
		}
		t := c.title
		p := st.Dim
		if c.key == sortCol {
			p = st.Accent
			if desc {
				t += st.G.Down
			} else {
				t += st.G.Up
			}
		}
		h.cell(p, t, c.w, c.right, st.G.Ellipsis)
	}
	return h.finish(w)
}

// kernelRowOf draws one kernel in the table's columns; onDev is what it
// holds on the followed device ("" when following none).
func kernelRowOf(st *Styles, kr *kernRow, onDev string, cols []kernCol, w int, now time.Time, selected, focused bool) string {
	base := paint{}
	if selected && focused {
		base = st.Selected
	}
	l := newLine(base)
	if selected {
		l.putW(st.Accent, st.G.Cursor, 1)
	} else {
		l.gap(1)
	}
	// The kernel's mark: the colour and shape of its share on the device
	// bars, for kernels that hold an accelerator.
	if kr.nDevs > 0 {
		p, g := st.look(int(kr.look))
		if len(st.G.Patterns) == 1 {
			g = st.G.Mark
		}
		l.putW(p, g, 1)
	} else {
		l.gap(1)
	}
	ell := st.G.Ellipsis
	for n, c := range cols {
		if n > 0 {
			l.gap(1)
		}
		switch c.key {
		case "id":
			l.cell(st.Text, kr.short, c.w, false, ell)
		case "agent":
			l.cell(st.Dim, kr.agent, c.w, false, ell)
		case "on":
			l.cell(st.Accent, onDev, c.w, true, ell)
		case "devices":
			l.cell(st.Text, kr.devs, c.w, false, ell)
		case "age":
			l.cell(st.Dim, fmtAge(now.Sub(kr.k.Seen)), c.w, true, ell)
		case "state":
			l.cell(st.level(kr.stateLvl), string(kr.k.State), c.w, false, ell)
		case "user":
			l.cell(st.Text, kr.w.user, c.w, false, ell)
		case "type":
			l.cell(st.Dim, kr.w.stype, c.w, false, ell)
		case "session":
			l.cell(st.Dim, kr.w.session, c.w, false, ell)
		case "util":
			l.cell(st.level(kr.w.utilLvl), kr.w.util, c.w, true, ell)
		case "gmem":
			l.cell(st.Text, kr.w.gmem, c.w, true, ell)
		default:
			if c.slot >= 0 {
				l.cell(st.Text, kr.slotVals[c.slot], c.w, true, ell)
			}
		}
	}
	return l.finish(w)
}

// agentBlockOf draws an agent: its header line, then its partition lines
// indented; agentLines(ag) lines in all.
func agentBlockOf(st *Styles, ag *agentRow, w int, selected, focused bool, dst []string) []string {
	l := rowStart(st, selected && focused, selected)
	putSpans(l, st, ag.header, w-l.w)
	dst = append(dst, l.finish(w))
	for _, ln := range ag.lines {
		l := newLine(paint{})
		l.gap(2)
		putSpans(l, st, ln, w-2)
		dst = append(dst, l.finish(w))
	}
	return dst
}

// agentLines is how many rows an agent's block takes.
func agentLines(r *agentRow) int { return 1 + len(r.lines) }

// issueRowOf draws one issue: severity, text and where it is.
func issueRowOf(st *Styles, is *issueRow, w int, selected, focused bool) string {
	l := rowStart(st, selected && focused, selected)
	spans := []span{is.sev, {lvlPlain, " " + is.text}}
	if is.where != "" {
		spans = append(spans, span{lvlDim, "  " + is.where})
	}
	putSpans(l, st, spans, w-l.w)
	return l.finish(w)
}

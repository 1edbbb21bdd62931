package console

import (
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)
import "time"

// The row renderers of the main screen's panes, like lazygit's
// presentation package: pure functions from derived data, columns, styles
// and a width to styled text exactly w cells wide. The panes pick rows and
// call these; present_test.go checks them at several widths.

// deviceHeaderRow is the devices pane's column header.
func deviceHeaderRow(st *kit.Styles, c devCols, byAgent bool, w int) string {
	l := kit.NewLine(kit.Paint{})
	p := st.Dim
	l.Gap(2)
	l.Cell(p, "DEVICE", c.Label, false, st.G.Ellipsis)
	l.Gap(1)
	held := "HELD/CAPACITY"
	if byAgent {
		held = "HELD PER AGENT"
	}
	l.Cell(p, held, c.bar, false, st.G.Ellipsis)
	l.Gap(1)
	figs := c.figsTitle
	if figs == "" {
		figs = "SHARES"
	}
	l.Cell(p, figs, c.Figs, true, st.G.Ellipsis)
	opt := func(cw int, s string, right bool) {
		if cw > 0 {
			l.Gap(1)
			l.Cell(p, s, cw, right, st.G.Ellipsis)
		}
	}
	opt(c.Owner, "OWNER", false)
	opt(c.Util, "UTIL", true)
	opt(c.Mem, "MEM", true)
	opt(c.Temp, "TEMP", true)
	opt(c.Power, "POWER", true)
	// The history columns: what was held and how busy the GPU was, one
	// sample a second (UTIL once: the issue's "UTIL UTIL" header).
	opt(c.sparkA, "ALLOC", false)
	opt(c.sparkU, "BUSY", false)
	opt(c.Abbrev, "ID", false)
	opt(c.Model, "MODEL", false)
	return l.Finish(w)
}

// deviceRowOf draws one accelerator: its bar per kernel (or per agent when
// byAgent), figures, owner, telemetry and history (h, nil when none yet).
//
// hit marks a row that holds a kernel matching the filter, in the cell
// after the cursor.
func deviceRowOf(st *kit.Styles, r *render.DevRow, h *devHistory, c devCols, byAgent bool, w int, selected, marked, hit bool) string {
	l := kit.RowStart(st, selected, marked)
	if hit {
		l = kit.NewLine(l.Base)
		if marked {
			l.PutW(st.Accent, st.G.Cursor, 1)
		} else {
			l.Gap(1)
		}
		l.PutW(st.Accent, st.G.Hit, 1)
	}
	label := r.Label
	if r.Child {
		label = st.G.Branch + label
	}
	l.Cell(st.Text, label, c.Label, false, st.G.Ellipsis)
	l.Gap(1)
	switch {
	case r.HasBar:
		amts, look, drifted := r.BarLooks(byAgent)
		st.RenderBar(l, kit.BarLayout(amts, r.CapF, c.bar), look, drifted)
	case r.NMIG > 0:
		l.Cell(st.Dim, "MIG "+st.G.Dot+" "+kit.Plural(r.NMIG, "instance"), c.bar, false, st.G.Ellipsis)
	case r.CapUnknown:
		l.Cell(st.Dim, "capacity unknown", c.bar, false, st.G.Ellipsis)
	default:
		l.Gap(c.bar)
	}
	l.Gap(1)
	figLvl := kit.LvlPlain
	switch {
	case r.Over:
		figLvl = kit.LvlCrit
	case r.Held == "0":
		figLvl = kit.LvlDim
	}
	if r.HasBar || r.CapUnknown {
		l.Cell(st.Level(figLvl), r.Held+"/"+r.Capacity, c.Figs, true, st.G.Ellipsis)
	} else {
		l.Gap(c.Figs)
	}
	if c.Owner > 0 {
		l.Gap(1)
		ow := c.Owner
		if r.Drift {
			ow--
		}
		l.Cell(st.Level(r.OwnerLvl), r.Owner, ow, false, st.G.Ellipsis)
		if r.Drift {
			l.PutW(st.Warn, "!", 1)
		}
	}
	t := &r.Tele
	reading := func(cw int, rd kit.Reading) {
		if cw > 0 {
			l.Gap(1)
			l.Cell(st.Level(rd.Lvl), rd.Text, cw, true, st.G.Ellipsis)
		}
	}
	reading(c.Util, t.Util)
	if c.memLong {
		reading(c.Mem, t.Mem)
	} else {
		reading(c.Mem, t.MemShort)
	}
	reading(c.Temp, t.Temp)
	reading(c.Power, t.Power)
	spark := func(cw int, p kit.Paint, series func(*devHistory) *ring) {
		if cw > 0 {
			l.Gap(1)
			var rg *ring
			if h != nil {
				rg = series(h)
			}
			l.PutW(p, sparkline(rg, cw, st.G.Spark), cw)
		}
	}
	spark(c.sparkA, st.Accent, func(h *devHistory) *ring { return &h.alloc })
	spark(c.sparkU, st.Dim, func(h *devHistory) *ring { return &h.Util })
	if c.Abbrev > 0 {
		l.Gap(1)
		l.Cell(st.Dim, r.Abbrev, c.Abbrev, false, st.G.Ellipsis)
	}
	if c.Model > 0 {
		l.Gap(1)
		l.Cell(st.Dim, r.Dev.Model, c.Model, false, st.G.Ellipsis)
	}
	return l.Finish(w)
}

// hostRowOf is the cpu and memory summary: one line, not a row per core.
func hostRowOf(st *kit.Styles, h *render.HostSummary, c devCols, w int, selected, marked bool) string {
	l := kit.RowStart(st, selected, marked)
	if !h.HasCPU && !h.HasMem {
		l.Put(st.Dim, "no cpu or memory devices")
		return l.Finish(w)
	}
	lvl := func(over bool) kit.Paint {
		if over {
			return st.Crit
		}
		return st.Text
	}
	// tail puts s if it fits in what is left of the row, else what fits
	// and the ellipsis: a narrow pane cuts the line, never overflows.
	tail := func(p kit.Paint, s string) {
		if room := w - l.W; room > 0 {
			if sw := kit.Width(s); sw <= room {
				l.PutW(p, s, sw)
			} else {
				l.Cell(p, s, room, false, st.G.Ellipsis)
			}
		}
	}
	if h.HasCPU {
		l.Cell(st.Text, "CPU", c.Label, false, "")
		l.Gap(1)
		st.RenderBar(l, kit.BarLayout([]float64{h.CPUHeldF}, h.CPUCapF, c.bar), func(int) int { return 0 }, nil)
		l.Gap(1)
		l.Cell(lvl(h.CPUOver), h.CPUHeld+"/"+h.CPUCap, c.Figs, true, st.G.Ellipsis)
		tail(st.Dim, " "+kit.Plural(h.Cores, "core"))
	}
	if h.HasMem {
		figs := h.MemHeld + "/" + h.MemCap
		rest := w - l.W - 2 - 4 - 1 - kit.Width(figs)
		if rest >= 4 {
			l.Gap(2)
			l.Put(st.Text, "MEM ")
			bw := min(rest, c.bar)
			st.RenderBar(l, kit.BarLayout([]float64{h.MemHeldB}, h.MemCapB, bw), func(int) int { return 1 }, nil)
			l.Gap(1)
			l.Put(lvl(h.MemOver), figs)
		} else if w-l.W > 2 {
			l.Gap(2)
			tail(lvl(h.MemOver), "MEM "+figs)
		}
	}
	return l.Finish(w)
}

// kernelHeaderRow is the kernels table's column header, the sorted column
// accented with its direction.
func kernelHeaderRow(st *kit.Styles, cols []kernCol, sortCol string, desc bool, w int) string {
	h := kit.NewLine(kit.Paint{})
	h.Gap(2)
	for i, c := range cols {
		if i > 0 {
			h.Gap(1)
		}
		t := c.Title
		p := st.Dim
		if c.Key == sortCol {
			p = st.Accent
			if desc {
				t += st.G.Down
			} else {
				t += st.G.Up
			}
		}
		h.Cell(p, t, c.W, c.right, st.G.Ellipsis)
	}
	return h.Finish(w)
}

// kernelRowOf draws one kernel in the table's columns; onDev is what it
// holds on the followed device ("" when following none).
func kernelRowOf(st *kit.Styles, kr *render.KernRow, onDev string, cols []kernCol, w int, now time.Time, selected, focused bool) string {
	base := kit.Paint{}
	if selected && focused {
		base = st.Selected
	}
	l := kit.NewLine(base)
	if selected {
		l.PutW(st.Accent, st.G.Cursor, 1)
	} else {
		l.Gap(1)
	}
	// The kernel's mark: the colour and shape of its share on the device
	// bars, for kernels that hold an accelerator.
	if kr.NDevs > 0 {
		p, g := st.Look(int(kr.Look))
		if len(st.G.Patterns) == 1 {
			g = st.G.Mark
		}
		l.PutW(p, g, 1)
	} else {
		l.Gap(1)
	}
	ell := st.G.Ellipsis
	for n, c := range cols {
		if n > 0 {
			l.Gap(1)
		}
		switch c.Key {
		case "id":
			l.Cell(st.Text, kr.Short, c.W, false, ell)
		case "agent":
			l.Cell(st.Dim, kr.Agent, c.W, false, ell)
		case "on":
			l.Cell(st.Accent, onDev, c.W, true, ell)
		case "devices":
			l.Cell(st.Text, kr.Devs, c.W, false, ell)
		case "age":
			age, _ := kit.AgeAt(now, kr.K.Seen)
			l.Cell(st.Dim, age, c.W, true, ell)
		case "state":
			l.Cell(st.Level(kr.StateLvl), string(kr.K.State), c.W, false, ell)
		case "user":
			l.Cell(st.Text, kr.W.User, c.W, false, ell)
		case "type":
			l.Cell(st.Dim, kr.W.Stype, c.W, false, ell)
		case "session":
			l.Cell(st.Dim, kr.W.Session, c.W, false, ell)
		case "util":
			l.Cell(st.Level(kr.W.UtilLvl), kr.W.Util, c.W, true, ell)
		case "gmem":
			l.Cell(st.Text, kr.W.Gmem, c.W, true, ell)
		default:
			if c.slot >= 0 {
				l.Cell(st.Text, kr.SlotVals[c.slot], c.W, true, ell)
			}
		}
	}
	return l.Finish(w)
}

// agentBlockOf draws an agent: its header line, then its partition lines
// indented; agentLines(ag) lines in all.
func agentBlockOf(st *kit.Styles, ag *render.AgentRow, w int, selected, focused bool, dst []string) []string {
	l := kit.RowStart(st, selected && focused, selected)
	kit.PutSpans(l, st, ag.Header, w-l.W)
	dst = append(dst, l.Finish(w))
	for _, ln := range ag.Lines {
		l := kit.NewLine(kit.Paint{})
		l.Gap(2)
		kit.PutSpans(l, st, ln, w-2)
		dst = append(dst, l.Finish(w))
	}
	return dst
}

// agentLines is how many rows an agent's block takes.
func agentLines(r *render.AgentRow) int { return 1 + len(r.Lines) }

// issueRowOf draws one issue: severity, text and where it is.
func issueRowOf(st *kit.Styles, is *render.IssueRow, w int, selected, focused bool) string {
	l := kit.RowStart(st, selected && focused, selected)
	spans := []kit.Span{is.Sev, {Lvl: kit.LvlPlain, Text: " " + is.Text}}
	if is.Where != "" {
		spans = append(spans, kit.Span{Lvl: kit.LvlDim, Text: "  " + is.Where})
	}
	kit.PutSpans(l, st, spans, w-l.W)
	return l.Finish(w)
}

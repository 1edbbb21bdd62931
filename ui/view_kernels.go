package ui

import (
	"strconv"
	"time"

	"github.com/fgtop/fgtop/model"
)

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

// kernCol is one column of the kernels table.
type kernCol struct {
	key   string // sort key
	title string
	w     int
	right bool
	slot  int // index into derived.slotCols, -1 otherwise
	x     int // first cell, set when laid out
}

// kernelColumns picks the kernel table's columns for w cells: the id and
// state always, then what the operator came for (the amount on the
// followed device, GPU shares), then agent, devices, cpu, mem, age, the
// other slots. The devices column takes leftover room. The column sorted
// by (sortKey) has room for its title and the sort arrow, so the arrow
// never vanishes on a narrow column. Pure.
func kernelColumns(w int, d *derived, m kernMeasures, onTitle, sortKey string) []kernCol {
	type cand struct {
		col  kernCol
		prio int
	}
	var cs []cand
	add := func(prio int, c kernCol) {
		c.slot = max(c.slot, -1)
		if c.key == sortKey {
			c.w = max(c.w, width(c.title)+1)
		}
		cs = append(cs, cand{c, prio})
	}
	add(0, kernCol{key: "id", title: "ID", w: 8, slot: -1})
	add(6, kernCol{key: "agent", title: "AGENT", w: m.agent, slot: -1})
	if onTitle != "" {
		add(2, kernCol{key: "on", title: onTitle, w: max(m.on, width(onTitle)+1), right: true, slot: -1})
	}
	slotCol := func(c int, s model.SlotName) {
		prio := 15 + c
		switch {
		case slotKey(s) == "shares":
			prio = 3
		case s.IsAccelerator():
			prio = 8
		case slotKey(s) == "cpu":
			prio = 11
		case slotKey(s) == "mem":
			prio = 12
		}
		add(prio, kernCol{key: slotKey(s), title: slotHeader(s), w: m.slots[c], right: true, slot: c})
	}
	for c, s := range d.slotCols {
		if slotRank(s) <= 2 {
			slotCol(c, s)
		}
	}
	// Whether it uses what it holds and whose it is, right after what it
	// holds: the questions an operator brings to a busy node.
	if m.use {
		add(4, kernCol{key: "util", title: "UTIL", w: 4, right: true, slot: -1})
		add(7, kernCol{key: "gmem", title: "GMEM", w: m.gmem, right: true, slot: -1})
	}
	if m.who {
		add(5, kernCol{key: "user", title: "USER", w: 8, slot: -1})
		add(10, kernCol{key: "type", title: "TYPE", w: 5, slot: -1})
	}
	for c, s := range d.slotCols {
		if slotRank(s) > 2 {
			slotCol(c, s)
		}
	}
	add(9, kernCol{key: "devices", title: "DEVICES", w: 7, slot: -1})
	add(13, kernCol{key: "age", title: "AGE", w: 6, right: true, slot: -1})
	if m.who {
		add(14, kernCol{key: "session", title: "SESSION", w: 8, slot: -1})
	}
	add(1, kernCol{key: "state", title: "STATE", w: 7, slot: -1})

	used := 2 - 1 // the cursor mark, minus the first gap
	keep := make([]bool, len(cs))
	for prio := 0; prio <= 15+len(d.slotCols); prio++ {
		for i, c := range cs {
			if c.prio == prio && used+1+c.col.w <= w {
				keep[i] = true
				used += 1 + c.col.w
			}
		}
	}
	var out []kernCol
	x := 2
	for i, c := range cs {
		if !keep[i] {
			continue
		}
		if c.col.key == "devices" {
			grow := min(w-used, max(m.devs-c.col.w, 0))
			c.col.w += grow
			used += grow
		}
		c.col.x = x
		x += c.col.w + 1
		out = append(out, c.col)
	}
	return out
}

// viewKernels draws the kernels table: title, header, visible rows.
func (a *App) viewKernels(r rect, title []span) []string {
	out := make([]string, 0, r.h)
	st := a.st
	kv := &a.kview
	total := len(kv.rows)
	var info []span
	if a.filter != "" {
		info = append(info, span{lvlAccent, "/" + a.filter})
	}
	if a.d != nil && a.d.snap.IdleKernels > 0 {
		if len(info) > 0 {
			info = append(info, span{lvlDim, " "})
		}
		info = append(info, span{lvlWarn, strconv.Itoa(a.d.snap.IdleKernels) + " idle"})
	}
	visible := max(r.h-2, 0)
	out = append(out, a.titleRow(r.w, title, info, total, visible, a.offset[paneKernels]))
	if r.h < 2 {
		return out[:r.h]
	}
	if a.d == nil {
		return out
	}
	d := a.d
	onTitle := ""
	if kv.dev >= 0 {
		onTitle = "ON " + d.devs[kv.dev].label
	}
	cols := kernelColumns(r.w, d, d.kernMeas, onTitle, a.sortCol)
	a.kcols = cols
	h := newLine(paint{})
	h.gap(2)
	for i, c := range cols {
		if i > 0 {
			h.gap(1)
		}
		t := c.title
		p := st.Dim
		if c.key == a.sortCol {
			p = st.Accent
			if a.sortDesc {
				t += st.G.Down
			} else {
				t += st.G.Up
			}
		}
		h.cell(p, t, c.w, c.right, st.G.Ellipsis)
	}
	out = append(out, h.finish(r.w))
	if total == 0 {
		msg := "no kernels"
		switch {
		case a.filter != "":
			msg = "no kernel matches /" + a.filter
		case kv.dev >= 0:
			msg = "nothing held on " + d.devs[kv.dev].label + " (f: all kernels)"
		}
		return append(out, a.emptyRow(r.w, msg))
	}
	now := a.now()
	for i := a.offset[paneKernels]; i < total && len(out) < r.h; i++ {
		out = append(out, a.kernelRow(i, cols, r.w, now))
	}
	return out
}

func (a *App) kernelRow(i int, cols []kernCol, w int, now time.Time) string {
	st := a.st
	kr := &a.d.kernels[a.kview.rows[i]]
	selected := i == a.cursor[paneKernels]
	base := paint{}
	if selected && a.focus == paneKernels {
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
			l.cell(st.Accent, a.kview.onDev[i], c.w, true, ell)
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

// kernelsTitle is the kernels pane's title: which kernels it shows.
func (a *App) kernelsTitle() []span {
	count := strconv.Itoa(len(a.kview.rows))
	if a.d != nil && a.kview.dev >= 0 {
		return append(a.paneTitle(paneKernels, ""), span{lvlDim, "on "},
			span{lvlAccent, a.d.devs[a.kview.dev].label}, span{lvlDim, " (" + count + ") "})
	}
	return a.paneTitle(paneKernels, count)
}

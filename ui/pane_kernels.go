package ui

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
)

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

	// Columns are kept in order of importance and the first that does
	// not fit ends the choice: a narrower, less important column never
	// takes the place of a wider, more important one, so a column shows
	// at a width only if every more important column shows too, and
	// columns drop in the same order at every width.
	used := 2 - 1 // the cursor mark, minus the first gap
	keep := make([]bool, len(cs))
fit:
	for prio := 0; prio <= 15+len(d.slotCols); prio++ {
		for i, c := range cs {
			if c.prio != prio {
				continue
			}
			if used+1+c.col.w > w {
				break fit
			}
			keep[i] = true
			used += 1 + c.col.w
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

// kernelsPane is the kernels table: every kernel, or those holding the
// device the devices pane's cursor is on (follow), filtered and sorted.
type kernelsPane struct {
	list
	// device is the devices pane's cursor: the row followed.
	device   func() int
	follow   bool
	sortCol  string
	sortDesc bool
	filter   string
	// matchDevs marks the device rows holding a kernel that matches the
	// filter (nil without one).
	matchDevs []bool
	// view is the table's rows, recomputed when the snapshot, the
	// followed device, the filter or the sort changes; cols are the
	// columns last drawn (for clicks on the header).
	view kernelView
	cols []kernCol
}

func newKernelsPane(c *common, device func() int) *kernelsPane {
	p := &kernelsPane{device: device, follow: true, sortCol: "id"}
	p.list = list{common: c, id: paneKernels, head: 1, size: func(*derived) int { return len(p.view.rows) }}
	return p
}

func (p *kernelsPane) owns(act action) bool {
	return act == actFollow || act == actSort || act == actSortReverse
}

// Bindings are the kernels pane's own keys.
func (p *kernelsPane) Bindings() []key.Binding {
	return keysFor(p.keys, actFollow, actSort, actSortReverse)
}

// Update moves the cursor, follows the device or not, sorts; a click on
// the column header sorts by that column (again: the other way).
func (p *kernelsPane) Update(msg tea.Msg) tea.Cmd {
	if p.updateList(msg, p.headerClick) {
		return nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch p.keys.lookup(k) {
	case actFollow:
		p.follow = !p.follow
		p.refresh()
	case actSort:
		p.cycleSort()
	case actSortReverse:
		p.sortDesc = !p.sortDesc
		p.refresh()
	}
	return nil
}

func (p *kernelsPane) headerClick(m tea.Mouse) {
	for _, c := range p.cols {
		if m.X >= c.x && m.X < c.x+c.w {
			p.setSort(c.key, c.key == p.sortCol && !p.sortDesc)
		}
	}
}

// Title is the pane's title: which kernels it shows.
func (p *kernelsPane) Title() []span {
	count := strconv.Itoa(len(p.view.rows))
	if p.d != nil && p.filter != "" {
		return append(paneTitle(p.id, p.focused, ""), span{lvlDim, "matching "},
			span{lvlAccent, "/" + p.filter}, span{lvlDim, " on all GPUs (" + count + ") "})
	}
	if p.d != nil && p.view.dev >= 0 {
		return append(paneTitle(p.id, p.focused, ""), span{lvlDim, "on "},
			span{lvlAccent, p.d.devs[p.view.dev].label}, span{lvlDim, " (" + count + ") "})
	}
	return paneTitle(p.id, p.focused, count)
}

func (p *kernelsPane) tab() span { return tabSpan(p.id, lvlDim, p.Len()) }

// Selected is the selected kernel's id.
func (p *kernelsPane) Selected() string {
	if p.d != nil && p.cursor < len(p.view.rows) {
		return string(p.d.kernels[p.view.rows[p.cursor]].k.ID)
	}
	return ""
}

func (p *kernelsPane) detailFor() (*detail, string) {
	if id := p.Selected(); id != "" {
		return &detail{kind: detKernel, kern: model.KernelID(id)}, ""
	}
	return nil, ""
}

// backTo is the device the table follows again once the filter is
// cleared (esc), or "".
func (p *kernelsPane) backTo() string {
	if p.filter == "" || !p.follow || p.d == nil {
		return ""
	}
	if c := p.device(); c >= 0 && c < len(p.d.devs) {
		return p.d.devs[c].label
	}
	return ""
}

// View draws title, header and the visible kernels.
func (p *kernelsPane) View() []string { return p.viewTitled(p.Title()) }

func (p *kernelsPane) viewTitled(title []span) []string {
	kv := &p.view
	var info []span
	if back := p.backTo(); back != "" {
		info = append(info, span{lvlAccent, "esc"}, span{lvlDim, " back to " + back})
	}
	if p.d != nil && p.d.snap.IdleKernels > 0 {
		if len(info) > 0 {
			info = append(info, span{lvlDim, " "})
		}
		info = append(info, span{lvlWarn, strconv.Itoa(p.d.snap.IdleKernels) + " idle"})
	}
	now := p.now()
	return p.frame(title, info, p.d != nil, "",
		func() []string {
			onTitle := ""
			if kv.dev >= 0 {
				onTitle = "ON " + p.d.devs[kv.dev].label
			}
			p.cols = kernelColumns(p.w, p.d, p.d.kernMeas, onTitle, p.sortCol)
			return []string{kernelHeaderRow(p.st, p.cols, p.sortCol, p.sortDesc, p.w)}
		},
		func() string {
			switch {
			case p.filter != "":
				if back := p.backTo(); back != "" {
					return "no kernel on any GPU matches /" + p.filter + " (esc: back to " + back + ")"
				}
				return "no kernel matches /" + p.filter
			case kv.dev >= 0:
				return "nothing held on " + p.d.devs[kv.dev].label + " (f: all kernels)"
			}
			return "no kernels"
		},
		func(i int, out []string) []string {
			on := ""
			if kv.dev >= 0 {
				on = kv.onDev[i]
			}
			kr := &p.d.kernels[kv.rows[i]]
			return append(out, kernelRowOf(p.st, kr, on, p.cols, p.w, now, i == p.cursor, p.focused))
		})
}

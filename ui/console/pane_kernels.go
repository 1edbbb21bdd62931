package console

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// kernCol is one column of the kernels table.
type kernCol struct {
	Key   string // sort key
	Title string
	W     int
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
func kernelColumns(w int, d *render.Derived, m render.KernMeasures, onTitle, sortKey string) []kernCol {
	type cand struct {
		col  kernCol
		Prio int
	}
	var cs []cand
	add := func(prio int, c kernCol) {
		c.slot = max(c.slot, -1)
		if c.Key == sortKey {
			c.W = max(c.W, kit.Width(c.Title)+1)
		}
		cs = append(cs, cand{c, prio})
	}
	add(0, kernCol{Key: "id", Title: "ID", W: m.ID, slot: -1})
	add(6, kernCol{Key: "agent", Title: "AGENT", W: m.Agent, slot: -1})
	if onTitle != "" {
		add(2, kernCol{Key: "on", Title: onTitle, W: max(m.On, kit.Width(onTitle)+1), right: true, slot: -1})
	}
	slotCol := func(c int, s model.SlotName) {
		prio := 15 + c
		switch {
		case slotKey(s) == "shares":
			prio = 3
		case s.IsAccelerator() && s.MinorType() != "":
			// One column per slice profile (5G-MIG, 10G-MIG, ...): there are
			// several, each says what DEVICES names, and they are there
			// whether a slice is held or not, so they come after the
			// columns every kernel fills.
		case s.IsAccelerator():
			prio = 8
		case slotKey(s) == "cpu":
			prio = 11
		case slotKey(s) == "mem":
			prio = 12
		}
		add(prio, kernCol{Key: slotKey(s), Title: render.SlotHeader(s), W: m.Slots[c], right: true, slot: c})
	}
	for c, s := range d.SlotCols {
		if render.SlotRank(s) <= 2 {
			slotCol(c, s)
		}
	}
	// Whether it uses what it holds and whose it is, right after what it
	// holds: the questions an operator brings to a busy node.
	if m.Use {
		add(4, kernCol{Key: "util", Title: "UTIL", W: 4, right: true, slot: -1})
		add(7, kernCol{Key: "gmem", Title: "GMEM", W: m.Gmem, right: true, slot: -1})
	}
	if m.Who {
		add(5, kernCol{Key: "user", Title: "USER", W: 8, slot: -1})
		add(10, kernCol{Key: "type", Title: "TYPE", W: 5, slot: -1})
	}
	for c, s := range d.SlotCols {
		if render.SlotRank(s) > 2 {
			slotCol(c, s)
		}
	}
	add(9, kernCol{Key: "devices", Title: "DEVICES", W: 7, slot: -1})
	add(13, kernCol{Key: "age", Title: "AGE", W: 6, right: true, slot: -1})
	if m.Who {
		add(14, kernCol{Key: "session", Title: "SESSION", W: 8, slot: -1})
	}
	add(1, kernCol{Key: "state", Title: "STATE", W: 7, slot: -1})

	// Columns are kept in order of importance and the first that does
	// not fit ends the choice: a narrower, less important column never
	// takes the place of a wider, more important one, so a column shows
	// at a width only if every more important column shows too, and
	// columns drop in the same order at every width.
	used := 2 - 1 // the cursor mark, minus the first gap
	keep := make([]bool, len(cs))
fit:
	for prio := 0; prio <= 15+len(d.SlotCols); prio++ {
		for i, c := range cs {
			if c.Prio != prio {
				continue
			}
			if used+1+c.col.W > w {
				break fit
			}
			keep[i] = true
			used += 1 + c.col.W
		}
	}
	var out []kernCol
	x := 2
	for i, c := range cs {
		if !keep[i] {
			continue
		}
		if c.col.Key == "devices" {
			grow := min(w-used, max(m.Devs-c.col.W, 0))
			c.col.W += grow
			used += grow
		}
		c.col.x = x
		x += c.col.W + 1
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
	Filter   string
	// matchDevs marks the device rows holding a kernel that matches the
	// filter (nil without one).
	matchDevs []bool
	// view is the table's rows, recomputed when the snapshot, the
	// followed device, the filter or the sort changes; cols are the
	// columns last drawn (for clicks on the header).
	Showing kernelView
	cols    []kernCol
}

func newKernelsPane(c *common, device func() int) *kernelsPane {
	p := &kernelsPane{device: device, follow: true, sortCol: "id"}
	p.list = list{common: c, ID: paneKernels, head: 1, Size: func(*render.Derived) int { return len(p.Showing.Rows) }}
	return p
}

// Owns reports the keys the kernels pane handles from any pane.
func (p *kernelsPane) Owns(act kit.Action) bool {
	return act == ActFollow || act == kit.ActSort || act == kit.ActSortReverse
}

// Bindings are the kernels pane's own keys.
func (p *kernelsPane) Bindings() []key.Binding {
	return keysFor(p.Keys, ActFollow, kit.ActSort, kit.ActSortReverse)
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
	switch p.Keys.Lookup(k) {
	case ActFollow:
		p.follow = !p.follow
		p.refresh()
	case kit.ActSort:
		p.cycleSort()
	case kit.ActSortReverse:
		p.sortDesc = !p.sortDesc
		p.refresh()
	}
	return nil
}

func (p *kernelsPane) headerClick(m tea.Mouse) {
	for _, c := range p.cols {
		if m.X >= c.x && m.X < c.x+c.W {
			p.setSort(c.Key, c.Key == p.sortCol && !p.sortDesc)
		}
	}
}

// Title is the pane's title: which kernels it shows.
func (p *kernelsPane) Title() []kit.Span {
	count := strconv.Itoa(len(p.Showing.Rows))
	if p.d != nil && p.Filter != "" {
		return append(paneTitle(p.ID, p.focused, ""), kit.Span{Lvl: kit.LvlDim, Text: "matching "},
			kit.Span{Lvl: kit.LvlAccent, Text: "/" + p.Filter}, kit.Span{Lvl: kit.LvlDim, Text: " on the node (" + count + ") "})
	}
	if p.d != nil && p.Showing.Dev >= 0 {
		return append(paneTitle(p.ID, p.focused, ""), kit.Span{Lvl: kit.LvlDim, Text: "on "},
			kit.Span{Lvl: kit.LvlAccent, Text: p.d.Devs[p.Showing.Dev].Label}, kit.Span{Lvl: kit.LvlDim, Text: " (" + count + ") "})
	}
	return paneTitle(p.ID, p.focused, count)
}

func (p *kernelsPane) tab() kit.Span { return tabSpan(p.ID, kit.LvlDim, p.Len()) }

// Selected is the selected kernel's id.
func (p *kernelsPane) Selected() string {
	if p.d != nil && p.Cursor < len(p.Showing.Rows) {
		return string(p.d.Kernels[p.Showing.Rows[p.Cursor]].K.ID)
	}
	return ""
}

func (p *kernelsPane) detailFor() (*detail, string) {
	if id := p.Selected(); id != "" {
		return &detail{Kind: detKernel, kern: model.KernelID(id)}, ""
	}
	return nil, ""
}

// backTo is the device the table follows again once the filter is
// cleared (esc), or "".
func (p *kernelsPane) backTo() string {
	if p.Filter == "" || !p.follow || p.d == nil {
		return ""
	}
	if c := p.device(); c >= 0 && c < len(p.d.Devs) {
		return p.d.Devs[c].Label
	}
	return ""
}

// View draws title, header and the visible kernels.
func (p *kernelsPane) View() []string { return p.viewTitled(p.Title()) }

func (p *kernelsPane) viewTitled(title []kit.Span) []string {
	kv := &p.Showing
	var info []kit.Span
	if back := p.backTo(); back != "" {
		info = append(info, kit.Span{Lvl: kit.LvlAccent, Text: "esc"}, kit.Span{Lvl: kit.LvlDim, Text: " back to " + back})
	}
	if p.d != nil && p.d.Snap.IdleKernels > 0 {
		if len(info) > 0 {
			info = append(info, kit.Span{Lvl: kit.LvlDim, Text: " "})
		}
		info = append(info, kit.Span{Lvl: kit.LvlWarn, Text: strconv.Itoa(p.d.Snap.IdleKernels) + " idle"})
	}
	now := p.AgeNow()
	return p.frame(title, info, p.d != nil, "",
		func() []string {
			onTitle := ""
			if kv.Dev >= 0 {
				onTitle = "ON " + p.d.Devs[kv.Dev].Label
			}
			p.cols = kernelColumns(p.W, p.d, p.d.KernMeas, onTitle, p.sortCol)
			return []string{kernelHeaderRow(p.St, p.cols, p.sortCol, p.sortDesc, p.W)}
		},
		func() string {
			switch {
			case kv.FilterErr != "":
				if back := p.backTo(); back != "" {
					return kv.FilterErr + " (esc: back to " + back + ")"
				}
				return kv.FilterErr
			case p.Filter != "":
				hint := ""
				if miss := render.FilterNearMiss(p.Filter); miss != "" {
					hint = " (" + miss + ")"
				}
				if back := p.backTo(); back != "" {
					return "no kernel on the node matches /" + p.Filter + hint + " (esc: back to " + back + ")"
				}
				return "no kernel matches /" + p.Filter + hint
			case kv.Dev >= 0:
				return "nothing held on " + p.d.Devs[kv.Dev].Label + " (f: all kernels)"
			}
			return "no kernels"
		},
		func(i int, out []string) []string {
			on := ""
			if kv.Dev >= 0 {
				on = kv.OnDev[i]
			}
			kr := &p.d.Kernels[kv.Rows[i]]
			in := kernRowIn{st: p.St, gen: p.d.Gen, k: kv.Rows[i], on: on, age: p.Age(now, kr.K.Seen), w: p.W,
				sel: i == p.Cursor, focused: p.focused}
			return append(out, p.memo.kernRow(i, in, p.cols, func() string {
				return kernelRowOf(p.St, kr, on, p.cols, p.W, now, i == p.Cursor, p.focused)
			}))
		})
}

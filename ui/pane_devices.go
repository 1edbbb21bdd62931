package ui

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

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
	// The first column that does not fit ends the choice, so columns
	// drop in one order at every width.
	full := false
	try := func(cells int, set func()) {
		if full || cells <= 0 {
			return
		}
		if used+1+cells > w {
			full = true
			return
		}
		used += 1 + cells
		set()
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

// devicesPane lists the accelerators (MIG instances under their GPU) with
// their bars, figures, owner, telemetry and history, then the cpu/mem
// line. Its cursor picks the device the kernels pane follows.
type devicesPane struct {
	list
	hist *history
	// byAgent draws the bars per agent instead of per kernel (a).
	byAgent bool
	// hits marks the rows holding a kernel that matches the filter.
	hits func() []bool
}

func newDevicesPane(c *common, hist *history, moved func()) *devicesPane {
	p := &devicesPane{hist: hist}
	p.list = list{common: c, id: paneDevices, head: 1, size: func(d *derived) int { return len(d.devs) + 1 }, moved: moved}
	return p
}

func (p *devicesPane) owns(act action) bool { return act == actSegments }

// Bindings are the devices pane's own keys.
func (p *devicesPane) Bindings() []key.Binding { return keysFor(p.keys, actSegments) }

// Update moves the cursor and toggles the bars between kernels and agents.
func (p *devicesPane) Update(msg tea.Msg) tea.Cmd {
	if p.updateList(msg, nil) {
		return nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && p.keys.lookup(k) == actSegments {
		p.byAgent = !p.byAgent
	}
	return nil
}

// Title names the pane and counts its devices.
func (p *devicesPane) Title() []span {
	return paneTitle(p.id, p.focused, strconv.Itoa(max(p.Len()-1, 0)))
}

func (p *devicesPane) tab() span { return tabSpan(p.id, lvlDim, max(p.Len()-1, 0)) }

// Selected is the selected device's id; the cpu/mem line has none.
func (p *devicesPane) Selected() string {
	if p.d != nil && p.cursor < len(p.d.devs) {
		return string(p.d.devs[p.cursor].key.ID)
	}
	return ""
}

func (p *devicesPane) detailFor() (*detail, string) {
	if p.d == nil {
		return nil, ""
	}
	if p.cursor >= len(p.d.devs) {
		h := &p.d.host
		return nil, "cpu and memory: " + h.cpuHeld + "/" + h.cpuCap + " cores, " + h.memHeld + "/" + h.memCap + " held"
	}
	return &detail{kind: detDevice, dev: p.d.devs[p.cursor].key}, ""
}

// View draws title, column header and rows.
func (p *devicesPane) View() []string { return p.viewTitled(p.Title()) }

func (p *devicesPane) viewTitled(title []span) []string {
	info := []span{{lvlDim, "bars per kernel"}}
	if p.byAgent {
		info = []span{{lvlDim, "bars per agent"}}
	}
	var c devCols
	if p.d != nil {
		c = deviceColumns(p.w, p.d.devMeas)
	}
	return p.frame(title, info, p.d != nil, "no snapshot yet",
		func() []string { return []string{deviceHeaderRow(p.st, c, p.byAgent, p.w)} },
		nil,
		func(i int, out []string) []string {
			sel := p.focused && i == p.cursor
			// The cursor mark stays whether or not the kernels follow it
			// and whichever pane has focus: keys (enter, f) still act on it.
			mark := i == p.cursor
			if i == len(p.d.devs) {
				return append(out, hostRowOf(p.st, &p.d.host, c, p.w, sel, mark))
			}
			r := &p.d.devs[i]
			hit := false
			if p.hits != nil {
				hs := p.hits()
				hit = i < len(hs) && hs[i]
			}
			return append(out, deviceRowOf(p.st, r, (*p.hist)[r.key], c, p.byAgent, p.w, sel, mark, hit))
		})
}

// devicesWant is the rows the devices pane would like: its column header,
// the devices and the CPU row (two before the first snapshot).
func devicesWant(a *App) int {
	if a.d == nil {
		return 2
	}
	return len(a.d.devs) + 2
}

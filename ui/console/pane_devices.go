package console

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// devCols are the widths of the device row's columns; 0 hides a column.
type devCols struct {
	Label, bar, Figs, Owner, Util, Mem, Temp, Power, sparkA, sparkU, Abbrev, Model int
	memLong                                                                        bool
	// figsTitle: DevMeasures.FigsTitle ("SHARES" when not measured).
	figsTitle string
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
func deviceColumns(w int, m render.DevMeasures) devCols {
	c := devCols{Label: m.Label, Figs: m.Figs, bar: barMin, figsTitle: m.FigsTitle}
	used := 2 + c.Label + 1 + c.bar + 1 + c.Figs
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
	try(m.Owner, func() { c.Owner = m.Owner })
	try(4, func() { c.Util = 4 })
	try(6, func() { c.Mem = 6 })
	try(4, func() { c.Temp = 4 })
	try(5, func() { c.Power = 5 })
	try(sparkMin, func() { c.sparkA = sparkMin })
	if c.Mem > 0 && used+4 <= w {
		used += 4
		c.Mem, c.memLong = 10, true
	}
	// A readable bar before history and identity columns.
	grow(&c.bar, barComfort)
	try(sparkMin, func() { c.sparkU = sparkMin })
	try(m.Abbrev, func() { c.Abbrev = m.Abbrev })
	try(m.Model, func() { c.Model = m.Model })
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
	// geoms, when set, collects the sparklines' shapes (App.geoms).
	geoms *[]graphGeom
}

func newDevicesPane(c *common, hist *history, moved func()) *devicesPane {
	p := &devicesPane{hist: hist}
	p.list = list{common: c, ID: paneDevices, head: 1, Size: func(d *render.Derived) int { return len(d.Devs) + 1 }, moved: moved}
	return p
}

// Owns reports the keys the devices pane handles from any pane.
func (p *devicesPane) Owns(act kit.Action) bool { return act == ActSegments }

// Bindings are the devices pane's own keys.
func (p *devicesPane) Bindings() []key.Binding { return keysFor(p.Keys, ActSegments) }

// Update moves the cursor and toggles the bars between kernels and agents.
func (p *devicesPane) Update(msg tea.Msg) tea.Cmd {
	if p.updateList(msg, nil) {
		return nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && p.Keys.Lookup(k) == ActSegments {
		p.byAgent = !p.byAgent
	}
	return nil
}

// Title names the pane and counts its devices.
func (p *devicesPane) Title() []kit.Span {
	return paneTitle(p.ID, p.focused, strconv.Itoa(max(p.Len()-1, 0)))
}

func (p *devicesPane) tab() kit.Span { return tabSpan(p.ID, kit.LvlDim, max(p.Len()-1, 0)) }

// Selected is the selected device's id; the cpu/mem line has none.
func (p *devicesPane) Selected() string {
	if p.d != nil && p.Cursor < len(p.d.Devs) {
		return string(p.d.Devs[p.Cursor].Key.ID)
	}
	return ""
}

func (p *devicesPane) detailFor() (*detail, string) {
	if p.d == nil {
		return nil, ""
	}
	if p.Cursor >= len(p.d.Devs) {
		h := &p.d.Host
		return nil, "cpu and memory: " + h.CPUHeld + "/" + h.CPUCap + " cores, " + h.MemHeld + "/" + h.MemCap + " held"
	}
	return &detail{Kind: detDevice, Dev: p.d.Devs[p.Cursor].Key}, ""
}

// View draws title, column header and rows.
func (p *devicesPane) View() []string { return p.viewTitled(p.Title()) }

func (p *devicesPane) viewTitled(title []kit.Span) []string {
	info := []kit.Span{{Lvl: kit.LvlDim, Text: "bars per kernel"}}
	if p.byAgent {
		info = []kit.Span{{Lvl: kit.LvlDim, Text: "bars per agent"}}
	}
	var c devCols
	if p.d != nil {
		c = deviceColumns(p.W, p.d.DevMeas)
	}
	return p.frame(title, info, p.d != nil, "no snapshot yet",
		func() []string { return []string{deviceHeaderRow(p.St, c, p.byAgent, p.W)} },
		nil,
		func(i int, out []string) []string {
			sel := p.focused && i == p.Cursor
			// The cursor mark stays whether or not the kernels follow it
			// and whichever pane has focus: keys (enter, f) still act on it.
			mark := i == p.Cursor
			if i == len(p.d.Devs) {
				return append(out, hostRowOf(p.St, &p.d.Host, c, p.W, sel, mark))
			}
			r := &p.d.Devs[i]
			hit := false
			if p.hits != nil {
				hs := p.hits()
				hit = i < len(hs) && hs[i]
			}
			dh := (*p.hist)[r.Key]
			in := devRowIn{st: p.St, gen: p.d.Gen, tele: r.Tele, c: c, w: p.W}
			for k, f := range []bool{p.byAgent, sel, mark, hit} {
				if f {
					in.flags |= 1 << k
				}
			}
			if dh != nil && c.sparkA > 0 {
				in.sparkA = sparkline(&dh.alloc, c.sparkA, p.St.G.Spark)
				noteGeom(p.geoms, graphGeom{c.sparkA, 1})
			}
			if dh != nil && c.sparkU > 0 {
				in.sparkU = sparkline(&dh.Util, c.sparkU, p.St.G.Spark)
				noteGeom(p.geoms, graphGeom{c.sparkU, 1})
			}
			return append(out, p.memo.devRow(i, in, func() string {
				return deviceRowOf(p.St, r, dh, c, p.byAgent, p.W, sel, mark, hit)
			}))
		})
}

// devicesWant is the rows the devices pane would like: its column header,
// the devices and the CPU row (two before the first snapshot).
func devicesWant(a *App) int {
	if a.d == nil {
		return 2
	}
	return len(a.d.Devs) + 2
}

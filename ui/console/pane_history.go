package console

import (
	"math"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/ui/kit"
)

// historyPane is the history graphs: the selected device's allocation,
// utilisation and memory over the last minutes, large, each with a y scale
// and a time axis and side by side, so "allocated 100 % but idle" shows at a
// glance; and, when there is room, a small graph of every device
// (allocated left, used right). It draws what the console's history
// recorded (one sample a second of snapshot time) and keeps no state of
// its own beyond its size and selection, so the root can build one per
// frame.
type historyPane struct {
	*common
	hist history
	// rec, when set, is the span drawn from the record instead of the
	// live minutes.
	rec  *recSpan
	W, H int
	sel  int // index into d.devs of the device the big graph shows
	// geoms, when set, collects the shapes of the graphs drawn from the
	// live rings (App.geoms).
	geoms *[]graphGeom
	// end labels the newest column of the big graph's time axis: the
	// moment the console shows when it is in the past ("": now).
	end string
}

// drawn notes a graph drawn from the live rings.
func (p *historyPane) drawn(cols, perCol int) { noteGeom(p.geoms, graphGeom{cols, perCol}) }

// Sizes the arrangement needs: a big graph's panel (label, at least two
// plot rows, time axis) plus the pane's title, and a small multiple (label
// and two plot rows).
const (
	bigMinH   = 6
	bigMaxH   = 16
	panelMinW = kit.YLabelW + 1 + 16
	panelGap  = 2
	miniMinH  = 3
	miniMinW  = 24
	miniGap   = 2
	maxPanels = 3
)

func newHistoryPane(c *common, h history, rec *recSpan) historyPane {
	return historyPane{common: c, hist: h, rec: rec}
}

// spanInfo is how the titles name the span: "last 5m" of live samples, or
// "last 1d, from the record".
func (p *historyPane) spanInfo(live string) string {
	if p.rec != nil {
		return "last " + p.rec.name + ", from the record"
	}
	return "last " + live
}

// SetSize sets the pane's size in cells.
func (p *historyPane) SetSize(w, h int) { p.W, p.H = max(w, 0), max(h, 0) }

// Select makes the device row i (an index into the derived devices, as the
// devices pane's cursor is) the one the big graph shows; a row without
// history (the cpu/mem line) shows the first device.
func (p *historyPane) Select(i int) { p.sel = i }

// View draws the pane: exactly h rows of w cells.
func (p *historyPane) View() []string {
	w, h := p.W, p.H
	if h == 0 {
		return nil
	}
	devs := p.devices()
	if len(devs) == 0 {
		out := []string{kit.TitleRowOf(p.St, w, []kit.Span{{Lvl: kit.LvlTitle, Text: " History "}}, nil, 0, 0, 0)}
		if h > 1 {
			l := kit.NewLine(kit.Paint{})
			l.Gap(2)
			l.Cell(p.St.Dim, "no accelerator history yet", w-2, false, p.St.G.Ellipsis)
			out = append(out, l.Finish(w))
		}
		return padRows(out, w, h)
	}
	sel := devs[0]
	for _, i := range devs {
		if i == p.sel {
			sel = i
		}
	}
	switch {
	case len(devs) > 1 && w >= wideWidth:
		// Beside the wide layout's columns: the big graph under devices
		// and kernels, the small multiples under agents and issues.
		lw := wideSplit(w)
		rw := w - lw - 1
		left, right := p.viewBig(sel, lw, h), p.viewSmall(devs, sel, rw, h)
		return p.memo.joined("history", p.St, [][]string{left, right}, nil, []int{w, h}, func() []string {
			sep := p.St.Border.Render(p.St.G.Sep)
			out := make([]string, h)
			for i := range out {
				out[i] = left[i] + sep + right[i]
			}
			return out
		})
	case len(devs) > 1 && h >= bigMinH+1+miniMinH:
		smallH := 1 + miniRows(len(devs), w)*miniMinH
		bigH := max(bigMinH, min(h-smallH, bigMaxH))
		if h-bigH < 1+miniMinH {
			return p.viewBig(sel, w, h)
		}
		return append(p.viewBig(sel, w, bigH), p.viewSmall(devs, sel, w, h-bigH)...)
	}
	return p.viewBig(sel, w, h)
}

// devices are the device rows with history, in the devices pane's order.
func (p *historyPane) devices() []int {
	if p.d == nil {
		return nil
	}
	var out []int
	for i := range p.d.Devs {
		if p.hist[p.d.Devs[i].Key] != nil {
			out = append(out, i)
		}
	}
	return out
}

// viewBig is the selected device's graphs: a title row, then allocation,
// utilisation and memory panels side by side, as many as fit (allocation
// and utilisation first: they are the comparison that matters).
func (p *historyPane) viewBig(i, w, h int) []string {
	st := p.St
	r := &p.d.Devs[i]
	dh := p.hist[r.Key]
	n := maxPanels
	for n > 1 && w < n*panelMinW+(n-1)*panelGap {
		n--
	}
	// Equal panels, so their columns stand for the same seconds.
	pw := (w - (n-1)*panelGap) / n
	pad := kit.Spaces(w - n*pw - (n-1)*panelGap)
	perCol := kit.PerColumn(kit.PanelPlotW(pw))
	if p.rec != nil {
		perCol = p.rec.perCol(kit.PanelPlotW(pw))
	}
	title := []kit.Span{{Lvl: kit.LvlTitle, Text: " History of "}, {Lvl: kit.LvlAccent, Text: r.Label}, {Lvl: kit.LvlTitle, Text: " "},
		{Lvl: kit.LvlDim, Text: p.spanInfo(fmtSpan(kit.PanelPlotW(pw)*perCol)) + ", " + fmtSpan(perCol) + " a column"}}
	if h <= 1 {
		return []string{kit.TitleRowOf(st, w, title[:3], title[3:], 0, 0, 0)}[:h]
	}
	figLvl := kit.LvlPlain
	if r.Over {
		figLvl = kit.LvlCrit
	}
	series := []kit.GraphSeries{
		{Name: "ALLOC", Lvl: kit.LvlAlloc, Now: []kit.Span{{Lvl: figLvl, Text: r.Held + "/" + r.Capacity}, {Lvl: kit.LvlDim, Text: " held "}, {Lvl: figLvl, Text: pct(dh.alloc.last())}}},
		{Name: "UTIL", Lvl: kit.LvlUtil, Now: []kit.Span{{Lvl: r.Tele.Util.Lvl, Text: pct(dh.Util.last())}, {Lvl: kit.LvlDim, Text: " GPU busy"}}},
		{Name: "MEM", Lvl: kit.LvlMem, Now: []kit.Span{{Lvl: r.Tele.Mem.Lvl, Text: r.Tele.Mem.Text}, {Lvl: kit.LvlDim, Text: " used " + pct(dh.Mem.last())}}},
	}
	for k := range series {
		series[k].End = p.end
	}
	rings := []*ring{&dh.alloc, &dh.Util, &dh.Mem}
	panels := make([][]string, n)
	for k := range panels {
		vals := make([]float32, kit.PanelPlotW(pw))
		if p.rec != nil {
			p.rec.columns(vals, r.Key, k)
		} else {
			rings[k].columns(vals, dh.sec, perCol)
			p.drawn(len(vals), perCol)
		}
		series[k].Vals = vals
		panels[k] = p.memo.graphPanel(graphKey{r.Key, k}, st, series[k], pw, h-1, perCol)
	}
	return p.memo.joined("big", st, panels, title, []int{w, h}, func() []string {
		out := make([]string, 0, h)
		out = append(out, kit.TitleRowOf(st, w, title[:3], title[3:], 0, 0, 0))
		gap := kit.Spaces(panelGap)
		for row := range h - 1 {
			var b strings.Builder
			for k := range n {
				if k > 0 {
					b.WriteString(gap)
				}
				b.WriteString(panels[k][row])
			}
			b.WriteString(pad)
			out = append(out, b.String())
		}
		return out
	})
}

// miniRows is how many rows of small multiples n devices take at width w.
func miniRows(n, w int) int {
	cols := miniCols(n, w)
	return (n + cols - 1) / cols
}

// miniCols is how many small multiples sit side by side at width w.
func miniCols(n, w int) int {
	return max(1, min(n, (w+miniGap)/(miniMinW+miniGap)))
}

// miniColsIn is how many small multiples of devs sit side by side in w
// by h cells: as many as fit (miniCols), or fewer, wider ones where those
// show every label whole beside its figure ("MIG 7/0 100%": three cells 25
// wide cut it "MIG 7… 100%" at 200 columns) and all their rows still fit
// in h. Where they would not, the labels give way (80 columns).
func (p *historyPane) miniColsIn(devs []int, w, h int) int {
	n := len(devs)
	cols := miniCols(n, w)
	label := 0
	for _, i := range devs {
		label = max(label, kit.Width(p.d.Devs[i].Label))
	}
	// The left half's title: the mark, the label, a space, "100%".
	need := 2*(1+label+1+len("100%")) + 1
	whole := max(1, min(n, (w+miniGap)/(max(miniMinW, need)+miniGap)))
	if whole < cols && (n+whole-1)/whole*miniMinH <= h-1 {
		return whole
	}
	return cols
}

// viewSmall is every device's small graph in a grid under a title row,
// the selected one marked; when not all fit, the rows around the selected
// one.
func (p *historyPane) viewSmall(devs []int, sel, w, h int) []string {
	st := p.St
	cols := p.miniColsIn(devs, w, h)
	rows := (len(devs) + cols - 1) / cols
	ch := miniMinH
	if rows > 0 {
		ch = max(miniMinH, (h-1)/rows)
	}
	shown := min(rows, max((h-1)/ch, 0))
	first := 0
	for k, i := range devs {
		if i == sel {
			first = max(0, k/cols-shown+1)
		}
	}
	info := []kit.Span{{Lvl: kit.LvlAlloc, Text: "allocated"}, {Lvl: kit.LvlDim, Text: " " + st.G.Sep + " "}, {Lvl: kit.LvlUtil, Text: "GPU busy"}, {Lvl: kit.LvlDim, Text: ", " + p.spanInfo("5m")}}
	title := []kit.Span{{Lvl: kit.LvlTitle, Text: " All devices "}, {Lvl: kit.LvlDim, Text: "(" + strconv.Itoa(len(devs)) + ") "}}
	cw := (w - (cols-1)*miniGap) / cols
	pw := kit.MiniPlotW(cw)
	perCol := kit.PerColumn(pw)
	alloc, util := make([]float32, pw), make([]float32, pw)
	// "alloc" when every cell's left half has room for it (one wording
	// for the grid); the title names both halves in any case.
	word := " alloc "
	for _, i := range devs {
		if kit.Width(p.d.Devs[i].Label)+len(word)+len("100%") > pw-1 {
			word = " "
		}
	}
	var cells [][]string
	for k := first * cols; k < min((first+shown)*cols, len(devs)); k++ {
		r := &p.d.Devs[devs[k]]
		dh := p.hist[r.Key]
		if p.rec != nil {
			p.rec.columns(alloc, r.Key, 0)
			p.rec.columns(util, r.Key, 1)
		} else {
			dh.alloc.columns(alloc, dh.sec, perCol)
			dh.Util.columns(util, dh.sec, perCol)
			p.drawn(len(alloc), perCol)
		}
		// The label gives way, never the figure: "MIG 7/0 100%" in 11
		// cells was "MIG 7/0 10…", which reads as 10 %.
		label, figure := r.Label, pct(dh.alloc.last())
		if room := pw - 1 - kit.Width(word) - kit.Width(figure); kit.Width(label) > room {
			label = kit.Truncate(label, room, st.G.Ellipsis)
		}
		left := []kit.Span{{Lvl: kit.LvlPlain, Text: label}, {Lvl: kit.LvlDim, Text: word}, {Lvl: kit.LvlAlloc, Text: figure}}
		right := []kit.Span{{Lvl: kit.LvlDim, Text: " busy "}, {Lvl: kit.LvlUtil, Text: pct(dh.Util.last())}}
		if devs[k] == sel {
			left[0].Lvl = kit.LvlAccent
		}
		if r.Over {
			left[2].Lvl = kit.LvlCrit
		}
		cells = append(cells, p.memo.miniGraph(graphKey{r.Key, -1}, st, left, right, alloc, util, cw, ch, devs[k] == sel))
	}
	return p.memo.joined("small", st, cells, append(title, info...), []int{w, h, rows, shown, first, len(title)}, func() []string {
		out := []string{kit.TitleRowOf(st, w, title, info, rows, shown, first)}
		gap := kit.Spaces(miniGap)
		for gr := 0; gr*cols < len(cells); gr++ {
			row := cells[gr*cols : min((gr+1)*cols, len(cells))]
			for line := range ch {
				var b strings.Builder
				used := 0
				for c, cell := range row {
					if c > 0 {
						b.WriteString(gap)
						used += miniGap
					}
					b.WriteString(cell[line])
					used += cw
				}
				b.WriteString(kit.Spaces(w - used))
				out = append(out, b.String())
			}
		}
		return padRows(out, w, h)
	})
}

// padRows makes rows exactly h rows of w cells, adding blank rows.
func padRows(rows []string, w, h int) []string {
	for len(rows) < h {
		rows = append(rows, kit.Spaces(w))
	}
	return rows[:h]
}

// pct is a reading as a whole percentage, "n/a" for no reading.
func pct(v float32) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	switch p := float64(v) * 100; {
	case p >= 1e6:
		// Past what a column says (and past any int: 1e23 shares).
		return ">999999%"
	case p <= -1e6:
		return "<-999999%"
	}
	return strconv.Itoa(int(math.Round(float64(v)*100))) + "%"
}

// fmtSpan is a duration in seconds the way the time axis says it: "5m",
// "5m20s", "45s".
func fmtSpan(sec int) string {
	switch {
	case sec < 60:
		return strconv.Itoa(sec) + "s"
	case sec%60 == 0:
		return strconv.Itoa(sec/60) + "m"
	}
	return strconv.Itoa(sec/60) + "m" + strconv.Itoa(sec%60) + "s"
}

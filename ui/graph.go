package ui

import (
	"math"
	"strconv"
	"strings"
)

// The history graphs' pure renderers: values, sizes and styles in, rows of
// exactly the asked width and height out. The history pane
// (pane_history.go) picks the data and arranges them.

// The series' colours (and, in the small multiples, their side: allocated
// left, used right, so they read apart without colour too). Not info for
// utilisation: built-in themes give info and accent the same colour.
const (
	lvlAlloc = lvlAccent
	lvlUtil  = lvlOK
	lvlMem   = lvlPlain
)

// graphWindow is how many seconds of history a graph means to show.
const graphWindow = 300

// yLabelW is the width of the y scale's labels ("100%").
const yLabelW = 4

// perColumn is how many seconds one column of a plot cols wide stands for,
// so that the plot covers at least graphWindow seconds.
func perColumn(cols int) int {
	if cols <= 0 {
		return graphWindow
	}
	return max(1, (graphWindow+cols-1)/cols)
}

// plotRows draws vals (0..1 each, NaN for no reading) as an area graph h
// rows high, top row first, every row len(vals) one-cell glyphs. levels are
// a cell's fill from empty to full (the glyph set's Spark: eighth blocks,
// or 7-bit stand-ins). A reading rounds to at least the lowest level, so
// an idle device draws a floor line on the bottom row while a missing
// reading leaves its column blank: a gap, never a zero.
func plotRows(vals []float32, h int, levels []string) []string {
	if h <= 0 {
		return nil
	}
	rows := make([]string, h)
	if len(levels) < 2 {
		for k := range rows {
			rows[k] = spaces(len(vals))
		}
		return rows
	}
	steps := len(levels) - 1
	total := h * steps
	units := make([]int, len(vals))
	for i, v := range vals {
		if math.IsNaN(float64(v)) {
			continue
		}
		units[i] = max(1, min(total, int(math.Round(float64(v)*float64(total)))))
	}
	// One string for all rows, sliced: a tall plot is one allocation, not
	// one a row.
	var b strings.Builder
	b.Grow(h * len(vals) * len(levels[steps]))
	ends := make([]int, h)
	for k := range rows {
		base := (h - 1 - k) * steps
		for _, u := range units {
			b.WriteString(levels[max(0, min(steps, u-base))])
		}
		ends[k] = b.Len()
	}
	all, from := b.String(), 0
	for k, end := range ends {
		rows[k], from = all[from:end], end
	}
	return rows
}

// allNaN says whether no value is a reading.
func allNaN(vals []float32) bool {
	for _, v := range vals {
		if !math.IsNaN(float64(v)) {
			return false
		}
	}
	return true
}

// yLabels are the y scale's labels beside a plot h rows high, by row (top
// first), blank where a row has none: 100 % on the top row, 0 % on the
// bottom row, 50 % on the row whose top edge is half way, and the
// quarters when the plot is tall enough to keep them apart.
func yLabels(h int) []string {
	out := make([]string, h)
	for k := range out {
		out[k] = spaces(yLabelW)
	}
	if h <= 0 {
		return out
	}
	marks := []int{50}
	if h >= 9 {
		marks = []int{75, 50, 25}
	}
	if h >= 4 {
		for _, p := range marks {
			k := int(math.Round(float64(h) * float64(100-p) / 100))
			if k > 0 && k < h-1 {
				out[k] = fit(strconv.Itoa(p)+"%", yLabelW, true, "")
			}
		}
	}
	out[0] = "100%"
	if h > 1 {
		out[h-1] = "  0%"
	}
	return out
}

// tickSteps are the time axis's candidate tick intervals, in seconds.
var tickSteps = []int{10, 15, 30, 60, 120, 300, 600, 1800, 3600}

// timeAxis is the x axis under a plot cols wide whose columns stand for
// perCol seconds each: "now" under the newest column and a tick label
// ("-1m", "-30s") starting at the column of each whole interval ago, as
// many as fit without touching. Exactly cols cells, 7-bit.
func timeAxis(cols, perCol int) string {
	if cols <= 0 {
		return ""
	}
	b := []byte(spaces(cols))
	now := "now"
	limit := cols // labels end before this column
	if cols >= len(now) {
		copy(b[cols-len(now):], now)
		limit = cols - len(now) - 1
	}
	perCol = max(perCol, 1)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if s >= perCol && s/perCol >= 6 {
			step = s
			break
		}
	}
	for ago := step; ; ago += step {
		c := cols - 1 - ago/perCol
		if c < 0 {
			break
		}
		if ago > 60 && ago%60 != 0 {
			continue // past a minute, whole minutes only ("-90s" reads badly)
		}
		var t string
		if ago%60 == 0 {
			t = "-" + strconv.Itoa(ago/60) + "m"
		} else {
			t = "-" + strconv.Itoa(ago) + "s"
		}
		if c+len(t) > limit {
			continue
		}
		copy(b[c:], t)
		limit = c - 1
	}
	return string(b)
}

// graphSeries is one series of a device's history as a panel draws it.
type graphSeries struct {
	name string    // "ALLOC"
	now  []span    // the current reading, after the name
	lvl  level     // the series' colour
	vals []float32 // one per plot column, oldest first
}

// panelPlotW is the plot width of a graph panel w cells wide: what the y
// scale and its axis leave.
func panelPlotW(w int) int { return max(w-yLabelW-1, 0) }

// graphPanel draws one series in exactly h rows of w cells: its name and
// current reading, then the plot with a y scale (0/50/100 %) and under it
// the time axis. The series' values must be panelPlotW(w) long. Panels
// smaller than 4 rows or yLabelW+2 columns are left blank.
func graphPanel(st *Styles, s graphSeries, w, h, perCol int) []string {
	out := make([]string, 0, max(h, 0))
	pw := panelPlotW(w)
	if h < 4 || pw < 1 {
		for range max(h, 0) {
			out = append(out, spaces(max(w, 0)))
		}
		return out
	}
	p := st.level(s.lvl)
	l := newLine(paint{})
	putSpans(l, st, append([]span{{s.lvl, s.name}, {lvlDim, " "}}, s.now...), w)
	out = append(out, l.finish(w))
	plotH := h - 2
	plot := plotRows(s.vals, plotH, st.G.Spark)
	if allNaN(s.vals) {
		plot[plotH/2] = fit(center("no readings", pw), pw, false, "")
	}
	labels := yLabels(plotH)
	for k, row := range plot {
		l := newLine(paint{})
		l.putW(st.Dim, labels[k], yLabelW)
		l.putW(st.Border, st.G.Sep, 1)
		if allNaN(s.vals) {
			l.putW(st.Dim, row, pw)
		} else {
			l.putW(p, row, pw)
		}
		out = append(out, l.finish(w))
	}
	l = newLine(paint{})
	l.gap(yLabelW + 1)
	l.putW(st.Dim, timeAxis(pw, perCol), pw)
	return append(out, l.finish(w))
}

// center pads s with spaces on the left to sit in the middle of w cells.
func center(s string, w int) string {
	return spaces((w-width(s))/2) + s
}

// miniGraph draws a small multiple in exactly h rows of w cells: a label
// row, then allocation and utilisation plots side by side, without scales
// (the big graph has them). A divider runs between the two halves, label
// row included, so they read as two graphs, not one timeline with two
// bursts; left labels the allocation half (the device and its share held),
// right the utilisation half. alloc and util must be miniPlotW(w) long.
func miniGraph(st *Styles, left, right []span, alloc, util []float32, w, h int, marked bool) []string {
	out := make([]string, 0, max(h, 0))
	if h <= 0 || w <= 0 {
		return out
	}
	pw := miniPlotW(w)
	l := newLine(paint{})
	if marked {
		l.putW(st.Accent, st.G.Cursor, 1)
	} else {
		l.gap(1)
	}
	if pw < 2 {
		putSpans(l, st, append(append([]span{}, left...), right...), w-1)
		out = append(out, l.finish(w))
	} else {
		putSpans(l, st, left, pw-1)
		l.gap(pw - l.w)
		l.putW(st.Border, st.G.Sep, 1)
		putSpans(l, st, right, w-l.w)
		out = append(out, l.finish(w))
	}
	a := plotRows(alloc, h-1, st.G.Spark)
	u := plotRows(util, h-1, st.G.Spark)
	for k := range h - 1 {
		l := newLine(paint{})
		l.putW(st.level(lvlAlloc), a[k], pw)
		if pw > 0 {
			l.putW(st.Border, st.G.Sep, 1)
		} else {
			l.gap(1)
		}
		l.putW(st.level(lvlUtil), u[k], pw)
		out = append(out, l.finish(w))
	}
	return out
}

// miniPlotW is the width of each of a small multiple's two plots.
func miniPlotW(w int) int { return max((w-1)/2, 0) }

package kit

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
	LvlAlloc = LvlAccent
	LvlUtil  = LvlOK
	LvlMem   = LvlPlain
)

// graphWindow is how many seconds of history a graph means to show.
const graphWindow = 300

// YLabelW is the width of the y scale's labels ("100%").
const YLabelW = 4

// PerColumn is how many seconds one column of a plot cols wide stands for,
// so that the plot covers at least graphWindow seconds.
func PerColumn(cols int) int {
	if cols <= 0 {
		return graphWindow
	}
	return max(1, (graphWindow+cols-1)/cols)
}

// PlotRows draws vals (0..1 each, NaN for no reading) as an area graph h
// rows high, top row first, every row len(vals) one-cell glyphs. levels are
// a cell's fill from empty to full (the glyph set's Spark: eighth blocks,
// or 7-bit stand-ins). A reading rounds to at least the lowest level, so
// an idle device draws a floor line on the bottom row while a missing
// reading leaves its column blank: a gap, never a zero.
func PlotRows(vals []float32, h int, levels []string) []string {
	if h <= 0 {
		return nil
	}
	rows := make([]string, h)
	if len(levels) < 2 {
		for k := range rows {
			rows[k] = Spaces(len(vals))
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
		// Clamped before the conversion: a reading past any int (an
		// amount of 1e23 shares) converts to the lowest one.
		units[i] = max(1, int(math.Round(math.Min(float64(v)*float64(total), float64(total)))))
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

// AllNaN says whether no value is a reading.
func AllNaN(vals []float32) bool {
	for _, v := range vals {
		if !math.IsNaN(float64(v)) {
			return false
		}
	}
	return true
}

// YLabels are the y scale's labels beside a plot h rows high, by row (top
// first), blank where a row has none: 100 % on the top row, 0 % on the
// bottom row, 50 % on the row whose top edge is half way, and the
// quarters when the plot is tall enough to keep them apart.
func YLabels(h int) []string {
	out := make([]string, h)
	for k := range out {
		out[k] = Spaces(YLabelW)
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
				out[k] = Fit(strconv.Itoa(p)+"%", YLabelW, true, "")
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
var tickSteps = []int{10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 4 * 3600, 6 * 3600, 12 * 3600, 86400}

// TimeAxis is the x axis under a plot cols wide whose columns stand for
// perCol seconds each: "now" under the newest column and a tick label
// ("-1m", "-30s") starting at the column of each whole interval ago, as
// many as fit without touching. Exactly cols cells, 7-bit.
func TimeAxis(cols, perCol int) string { return TimeAxisEnding(cols, perCol, "") }

// TimeAxisEnding is TimeAxis with end ("" is "now") under the newest
// column: a console shown at a past moment labels it with that moment,
// the ticks counting back from it.
func TimeAxisEnding(cols, perCol int, end string) string {
	if cols <= 0 {
		return ""
	}
	b := []byte(Spaces(cols))
	now := "now"
	if end != "" {
		now = end
	}
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
		switch {
		case ago%86400 == 0:
			t = "-" + strconv.Itoa(ago/86400) + "d"
		case ago >= 3600 && ago%3600 == 0:
			t = "-" + strconv.Itoa(ago/3600) + "h"
		case ago%60 == 0:
			t = "-" + strconv.Itoa(ago/60) + "m"
		default:
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

// GraphSeries is one series of a device's history as a panel draws it.
type GraphSeries struct {
	Name string    // "ALLOC"
	Now  []Span    // the current reading, after the name
	Lvl  Level     // the series' colour
	Vals []float32 // one per plot column, oldest first
	End  string    // the newest column's label on the time axis ("": now)
}

// PanelPlotW is the plot width of a graph panel w cells wide: what the y
// scale and its axis leave.
func PanelPlotW(w int) int { return max(w-YLabelW-1, 0) }

// GraphPanel draws one series in exactly h rows of w cells: its name and
// current reading, then the plot with a y scale (0/50/100 %) and under it
// the time axis. The series' values must be panelPlotW(w) long. Panels
// smaller than 4 rows or yLabelW+2 columns are left blank.
func GraphPanel(st *Styles, s GraphSeries, w, h, perCol int) []string {
	out := make([]string, 0, max(h, 0))
	pw := PanelPlotW(w)
	if h < 4 || pw < 1 {
		for range max(h, 0) {
			out = append(out, Spaces(max(w, 0)))
		}
		return out
	}
	p := st.Level(s.Lvl)
	l := NewLine(Paint{})
	PutSpans(l, st, append([]Span{{s.Lvl, s.Name}, {LvlDim, " "}}, s.Now...), w)
	out = append(out, l.Finish(w))
	plotH := h - 2
	plot := PlotRows(s.Vals, plotH, st.G.Spark)
	if AllNaN(s.Vals) {
		plot[plotH/2] = Fit(center("no readings", pw), pw, false, "")
	}
	labels := YLabels(plotH)
	for k, row := range plot {
		l := NewLine(Paint{})
		l.PutW(st.Dim, labels[k], YLabelW)
		l.PutW(st.Border, st.G.Sep, 1)
		if AllNaN(s.Vals) {
			l.PutW(st.Dim, row, pw)
		} else {
			l.PutW(p, row, pw)
		}
		out = append(out, l.Finish(w))
	}
	l = NewLine(Paint{})
	l.Gap(YLabelW + 1)
	l.PutW(st.Dim, TimeAxisEnding(pw, perCol, s.End), pw)
	return append(out, l.Finish(w))
}

// center pads s with spaces on the left to sit in the middle of w cells.
func center(s string, w int) string {
	return Spaces((w-Width(s))/2) + s
}

// MiniGraph draws a small multiple in exactly h rows of w cells: a label
// row, then allocation and utilisation plots side by side, without scales
// (the big graph has them). A divider runs between the two halves, label
// row included, so they read as two graphs, not one timeline with two
// bursts; left labels the allocation half (the device and its share held),
// right the utilisation half. alloc and util must be miniPlotW(w) long.
func MiniGraph(st *Styles, left, right []Span, alloc, util []float32, w, h int, marked bool) []string {
	out := make([]string, 0, max(h, 0))
	if h <= 0 || w <= 0 {
		return out
	}
	pw := MiniPlotW(w)
	l := NewLine(Paint{})
	if marked {
		l.PutW(st.Accent, st.G.Cursor, 1)
	} else {
		l.Gap(1)
	}
	if pw < 2 {
		PutSpans(l, st, append(append([]Span{}, left...), right...), w-1)
		out = append(out, l.Finish(w))
	} else {
		PutSpans(l, st, left, pw-1)
		l.Gap(pw - l.W)
		l.PutW(st.Border, st.G.Sep, 1)
		PutSpans(l, st, right, w-l.W)
		out = append(out, l.Finish(w))
	}
	a := PlotRows(alloc, h-1, st.G.Spark)
	u := PlotRows(util, h-1, st.G.Spark)
	for k := range h - 1 {
		l := NewLine(Paint{})
		l.PutW(st.Level(LvlAlloc), a[k], pw)
		if pw > 0 {
			l.PutW(st.Border, st.G.Sep, 1)
		} else {
			l.Gap(1)
		}
		l.PutW(st.Level(LvlUtil), u[k], pw)
		out = append(out, l.Finish(w))
	}
	return out
}

// MiniPlotW is the width of each of a small multiple's two plots.
func MiniPlotW(w int) int { return max((w-1)/2, 0) }

package console

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

var nan32 = float32(math.NaN())

// checkBox fails unless rows are exactly h rows of w cells (escapes
// aside), and, for ASCII styles, 7-bit only.
func checkBox(t *testing.T, rows []string, w, h int, ascii bool) {
	t.Helper()
	if len(rows) != h {
		t.Fatalf("%d rows, want %d", len(rows), h)
	}
	for i, r := range rows {
		plain := ansi.Strip(r)
		if got := kit.Width(plain); got != w {
			t.Errorf("row %d is %d cells, want %d: %q", i, got, w, plain)
		}
		if ascii && !kit.IsASCII(plain) {
			t.Errorf("row %d is not 7-bit in ASCII mode: %q", i, plain)
		}
	}
}

// column is column c of plot rows, top first, one glyph a row.
func column(rows []string, c int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string([]rune(r)[c])
	}
	return out
}

func TestPlotRows(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		g := kit.UnicodeGlyphs(false)
		if ascii {
			g = kit.ASCIIGlyphs()
		}
		full, floor := g.Spark[len(g.Spark)-1], g.Spark[1]
		tests := []struct {
			Name string
			Vals []float32
			H    int
			// want is each column's glyphs, top first, where set.
			want map[int][]string
		}{
			{"one cell full", []float32{1}, 1, map[int][]string{0: {full}}},
			{"full reaches the top row", []float32{0, 1, nan32}, 4,
				map[int][]string{1: {full, full, full, full}}},
			{"gap is blank, zero is a floor", []float32{nan32, 0, 0.001}, 3,
				map[int][]string{0: {" ", " ", " "}, 1: {" ", " ", floor}, 2: {" ", " ", floor}}},
			{"half fills the lower half", []float32{0.5}, 4, map[int][]string{0: {" ", " ", full, full}}},
			{"over capacity is clamped", []float32{1.7, -0.2}, 2, map[int][]string{0: {full, full}, 1: {" ", floor}}},
			{"wide and tall", make([]float32, 120), 20, nil},
		}
		for _, tt := range tests {
			t.Run(tt.Name, func(t *testing.T) {
				rows := kit.PlotRows(tt.Vals, tt.H, g.Spark)
				checkBox(t, rows, len(tt.Vals), tt.H, ascii)
				for c, want := range tt.want {
					if got := column(rows, c); strings.Join(got, "") != strings.Join(want, "") {
						t.Errorf("ascii=%v column %d = %q, want %q", ascii, c, got, want)
					}
				}
			})
		}
	}
	if rows := kit.PlotRows([]float32{1}, 0, kit.UnicodeGlyphs(false).Spark); len(rows) != 0 {
		t.Errorf("zero height: %q", rows)
	}
}

// TestPlotRowsMonotonic: a higher reading never draws less in any row.
func TestPlotRowsMonotonic(t *testing.T) {
	levels := kit.UnicodeGlyphs(false).Spark
	idx := map[string]int{}
	for i, l := range levels {
		idx[l] = i
	}
	vals := make([]float32, 101)
	for i := range vals {
		vals[i] = float32(i) / 100
	}
	for _, h := range []int{1, 3, 7, 16} {
		rows := kit.PlotRows(vals, h, levels)
		for k, r := range rows {
			rs := []rune(r)
			for c := 1; c < len(rs); c++ {
				if idx[string(rs[c])] < idx[string(rs[c-1])] {
					t.Fatalf("h=%d row %d: column %d draws less than %d: %q", h, k, c, c-1, r)
				}
			}
		}
		// 0 is a floor on the bottom row, so the top row of a one-row
		// plot shows it.
		zeroTop := " "
		if h == 1 {
			zeroTop = levels[1]
		}
		if top := []rune(rows[0]); string(top[100]) != levels[len(levels)-1] || string(top[0]) != zeroTop {
			t.Errorf("h=%d top row %q", h, rows[0])
		}
	}
}

func TestRingColumns(t *testing.T) {
	var r ring
	// 25 samples, seconds 976..1000: 0.1, 0.2, ... with two missing.
	for i := range 25 {
		v := float32(i%10) / 10
		if i == 20 || i == 21 {
			v = nan32
		}
		r.push(v)
	}
	tests := []struct {
		Name   string
		cols   int
		perCol int
		want   []float32 // NaN: no reading
	}{
		{"one second a column", 6, 1, []float32{0.9, nan32, nan32, 0.2, 0.3, 0.4}},
		{"ten seconds a column, aligned to whole tens", 4, 10, []float32{
			(0.0 + 0.1 + 0.2 + 0.3) / 4, // 976..979: samples 0..3
			(0.4 + 0.5 + 0.6 + 0.7 + 0.8 + 0.9 + 0.0 + 0.1 + 0.2 + 0.3) / 10,
			(0.4 + 0.5 + 0.6 + 0.7 + 0.8 + 0.9 + 0.2 + 0.3) / 8, // 990..999 less the two gaps
			0.4, // 1000, the newest, alone in its bucket
		}},
		{"more columns than samples", 3, 100, []float32{nan32, avgValid(&r, 0, 24), 0.4}},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			got := make([]float32, tt.cols)
			r.columns(got, 1000, tt.perCol)
			for i := range got {
				gn, wn := math.IsNaN(float64(got[i])), math.IsNaN(float64(tt.want[i]))
				if gn != wn || (!gn && math.Abs(float64(got[i]-tt.want[i])) > 1e-5) {
					t.Errorf("columns = %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
	var empty *ring
	got := []float32{1, 2}
	empty.columns(got, 0, 1)
	if !kit.AllNaN(got) {
		t.Errorf("nil ring: %v", got)
	}
}

func avgValid(r *ring, from, to int) float32 {
	var s float32
	n := 0
	for i := from; i < to; i++ {
		if v := r.at(i); !math.IsNaN(float64(v)) {
			s += v
			n++
		}
	}
	return s / float32(n)
}

func TestYLabels(t *testing.T) {
	for _, h := range []int{1, 2, 4, 5, 8, 9, 20, 37} {
		ls := kit.YLabels(h)
		if len(ls) != h {
			t.Fatalf("h=%d: %d labels", h, len(ls))
		}
		for k, l := range ls {
			if len(l) != kit.YLabelW {
				t.Errorf("h=%d row %d: %q is not %d cells", h, k, l, kit.YLabelW)
			}
			// A label names the top edge of its row (the bottom row names
			// its bottom edge).
			if p := strings.TrimSpace(strings.TrimSuffix(l, "%")); p != "" && k > 0 && k < h-1 {
				edge := 100 * float64(h-k) / float64(h)
				if math.Abs(edge-atof(p)) > 100/float64(h) {
					t.Errorf("h=%d: %q on row %d, whose top edge is %.0f%%", h, l, k, edge)
				}
			}
		}
		if ls[0] != "100%" || (h > 1 && ls[h-1] != "  0%") {
			t.Errorf("h=%d: %q", h, ls)
		}
		if h >= 4 && !strings.Contains(strings.Join(ls, ""), "50%") {
			t.Errorf("h=%d has no 50%% mark: %q", h, ls)
		}
	}
}

func atof(s string) float64 {
	var f float64
	for _, c := range s {
		f = f*10 + float64(c-'0')
	}
	return f
}

func TestTimeAxis(t *testing.T) {
	tests := []struct {
		cols, perCol int
		want         []string // labels that must show
		at           map[string]int
	}{
		{1, 300, nil, nil},
		{3, 100, []string{"now"}, nil},
		{30, 10, []string{"-1m", "-4m", "now"}, map[string]int{"-1m": 23, "-2m": 17}},
		{60, 5, []string{"-1m", "-2m", "-4m", "now"}, map[string]int{"-1m": 47}},
		{300, 1, []string{"-10s", "-4m"}, map[string]int{"-30s": 269}},
		{12, 25, []string{"now"}, nil},
		{40, 3, []string{"-30s", "-1m", "now"}, map[string]int{"-1m": 19}},
		// Spans from the record: hours and days, never "-1440m".
		{100, 864, []string{"-2h", "-22h", "now"}, map[string]int{"-2h": 91}},
		{100, 6048, []string{"-12h", "-1d", "-6d", "now"}, map[string]int{"-1d": 85}},
	}
	for _, tt := range tests {
		got := kit.TimeAxis(tt.cols, tt.perCol)
		if len(got) != tt.cols || !kit.IsASCII(got) {
			t.Errorf("timeAxis(%d, %d) = %q: want %d 7-bit cells", tt.cols, tt.perCol, got, tt.cols)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("timeAxis(%d, %d) = %q, lacks %q", tt.cols, tt.perCol, got, w)
			}
		}
		if tt.perCol > 600 && strings.Contains(got, "0m") {
			t.Errorf("timeAxis(%d, %d) = %q: minutes on a span of days", tt.cols, tt.perCol, got)
		}
		for label, c := range tt.at {
			if !strings.HasPrefix(got[c:], label) {
				t.Errorf("timeAxis(%d, %d) = %q: %q not at column %d", tt.cols, tt.perCol, got, label, c)
			}
		}
		if strings.Contains(got, "m-") || strings.Contains(got, "s-") {
			t.Errorf("timeAxis(%d, %d) = %q: labels touch", tt.cols, tt.perCol, got)
		}
	}
}

func TestGraphPanel(t *testing.T) {
	sizes := []struct{ W, H int }{{21, 4}, {40, 10}, {60, 37}, {10, 3}, {4, 8}}
	for _, ascii := range []bool{false, true} {
		st := testStyles(t, themes.Dark, ascii)
		full := st.G.Spark[len(st.G.Spark)-1]
		for _, sz := range sizes {
			pw := kit.PanelPlotW(sz.W)
			vals := make([]float32, pw)
			for i := range vals {
				vals[i] = 1
			}
			s := kit.GraphSeries{Name: "ALLOC", Lvl: kit.LvlAlloc, Now: []kit.Span{{Lvl: kit.LvlPlain, Text: "1.00/1.00"}}, Vals: vals}
			rows := kit.GraphPanel(st, s, sz.W, sz.H, kit.PerColumn(pw))
			checkBox(t, rows, sz.W, sz.H, ascii)
			if sz.H < 4 || pw < 1 {
				if strings.TrimSpace(ansi.Strip(strings.Join(rows, ""))) != "" {
					t.Errorf("%dx%d should be blank: %q", sz.W, sz.H, rows)
				}
				continue
			}
			top := ansi.Strip(rows[1])
			if !strings.HasPrefix(top, "100%"+st.G.Sep+full) {
				t.Errorf("ascii=%v %dx%d: a full series does not reach the top row: %q", ascii, sz.W, sz.H, top)
			}
			if !strings.HasPrefix(ansi.Strip(rows[0]), "ALLOC 1.00/1.00") {
				t.Errorf("label row %q", ansi.Strip(rows[0]))
			}
			if last := ansi.Strip(rows[sz.H-1]); !strings.HasSuffix(last, "now") {
				t.Errorf("time axis %q", last)
			}
			// No readings at all: said, not drawn as zero.
			for i := range vals {
				vals[i] = nan32
			}
			rows = kit.GraphPanel(st, s, sz.W, sz.H, kit.PerColumn(pw))
			checkBox(t, rows, sz.W, sz.H, ascii)
			text := ansi.Strip(strings.Join(rows[1:sz.H-1], "\n"))
			if strings.Contains(text, st.G.Spark[1]) || (pw >= 11 && !strings.Contains(text, "no readings")) {
				t.Errorf("ascii=%v %dx%d: an all-gap series:\n%s", ascii, sz.W, sz.H, text)
			}
		}
	}
}

func TestMiniGraph(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		st := testStyles(t, themes.Dark, ascii)
		for _, sz := range []struct{ W, H int }{{24, 3}, {37, 13}, {5, 2}, {1, 1}} {
			pw := kit.MiniPlotW(sz.W)
			alloc, util := make([]float32, pw), make([]float32, pw)
			for i := range alloc {
				alloc[i], util[i] = 1, nan32
			}
			left := []kit.Span{{Lvl: kit.LvlPlain, Text: "GPU0"}, {Lvl: kit.LvlDim, Text: " alloc "}, {Lvl: kit.LvlAlloc, Text: "100%"}}
			right := []kit.Span{{Lvl: kit.LvlDim, Text: " busy "}, {Lvl: kit.LvlUtil, Text: "n/a"}}
			rows := kit.MiniGraph(st, left, right, alloc, util, sz.W, sz.H, true)
			checkBox(t, rows, sz.W, sz.H, ascii)
			if sz.H < 2 || pw < 1 {
				continue
			}
			plot := ansi.Strip(rows[1])
			full := st.G.Spark[len(st.G.Spark)-1]
			// Allocated left, full to the top; a divider; used right, a gap.
			if want := kit.Repeat(full, pw) + st.G.Sep + kit.Spaces(sz.W-pw-1); plot != want {
				t.Errorf("ascii=%v %dx%d top plot row %q, want %q", ascii, sz.W, sz.H, plot, want)
			}
			// The divider runs down every row, the label row too, at the
			// same cell; each half has its label.
			for i, r := range rows {
				if got := ansi.Cut(r, pw, pw+1); ansi.Strip(got) != st.G.Sep && pw >= 2 {
					t.Errorf("ascii=%v %dx%d row %d: cell %d is %q, want the divider", ascii, sz.W, sz.H, i, pw, ansi.Strip(got))
				}
			}
			if pw >= 12 {
				lab := ansi.Strip(rows[0])
				if !strings.Contains(ansi.Cut(rows[0], 0, pw), "alloc") || !strings.Contains(lab, "busy n/a") {
					t.Errorf("ascii=%v %dx%d: labels %q", ascii, sz.W, sz.H, lab)
				}
			}
			if !strings.HasPrefix(ansi.Strip(rows[0]), st.G.Cursor) {
				t.Errorf("marked cell's label %q", ansi.Strip(rows[0]))
			}
		}
	}
}

// TestMiniGraphKeepsTheFigure: where a small graph's title does not fit,
// the device's name is cut, never its share held: "MIG 3/0 100%" in 11
// cells read "MIG 3/0 10…", as if 10 % were held.
func TestMiniGraphKeepsTheFigure(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		a := historyApp(t, 200, 60, Options{ASCII: ascii})
		var devs []int
		want := map[string]int{}
		for i := range a.d.Devs {
			if dh, ok := a.hist[a.d.Devs[i].Key]; ok {
				devs = append(devs, i)
				want[pct(dh.alloc.last())]++
			}
		}
		if want["100%"] == 0 {
			t.Fatalf("no device of the fixture is wholly held: %v", want)
		}
		for w := 50; w <= 130; w++ {
			p := newHistoryPane(a.common, a.hist, nil)
			p.SetSize(w, 60)
			text := ansi.Strip(strings.Join(p.viewSmall(devs, 0, w, 60), "\n"))
			for fig, n := range want {
				// A left half's title ends in its figure, then the divider.
				re := regexp.MustCompile(" " + regexp.QuoteMeta(fig) + " *" + regexp.QuoteMeta(a.St.G.Sep))
				if got := len(re.FindAllString(text, -1)); got != n {
					t.Errorf("ascii=%v width %d: %d titles end in %s, want %d:\n%s", ascii, w, got, fig, n, text)
				}
			}
		}
	}
}

// historyApp is the fixture node after minutes of snapshots, one every
// few seconds, with a device's allocation changing half way.
func historyApp(t *testing.T, w, h int, opts Options) *App {
	t.Helper()
	s := fake.Node(fake.Options{})
	a := testApp(t, w, h, s, opts)
	for i := 1; i <= 100; i++ {
		next := *s
		next.Time = s.Time.Add(time.Duration(3*i) * time.Second)
		feed(a, &next)
	}
	return a
}

func TestHistoryPaneView(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		a := historyApp(t, 200, 60, Options{ASCII: ascii})
		devs := len(a.hist)
		for _, sz := range []struct {
			W, H  int
			small bool
		}{{200, 40, true}, {160, 10, true}, {120, 20, true}, {120, 9, false}, {80, 10, true}, {30, 5, false}, {10, 1, false}} {
			for _, sel := range []int{0, 2, len(a.d.Devs)} {
				p := newHistoryPane(a.common, a.hist, nil)
				p.SetSize(sz.W, sz.H)
				p.Select(sel)
				rows := p.View()
				checkBox(t, rows, sz.W, sz.H, ascii)
				text := ansi.Strip(strings.Join(rows, "\n"))
				want := a.d.Devs[0].Label
				if sel < len(a.d.Devs) {
					want = a.d.Devs[sel].Label
				}
				if sz.W >= 30 && !strings.Contains(text, "History of "+want) {
					t.Errorf("ascii=%v %dx%d sel %d: the big graph is not %s:\n%s", ascii, sz.W, sz.H, sel, want, text)
				}
				if got := strings.Contains(text, "All devices ("); got != sz.small {
					t.Errorf("ascii=%v %dx%d: small multiples shown %v, want %v (%d devices):\n%s", ascii, sz.W, sz.H, got, sz.small, devs, text)
				}
			}
		}
	}
}

func TestHistoryPaneEmpty(t *testing.T) {
	a := testApp(t, 120, 40, nil, Options{})
	p := newHistoryPane(a.common, a.hist, nil)
	p.SetSize(50, 3)
	rows := p.View()
	checkBox(t, rows, 50, 3, false)
	if !strings.Contains(ansi.Strip(rows[1]), "no accelerator history") {
		t.Errorf("%q", rows)
	}
}

// TestLargeScreenIsUsed is the check on the fixture node: from
// 120×40 on the history graphs fill what the panes leave, and at 200×60 no
// more than a third of the rows are blank (nothing left once the pane
// separator and spaces are taken out); at 80×24 there are no graphs.
func TestLargeScreenIsUsed(t *testing.T) {
	for _, tt := range []struct {
		W, H, maxBlank int
		graphs         bool
	}{{80, 24, 24, false}, {120, 40, 40 / 3, true}, {200, 60, 60 / 3, true}} {
		a := historyApp(t, tt.W, tt.H, Options{})
		text := ansi.Strip(a.View().Content)
		blank := 0
		for _, row := range strings.Split(text, "\n") {
			if strings.Trim(row, " "+a.St.G.Sep) == "" {
				blank++
			}
		}
		if blank > tt.maxBlank {
			t.Errorf("%dx%d: %d blank rows, want at most %d:\n%s", tt.W, tt.H, blank, tt.maxBlank, text)
		}
		if got := strings.Contains(text, "History of "); got != tt.graphs {
			t.Errorf("%dx%d: graphs shown %v, want %v", tt.W, tt.H, got, tt.graphs)
		}
		t.Logf("%dx%d: %d blank rows", tt.W, tt.H, blank)
	}
}

// columnsRef is ring.columns as the definition says it, one bucket
// computed per sample: the mean of each perCol-second bucket ending at
// lastSec, aligned to whole multiples of perCol.
func columnsRef(r *ring, dst []float32, lastSec int64, perCol int) {
	for i := range dst {
		dst[i] = float32(math.NaN())
	}
	dst = dst[:min(len(dst), maxCols)]
	sum, count := make([]float64, len(dst)), make([]int, len(dst))
	p := int64(max(perCol, 1))
	newest := floorDiv(lastSec, p)
	for i := r.N - 1; i >= 0; i-- {
		j := int(newest - floorDiv(lastSec-int64(r.N-1-i), p))
		if j >= len(dst) {
			break
		}
		if v := r.at(i); !math.IsNaN(float64(v)) {
			sum[len(dst)-1-j] += float64(v)
			count[len(dst)-1-j]++
		}
	}
	for c := range dst {
		if count[c] > 0 {
			dst[c] = float32(sum[c] / float64(count[c]))
		}
	}
}

// TestRingColumnsMatchDefinition: the bucket walk gives what computing
// each sample's bucket gives, for rings that wrapped, gaps, any width,
// bucket size and moment (before the epoch too).
func TestRingColumnsMatchDefinition(t *testing.T) {
	rnd := rand.New(rand.NewPCG(29, 4))
	for n := range 2000 {
		var r ring
		for range rnd.IntN(3 * histLen) {
			v := rnd.Float32()
			if rnd.IntN(10) == 0 {
				v = float32(math.NaN())
			}
			r.push(v)
		}
		w, perCol, last := 1+rnd.IntN(600), 1+rnd.IntN(40), rnd.Int64N(100_000)-50_000
		got, want := make([]float32, w), make([]float32, w)
		r.columns(got, last, perCol)
		columnsRef(&r, want, last, perCol)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("case %d (n %d, w %d, perCol %d, last %d): column %d is %v, want %v", n, r.N, w, perCol, last, i, got[i], want[i])
			}
		}
	}
}

// TestMiniGraphNamesWholeAt200: at 200 columns the small multiples beside
// the wide layout were three to a row, 25 cells each, and the wholly held
// MIG instance read "MIG 4… 100%"; they are fewer and wider where that
// shows every name whole and all their rows still fit. Where the rows
// would not fit (a short pane at 80 columns) the names still give way,
// with the ellipsis, and the figure stays.
func TestMiniGraphNamesWholeAt200(t *testing.T) {
	a := historyApp(t, 200, 50, Options{})
	type title struct{ label, fig string }
	var titles []title
	var devs []int
	for i := range a.d.Devs {
		if dh, ok := a.hist[a.d.Devs[i].Key]; ok {
			devs = append(devs, i)
			titles = append(titles, title{a.d.Devs[i].Label, pct(dh.alloc.last())})
		}
	}
	held := false
	for _, tt := range titles {
		held = held || strings.HasPrefix(tt.label, "MIG ") && tt.fig == "100%"
	}
	if !held {
		t.Fatalf("no MIG instance of the fixture is wholly held: %v", titles)
	}
	text := screen(a)
	if !strings.Contains(text, "All devices (") {
		t.Fatalf("no small multiples at 200x50:\n%s", text)
	}
	for _, tt := range titles {
		if !strings.Contains(text, tt.label+" "+tt.fig+" ") {
			t.Errorf("at 200x50 the title %q is not whole:\n%s", tt.label+" "+tt.fig, text)
		}
	}
	p := newHistoryPane(a.common, a.hist, nil)
	p.SetSize(80, 10)
	small := ansi.Strip(strings.Join(p.viewSmall(devs, 0, 80, 10), "\n"))
	if !regexp.MustCompile(`MIG ?\d?` + regexp.QuoteMeta(a.St.G.Ellipsis)).MatchString(small) {
		t.Errorf("80x10: no MIG name cut where three to a row must stay:\n%s", small)
	}
	if !strings.Contains(small, " 100%"+a.St.G.Sep) {
		t.Errorf("80x10: the figure is gone:\n%s", small)
	}
}

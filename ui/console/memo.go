package console

import (
	"maps"
	"math"
	"slices"
	"unsafe"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// viewMemo keeps the pieces of the last frames that are expensive to draw
// (the history graphs' panels and small multiples, the frame's clamped
// rows) with everything they were drawn from, and gives a piece back when
// the next frame asks for it with equal inputs. The inputs are compared by
// value, not by a version someone must remember to bump: a piece is
// redrawn exactly when something it is drawn from changed. At rest, where
// the telemetry of an idle GPU repeats itself every second, a frame then
// redraws the header's clock and the figures that moved, not every graph.
type viewMemo struct {
	gen    uint64 // the frame being drawn; entries carry the last frame that used them
	graphs map[graphKey]*graphMemo
	joins  map[string]*joinMemo
	blocks map[blockKey]*blockMemo
	// devRows are the devices pane's rows by index.
	devRows map[int]*devRowMemo
	// kernRows are the kernels pane's rows by screen row, drawn with the
	// columns kernCols (colsGen: the frame that compared them).
	kernRows map[int]*kernRowMemo
	kernCols []kernCol
	colsGen  uint64
	colsSame bool
	// rows are the last frame's rows before and after kit.ClampLine to
	// rowsW cells.
	rows, clamped []string
	rowsW         int
	// header is the last header drawn and what from.
	header   []string
	headerIn headerIn
	// help is the help screen's body (without an editor) and what it
	// was made from (helpScreen.linesKey): a key opens a new help each
	// time, with the same body as the last one, and making it (the key
	// map's full help, laid out and styled) was most of that frame's
	// compose.
	help    []string
	helpKey string
	helpSt  *kit.Styles
	// kept counts the pieces given back instead of drawn (tests).
	kept int
}

// graphKey names one graph of the history pane: a device's big panel k
// (0 allocation, 1 utilisation, 2 memory) or its small multiple (k -1).
type graphKey struct {
	dev model.DeviceKey
	k   int
}

// used is what every memo entry carries: the last frame that asked for
// it, by which frame forgets the entries no frame wants any more.
type used struct{ gen uint64 }

func (u *used) use(gen uint64)   { u.gen = gen }
func (u *used) lastUsed() uint64 { return u.gen }

// memoEntry is a pointer to an entry of one of the memo's maps.
type memoEntry[V any] interface {
	*V
	use(gen uint64)
	lastUsed() uint64
}

// lookup returns m's entry for key, made empty if there is none, marked
// used by the frame gen.
func lookup[K comparable, V any, P memoEntry[V]](m map[K]P, key K, gen uint64) P {
	e := m[key]
	if e == nil {
		e = new(V)
		m[key] = e
	}
	e.use(gen)
	return e
}

// sweep drops the entries of m that the frame gen did not use.
func sweep[K comparable, V any, P memoEntry[V]](m map[K]P, gen uint64) {
	maps.DeleteFunc(m, func(_ K, e P) bool { return e.lastUsed() != gen })
}

// graphMemo is one drawn graph and what it was drawn from.
type graphMemo struct {
	used
	st          *kit.Styles
	name, end   string
	lvl         kit.Level
	left, right []kit.Span
	a, b        []float32
	w, h, n     int
	marked      bool
	out         []string
}

func newViewMemo() *viewMemo {
	return &viewMemo{graphs: map[graphKey]*graphMemo{}, joins: map[string]*joinMemo{}, blocks: map[blockKey]*blockMemo{},
		devRows: map[int]*devRowMemo{}, kernRows: map[int]*kernRowMemo{}}
}

// frame starts a frame: graphs no frame drew since the last one are
// forgotten (a device gone, a pane resized away).
func (m *viewMemo) frame() {
	if m == nil {
		return
	}
	sweep(m.graphs, m.gen)
	sweep(m.joins, m.gen)
	sweep(m.blocks, m.gen)
	sweep(m.devRows, m.gen)
	sweep(m.kernRows, m.gen)
	m.gen++
}

// sameFloats compares readings bit for bit: NaN ("no reading") equals NaN.
func sameFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// graph is draw's graph, kept from the last frame when it would be drawn
// from what want is.
func (m *viewMemo) graph(key graphKey, want *graphMemo, draw func() []string) []string {
	g := lookup(m.graphs, key, m.gen)
	same := g.out != nil && g.st == want.st && g.name == want.name && g.end == want.end && g.lvl == want.lvl &&
		g.w == want.w && g.h == want.h && g.n == want.n && g.marked == want.marked &&
		slices.Equal(g.left, want.left) && slices.Equal(g.right, want.right) &&
		sameFloats(g.a, want.a) && sameFloats(g.b, want.b)
	if same {
		m.kept++
		return g.out
	}
	g.keep(want, draw())
	return g.out
}

// keep stores what g was drawn from (copies: the caller reuses its
// buffers) and the drawing; g stays marked used by its frame.
func (g *graphMemo) keep(from *graphMemo, out []string) {
	st, a, b, left, right := from.st, from.a, from.b, from.left, from.right
	u := g.used
	*g = *from
	g.used = u
	g.st = st
	g.a, g.b = append(g.a[:0:0], a...), append(g.b[:0:0], b...)
	g.left, g.right = slices.Clone(left), slices.Clone(right)
	g.out = out[:len(out):len(out)] // an append to what the memo gave copies
}

// graphPanel is kit.GraphPanel, drawn again only when its inputs changed.
func (m *viewMemo) graphPanel(key graphKey, st *kit.Styles, s kit.GraphSeries, w, h, perCol int) []string {
	if m == nil {
		return kit.GraphPanel(st, s, w, h, perCol)
	}
	want := graphMemo{st: st, name: s.Name, end: s.End, lvl: s.Lvl, left: s.Now, a: s.Vals, w: w, h: h, n: perCol}
	return m.graph(key, &want, func() []string { return kit.GraphPanel(st, s, w, h, perCol) })
}

// miniGraph is kit.MiniGraph, drawn again only when its inputs changed.
func (m *viewMemo) miniGraph(key graphKey, st *kit.Styles, left, right []kit.Span, alloc, util []float32, w, h int, marked bool) []string {
	if m == nil {
		return kit.MiniGraph(st, left, right, alloc, util, w, h, marked)
	}
	want := graphMemo{st: st, left: left, right: right, a: alloc, b: util, w: w, h: h, marked: marked}
	return m.graph(key, &want, func() []string { return kit.MiniGraph(st, left, right, alloc, util, w, h, marked) })
}

// clampRows is kit.ClampLine over every row, reusing the last frame's
// clamped row where the row is the same string.
func (m *viewMemo) clampRows(rows []string, w int) {
	if m == nil {
		for i, r := range rows {
			rows[i] = kit.ClampLine(r, w)
		}
		return
	}
	clamped := make([]string, len(rows))
	for i, r := range rows {
		if i < len(m.rows) && m.rowsW == w && m.rows[i] == r {
			clamped[i] = m.clamped[i]
			continue
		}
		clamped[i] = kit.ClampLine(r, w)
	}
	m.rows = append(m.rows[:0], rows...)
	m.clamped, m.rowsW = clamped, w
	copy(rows, clamped)
}

// joinMemo is rows put together from pieces the memo gave (graphs, or
// other joins) and a few words and numbers.
type joinMemo struct {
	used
	st    *kit.Styles
	parts []*string // each piece's first row: the memo gives back the very slice
	lens  []int
	spans []kit.Span
	ints  []int
	out   []string
}

// joined is build's rows, kept from the last frame when build would put
// together the very same pieces (the slices the memo gave, not equal
// copies) with equal styles, spans and numbers. Pieces drawn afresh this
// frame are new slices, so what contains them is put together again. The
// styles are compared too: a join may have no piece (the small multiples
// where none fits) and still draw its title with them.
func (m *viewMemo) joined(key string, st *kit.Styles, parts [][]string, spans []kit.Span, ints []int, build func() []string) []string {
	if m == nil {
		return build()
	}
	j := lookup(m.joins, key, m.gen)
	same := j.out != nil && j.st == st && len(j.parts) == len(parts) && slices.Equal(j.spans, spans) && slices.Equal(j.ints, ints)
	for i := 0; same && i < len(parts); i++ {
		same = j.parts[i] == unsafe.SliceData(parts[i]) && j.lens[i] == len(parts[i])
	}
	if same {
		m.kept++
		return j.out
	}
	out := build()
	j.out = out[:len(out):len(out)]
	j.parts, j.lens = j.parts[:0], j.lens[:0]
	for _, p := range parts {
		j.parts, j.lens = append(j.parts, unsafe.SliceData(p)), append(j.lens, len(p))
	}
	j.st, j.spans, j.ints = st, append(j.spans[:0], spans...), append(j.ints[:0], ints...)
	return j.out
}

// blockKey names a block of rows a pane draws: an agent's (pane, index).
type blockKey struct {
	pane pane
	i    int
}

// blockIn is what a block is drawn from: the styles, the derived slices
// it reads by identity (a Derived is never modified, and a snapshot where
// only the telemetry moved shares its rows with the one before), and the
// sizes and flags.
type blockIn struct {
	st    *kit.Styles
	ids   [2]unsafe.Pointer
	lens  [2]int
	w     int
	flags uint8
}

type blockMemo struct {
	used
	in  blockIn
	out []string
}

// block is build's rows, kept from the last frame when they are drawn from
// the same things.
func (m *viewMemo) block(key blockKey, in blockIn, build func() []string) []string {
	if m == nil {
		return build()
	}
	b := lookup(m.blocks, key, m.gen)
	if b.out != nil && b.in == in {
		m.kept++
		return b.out
	}
	out := build()
	b.in, b.out = in, out[:len(out):len(out)]
	return b.out
}

// devRowIn is what a device row is drawn from: its derivation (every field
// of the row but its telemetry cells is the same within one Gen), its
// telemetry cells, its sparklines as drawn, the columns, and the flags.
type devRowIn struct {
	st             *kit.Styles
	gen            *render.Gen
	tele           kit.TeleCells
	sparkA, sparkU string
	c              devCols
	w              int
	flags          uint8
}

type devRowMemo struct {
	used
	in  devRowIn
	out string
}

// devRow is row i of the devices pane, kept from the last frame when it is
// drawn from the same things.
func (m *viewMemo) devRow(i int, in devRowIn, build func() string) string {
	if m == nil || in.gen == nil {
		return build()
	}
	r := lookup(m.devRows, i, m.gen)
	if r.out != "" && r.in == in {
		m.kept++
		return r.out
	}
	r.in, r.out = in, build()
	return r.out
}

// kernRowIn is what a kernel row is drawn from, but the columns: its
// derivation and kernel (a row is the same within one Gen), the amount on
// the followed device, its age as shown, the width and the flags.
type kernRowIn struct {
	st           *kit.Styles
	gen          *render.Gen
	k            int
	on, age      string
	w            int
	sel, focused bool
}

type kernRowMemo struct {
	used
	in  kernRowIn
	out string
}

// kernRow is the kernels pane's screen row i, kept from the last frame when
// it is drawn from the same things with the same columns.
func (m *viewMemo) kernRow(i int, in kernRowIn, cols []kernCol, build func() string) string {
	if m == nil || in.gen == nil {
		return build()
	}
	// The columns are compared once a frame (every row has the same),
	// and again if a row comes with others.
	first, eq := m.colsGen != m.gen, slices.Equal(m.kernCols, cols)
	if first || !eq {
		m.colsGen, m.colsSame = m.gen, first && eq
		m.kernCols = append(m.kernCols[:0], cols...)
	}
	r := lookup(m.kernRows, i, m.gen)
	if m.colsSame && r.out != "" && r.in == in {
		m.kept++
		return r.out
	}
	r.in, r.out = in, build()
	return r.out
}

package kit

import (
	"math/rand/v2"
	"testing"
)

func sumCells(segs []barSeg) (all, held, over, free int) {
	for _, s := range segs {
		all += s.cells
		switch s.Kind {
		case segHeld:
			held += s.cells
		case segOver:
			over += s.cells
		case segFree:
			free += s.cells
		}
	}
	return
}

func TestBarLayout(t *testing.T) {
	tests := []struct {
		Name      string
		amounts   []float64
		Capacity  float64
		W         int
		wantHeld  int
		wantOver  int
		wantFree  int
		wantEvery bool // every non-zero holder has a cell
	}{
		{"empty", nil, 1, 10, 0, 0, 10, false},
		{"zero capacity, nothing held", nil, 0, 10, 0, 0, 10, false},
		{"half", []float64{0.5}, 1, 10, 5, 0, 5, true},
		{"0.50 + 0.60 over 1.00", []float64{0.5, 0.6}, 1, 22, 20, 2, 0, true},
		{"exactly full", []float64{0.4, 0.6}, 1, 10, 10, 0, 0, true},
		{"almost full keeps a free cell", []float64{0.99}, 1, 20, 19, 0, 1, true},
		{"tiny holder still visible", []float64{0.98, 0.001}, 1, 20, 19, 0, 1, true},
		{"over with nothing to spare", []float64{1.0, 0.001}, 1, 10, 9, 1, 0, true},
		{"held on zero capacity is overflow but for the holder's own cell", []float64{1}, 0, 8, 1, 7, 0, true},
		// The demo's GPU3: 1.00 + 0.60 on 1.00, the 0.60 wholly past
		// the capacity mark, was drawn all overflow, its look nowhere.
		{"a holder wholly past capacity keeps its look", []float64{1, 0.6}, 1, 40, 25, 15, 0, true},
		{"several holders past capacity", []float64{1, 0.3, 0.3, 0.3}, 1, 20, 11, 9, 0, true},
		{"tiny holders under capacity take from the free part", []float64{0.001, 0.001, 0.001}, 1, 10, 3, 0, 7, true},
		{"double capacity", []float64{1, 1}, 1, 10, 5, 5, 0, true},
		{"width one", []float64{0.3}, 1, 1, 1, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			segs := BarLayout(tt.amounts, tt.Capacity, tt.W)
			all, held, over, free := sumCells(segs)
			if all != tt.W {
				t.Fatalf("cells add up to %d, want %d: %+v", all, tt.W, segs)
			}
			if held != tt.wantHeld || over != tt.wantOver || free != tt.wantFree {
				t.Errorf("held/over/free = %d/%d/%d, want %d/%d/%d: %+v", held, over, free,
					tt.wantHeld, tt.wantOver, tt.wantFree, segs)
			}
			if tt.wantEvery {
				for i, a := range tt.amounts {
					if a <= 0 {
						continue
					}
					found := false
					for _, s := range segs {
						if s.Kind == segHeld && s.index == i && s.cells > 0 {
							found = true
						}
					}
					if !found {
						t.Errorf("holder %d (%v) has no cell in its look: %+v", i, a, segs)
					}
				}
			}
		})
	}
}

// TestBarLayoutProperties checks the invariants on random bars: cells add
// up to the width, overflow exactly when held exceeds capacity, free
// exactly when it falls short, segments in holder order.
func TestBarLayoutProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		k := r.IntN(8)
		amounts := make([]float64, k)
		total := 0.0
		for i := range amounts {
			if r.IntN(5) > 0 {
				amounts[i] = float64(r.IntN(120)) / 100
			}
			total += amounts[i]
		}
		capacity := float64(r.IntN(3) * 50 / 100)
		if r.IntN(2) == 0 {
			capacity = 1
		}
		w := 1 + r.IntN(60)
		segs := BarLayout(amounts, capacity, w)
		all, _, over, free := sumCells(segs)
		if all != w {
			t.Fatalf("amounts %v cap %v w %d: cells add up to %d", amounts, capacity, w, all)
		}
		if total > capacity && w > 0 && total > 0 && over == 0 {
			t.Fatalf("amounts %v cap %v w %d: over capacity but no overflow cell: %+v", amounts, capacity, w, segs)
		}
		if total <= capacity && over != 0 {
			t.Fatalf("amounts %v cap %v w %d: overflow within capacity: %+v", amounts, capacity, w, segs)
		}
		if total < capacity && w > 1 && free == 0 {
			t.Fatalf("amounts %v cap %v w %d: free capacity but no free cell: %+v", amounts, capacity, w, segs)
		}
		last := map[segKind]int{segHeld: -1, segOver: -1}
		drawn, more := 0, 0
		for _, s := range segs {
			if s.cells <= 0 {
				t.Fatalf("empty segment: %+v", segs)
			}
			switch s.Kind {
			case segHeld, segOver:
				if s.index < last[s.Kind] {
					t.Fatalf("segments out of holder order: %+v", segs)
				}
				if s.Kind == segHeld && s.index > last[s.Kind] {
					drawn++
				}
				last[s.Kind] = s.index
			case segMore:
				more += s.index
			}
		}
		holders := 0
		for _, a := range amounts {
			if a > 0 {
				holders++
			}
		}
		// Every holder is drawn in its look or counted in "+N" (bars
		// of three cells and more: narrower ones cannot say "+N").
		if w >= 3 && drawn+more != holders {
			t.Fatalf("amounts %v cap %v w %d: %d holders drawn, %d counted, want %d: %+v", amounts, capacity, w, drawn, more, holders, segs)
		}
	}
}

// TestCrowdedBar: a bar with fewer cells than holders draws a cell for
// each it has room for and says how many it left out, keeping the
// overflow or free mark.
func TestCrowdedBar(t *testing.T) {
	for _, c := range []struct {
		amounts  []float64
		capacity float64
		w        int
		want     string
	}{
		{[]float64{0.3, 0.3, 0.3, 0.3, 0.3}, 1, 5, "#=+3!"},
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1}, 1, 5, "#=+3."},
		{[]float64{0.2, 0.2, 0.2, 0.2, 0.2}, 1, 4, "#=+3"},
		{[]float64{0.3, 0.3, 0.3, 0.3, 0.3, 0.3}, 1, 6, "#=%+3!"},
		{[]float64{0.3, 0.3, 0.3, 0.3, 0.3}, 1, 2, "#!"},
	} {
		st := testStyles(t, "mono", true)
		l := NewLine(Paint{})
		st.RenderBar(l, BarLayout(c.amounts, c.capacity, c.w), func(i int) int { return i }, nil)
		if got := stripANSI(l.Finish(c.w)); got != c.want {
			t.Errorf("%v on %v in %d cells: %q, want %q", c.amounts, c.capacity, c.w, got, c.want)
		}
	}
}

func TestRenderBarWidth(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		for _, name := range []string{"dark", "mono", "colorblind"} {
			st := testStyles(t, name, ascii)
			for w := 1; w <= 50; w++ {
				l := NewLine(Paint{})
				st.RenderBar(l, BarLayout([]float64{0.5, 0.6}, 1, w), func(i int) int { return i }, nil)
				out := l.Finish(w)
				if got := Width(out); got != w {
					t.Fatalf("%s ascii=%v w=%d: rendered width %d", name, ascii, w, got)
				}
			}
		}
	}
}

func TestASCIIBarGlyphs(t *testing.T) {
	st := testStyles(t, "mono", true)
	l := NewLine(Paint{})
	st.RenderBar(l, BarLayout([]float64{0.5, 0.6}, 1, 11), func(i int) int { return i }, nil)
	l2 := NewLine(Paint{})
	st.RenderBar(l2, BarLayout([]float64{0.3}, 1, 10), func(i int) int { return i }, nil)
	got := stripANSI(l.Finish(11)) + "|" + stripANSI(l2.Finish(10))
	if want := "#####=====!|###......."; got != want {
		t.Errorf("ascii bars = %q, want %q", got, want)
	}
}

// TestDriftedNeighboursStayTwo: two drifted kernels side by side on a
// bar take two shapes, so that without colour (NO_COLOR, --ascii) they
// do not read as one; a drifted share after another kernel's, or alone,
// takes the first.
func TestDriftedNeighboursStayTwo(t *testing.T) {
	for _, c := range []struct {
		ascii   bool
		drifted map[int]bool
		want    string
	}{
		{false, map[int]bool{0: true, 1: true}, "▞▞▞▚▚▚▚░░░"},
		{true, map[int]bool{0: true, 1: true}, `///\\\\...`},
		{false, map[int]bool{1: true}, "▓▓▓▞▞▞▞░░░"},
		{true, map[int]bool{0: true, 1: true, 2: true}, `//\\\//...`},
	} {
		st := testStyles(t, "mono", c.ascii)
		amts := []float64{0.3, 0.4}
		if len(c.drifted) == 3 {
			amts = []float64{0.2, 0.3, 0.2}
		}
		l := NewLine(Paint{})
		st.RenderBar(l, BarLayout(amts, 1, 10), func(i int) int { return i + 1 }, func(i int) bool { return c.drifted[i] })
		if got := stripANSI(l.Finish(10)); got != c.want {
			t.Errorf("ascii=%v drifted %v: %q, want %q", c.ascii, c.drifted, got, c.want)
		}
	}
}

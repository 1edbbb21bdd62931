package kit

import (
	"math"
	"strconv"
)

// segKind says what a run of bar cells stands for.
type segKind uint8

const (
	segHeld segKind = iota // a holder's share within capacity
	segOver                // a holder's share beyond capacity
	segFree                // capacity nobody holds
	segMore                // "+N": N holders the bar has no cell for
)

// barSeg is a run of cells of a share bar.
type barSeg struct {
	Kind  segKind
	index int // the holder (amount index); -1 for free; the count for more
	cells int
}

// BarLayout splits w cells between holders' amounts, the free part and the
// part beyond capacity. The bar spans max(total, capacity): below capacity
// the rest is free; above it, the cells past the capacity mark are drawn
// as overflow, after every holder's cells. The cells add up to w exactly;
// every holder with a non-zero amount gets at least one cell in its own
// look (not only overflow cells, which would hide which kernel it is);
// a bar with free capacity shows at least one free cell and a bar over
// capacity at least one overflow cell. A bar too narrow for all of that
// draws the holders it has room for and "+N" for the N it has not.
// Floats are used for cell widths only: the figures next to the bar are
// exact decimals.
func BarLayout(amounts []float64, capacity float64, w int) []barSeg {
	if w <= 0 {
		return nil
	}
	total, n := 0.0, 0
	for _, a := range amounts {
		if a > 0 {
			total += a
			n++
		}
	}
	scale := math.Max(total, capacity)
	if total <= 0 || scale <= 0 {
		return []barSeg{{Kind: segFree, index: -1, cells: w}}
	}
	over := total > capacity
	rest := 0 // the cell kept for the overflow or the free mark
	if over || total < capacity && w > 1 {
		rest = 1
	}
	if n+rest > w {
		return crowdedBar(amounts, n, over, rest, w)
	}
	held := int(math.Round(total / scale * float64(w)))
	held = max(held, 1)
	if total < capacity && held >= w && w > 1 {
		held = w - 1
	}
	held = min(held, w)

	// Cumulative rounding: boundaries are rounded, so widths always add up.
	cells := make([]int, len(amounts))
	cum, prev := 0.0, 0
	for i, a := range amounts {
		if a > 0 {
			cum += a
		}
		pos := int(math.Round(cum / total * float64(held)))
		cells[i] = pos - prev
		prev = pos
	}
	capCells := w
	if over {
		capCells = int(math.Round(capacity / scale * float64(w)))
		capCells = min(max(capCells, 0), w-1)
	}
	in := make([]int, len(amounts))   // cells in the holder's look
	past := make([]int, len(amounts)) // cells past the capacity mark
	at := 0
	for i, c := range cells {
		in[i] = min(max(capCells-at, 0), c)
		past[i] = c - in[i]
		at += c
	}
	free := w - held
	giveEveryHolderACell(amounts, in, past, &free)

	out := make([]barSeg, 0, 2*len(amounts)+1)
	for i, c := range in {
		if c > 0 {
			out = append(out, barSeg{Kind: segHeld, index: i, cells: c})
		}
	}
	for i, c := range past {
		if c > 0 {
			out = append(out, barSeg{Kind: segOver, index: i, cells: c})
		}
	}
	if free > 0 {
		out = append(out, barSeg{Kind: segFree, index: -1, cells: free})
	}
	return out
}

// giveEveryHolderACell gives a holder with no cell in its own look one,
// taken from the widest holder's look, else from the overflow or the free
// part while either keeps a cell: a kernel whose share rounded to nothing,
// or lay wholly past the capacity mark, would be invisible. BarLayout
// calls it only when the bar has room for every holder and the mark.
func giveEveryHolderACell(amounts []float64, in, past []int, free *int) {
	widest := func(cells []int) int {
		at := -1
		for j, c := range cells {
			if c > 1 && (at < 0 || c > cells[at]) {
				at = j
			}
		}
		return at
	}
	overAll := 0
	for _, c := range past {
		overAll += c
	}
	for i, a := range amounts {
		if a <= 0 || in[i] > 0 {
			continue
		}
		switch j, k := widest(in), widest(past); {
		case j >= 0:
			in[j]--
		case overAll > 1 && k >= 0:
			past[k]--
			overAll--
		case overAll > 1:
			// Overflow cells spread one to a holder: take the last.
			for k = len(past) - 1; past[k] == 0; k-- {
			}
			past[k]--
			overAll--
		case *free > 1:
			*free--
		default:
			return
		}
		in[i]++
	}
}

// crowdedBar lays out a bar with fewer cells than holders (plus the
// overflow or free mark): one cell for each holder it has room for, in
// order, then "+N" for the N left out, then the mark. A bar too narrow
// even for "+N" keeps the mark and what holders fit.
func crowdedBar(amounts []float64, n int, over bool, rest, w int) []barSeg {
	shown, more := w-rest, 0
	for k := w - rest - 2; k >= 0; k-- {
		if k+rest+1+len(strconv.Itoa(n-k)) <= w {
			shown, more = k, n-k
			break
		}
	}
	shown = min(shown, n)
	out := make([]barSeg, 0, shown+2)
	for i, a := range amounts {
		if a > 0 && len(out) < shown {
			out = append(out, barSeg{Kind: segHeld, index: i, cells: 1})
		}
	}
	mark := w - shown // the cells after the holders'
	if more > 0 {
		out = append(out, barSeg{Kind: segMore, index: more, cells: mark - rest})
		mark = rest
	}
	if mark > 0 {
		k := segFree
		if over {
			k = segOver
		}
		out = append(out, barSeg{Kind: k, index: -1, cells: mark})
	}
	return out
}

// RenderBar draws a bar's segments: each holder in its look (look gives a
// segment's holder index its look), a drifted holder's share (drifted, nil
// for none) in the drift shape, the overflow in the over colour and glyph,
// the free part dim.
func (s *Styles) RenderBar(l *Line, segs []barSeg, look func(index int) int, drifted func(index int) bool) {
	alt := false // the last segment drawn was drifted, in the alternate shape
	last := false
	for _, sg := range segs {
		switch sg.Kind {
		case segFree:
			l.putRepeat(s.Free, s.G.Free, sg.cells)
			last = false
		case segOver:
			l.putRepeat(s.Over, s.G.Over, sg.cells)
			last = false
		case segMore:
			l.Cell(s.Dim, "+"+strconv.Itoa(sg.index), sg.cells, false, s.G.Ellipsis)
			last = false
		default:
			p, g := s.Look(look(sg.index))
			d := drifted != nil && drifted(sg.index) && sg.cells > 0
			if d {
				// Two drifted shares side by side: without colour
				// (NO_COLOR) one shape would make them one.
				alt = last && !alt && s.G.DriftAlt != ""
				g = s.G.Drift
				if alt {
					g = s.G.DriftAlt
				}
			}
			if sg.cells > 0 {
				last = d
			}
			l.putRepeat(p, g, sg.cells)
		}
	}
}

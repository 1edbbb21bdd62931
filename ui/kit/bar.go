package kit

import "math"

// segKind says what a run of bar cells stands for.
type segKind uint8

const (
	segHeld segKind = iota // a holder's share within capacity
	segOver                // a holder's share beyond capacity
	segFree                // capacity nobody holds
)

// barSeg is a run of cells of a share bar.
type barSeg struct {
	Kind  segKind
	index int // the holder (amount index); -1 for free
	cells int
}

// BarLayout splits w cells between holders' amounts, the free part and the
// part beyond capacity. The bar spans max(total, capacity): below capacity
// the rest is free; above it, the cells past the capacity mark belong to
// the holders that pushed it over and are drawn as overflow. The cells add
// up to w exactly; every holder with a non-zero amount gets a cell when
// there are enough cells; a bar with free capacity shows at least one free
// cell and a bar over capacity at least one overflow cell. Floats are used
// for cell widths only: the figures next to the bar are exact decimals.
func BarLayout(amounts []float64, capacity float64, w int) []barSeg {
	if w <= 0 {
		return nil
	}
	total := 0.0
	for _, a := range amounts {
		if a > 0 {
			total += a
		}
	}
	scale := math.Max(total, capacity)
	if total <= 0 || scale <= 0 {
		return []barSeg{{Kind: segFree, index: -1, cells: w}}
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
	giveEveryHolderACell(amounts, cells)

	capCells := w
	if total > capacity {
		capCells = int(math.Round(capacity / scale * float64(w)))
		capCells = min(max(capCells, 0), w-1)
	}
	out := make([]barSeg, 0, len(amounts)+2)
	at := 0
	for i, c := range cells {
		if c <= 0 {
			continue
		}
		in := min(max(capCells-at, 0), c)
		if in > 0 {
			out = append(out, barSeg{Kind: segHeld, index: i, cells: in})
		}
		if c > in {
			out = append(out, barSeg{Kind: segOver, index: i, cells: c - in})
		}
		at += c
	}
	if free := w - held; free > 0 {
		out = append(out, barSeg{Kind: segFree, index: -1, cells: free})
	}
	return out
}

// giveEveryHolderACell moves cells from the widest holders to holders that
// rounded down to nothing, so no kernel on a device is invisible while
// there is room.
func giveEveryHolderACell(amounts []float64, cells []int) {
	for i, a := range amounts {
		if a <= 0 || cells[i] > 0 {
			continue
		}
		widest := -1
		for j, c := range cells {
			if c > 1 && (widest < 0 || c > cells[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			return
		}
		cells[widest]--
		cells[i]++
	}
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

package alloc

import (
	"math/bits"

	"github.com/cockroachdb/apd/v3"
)

// The EVENLY search (evenlyAcrossScan) builds every window it scores: a
// window of size devices costs O(size), and with no perfectly even split
// it scores windows of every size from the smallest prefix that holds the
// request up to all devices, which is quadratic in the devices (issue 23:
// two minutes for one search over 10,000). evenFast picks the same window
// without building any, in O(log² n) per window:
//
//   - Only the window's evenness decides which one wins. Every candidate
//     has size shares (a device that cannot take an even part takes all it
//     has, the rest split), so within a size the last window that passes
//     the evenness check is kept, and between sizes only a strictly more
//     even window replaces the best (the device counts always differ, so
//     fragmentation never decides).
//   - Evenness, minus the sum of the gaps between the sorted amounts,
//     telescopes to minus (largest - smallest) amount: a window's amounts
//     are its tail of devices that take all they have (their free amounts
//     quantized to hundredths) and an even split of the rest (q and q+0.01
//     hundredths), so its score needs the tail's length and the smallest and
//     largest free amount in it, not the amounts.
//   - Device p (of a window [s, e)) is the first, from the end, that takes
//     an even part when free[p]·(p-s+1) ≥ R - Σ free[p+1:e], i.e. when the
//     line A_p - x·free[p] at x = s is at least R - Σ free[:e], with
//     A_p = free[p]·(p+1) - Σ free[:p+1]: the tail ends at the last such p,
//     found in a segment tree whose nodes hold the upper envelope of their
//     lines.
//   - A window whose last device takes an even part takes one on every
//     device (the uniform split, the same amounts whatever the start): when
//     every device of it holds R/size, the run of such windows is skipped
//     to its end by a search for the next device with less free.
//   - With every amount in hundredths, a size where no window can beat the
//     best one so far is passed over without scoring any (cannotBeat).
//
// It works in integers: every amount in units of 10^-exp (exp ≥ 2), which
// makes the arithmetic exact. The Python code's is not always (28 digits),
// so evenFast only takes requests where it is shown to be (newEvenFast):
// free amounts and the request with at most 18 decimals and small enough
// that every sum is exact, where a quotient rem/n rounded to 28 digits can
// neither cross a free amount nor a hundredth it does not cross exactly
// (its distance to either is at least 10^-exp/n, far above the rounding).
// Anything else goes to the scan. The window picked is then built by the
// scan's own code (across), so the shares are the scan's, digit for digit
// (TestEvenlyFastMatchesScan, FuzzEvenlyAcrossMatchesRef).

// evenFastLimit bounds every scaled amount, sum and product the search
// forms, so that int64 never overflows and 28 digits hold every sum.
const (
	evenFastLimit   = int64(1) << 61
	evenFastMaxDevs = 1 << 20
	// evenFastMin is the fewest devices the search is used for: below it
	// the scan is cheap and allocates less.
	evenFastMin = 24
)

// pow10 is 10^k, k ≤ 19.
func pow10(k int64) uint64 {
	p := uint64(1)
	for range k {
		p *= 10
	}
	return p
}

// evenFast is the state of one window search over n devices.
type evenFast struct {
	n     int
	free  []int64 // free amounts, in units
	pre   []int64 // pre[i] = Σ free[:i]
	r     int64   // the request, in units
	hund  int64   // units in a hundredth
	rQ    int64   // the request quantized to hundredths (half even), in hundredths
	mins  minMaxTable
	hull  hullTree
	stats evenStats
}

// evenStats is what a window search did: the tests bound it, to catch a
// search that turns quadratic again, and check that its shortcuts run.
type evenStats struct {
	scored  int // windows scored (a run of uniform ones skipped counts one)
	skipped int // sizes passed over by cannotBeat
}

// scaledUnits returns x in units of 10^-exp, if it is finite, not
// negative and at most evenFastLimit.
func scaledUnits(x *apd.Decimal, exp int32) (int64, bool) {
	if x.Form != apd.Finite || x.Negative && x.Coeff.Sign() != 0 || !x.Coeff.IsUint64() {
		return 0, false
	}
	k := int64(x.Exponent) + int64(exp)
	if k < 0 || k > 18 {
		return 0, false
	}
	c, p := x.Coeff.Uint64(), pow10(k)
	if c > uint64(evenFastLimit)/p {
		return 0, false
	}
	return int64(c * p), true
}

// newEvenFast sets the search up, or returns nil where its integer
// arithmetic would not be the Python code's (see above).
func newEvenFast(free []apd.Decimal, remaining *apd.Decimal) *evenFast {
	n := len(free)
	if n == 0 || n >= evenFastMaxDevs {
		return nil
	}
	// The units: the finest decimals among the amounts, hundredths at
	// least.
	exp := int32(2)
	for i := -1; i < n; i++ {
		x := remaining
		if i >= 0 {
			x = &free[i]
		}
		if x.Form != apd.Finite {
			return nil
		}
		if x.Coeff.Sign() != 0 && -x.Exponent > exp {
			exp = -x.Exponent
		}
	}
	if exp > 18 {
		return nil
	}
	f := &evenFast{n: n, free: make([]int64, n), pre: make([]int64, n+1), hund: int64(pow10(int64(exp) - 2))}
	var ok bool
	if f.r, ok = scaledUnits(remaining, exp); !ok || f.r == 0 {
		return nil
	}
	fmax := int64(0)
	for i := range free {
		v, ok := scaledUnits(&free[i], exp)
		if !ok {
			return nil
		}
		f.free[i] = v
		fmax = max(fmax, v)
		if f.pre[i] > evenFastLimit-v {
			return nil
		}
		f.pre[i+1] = f.pre[i] + v
	}
	if fmax > evenFastLimit/int64(n+1) || f.hund > evenFastLimit/int64(n+1) {
		return nil
	}
	f.rQ = f.quant(f.r)
	f.mins = newMinMaxTable(f.free)
	f.hull = newHullTree(f.free, f.pre)
	return f
}

// quant is Quantize(x, -2) half to even, x in units, the result in
// hundredths.
func (f *evenFast) quant(x int64) int64 {
	if f.hund == 1 {
		return x
	}
	q, r := x/f.hund, x%f.hund
	if 2*r > f.hund || 2*r == f.hund && q%2 == 1 {
		q++
	}
	return q
}

// covers is evenSearch.covers for the window sum w (in units).
func (f *evenFast) covers(w int64) bool { return w >= f.r || f.quant(w) >= f.rQ }

// split is distribute_evenly's numbers for rem (units) over k devices:
// each gets q hundredths, and extra of them one more.
func (f *evenFast) split(rem int64, k int) (q, extra int64) {
	kk := int64(k)
	q = rem / (kk * f.hund) // ROUND_DOWN of rem/k to hundredths; rem ≥ 0
	d := rem - q*kk*f.hund  // units: round(d / hund) more hundredths
	extra = d / f.hund
	if r := d % f.hund; 2*r > f.hund || 2*r == f.hund && extra%2 == 1 {
		extra++
	}
	return q, extra
}

// score is the evenness of window [s, s+size), in hundredths (0 or
// negative); ok is false where distribute_evenly would hand out more
// hundredths than the window has devices (not reached by exact
// arithmetic: the caller then leaves it to the scan).
func (f *evenFast) score(s, size int) (sc int64, ok bool) {
	f.stats.scored++
	e := s + size
	p := f.hull.lastAtLeast(s, e, int64(s), f.r-f.pre[e])
	t := e - 1 - p // the tail that takes all it has (all of it when p < s)
	lo, hi := int64(1)<<62, int64(-1)<<62
	if t > 0 {
		lo, hi = f.quant(f.mins.min(e-t, e)), f.quant(f.mins.max(e-t, e))
	}
	if k := size - t; k > 0 {
		q, extra := f.split(f.r-(f.pre[e]-f.pre[e-t]), k)
		switch {
		case extra > int64(k):
			return 0, false
		case extra <= 0:
			lo, hi = min(lo, q), max(hi, q)
		case extra == int64(k):
			lo, hi = min(lo, q+1), max(hi, q+1)
		default:
			lo, hi = min(lo, q), max(hi, q+1)
		}
	}
	return lo - hi, true
}

// uniform says every device of window [s, s+size) takes an even part:
// its last one holds R/size.
func (f *evenFast) uniform(s, size int) bool {
	return f.free[s+size-1] >= (f.r+int64(size)-1)/int64(size)
}

// best is the window evenlyAcrossScan keeps (see above for why it is the
// same), or ok false to leave the request to the scan.
func (f *evenFast) best() (start, size int, ok bool) {
	n := f.n
	n0 := n
	for k := 1; k <= n; k++ {
		if f.covers(f.pre[k]) {
			n0 = k
			break
		}
	}
	haveBest, bestSc := false, int64(0)
	for sz := n0; sz <= n; sz++ {
		if haveBest && f.hund == 1 && f.cannotBeat(sz, bestSc) {
			f.stats.skipped++
			continue
		}
		first, ok := f.score(0, sz)
		if !ok {
			return 0, 0, false
		}
		keep, keepSc := 0, first
		for st := 1; st <= n-sz; {
			if !f.covers(f.pre[st+sz] - f.pre[st]) {
				break
			}
			if f.uniform(st, sz) {
				// Its last device holds an even part, so every device
				// takes one (however little the others have free: the
				// Python code looks at the last one only).
				u, ok := f.score(st, sz)
				if !ok {
					return 0, 0, false
				}
				if u < first {
					break
				}
				keep, keepSc = st, u
				// When every device of the window holds R/size, so do
				// those of the windows up to the next device that does
				// not: all cover and split the same way. Skip to the
				// last of them.
				if q := f.mins.firstAtMost(st, (f.r-1)/int64(sz)); q >= st+sz {
					keep = q - sz
				}
				st = keep + 1
				continue
			}
			sc, ok := f.score(st, sz)
			if !ok {
				return 0, 0, false
			}
			if sc < first {
				break
			}
			keep, keepSc = st, sc
			st++
		}
		if !haveBest || keepSc > bestSc {
			start, size, bestSc, haveBest = keep, sz, keepSc, true
		}
		if bestSc == 0 {
			break
		}
	}
	return start, size, haveBest
}

// cannotBeat says no window of size devices is more even than best
// (hundredths), so that the size can be passed over, when every amount is
// in hundredths (hund 1). Then the shares of a window the search scores
// add up to the request exactly: the tail gives its free amounts, the
// split hands out all of the rest (and some device takes a part, or the
// window would not hold the request). So its largest share is at least
// ceil(R/size). Perfect evenness needs size·v = R; and a window whose last
// device gives all it has (every window, when none of the last devices
// holds R/size) has a share as small as that device's free amount.
func (f *evenFast) cannotBeat(size int, best int64) bool {
	sz := int64(size)
	if best == -1 && f.r%sz != 0 {
		return true
	}
	ceil := (f.r + sz - 1) / sz
	last := f.mins.max(size-1, f.n) // the most any window's last device has free
	return last < ceil && last-ceil <= best
}

// minMaxTable answers range minima and maxima of the free amounts in O(1)
// (sparse tables).
type minMaxTable struct {
	lo, hi [][]int64
}

func newMinMaxTable(v []int64) minMaxTable {
	t := minMaxTable{lo: [][]int64{v}, hi: [][]int64{v}}
	for w := 1; 2*w <= len(v); w *= 2 {
		plo, phi := t.lo[len(t.lo)-1], t.hi[len(t.hi)-1]
		lo, hi := make([]int64, len(v)-2*w+1), make([]int64, len(v)-2*w+1)
		for i := range lo {
			lo[i], hi[i] = min(plo[i], plo[i+w]), max(phi[i], phi[i+w])
		}
		t.lo, t.hi = append(t.lo, lo), append(t.hi, hi)
	}
	return t
}

// min and max are over v[a:b], a < b.
func (t minMaxTable) min(a, b int) int64 {
	k := bits.Len(uint(b-a)) - 1
	return min(t.lo[k][a], t.lo[k][b-1<<k])
}

func (t minMaxTable) max(a, b int) int64 {
	k := bits.Len(uint(b-a)) - 1
	return max(t.hi[k][a], t.hi[k][b-1<<k])
}

// firstAtMost is the first index from i with v ≤ x, len(v) if none.
func (t minMaxTable) firstAtMost(i int, x int64) int {
	n := len(t.lo[0])
	for k := len(t.lo) - 1; k >= 0; k-- {
		if i+1<<k <= n && t.lo[k][i] > x {
			i += 1 << k
		}
	}
	return i
}

// line is a + m·x.
type line struct{ m, a int64 }

func (l line) at(x int64) int64 { return l.a + l.m*x }

// hullTree is a segment tree over the devices whose nodes hold the upper
// envelope of their devices' lines (A_p - x·free[p]), slopes ascending.
type hullTree struct {
	n     int
	nodes [][]line // heap order, node 1 the root
}

func newHullTree(free, pre []int64) hullTree {
	n := len(free)
	t := hullTree{n: n, nodes: make([][]line, 4*n)}
	t.build(1, 0, n, free, pre)
	return t
}

func (t *hullTree) build(node, l, r int, free, pre []int64) {
	if r-l == 1 {
		t.nodes[node] = []line{{m: -free[l], a: free[l]*int64(l+1) - pre[l+1]}}
		return
	}
	mid := (l + r) / 2
	t.build(2*node, l, mid, free, pre)
	t.build(2*node+1, mid, r, free, pre)
	a, b := t.nodes[2*node], t.nodes[2*node+1]
	h := make([]line, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var next line
		if len(b) == 0 || len(a) > 0 && a[0].m <= b[0].m {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		h = pushHull(h, next)
	}
	t.nodes[node] = h
}

// pushHull adds a line of the largest slope so far to an upper envelope.
func pushHull(h []line, l line) []line {
	if k := len(h); k > 0 && h[k-1].m == l.m {
		if h[k-1].a >= l.a {
			return h
		}
		h = h[:k-1]
	}
	for k := len(h); k >= 2; k = len(h) {
		a, b := h[k-2], h[k-1]
		// b is never above both when a overtakes it no earlier than l
		// overtakes b: (a.a-b.a)/(b.m-a.m) ≥ (b.a-l.a)/(l.m-b.m).
		if cmpMul(a.a-b.a, l.m-b.m, b.a-l.a, b.m-a.m) < 0 {
			break
		}
		h = h[:k-1]
	}
	return append(h, l)
}

// cmpMul compares x·y with u·v exactly (128-bit products).
func cmpMul(x, y, u, v int64) int {
	h1, l1 := mul128(x, y)
	h2, l2 := mul128(u, v)
	switch {
	case h1 != h2:
		if h1 < h2 {
			return -1
		}
		return 1
	case l1 != l2:
		if l1 < l2 {
			return -1
		}
		return 1
	}
	return 0
}

// mul128 is x·y as a two's complement 128-bit integer (|x|, |y| < 2^63).
func mul128(x, y int64) (hi int64, lo uint64) {
	neg := (x < 0) != (y < 0)
	ux, uy := uint64(x), uint64(y)
	if x < 0 {
		ux = uint64(-x)
	}
	if y < 0 {
		uy = uint64(-y)
	}
	h, l := bits.Mul64(ux, uy)
	if neg {
		l = ^l + 1
		h = ^h
		if l == 0 {
			h++
		}
	}
	return int64(h), l
}

// maxAt is the largest value of a node's lines at x: along an upper
// envelope the values at x rise to the maximum and then fall.
func maxAt(h []line, x int64) int64 {
	lo, hi := 0, len(h)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if h[mid].at(x) >= h[mid+1].at(x) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return h[lo].at(x)
}

// lastAtLeast is the largest p in [lo, hi) whose line at x is at least c,
// or lo-1 if none is.
func (t *hullTree) lastAtLeast(lo, hi int, x, c int64) int {
	if p := t.last(1, 0, t.n, lo, hi, x, c); p >= 0 {
		return p
	}
	return lo - 1
}

func (t *hullTree) last(node, l, r, lo, hi int, x, c int64) int {
	if r <= lo || hi <= l || maxAt(t.nodes[node], x) < c {
		return -1
	}
	if r-l == 1 {
		return l
	}
	mid := (l + r) / 2
	if p := t.last(2*node+1, mid, r, lo, hi, x, c); p >= 0 {
		return p
	}
	return t.last(2*node, l, mid, lo, hi, x, c)
}

var dbgOn = false

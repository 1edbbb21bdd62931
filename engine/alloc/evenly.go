package alloc

import (
	"errors"
	"slices"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// The multi-device branch of FractionAllocMap EVENLY evaluates up to
// O(devices²) candidate splits per request. It works on apd.Decimal values
// held in reusable buffers instead of model.Dec (which allocates per
// operation); the arithmetic, contexts and rounding are exactly those of
// the Python code, so results are identical, digit for digit.

var (
	// downContext is Python's default context with ROUND_DOWN, for
	// quantize(..., rounding=ROUND_DOWN).
	downContext = func() *apd.Context {
		c := *model.PyContext
		c.Rounding = apd.RoundDown
		return &c
	}()
	apdHundredth = apd.New(1, -2)  // digits
	apdHundred   = apd.New(100, 0) // powers
)

// candidate is one way of splitting the request over a window of devices:
// allocate_across_devices' dict (positions into the device list and the
// amounts, in insertion order) and its score.
type candidate struct {
	pos      []int
	amt      []apd.Decimal
	evenness apd.Decimal // 0 is perfectly even, more negative is worse
	frag     int
}

func (c *candidate) reset() {
	c.pos = c.pos[:0]
	c.amt = c.amt[:0]
	c.frag = 0
}

// push appends a share at device position p and returns its amount for the
// caller to set, so that no apd.Decimal is ever copied by value (its
// coefficient may point to a shared big.Int).
func (c *candidate) push(p int) *apd.Decimal {
	c.pos = append(c.pos, p)
	c.amt = append(c.amt, apd.Decimal{})
	return &c.amt[len(c.amt)-1]
}

// atLeast reports whether c ranks at least as high as o by (evenness,
// −devices, −fragmentation). Python keeps the last of equal maxima (a
// stable sort, then [-1]), so ties go to the newer candidate.
func (c *candidate) atLeast(o *candidate) bool {
	if v := c.evenness.Cmp(&o.evenness); v != 0 {
		return v > 0
	}
	if len(c.pos) != len(o.pos) {
		return len(c.pos) < len(o.pos)
	}
	return c.frag <= o.frag
}

// evenSearch is the state of one multi-device EVENLY placement.
type evenSearch struct {
	m         *FractionMap
	devs      []devAlloc
	free      []apd.Decimal // devs[i].free
	remaining apd.Decimal   // the normalised request
	remQ      apd.Decimal   // remaining quantized to 0.01
	minMemQ   apd.Decimal
	fragOn    bool // whether (0.01, min_memory) is a non-empty interval
	// sortBuf orders a candidate's amounts for evenness (pointers into
	// the candidate: no apd.Decimal is copied by value).
	sortBuf []*apd.Decimal
	tmp     [4]apd.Decimal
	err     error
	// quo[n] caches remaining/n: every window of a size starts from the
	// same remaining amount, and Quo at 28 digits is the costliest step.
	quo     []apd.Decimal
	haveQuo []bool
	// uniform[n] caches the split of the whole request over n devices.
	uniform     []candidate
	haveUniform []bool
	// scaled and ten are cmp's scratch integers.
	scaled [2]apd.BigInt
	ten    apd.BigInt
}

// cmp is x.Cmp(y). apd aligns the coefficients of two values with
// different exponents but the same magnitude in a new integer on every
// call, and the search compares a hundredths amount with a 28-digit
// quotient for every window; this aligns them in the search's scratch
// integers instead. Every other case is apd's own (it does not allocate).
func (s *evenSearch) cmp(x, y *apd.Decimal) int {
	if x.Form != apd.Finite || y.Form != apd.Finite || x.Exponent == y.Exponent {
		return x.Cmp(y)
	}
	sign := x.Sign()
	if sign == 0 || sign != y.Sign() {
		return x.Cmp(y) // decided by the signs
	}
	if x.NumDigits()+int64(x.Exponent) != y.NumDigits()+int64(y.Exponent) {
		return x.Cmp(y) // decided by the adjusted exponents
	}
	// Scale the coefficient of the one with the larger exponent down to
	// the other's exponent, ten to the 18th at most at a time.
	hi, lo, flip := x, y, 1
	if x.Exponent < y.Exponent {
		hi, lo, flip = y, x, -1
	}
	// The products go to the two scratch integers in turn: math/big
	// allocates a product that aliases a factor, and a scratch integer
	// that once grew past apd's inline words keeps its heap words, which
	// Set from an inline value would drop.
	scaled, spare := &hi.Coeff, &s.scaled[0]
	for d := int64(hi.Exponent) - int64(lo.Exponent); d > 0; {
		step := min(d, 18)
		p := uint64(1)
		for range step {
			p *= 10
		}
		s.ten.SetUint64(p)
		spare.Mul(scaled, &s.ten)
		scaled = spare
		if spare == &s.scaled[0] {
			spare = &s.scaled[1]
		} else {
			spare = &s.scaled[0]
		}
		d -= step
	}
	c := scaled.Cmp(&lo.Coeff) * flip
	if sign < 0 {
		c = -c
	}
	return c
}

// quoRemaining returns remaining/n (the request over n devices), computed
// once per n.
func (s *evenSearch) quoRemaining(n int) *apd.Decimal {
	if !s.haveQuo[n] {
		nd := apd.New(int64(n), 0)
		s.check(model.PyContext.Quo(&s.quo[n], &s.remaining, nd))
		s.haveQuo[n] = true
	}
	return &s.quo[n]
}

// evenlyAcross is the multi-device branch of EVENLY: for every window size
// from the smallest prefix that holds the request up to all devices, slide
// a window over the ordered devices and keep the best candidate. On many
// devices the window is found without building the candidates
// (evenlyAcrossFast, near-linear); the scan does the rest.
func (m *FractionMap) evenlyAcross(slot model.SlotName, devs []devAlloc, remaining model.Dec, minMemory model.Dec) ([]Share, error) {
	if len(devs) >= evenFastMin {
		if shares, ok := m.evenlyAcrossFast(devs, remaining, minMemory, nil); ok {
			return shares, nil
		}
	}
	return m.evenlyAcrossScan(slot, devs, remaining, minMemory)
}

// evenlyAcrossFast is evenlyAcross by evenFast: ok is false when it does
// not apply (see newEvenFast), and the scan must answer. stats, when not
// nil, receives what the search did.
func (m *FractionMap) evenlyAcrossFast(devs []devAlloc, remaining model.Dec, minMemory model.Dec, stats *evenStats) ([]Share, bool) {
	s := m.newEvenSearch(devs, remaining, minMemory)
	if s.err != nil {
		return nil, false
	}
	f := newEvenFast(s.free, &s.remaining)
	if f == nil {
		return nil, false
	}
	start, size, ok := f.best()
	if stats != nil {
		*stats = f.stats
	}
	if !ok {
		return nil, false
	}
	// The chosen window, built by the scan's own code.
	c := &candidate{pos: make([]int, 0, size), amt: make([]apd.Decimal, 0, size)}
	s.across(start, size, c)
	if s.err != nil {
		return nil, false
	}
	shares := make([]Share, len(c.pos))
	for i, p := range c.pos {
		shares[i] = Share{devs[p].id, model.DecFromApd(&c.amt[i])}
	}
	return shares, true
}

// newEvenSearch is the state both searches start from.
func (m *FractionMap) newEvenSearch(devs []devAlloc, remaining model.Dec, minMemory model.Dec) *evenSearch {
	ctx := model.PyContext
	n := len(devs)
	// One block each for the search's decimals and flags.
	decs := make([]apd.Decimal, 2*n+1)
	flags := make([]bool, 2*(n+1))
	s := &evenSearch{m: m, devs: devs, free: decs[:n:n], sortBuf: make([]*apd.Decimal, n), quo: decs[n:],
		haveQuo: flags[:n+1], haveUniform: flags[n+1:], uniform: make([]candidate, n+1)}
	der := m.derived() // the state devs was ordered from: nothing changed since
	for i, d := range devs {
		s.free[i].Set(&der.freeApd[d.idx])
	}
	s.remaining.Set(remaining.Apd())
	s.check(ctx.Quantize(&s.remQ, &s.remaining, -2))
	s.check(ctx.Quantize(&s.minMemQ, quantize2(minMemory).Apd(), -2))
	s.fragOn = apdHundredth.Cmp(&s.minMemQ) < 0
	return s
}

// evenlyAcrossScan is evenlyAcross window by window, every candidate
// built: quadratic in the devices when no split is perfectly even.
func (m *FractionMap) evenlyAcrossScan(slot model.SlotName, devs []devAlloc, remaining model.Dec, minMemory model.Dec) ([]Share, error) {
	ctx := model.PyContext
	s := m.newEvenSearch(devs, remaining, minMemory)

	// n0: the smallest prefix whose free capacity covers the request.
	var acc, accQ apd.Decimal
	n0 := 0
	for i := range s.free {
		n0++
		s.check(ctx.Add(&acc, &acc, &s.free[i]))
		if s.covers(&acc, &accQ) {
			break
		}
	}

	// A candidate holds at most one share per device: give the four
	// buffers their room up front rather than growing each in turn.
	bufs := [4]candidate{}
	pos, amt := make([]int, 4*len(devs)), make([]apd.Decimal, 4*len(devs))
	for k := range bufs {
		bufs[k].pos = pos[k*len(devs) : k*len(devs) : (k+1)*len(devs)]
		bufs[k].amt = amt[k*len(devs) : k*len(devs) : (k+1)*len(devs)]
	}
	best, keep, first, cur := &bufs[0], &bufs[1], &bufs[2], &bufs[3]
	haveBest := false
	var window, windowQ apd.Decimal
	for size := n0; size <= len(devs); size++ {
		window.SetInt64(0)
		for i := 0; i < size; i++ {
			s.check(ctx.Add(&window, &window, &s.free[i]))
		}
		s.across(0, size, first)
		copyCandidate(keep, first)
		for start := 1; start <= len(devs)-size; start++ {
			s.check(ctx.Sub(&window, &window, &s.free[start-1]))
			s.check(ctx.Add(&window, &window, &s.free[start+size-1]))
			if !s.covers(&window, &windowQ) {
				break
			}
			s.across(start, size, cur)
			// Evenness only gets worse as the windows move toward less
			// free devices (so the allocator assumes), so stop at the
			// first window less even than the first one.
			if cur.evenness.Cmp(&first.evenness) < 0 {
				break
			}
			// sorted(..., key=-len)[-1]: the last of the fewest devices.
			if len(cur.pos) <= len(keep.pos) {
				keep, cur = cur, keep
			}
		}
		if !haveBest || keep.atLeast(best) {
			best, keep = keep, best
			haveBest = true
		}
		// A perfectly even split can only be matched by larger windows,
		// which lose on the device count, so nothing later can win.
		// (Backend.AI meant to stop here too, but its test compares the
		// score with 0.01 and never fires; stopping changes no result.)
		if best.evenness.Sign() == 0 {
			break
		}
	}
	if s.err != nil {
		if errors.Is(s.err, ErrIndexError) {
			return nil, errIndex(slot, "distribute_evenly hands out more hundredths than the window has devices")
		}
		return nil, errInvalidAmount(slot, remaining)
	}
	if !haveBest {
		return nil, errIndex(slot, "no window of devices to evaluate")
	}
	shares := make([]Share, len(best.pos))
	for i, p := range best.pos {
		shares[i] = Share{devs[p].id, model.DecFromApd(&best.amt[i])}
	}
	return shares, nil
}

// covers is Python's `amount.quantize(0.01) >= remaining.quantize(0.01)`.
// Quantizing is monotonic, so an amount that covers the request exactly
// needs no rounding; only a smaller one is quantized (into scratch).
func (s *evenSearch) covers(amount, scratch *apd.Decimal) bool {
	if s.cmp(amount, &s.remaining) >= 0 {
		return true
	}
	s.check(model.PyContext.Quantize(scratch, amount, -2))
	return scratch.Cmp(&s.remQ) >= 0
}

// check records the first arithmetic failure; only values beyond the
// context's range can cause one.
func (s *evenSearch) check(_ apd.Condition, err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
}

func copyCandidate(dst, src *candidate) {
	dst.reset()
	for i, p := range src.pos {
		dst.push(p).Set(&src.amt[i])
	}
	dst.evenness.Set(&src.evenness)
	dst.frag = src.frag
}

// across is allocate_across_devices over devs[start:start+size] plus the
// candidate's score: starting from the window's last (least free) device,
// a device that cannot take an even part takes all it has; the rest share
// what remains evenly in hundredths, the leftover hundredths going to the
// first devices.
func (s *evenSearch) across(start, size int, out *candidate) {
	ctx := model.PyContext
	out.reset()
	rem, q, nd := &s.tmp[0], &s.tmp[1], &s.tmp[2]
	rem.Set(&s.remaining)
	n := size
	for n > 0 {
		p := start + n - 1
		var part *apd.Decimal
		if n == size {
			// Nothing taken yet: rem is the full request.
			part = s.quoRemaining(n)
		} else {
			nd.SetInt64(int64(n))
			s.check(ctx.Quo(q, rem, nd))
			part = q
		}
		if s.cmp(&s.free[p], part) >= 0 {
			break
		}
		s.check(ctx.Quantize(out.push(p), &s.free[p], -2))
		s.check(ctx.Sub(rem, rem, &s.free[p]))
		n--
	}
	if n == size {
		// The common case: every device of the window takes an even
		// part. The amounts and their evenness depend only on the window
		// size, so they are computed once per size.
		u := s.uniformSplit(size)
		for k := range u.amt {
			out.push(start + k).Set(&u.amt[k])
		}
		out.evenness.Set(&u.evenness)
		s.fragmentation(out)
		return
	}
	if n > 0 {
		s.distribute(start, n, rem, false, out)
	}
	s.evenness(out)
	s.fragmentation(out)
}

// uniformSplit is the candidate for a window of size devices none of which
// takes all its free capacity (device positions 0..size-1).
func (s *evenSearch) uniformSplit(size int) *candidate {
	u := &s.uniform[size]
	if !s.haveUniform[size] {
		u.pos, u.amt = make([]int, 0, size), make([]apd.Decimal, 0, size)
		s.distribute(0, size, &s.remaining, true, u)
		s.evenness(u)
		s.haveUniform[size] = true
	}
	return u
}

// distribute is distribute_evenly: n devices from start each get rem/n
// rounded down to 0.01, and round(rem*100 - each*n*100) of them (the
// first) one more hundredth. full says rem is the whole request, whose
// quotient is cached.
func (s *evenSearch) distribute(start, n int, rem *apd.Decimal, full bool, out *candidate) {
	ctx := model.PyContext
	q, nd, t := &s.tmp[1], &s.tmp[2], &s.tmp[3]
	nd.SetInt64(int64(n))
	if full {
		s.check(downContext.Quantize(q, s.quoRemaining(n), -2))
	} else {
		s.check(ctx.Quo(q, rem, nd))
		s.check(downContext.Quantize(q, q, -2))
	}
	first := len(out.pos)
	for k := 0; k < n; k++ {
		out.push(start + k).Set(q)
	}
	s.check(ctx.Mul(t, rem, apdHundred))
	s.check(ctx.Mul(q, q, nd))
	s.check(ctx.Mul(q, q, apdHundred))
	s.check(ctx.Sub(t, t, q))
	s.check(ctx.Quantize(t, t, 0)) // round(), half to even
	extra, err := t.Int64()
	if err != nil || extra > int64(n) {
		// Python would index past the window (IndexError); the
		// arithmetic makes this unreachable, so treat it as a failure of
		// the search.
		s.check(0, ErrIndexError)
		extra = 0
	}
	for k := 0; k < int(extra); k++ {
		a := &out.amt[first+k]
		s.check(ctx.Add(a, a, apdHundredth))
	}
}

// evenness is measure_evenness: minus the sum of the gaps between adjacent
// sorted amounts.
func (s *evenSearch) evenness(c *candidate) {
	ctx := model.PyContext
	vals := s.sortBuf[:len(c.amt)]
	for i := range c.amt {
		vals[i] = &c.amt[i]
	}
	// Sorted in O(n log n): an insertion sort was quadratic in the
	// window, which on a node with thousands of devices (issue 23) took
	// minutes. The sorted values, hence the gaps and their sum in the
	// same order, are the same whatever the sort.
	slices.SortFunc(vals, func(x, y *apd.Decimal) int { return x.Cmp(y) })
	gap := &s.tmp[1]
	c.evenness.SetInt64(0)
	for i := 0; i+1 < len(vals); i++ {
		s.check(ctx.Sub(gap, vals[i+1], vals[i]))
		s.check(ctx.Add(&c.evenness, &c.evenness, gap))
	}
	clear(vals)
	c.evenness.Neg(&c.evenness)
}

// fragmentation is measure_fragmentation: the devices that would be left
// with strictly between 0.01 and min_memory free (never any with the
// default min_memory of 0.01, so it is skipped then).
func (s *evenSearch) fragmentation(c *candidate) {
	c.frag = 0
	if !s.fragOn {
		return
	}
	ctx := model.PyContext
	left := &s.tmp[3]
	for i, p := range c.pos {
		capacity := s.m.devs[s.devs[p].idx].Capacity.Apd()
		s.check(ctx.Sub(left, capacity, &c.amt[i]))
		s.check(ctx.Quantize(left, left, -2))
		if apdHundredth.Cmp(left) < 0 && left.Cmp(&s.minMemQ) < 0 {
			c.frag++
		}
	}
}

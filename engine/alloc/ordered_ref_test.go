package alloc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// The direct transcription of get_current_allocations that ordered()
// replaced (it sorts and sums per call); TestOrderedMatchesReference
// checks the two agree.

// refOrdered is get_current_allocations(affinity_hint, slot_name): the slot's
// devices in the priority order the allocators walk. The sorting works on
// positions into one slice of devices, which keeps it cheap for 64+ cores.
func (c *core) refOrdered(hint *AffinityHint, slot model.SlotName) []devAlloc {
	idxs := c.slotDevs(slot)
	all := make([]devAlloc, len(idxs))
	for k, i := range idxs {
		all[k] = devAlloc{idx: i, id: c.devs[i].ID, alloc: c.alloc[i], free: c.devs[i].Capacity.Sub(c.alloc[i])}
	}
	byFree := func(ps []int) {
		// sorted(..., key=capacity - alloc, reverse=True): most free
		// first, ties in their current order.
		slices.SortStableFunc(ps, func(a, b int) int { return all[b].free.Cmp(all[a].free) })
	}
	positions := make([]int, len(all))
	for k := range positions {
		positions[k] = k
	}
	var order []int
	switch {
	case hint == nil:
		// Legacy path: every device by free capacity.
		byFree(positions)
		order = positions
	case len(hint.Devices) == 0:
		// First device type of a run: one cluster per NUMA node (the
		// connected components over weight-0 edges), least loaded
		// cluster first, most free device first within a cluster.
		clusters := c.refGroupByNUMA(all, positions)
		refSortClusters(clusters, all)
		for _, cl := range clusters {
			byFree(cl)
		}
		if hint.Policy == PreferSingleNode {
			order = make([]int, 0, len(all))
			for _, cl := range clusters {
				order = append(order, cl...)
			}
		} else {
			order = refInterleaveLongest(clusters, len(all))
		}
	default:
		// A later device type: the devices on the NUMA nodes the previous
		// type used (primary sets, interleaved whatever the policy), then
		// every other device (the secondary set).
		nodes := hintNodes(hint.Devices)
		primary := make([][]int, len(nodes))
		var secondary []int
		for _, p := range positions {
			k := numaKey(c.devs[all[p].idx].NUMANode)
			if n := slices.Index(nodes, k); n >= 0 {
				primary[n] = append(primary[n], p)
			} else {
				secondary = append(secondary, p)
			}
		}
		refSortClusters(primary, all)
		for _, ps := range primary {
			byFree(ps)
		}
		byFree(secondary)
		order = append(refInterleaveLongest(primary, len(all)), secondary...)
	}
	out := make([]devAlloc, len(order))
	for k, p := range order {
		out[k] = all[p]
	}
	return out
}

// refGroupByNUMA splits device positions into clusters of equal NUMA node,
// clusters in the order their first device appears (networkx's
// connected_components order over the affinity graph's insertion-ordered
// nodes).
func (c *core) refGroupByNUMA(all []devAlloc, positions []int) [][]int {
	var keys []int
	var clusters [][]int
	for _, p := range positions {
		k := numaKey(c.devs[all[p].idx].NUMANode)
		n := slices.Index(keys, k)
		if n < 0 {
			n = len(keys)
			keys = append(keys, k)
			clusters = append(clusters, nil)
		}
		clusters[n] = append(clusters[n], p)
	}
	return clusters
}

// refSortClusters orders clusters by the total already allocated on them,
// lowest first, then by size, largest first; the sort is stable.
func refSortClusters(clusters [][]int, all []devAlloc) {
	if len(clusters) < 2 {
		return
	}
	totals := make([]model.Dec, len(clusters))
	for i, cl := range clusters {
		t := model.Zero
		for _, p := range cl {
			t = t.Add(all[p].alloc)
		}
		totals[i] = t
	}
	order := make([]int, len(clusters))
	for i := range order {
		order[i] = i
	}
	// networkx hands the components over sorted by (distance, -size), so
	// among equally loaded clusters the larger comes first.
	slices.SortStableFunc(order, func(a, b int) int {
		if c := totals[a].Cmp(totals[b]); c != 0 {
			return c
		}
		return len(clusters[b]) - len(clusters[a])
	})
	sorted := make([][]int, len(clusters))
	for i, o := range order {
		sorted[i] = clusters[o]
	}
	copy(clusters, sorted)
}

// refInterleaveLongest is more_itertools.interleave_longest: one element from
// each list in turn, skipping exhausted lists.
func refInterleaveLongest(lists [][]int, total int) []int {
	out := make([]int, 0, total)
	for i := 0; ; i++ {
		took := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				took = true
			}
		}
		if !took {
			return out
		}
	}
}

// randomCoreMap builds a map of random devices over a few slots, NUMA
// nodes (nil included) and capacities, with random allocations (over- and
// negatively committed ones included), written straight into alloc as a
// loaded map would have them.
func randomCoreMap(rng *rand.Rand, fractional bool) Map {
	capacities := []string{"1", "1.0", "1.00", "0.5", "2", "13.5", "4", "1E+1"}
	used := []string{"0", "0", "0.00", "1", "0.5", "0.25", "0.125", "2", "-1", "-0", "1E+1", "3.75"}
	slots := []model.SlotName{"x.shares", "x.shares", "x.device"}
	if !fractional {
		slots = []model.SlotName{"cpu", "cpu", "cpu.big"}
	}
	n := 1 + rng.IntN(20)
	devs := make([]DeviceSlot, n)
	for i := range devs {
		var numa *int
		if k := rng.IntN(5); k < 4 {
			numa = intp(k)
		}
		devs[i] = DeviceSlot{ID: model.DeviceID(fmt.Sprint(rng.IntN(n + 3))), Slot: slots[rng.IntN(len(slots))],
			Capacity: dec(capacities[rng.IntN(len(capacities))]), NUMANode: numa}
	}
	var m Map
	var c *core
	if fractional {
		f := NewFractionMap(devs, Strategy(rng.IntN(2)), model.Dec{}, nil)
		m, c = f, &f.core
	} else {
		d := NewDiscreteMap(devs, Strategy(rng.IntN(2)), nil)
		m, c = d, &d.core
	}
	for i := range c.alloc {
		c.alloc[i] = dec(used[rng.IntN(len(used))])
	}
	return m
}

func coreOf(m Map) *core {
	switch m := m.(type) {
	case *FractionMap:
		return &m.core
	case *DiscreteMap:
		return &m.core
	}
	panic("unknown map")
}

func randomHint(rng *rand.Rand) *AffinityHint {
	switch rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return &AffinityHint{Policy: AffinityPolicy(rng.IntN(2))}
	}
	h := &AffinityHint{Policy: AffinityPolicy(rng.IntN(2))}
	for range 1 + rng.IntN(3) {
		var numa *int
		if k := rng.IntN(6); k < 5 { // node 4 is on no device
			numa = intp(k)
		}
		h.Devices = append(h.Devices, HintDevice{Name: "x", ID: "h", NUMANode: numa})
	}
	return h
}

func devAllocString(ds []devAlloc) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%d/%s alloc=%s free=%s; ", d.idx, d.id, d.alloc, d.free)
	}
	return b.String()
}

// TestOrderedMatchesReference checks the derived-state ordering against
// the direct transcription on random maps and hints, for every slot (and
// one the map does not have), before and after allocations change the map.
func TestOrderedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 4000 {
		m := randomCoreMap(rng, rng.IntN(2) == 0)
		c := coreOf(m)
		for step := range 3 {
			for _, slot := range []model.SlotName{"x.shares", "x.device", "cpu", "cpu.big", "nope"} {
				hint := randomHint(rng)
				got, want := devAllocString(c.ordered(hint, slot)), devAllocString(c.refOrdered(hint, slot))
				if got != want {
					t.Fatalf("iter %d step %d slot %s hint %+v:\n got %s\nwant %s", iter, step, slot, hint, got, want)
				}
			}
			// Change the map through the allocator, so that the next step
			// must not see the state derived before.
			slot := c.devs[rng.IntN(len(c.devs))].Slot
			_, _ = m.Allocate(Request{{slot, model.NewDec(int64(1+rng.IntN(300)), -2)}}, randomHint(rng), Options{})
		}
	}
}

// TestDerivedStateFollowsChanges runs random sequences of allocations,
// frees, applies, clones and failed requests on one long-lived map (whose
// derived state is reused and must be dropped on every change) and checks
// every step against a map built fresh from the same devices and
// allocations.
func TestDerivedStateFollowsChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fresh := func(m Map) Map {
		c := coreOf(m)
		var n Map
		switch m := m.(type) {
		case *FractionMap:
			n = NewFractionMap(c.devs, m.strategy, m.quantum, c.exclusive)
		case *DiscreteMap:
			n = NewDiscreteMap(c.devs, m.strategy, c.exclusive)
		}
		copy(coreOf(n).alloc, c.alloc)
		return n
	}
	for iter := range 1500 {
		m := randomCoreMap(rng, rng.IntN(2) == 0)
		var held []Allocation
		for step := range 12 {
			slot := coreOf(m).devs[rng.IntN(len(coreOf(m).devs))].Slot
			amount := model.NewDec(int64(rng.IntN(400)), -int32(rng.IntN(3)))
			r := Request{{slot, amount}}
			hint := randomHint(rng)
			opts := Options{ForbidFragmentation: rng.IntN(3) == 0}
			ref := fresh(m)
			switch op := rng.IntN(6); {
			case op == 0 && len(held) > 0:
				k := rng.IntN(len(held))
				if err1, err2 := m.Free(held[k]), ref.Free(held[k]); (err1 == nil) != (err2 == nil) {
					t.Fatalf("iter %d step %d: free: %v vs %v", iter, step, err1, err2)
				}
				held = append(held[:k], held[k+1:]...)
			case op == 1 && len(held) > 0:
				a := held[rng.IntN(len(held))]
				if err1, err2 := m.Apply(a), ref.Apply(a); (err1 == nil) != (err2 == nil) {
					t.Fatalf("iter %d step %d: apply: %v vs %v", iter, step, err1, err2)
				}
			case op == 2:
				// A clone shares the derived state; changing it must not
				// change the original's.
				cl := m.Clone()
				_, _ = cl.Allocate(r, hint, opts)
			default:
				got, err1 := m.Allocate(r, hint, opts)
				want, err2 := ref.Allocate(r, hint, opts)
				if kindOf(err1) != kindOf(err2) || got.String() != want.String() {
					t.Fatalf("iter %d step %d: %s: got %s (%v), want %s (%v)", iter, step, r[0].Amount, got, err1, want, err2)
				}
				if err1 == nil {
					held = append(held, got)
				}
			}
			if g, w := m.Allocations().String(), ref.Allocations().String(); g != w {
				t.Fatalf("iter %d step %d: map %s, want %s", iter, step, g, w)
			}
			for _, s := range coreOf(m).slots {
				if g, w := fmt.Sprint(m.SlotFree(s.name), m.SlotFreeTotal(s.name)),
					fmt.Sprint(ref.SlotFree(s.name), ref.SlotFreeTotal(s.name)); g != w {
					t.Fatalf("iter %d step %d: free %s, want %s", iter, step, g, w)
				}
			}
		}
	}
}

// TestSearchCmpMatchesApd checks the search's allocation-free comparison
// against apd's on values of every sign, size and exponent, including
// equal values of different exponents and ones far apart.
func TestSearchCmpMatchesApd(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var s evenSearch
	values := []string{"0", "-0", "0.00", "1", "1.0", "0.40", "0.4", "-0.40", "Infinity", "-Infinity", "NaN",
		"0.1714285714285714285714285714", "0.17142857142857142857142857", "1E+30", "1E-30", "123456789012345678901234567.8",
		"0.3333333333333333333333333333", "0.33", "0.34", "-0.3333333333333333333333333333", "1.2", "1.20000000000000000000000000001"}
	for range 20000 {
		var x, y apd.Decimal
		for _, d := range []*apd.Decimal{&x, &y} {
			if rng.IntN(2) == 0 {
				if _, _, err := d.SetString(values[rng.IntN(len(values))]); err != nil {
					t.Fatal(err)
				}
			} else {
				d.SetFinite(int64(rng.IntN(2000))-1000, -int32(rng.IntN(40)))
			}
		}
		if g, w := s.cmp(&x, &y), x.Cmp(&y); g != w {
			t.Fatalf("cmp(%s, %s) = %d, want %d", &x, &y, g, w)
		}
	}
}

// TestTryIsAllocateOnClones checks Try against Allocate on clones of the
// maps, on random pairs of maps and requests (failures included), and that
// Try leaves the maps as they were.
func TestTryIsAllocateOnClones(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	order := []model.DeviceName{"x", "cpu"}
	slots := []model.SlotName{"x.shares", "x.device", "cpu", "cpu.big"}
	for iter := range 3000 {
		maps := map[model.DeviceName]Map{"x": randomCoreMap(rng, true), "cpu": randomCoreMap(rng, false)}
		if rng.IntN(4) == 0 {
			Warm(maps["cpu"])
		}
		for step := range 4 {
			var r Request
			for range 1 + rng.IntN(3) {
				r = append(r, SlotAmount{slots[rng.IntN(len(slots))], model.NewDec(int64(rng.IntN(400)), -int32(rng.IntN(3)))})
			}
			policy := AffinityPolicy(rng.IntN(2))
			opts := Options{ForbidFragmentation: rng.IntN(3) == 0}
			before := maps["x"].Allocations().String() + maps["cpu"].Allocations().String()
			got, err1 := Try(maps, r, order, policy, opts)
			want, err2 := Allocate(CloneAll(maps), r, order, policy, opts)
			if fmt.Sprint(got, err1) != fmt.Sprint(want, err2) {
				t.Fatalf("iter %d step %d %v: Try %v %v, Allocate %v %v", iter, step, r, got, err1, want, err2)
			}
			if after := maps["x"].Allocations().String() + maps["cpu"].Allocations().String(); after != before {
				t.Fatalf("iter %d step %d: Try changed the maps: %s -> %s", iter, step, before, after)
			}
			if rng.IntN(2) == 0 {
				_, _ = Allocate(maps, r, order, policy, opts) // move on to another state
			}
		}
	}
}

// TestDerivedUnitsMatchPyInt checks the whole units a discrete map derives
// against the direct pyInt computations, for free capacities of every
// sign, with and without fractions, at and beyond int64's range.
func TestDerivedUnitsMatchPyInt(t *testing.T) {
	values := []string{"0", "-0", "1", "1.0", "1.5", "-1.5", "-1", "-0.5", "0.5", "2.000", "1E+1", "-1E+1",
		"9223372036854775807", "9223372036854775808.5", "-9223372036854775808", "-9223372036854775809.5",
		"1E+30", "-1E+30", "123456789.987654321", "Infinity", "-Infinity"}
	var devs []DeviceSlot
	var used []model.Dec
	for i, c := range values {
		for j, u := range []string{"0", "0.25", "-0.75", "1", "1E+2"} {
			devs = append(devs, DeviceSlot{ID: model.DeviceID(fmt.Sprint(i, "/", j)), Slot: "cpu", Capacity: dec(c)})
			used = append(used, dec(u))
		}
	}
	m := NewDiscreteMap(devs, Evenly, nil)
	copy(m.alloc, used)
	d := m.derived()
	for i := range m.devs {
		f := m.devs[i].Capacity.Sub(m.alloc[i])
		fl := quantizeTo(f, 0, apd.RoundFloor)
		if got, want := fmt.Sprint(d.free[i], d.floor[i], d.whole[i], d.units[i], d.zeroNoop[i]),
			fmt.Sprint(f, pyInt(fl), fl.Equal(f), pyInt(f), zeroAddIsNoop(m.alloc[i])); got != want {
			t.Errorf("capacity %s, used %s: derived %s, want %s", m.devs[i].Capacity, m.alloc[i], got, want)
		}
	}
}

// refRemainderNear and refRoundDown are remainderNear and roundDown as
// they were, on model.Dec values throughout.
func refRemainderNear(x, y model.Dec) (model.Dec, error) {
	xa, ya := x.Apd(), y.Apd()
	if xa.Form != apd.Finite || ya.Form != apd.Finite || ya.IsZero() {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): invalid operation", x, y)
	}
	ctx := model.PyContext
	var r, q apd.Decimal
	if _, err := ctx.Rem(&r, xa, ya); err != nil {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, y, err)
	}
	if _, err := ctx.QuoInteger(&q, xa, ya); err != nil {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, y, err)
	}
	// r is the truncated remainder (sign of x). Step past the half-way mark,
	// or onto it when the truncated quotient is odd, to the other side.
	var ar, ay, twice apd.Decimal
	ar.Abs(&r)
	ay.Abs(ya)
	if _, err := ctx.Add(&twice, &ar, &ar); err != nil {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, y, err)
	}
	c := twice.Cmp(&ay)
	if c > 0 || (c == 0 && q.Coeff.Bit(0) == 1) {
		var err error
		if xa.Negative {
			_, err = ctx.Add(&r, &r, &ay)
		} else {
			_, err = ctx.Sub(&r, &r, &ay)
		}
		if err != nil {
			return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, y, err)
		}
	}
	return model.DecFromApd(&r), nil
}

func refRoundDown(x, q model.Dec) (model.Dec, error) {
	r, err := refRemainderNear(x, q)
	if err != nil {
		return nan, err
	}
	if r.Sign() < 0 {
		r = r.Add(q)
	}
	return x.Sub(r), nil
}

// TestRoundDownMatchesReference checks roundDown's apd version against the
// model.Dec one on values of every sign, exponent and size.
func TestRoundDownMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	xs := []string{"0", "-0", "0.60", "0.6", "1E+2", "-1E+2", "0.125", "-0.125", "4.850", "1E+30", "-0.005", "Infinity", "NaN"}
	qs := []string{"0.01", "0.1", "0.05", "0.25", "1", "1E+1", "0.001", "0", "-0.1", "Infinity"}
	for range 20000 {
		var x, q model.Dec
		if rng.IntN(2) == 0 {
			x = dec(xs[rng.IntN(len(xs))])
		} else {
			x = model.NewDec(int64(rng.IntN(20000))-10000, -int32(rng.IntN(6)))
		}
		if rng.IntN(2) == 0 {
			q = dec(qs[rng.IntN(len(qs))])
		} else {
			q = model.NewDec(int64(rng.IntN(50)), -int32(rng.IntN(4)))
		}
		got, err1 := roundDown(x, q)
		want, err2 := refRoundDown(x, q)
		if got.String() != want.String() || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("roundDown(%s, %s) = %s, %v; want %s, %v", x, q, got, err1, want, err2)
		}
		got, err1 = remainderNear(x, q)
		want, err2 = refRemainderNear(x, q)
		if got.String() != want.String() || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("remainderNear(%s, %s) = %s, %v; want %s, %v", x, q, got, err1, want, err2)
		}
	}
}

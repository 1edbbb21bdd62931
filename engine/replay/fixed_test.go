package replay

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/fgtop/fgtop/model"
)

// fixedAmounts are amounts of every form a record holds and some it
// should not: shares in tenths and hundredths, whole cores, memory in
// bytes, exponents above zero, and coefficients near and past int64.
var fixedAmounts = []string{
	"0", "0.0", "0.00", "0.1", "0.25", "0.50", "1.0", "2", "8", "1E+2", "1.5E+3", "0.000001",
	"1073741824", "68719476736", "1099511627776000", "9223372036854775807", "9223372036854775808",
	"92233720368547758.07", "123456789012345678901234", "5E+18", "0.3333333333333333333",
}

// TestFixedIsDecArithmetic: sums and differences kept as fixed are the
// very Decs (Identical: value and exponent) Dec's Add and Sub give, in
// random sequences that start at zero, climb, give back, overflow int64
// and come back; every comparison agrees with Dec's; and the time-
// weighted use sum is the Dec sum settle made, also past 10^26 (where it
// takes the decimal path) and when a finer exponent arrives late.
func TestFixedIsDecArithmetic(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 29))
	amts := make([]model.Dec, len(fixedAmounts))
	for i, s := range fixedAmounts {
		amts[i] = model.MustDec(s)
	}
	decPaths, usePaths := 0, 0
	for round := range 2000 {
		// Most rounds draw from a few small amounts, as a node's
		// sessions do; some from all of them.
		pool := amts[:12]
		switch round % 5 {
		case 0:
			pool = amts
		case 1:
			// Large amounts that fit int64 one by one: their products
			// with a week's nanoseconds pass 28 digits.
			pool = amts[12:16]
		}
		var f fixed
		var d model.Dec
		var u useSum
		ud := model.Zero
		var taken []model.Dec
		for step := range 60 {
			v := pool[rng.IntN(len(pool))]
			back := len(taken) > 0 && rng.IntN(3) == 0
			if back {
				k := rng.IntN(len(taken))
				v = taken[k]
				taken = append(taken[:k], taken[k+1:]...)
				f, d = f.add(fixedOf(v), true), d.Sub(v)
			} else {
				taken = append(taken, v)
				f, d = f.add(fixedOf(v), false), d.Add(v)
			}
			if !f.Dec().Identical(d) {
				t.Fatalf("seed %d round %d step %d: fixed %s (%+v), Dec %s", seed, round, step, f.Dec(), f, d)
			}
			w := fixedOf(pool[rng.IntN(len(pool))])
			if got, want := f.cmp(w), d.Cmp(w.Dec()); got != want {
				t.Fatalf("seed %d round %d step %d: %s against %s: fixed %d, Dec %d", seed, round, step, d, w.Dec(), got, want)
			}
			dt := rng.Int64N(600e12) + 1
			if rng.IntN(2) == 0 {
				dt = rng.Int64N(5e9) + 1
			}
			u.add(f, dt)
			if d.Sign() != 0 {
				ud = ud.Add(d.Mul(model.DecFromInt64(dt)))
			}
			if !u.Dec().Identical(ud) {
				t.Fatalf("seed %d round %d step %d: use sum %s, Dec %s", seed, round, step, u.Dec(), ud)
			}
		}
		if f.dec {
			decPaths++
		}
		if u.dec {
			usePaths++
		}
	}
	if decPaths == 0 || usePaths == 0 {
		t.Fatalf("seed %d: the decimal path was never taken (sums %d, use sums %d)", seed, decPaths, usePaths)
	}
}

// TestFixedAtTheContextsEdgeIsDec: amounts whose exponents lie near or
// past the context's range (a damaged record's), where Dec's sum is not
// the exact one (a subnormal, an overflow: NaN), give what Dec gives,
// in sums, differences, comparisons and the use sum, beside the small
// amounts a record holds.
func TestFixedAtTheContextsEdgeIsDec(t *testing.T) {
	edge := []string{"1E-1000030", "9E+999999", "0E+999999", "0E-999999", "5E-999999", "1E-1000020",
		"1E+1001", "1E-1001", "3E+1000", "7E-1000", "0.25", "1", "0"}
	for _, xs := range edge {
		for _, ys := range edge {
			x, y := model.MustDec(xs), model.MustDec(ys)
			for _, sub := range []bool{false, true} {
				got, want := fixedOf(x).add(fixedOf(y), sub), x.Add(y)
				if sub {
					want = x.Sub(y)
				}
				if !got.Dec().Identical(want) {
					t.Errorf("%s %s %s: fixed %s, Dec %s", xs, map[bool]string{false: "+", true: "-"}[sub], ys, got.Dec(), want)
				}
			}
			if got, want := fixedOf(x).cmp(fixedOf(y)), x.Cmp(y); got != want {
				t.Errorf("%s against %s: fixed %d, Dec %d", xs, ys, got, want)
			}
			var u useSum
			ud := model.Zero
			for _, v := range []model.Dec{x, y} {
				u.add(fixedOf(v), 1e9)
				if v.Sign() != 0 {
					ud = ud.Add(v.Mul(model.DecFromInt64(1e9)))
				}
			}
			if !u.Dec().Identical(ud) {
				t.Errorf("use sum of %s and %s: %s, Dec %s", xs, ys, u.Dec(), ud)
			}
		}
	}
}

// TestRequestOfIsTheDecSum: a session's request made with fixed sums and
// kept Decs is, slot by slot, the Dec sum of what it holds (Identical:
// value and exponent), over random allocations of one to four devices
// a slot, amounts from the odd to the large, infinities and negative
// zeros included, with Decs kept across sessions (and, for two in three,
// the amounts' fixed memoized across them, for one in three the maps of
// equal requests shared: requestOfMemo).
func TestRequestOfIsTheDecSum(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 27))
	// Sums of up to four of these are exact (below 28 digits), so the
	// order a map gives the devices in does not round them apart.
	var amts []model.Dec
	for _, s := range fixedAmounts {
		if len(s) < 22 && s != "0.3333333333333333333" {
			amts = append(amts, model.MustDec(s))
		}
	}
	for _, s := range []string{"Infinity", "-0", "-0.00", "-1.5"} {
		amts = append(amts, model.MustDec(s))
	}
	slots := []model.SlotName{model.SlotCUDAShares, model.SlotCPU, model.SlotMem}
	decs := map[fixed]model.Dec{}
	fx := map[model.Dec]fixed{}
	same := map[reqKey]model.ResourceSlot{}
	maps, shared := map[unsafe.Pointer]bool{}, 0
	defer func() {
		if !t.Failed() && shared == 0 {
			t.Errorf("seed %d: no request shared an earlier one's map", seed)
		}
	}()
	for i := range 5000 {
		a := model.Allocations{}
		for _, slot := range slots[:1+rng.IntN(len(slots))] {
			devs := map[model.DeviceID]model.Dec{}
			for d := range rng.IntN(5) {
				pool := amts[:12]
				if rng.IntN(4) == 0 {
					pool = amts
				}
				devs[model.DeviceID(fmt.Sprint(d))] = pool[rng.IntN(len(pool))]
			}
			a[slot] = devs
		}
		want := model.ResourceSlot{}
		for slot, devs := range a {
			for _, amt := range devs {
				want[slot] = want[slot].Add(amt)
			}
		}
		// Every other one through the memo of the amounts' fixed, kept
		// across allocations that share their Decs (as a segment's do).
		got := requestOf(a, decs)
		switch i % 3 {
		case 1:
			got = requestOfMemo(a, decs, fx, nil)
		case 2:
			// Shared with an earlier request of the same slots and Decs.
			got = requestOfMemo(a, decs, fx, same)
			p := reflect.ValueOf(got).UnsafePointer()
			if maps[p] {
				shared++
			}
			maps[p] = true
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d, allocation %d %v: %v, the Dec sums %v", seed, i, a, got, want)
		}
		for slot, w := range want {
			if g, ok := got[slot]; !ok || !g.Identical(w) || g.String() != w.String() {
				t.Fatalf("seed %d, allocation %d %v: %s is %v, the Dec sum %v", seed, i, a, slot, g, w)
			}
		}
	}
}

// TestAskedOf: a session asks what SLOTS says where it is not zero, what
// it held of a slot SLOTS does not ask, and what it held with no SLOTS.
func TestAskedOf(t *testing.T) {
	held := model.Allocations{
		model.SlotCUDAShares: {"a": model.MustDec("0.7"), "b": model.MustDec("0.7")},
		model.SlotCPU:        {"0": model.MustDec("1"), "1": model.MustDec("1")},
	}
	for _, c := range []struct {
		name  string
		slots model.ResourceSlot
		want  string
	}{
		{"no SLOTS: what it held", nil, "map[cpu:2 cuda.shares:1.4]"},
		{"SLOTS as asked", model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.5"), model.SlotCPU: model.MustDec("2"), model.SlotMem: model.MustDec("4294967295")},
			"map[cpu:2 cuda.shares:1.5 mem:4294967295]"},
		{"zeros are not asked", model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.5"), model.SlotCPU: model.MustDec("2"), "cuda.device": model.MustDec("0")},
			"map[cpu:2 cuda.shares:1.5]"},
		{"a held slot SLOTS lacks is what it held", model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.5")}, "map[cpu:2 cuda.shares:1.5]"},
		{"all zeros: what it held", model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0")}, "map[cpu:2 cuda.shares:1.4]"},
		{"what no agent writes: what it held", model.ResourceSlot{model.SlotCPU: model.MustDec("1e30"), model.SlotCUDAShares: model.MustDec("Infinity"),
			model.SlotMem: model.MustDec("1e40")}, "map[cpu:2 cuda.shares:1.4]"},
	} {
		m := newAskMemo(nil)
		for range 2 { // the second from the memo
			if got := fmt.Sprint(m.askedOf(c.slots, held)); got != c.want {
				t.Errorf("%s: asked %s, want %s", c.name, got, c.want)
			}
		}
	}
}

// TestAskedOfLeavesOutUnregisteredSlots: a slot of a plugin the record
// lists that none of its devices registers (cuda.device on a fractional
// node) was not asked of the agent, which writes only the slots it knows;
// slots of plugins the record does not list are kept (judged by the
// agents' amounts, Record.Notes says so).
func TestAskedOfLeavesOutUnregisteredSlots(t *testing.T) {
	devs := []model.Device{{ID: "a", Name: "cuda", Slot: model.SlotCUDAShares}, {ID: "0", Name: "cpu", Slot: model.SlotCPU}}
	held := model.Allocations{model.SlotCUDAShares: {"a": model.MustDec("0.5")}, model.SlotCPU: {"0": model.MustDec("1")}}
	slots := model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5"), "cuda.device": model.MustDec("1"), model.SlotCPU: model.MustDec("1"),
		"tpu.device": model.MustDec("1")}
	if got := fmt.Sprint(newAskMemo(devs).askedOf(slots, held)); got != "map[cpu:1 cuda.shares:0.5 tpu.device:1]" {
		t.Errorf("asked %s", got)
	}
	if got := fmt.Sprint(newAskMemo(nil).askedOf(slots, held)); got != "map[cpu:1 cuda.device:1 cuda.shares:0.5 tpu.device:1]" {
		t.Errorf("with no devices known: asked %s", got)
	}
}

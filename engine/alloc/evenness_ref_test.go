package alloc

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// evennessInsertion is measure_evenness as the search computed it before
// issue 23 (an insertion sort of copies): the reference the sorted form
// is checked against.
func evennessInsertion(c *candidate) apd.Decimal {
	ctx := model.PyContext
	vals := make([]apd.Decimal, len(c.amt))
	for i := range c.amt {
		vals[i].Set(&c.amt[i])
	}
	var t apd.Decimal
	for i := 1; i < len(vals); i++ {
		for j := i; j > 0 && vals[j].Cmp(&vals[j-1]) < 0; j-- {
			t.Set(&vals[j])
			vals[j].Set(&vals[j-1])
			vals[j-1].Set(&t)
		}
	}
	var gap, sum apd.Decimal
	for i := 0; i+1 < len(vals); i++ {
		_, _ = ctx.Sub(&gap, &vals[i+1], &vals[i])
		_, _ = ctx.Add(&sum, &sum, &gap)
	}
	sum.Neg(&sum)
	return sum
}

// TestEvennessMatchesInsertionSort: the O(n log n) evenness equals the
// old quadratic one, digit for digit, on random candidates (hundredths,
// ties, long windows, values with many digits), and leaves the
// candidate's amounts as they were.
func TestEvennessMatchesInsertionSort(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 2))
	for trial := range 20000 {
		n := 1 + r.IntN(12)
		if trial%50 == 0 {
			n = 1 + r.IntN(600)
		}
		c := &candidate{}
		for k := range n {
			var v *apd.Decimal
			switch r.IntN(4) {
			case 0: // few distinct values: ties
				v = apd.New(int64(100+r.IntN(3)), -2)
			case 1:
				v = apd.New(r.Int64N(1<<40), -int32(r.IntN(30)))
			default:
				v = apd.New(int64(r.IntN(10000)), -2)
			}
			c.push(k).Set(v)
		}
		before := make([]string, n)
		for i := range c.amt {
			before[i] = c.amt[i].String()
		}
		want := evennessInsertion(c)
		s := &evenSearch{sortBuf: make([]*apd.Decimal, n)}
		s.evenness(c)
		if c.evenness.Cmp(&want) != 0 || c.evenness.String() != want.String() {
			t.Fatalf("trial %d: evenness %s, the insertion sort gives %s (amounts %v)", trial, c.evenness.String(), want.String(), before)
		}
		for i := range c.amt {
			if c.amt[i].String() != before[i] {
				t.Fatalf("trial %d: amount %d changed from %s to %s", trial, i, before[i], c.amt[i].String())
			}
		}
	}
}

// TestFreeCountsMatchTheLoop: the fragmentation guard's counts by binary
// search equal the loop's (the one ensure_slot_not_fragmented runs, kept
// as freeCounts' fallback) on random free amounts and thresholds, ties
// and a negative quantum included.
func TestFreeCountsMatchTheLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 4))
	for trial := range 3000 {
		n := 16 + r.IntN(300)
		devs := make([]devAlloc, n)
		for i := range devs {
			devs[i].free = model.NewDec(int64(r.IntN(120)), -2)
		}
		fast := newFreeCounts(devs)
		if fast.sorted == nil {
			t.Fatal("no sorted counts for", n, "devices")
		}
		slow := freeCounts{devs: devs}
		for range 20 {
			d := model.NewDec(int64(r.IntN(130)), -2)
			q := model.NewDec(int64(r.IntN(30)-5), -2)
			dq := d.Add(q)
			h1, l1 := fast.split(d, dq)
			h2, l2 := slow.split(d, dq)
			if h1 != h2 || l1 != l2 {
				t.Fatalf("trial %d: d %s dq %s: search %d/%d, loop %d/%d", trial, d, dq, h1, l1, h2, l2)
			}
		}
	}
}

package history

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/fgtop/fgtop/model"
)

// TestSumIsCompact: the walk keeps a sum per kernel to its end (211,000
// on the bench week, beside the folds being read): who it is once, what
// only the span's edges use aside. 344 bytes before, a fifth of the
// read's live heap.
func TestSumIsCompact(t *testing.T) {
	if n := unsafe.Sizeof(ksum{}); n > 208 {
		t.Fatalf("a kernel's sum is %d bytes: want at most 208", n)
	}
}

// TestKeptEntriesAreTheArrivals: an arrival's entries are kept as their
// places in the walk's table, each distinct entry there once, and read
// back as they were (each slot's first marked), for the change checks
// as withinFlat reads the entries themselves.
func TestKeptEntriesAreTheArrivals(t *testing.T) {
	one, half := model.DecFromInt64(1), model.MustDec("0.5")
	arrival := []allocEnt{
		{slot: "cpu", dev: "root", amt: one, first: true},
		{slot: "cuda.shares", dev: "0", amt: half, first: true},
		{slot: "cuda.shares", dev: "1", amt: one},
	}
	sw := &sessWalk{}
	var ks []*ksum
	for range 1000 {
		k := &ksum{lazy: true, nslots: 2}
		k.ents = sw.keepEnts(slices.Clone(arrival))
		ks = append(ks, k)
	}
	if len(sw.tab) != len(arrival) {
		t.Fatalf("1,000 equal arrivals kept %d distinct entries: want %d", len(sw.tab), len(arrival))
	}
	for _, k := range []*ksum{ks[0], ks[999]} {
		fa := sw.keptFA(k)
		if fa.n != 2 || !slices.Equal(fa.ents, arrival) {
			t.Fatalf("kept arrival reads back as %+v (%d slots): want %+v", fa.ents, fa.n, arrival)
		}
	}
	base := flatAlloc{ents: arrival, n: 2}
	for _, c := range []struct {
		name string
		head []allocEnt
	}{
		{"part of it", []allocEnt{{slot: "cuda.shares", dev: "1", amt: one, first: true}}},
		{"all of it", arrival},
		{"another amount", []allocEnt{{slot: "cuda.shares", dev: "0", amt: one, first: true}}},
		{"another device", []allocEnt{{slot: "cuda.shares", dev: "2", amt: half, first: true}}},
		{"another slot", []allocEnt{{slot: "mem", dev: "root", amt: one, first: true}}},
	} {
		head := flatAlloc{ents: c.head, n: 1}
		if got, want := sw.keptWithin(ks[500], &head), head.withinFlat(&base); got != want {
			t.Errorf("%s: within the kept arrival %v, within the arrival itself %v", c.name, got, want)
		}
	}
}

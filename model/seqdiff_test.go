package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestDiffKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b KernelSeqBuilder
	cur := map[KernelID]*Kernel{}
	prev := b.Seq()
	for round := 0; round < 400; round++ {
		// A burst of edits, as between two published snapshots.
		for e := rng.IntN(40); e >= 0; e-- {
			id := KernelID(fmt.Sprintf("k%05d", rng.IntN(3000)))
			if rng.IntN(3) == 0 {
				b.Delete(id)
				delete(cur, id)
			} else {
				k := &Kernel{ID: id}
				b.Put(k)
				cur[id] = k
			}
		}
		next := b.Seq()
		want := map[KernelID][2]*Kernel{}
		prev.Each(func(k *Kernel) {
			if n := next.Get(k.ID); n != k {
				want[k.ID] = [2]*Kernel{k, n}
			}
		})
		next.Each(func(k *Kernel) {
			if prev.Get(k.ID) == nil {
				want[k.ID] = [2]*Kernel{nil, k}
			}
		})
		got := map[KernelID][2]*Kernel{}
		DiffKernels(prev, next, func(o, n *Kernel) {
			id := KernelID("")
			if o != nil {
				id = o.ID
			} else {
				id = n.ID
			}
			if _, dup := got[id]; dup {
				t.Fatalf("round %d: %s reported twice", round, id)
			}
			got[id] = [2]*Kernel{o, n}
		})
		if len(got) != len(want) {
			t.Fatalf("round %d: %d differences, want %d", round, len(got), len(want))
		}
		for id, w := range want {
			if got[id] != w {
				t.Fatalf("round %d: %s: got %v, want %v", round, id, got[id], w)
			}
		}
		if next.Len() != len(cur) {
			t.Fatalf("round %d: len %d, want %d", round, next.Len(), len(cur))
		}
		prev = next
	}
	// From and to nothing.
	n := 0
	DiffKernels(nil, prev, func(o, k *Kernel) { n++ })
	if n != prev.Len() {
		t.Fatalf("from nil: %d, want %d", n, prev.Len())
	}
}

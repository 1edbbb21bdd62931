package model

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func kid(i int) KernelID { return KernelID(fmt.Sprintf("k%06d", i)) }

func kern(i, version int) *Kernel {
	return &Kernel{ID: kid(i), Agent: AgentID(fmt.Sprintf("a%d", i%3)), Path: fmt.Sprintf("/r/%d/v%d", i, version)}
}

// checkSeq asserts that q holds exactly want (the same pointers, in ID
// order) and that its chunks keep their bounds.
func checkSeq(t *testing.T, what string, q *KernelSeq, want []*Kernel) {
	t.Helper()
	if q.Len() != len(want) {
		t.Fatalf("%s: Len %d, want %d", what, q.Len(), len(want))
	}
	var got []*Kernel
	for ci, c := range q.chunks {
		if len(c.xs) == 0 || len(c.xs) > seqChunkMax {
			t.Fatalf("%s: chunk %d of %d holds %d kernels", what, ci, len(q.chunks), len(c.xs))
		}
		if len(q.chunks) > 1 && len(c.xs) < seqChunkMin {
			t.Fatalf("%s: chunk %d of %d holds %d kernels, below %d", what, ci, len(q.chunks), len(c.xs), seqChunkMin)
		}
		got = append(got, c.xs...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: chunks hold %d kernels %v, want %d %v", what, len(got), ids(got), len(want), ids(want))
	}
	if s := q.Slice(); !slices.Equal(s, want) {
		t.Fatalf("%s: Slice %v, want %v", what, ids(s), ids(want))
	}
	for _, k := range want {
		if q.Get(k.ID) != k {
			t.Fatalf("%s: Get(%s) = %v, want %p", what, k.ID, q.Get(k.ID), k)
		}
	}
	var each []*Kernel
	q.Each(func(k *Kernel) { each = append(each, k) })
	if !slices.Equal(each, want) {
		t.Fatalf("%s: Each visits %v", what, ids(each))
	}
}

func ids(ks []*Kernel) []KernelID {
	out := make([]KernelID, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

// ref is the obvious model of a kernel sequence: a map, sorted on demand.
type ref map[KernelID]*Kernel

func (r ref) sorted() []*Kernel {
	out := make([]*Kernel, 0, len(r))
	for _, k := range r {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *Kernel) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// version is a published sequence and what it held when published.
type version struct {
	q    *KernelSeq
	want []*Kernel
}

func TestKernelSeqEdits(t *testing.T) {
	// Sizes around the chunk bounds; IDs are even so that odd ones insert
	// between any two.
	for _, n := range []int{0, 1, 2, seqChunkMin, seqChunkMax - 1, seqChunkMax, seqChunkMax + 1, 2 * seqChunkMax, 1000} {
		for _, op := range []string{"insert-first", "insert-last", "insert-middle", "update-first", "update-last", "update-middle", "delete-first", "delete-last", "delete-middle", "delete-missing"} {
			t.Run(fmt.Sprintf("n=%d/%s", n, op), func(t *testing.T) {
				var b KernelSeqBuilder
				r := ref{}
				for i := 0; i < n; i++ {
					k := kern(2*i+2, 0)
					b.Put(k)
					r[k.ID] = k
				}
				before := b.Seq()
				beforeWant := r.sorted()
				checkSeq(t, "before", before, beforeWant)
				pos := map[string]int{"first": 0, "last": n - 1, "middle": n / 2}
				var at string
				for _, w := range []string{"first", "last", "middle", "missing"} {
					if len(op) > len(w) && op[len(op)-len(w):] == w {
						at = w
					}
				}
				i := pos[at]
				switch op[:6] {
				case "insert":
					id := 2*i + 1 // just before kernel i
					if at == "last" {
						id = 2*n + 3
					}
					k := kern(id, 0)
					b.Put(k)
					r[k.ID] = k
				case "update":
					if n == 0 {
						t.Skip("nothing to update")
					}
					k := kern(2*i+2, 1)
					b.Put(k)
					r[k.ID] = k
				case "delete":
					id := kid(2*i + 2)
					if at == "missing" {
						id = kid(2*n + 5)
					}
					_, had := r[id]
					if got := b.Delete(id); got != had {
						t.Fatalf("Delete(%s) = %v, want %v", id, got, had)
					}
					delete(r, id)
				}
				after := b.Seq()
				checkSeq(t, "after", after, r.sorted())
				checkSeq(t, "before, after the change", before, beforeWant)
				if b.Len() != len(r) {
					t.Fatalf("builder Len %d, want %d", b.Len(), len(r))
				}
			})
		}
	}
}

// TestKernelSeqSplitMerge walks a sequence up and down across the chunk
// bounds one kernel at a time and checks the chunk count at each step.
func TestKernelSeqSplitMerge(t *testing.T) {
	var b KernelSeqBuilder
	r := ref{}
	var versions []version
	for i := 0; i < 3*seqChunkMax; i++ {
		k := kern(i, 0)
		b.Put(k)
		r[k.ID] = k
		q := b.Seq()
		want := r.sorted()
		checkSeq(t, fmt.Sprintf("append %d", i), q, want)
		versions = append(versions, version{q, want})
		if i+1 == seqChunkMax && len(q.chunks) != 1 {
			t.Fatalf("%d kernels in %d chunks, want 1", i+1, len(q.chunks))
		}
		if i+1 == seqChunkMax+1 && len(q.chunks) != 2 {
			t.Fatalf("%d kernels in %d chunks, want 2 (split)", i+1, len(q.chunks))
		}
	}
	// Delete from the front: the first chunk shrinks below the minimum and
	// merges with (or shares with) its neighbour; in the end all is gone.
	for i := 0; i < 3*seqChunkMax; i++ {
		if !b.Delete(kid(i)) {
			t.Fatalf("Delete(%s) = false", kid(i))
		}
		delete(r, kid(i))
		q := b.Seq()
		want := r.sorted()
		checkSeq(t, fmt.Sprintf("delete %d", i), q, want)
		versions = append(versions, version{q, want})
		if len(want) <= seqChunkMax-seqChunkMin && len(q.chunks) > 1 {
			t.Fatalf("%d kernels still in %d chunks", len(want), len(q.chunks))
		}
	}
	if q := b.Seq(); q.Len() != 0 || len(q.chunks) != 0 || q.Slice() != nil {
		t.Fatalf("empty sequence: %d kernels in %d chunks", q.Len(), len(q.chunks))
	}
	for n, v := range versions {
		checkSeq(t, fmt.Sprintf("version %d, later", n), v.q, v.want)
	}
}

// TestKernelSeqRandom applies random puts and deletes, publishing after
// some, and checks every version, including old ones after all the edits.
func TestKernelSeqRandom(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			var b KernelSeqBuilder
			r := ref{}
			var versions []version
			for step := 0; step < 4000; step++ {
				i := rng.IntN(700)
				if rng.IntN(3) == 0 {
					_, had := r[kid(i)]
					if b.Delete(kid(i)) != had {
						t.Fatalf("step %d: Delete(%s) disagrees with the reference", step, kid(i))
					}
					delete(r, kid(i))
				} else {
					k := kern(i, step)
					b.Put(k)
					r[k.ID] = k
				}
				if rng.IntN(4) == 0 {
					want := r.sorted()
					q := b.Seq()
					checkSeq(t, fmt.Sprintf("step %d", step), q, want)
					versions = append(versions, version{q, want})
				}
			}
			for n, v := range versions {
				checkSeq(t, fmt.Sprintf("version %d, later", n), v.q, v.want)
			}
		})
	}
}

func TestKernelSeqUnchangedIsSame(t *testing.T) {
	var b KernelSeqBuilder
	b.Put(kern(1, 0))
	q := b.Seq()
	if b.Seq() != q {
		t.Fatal("Seq without a change in between made a new sequence")
	}
	if b.Delete(kid(7)) || b.Seq() != q {
		t.Fatal("deleting a missing kernel made a new sequence")
	}
	b.Put(kern(1, 1))
	if b.Seq() == q {
		t.Fatal("Seq after a change returned the old sequence")
	}
}

func TestNewKernelSeq(t *testing.T) {
	a0, a1, b, c := kern(1, 0), kern(1, 1), kern(2, 0), kern(3, 0)
	q := NewKernelSeq([]*Kernel{c, a0, b, a1})
	checkSeq(t, "new", q, []*Kernel{a1, b, c})
	for _, n := range []int{seqChunkMax + 1, 1000} {
		var ks []*Kernel
		for i := n; i > 0; i-- {
			ks = append(ks, kern(i, 0))
		}
		want := slices.Clone(ks)
		slices.Reverse(want)
		checkSeq(t, fmt.Sprint(n), NewKernelSeq(ks), want)
	}
	var nilSeq *KernelSeq
	if nilSeq.Len() != 0 || nilSeq.Get("x") != nil || nilSeq.Slice() != nil {
		t.Fatal("a nil sequence is not empty")
	}
}

// TestPutAll checks that PutAll equals Put of each element in turn, into
// an empty builder (sorted load) and into one that holds kernels (one by
// one), with repeated IDs (the last counts), and that the builder keeps
// editing after it.
func TestPutAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	cases := []struct {
		name     string
		before   int // kernels put one by one first
		n, space int // kernels in the PutAll batch, drawn from this many ids
	}{
		{"empty batch", 0, 0, 1},
		{"one", 0, 1, 1},
		{"repeats", 0, 50, 10},
		{"around a chunk", 0, seqChunkMax + 1, 10 * seqChunkMax},
		{"large", 0, 3000, 2500},
		{"into a non-empty builder", 40, 300, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var one, all KernelSeqBuilder
			r := ref{}
			for i := 0; i < tc.before; i++ {
				k := kern(rng.IntN(tc.space+1), -1)
				one.Put(k)
				all.Put(k)
				r[k.ID] = k
			}
			batch := make([]*Kernel, tc.n)
			for i := range batch {
				batch[i] = kern(rng.IntN(tc.space), i)
				one.Put(batch[i])
				r[batch[i].ID] = batch[i]
			}
			all.PutAll(batch)
			want := r.sorted()
			checkSeq(t, "Put one by one", one.Seq(), want)
			checkSeq(t, "PutAll", all.Seq(), want)
			if len(want) > 0 {
				all.Delete(want[0].ID)
				extra := kern(tc.space+7, 0)
				all.Put(extra)
				want = append(slices.Clone(want[1:]), extra)
				checkSeq(t, "edits after PutAll", all.Seq(), want)
			}

			var hone, hall HoldingSeqBuilder
			var hs []Holding
			for i, k := range batch {
				h := Holding{Kernel: k.ID, Slot: SlotCUDAShares, Amount: NewDec(int64(i), 2)}
				hs = append(hs, h)
				hone.Put(h)
			}
			hall.PutAll(hs)
			if !holdingsEqual(hall.Seq().Slice(), hone.Seq().Slice()) || hall.Len() != hone.Len() {
				t.Fatalf("HoldingSeqBuilder.PutAll: %d holdings, Put one by one %d", hall.Len(), hone.Len())
			}
		})
	}
}

func holdingsEqual(a, b []Holding) bool {
	return slices.EqualFunc(a, b, func(x, y Holding) bool {
		return x.Kernel == y.Kernel && x.Agent == y.Agent && x.Slot == y.Slot && x.Amount.String() == y.Amount.String()
	})
}

func sortHoldings(hs []Holding) {
	slices.SortFunc(hs, func(a, b Holding) int {
		if c := cmp.Compare(a.Kernel, b.Kernel); c != 0 {
			return c
		}
		return cmp.Compare(a.Slot, b.Slot)
	})
}

// TestHoldingSeq edits one device's holdings at random (several slots per
// kernel, replacements, deletions of missing entries) and checks every
// published version against a map, including old versions at the end.
func TestHoldingSeq(t *testing.T) {
	slots := []SlotName{SlotCUDADevice, SlotCUDAShares, "cuda.device:10g-mig"}
	rng := rand.New(rand.NewPCG(7, 7))
	var b HoldingSeqBuilder
	type hk struct {
		k KernelID
		s SlotName
	}
	cur := map[hk]Holding{}
	want := func() []Holding {
		out := make([]Holding, 0, len(cur))
		for _, h := range cur {
			out = append(out, h)
		}
		sortHoldings(out)
		return out
	}
	type hv struct {
		q    *HoldingSeq
		want []Holding
	}
	var versions []hv
	for step := 0; step < 3000; step++ {
		k, slot := kid(rng.IntN(300)), slots[rng.IntN(len(slots))]
		if rng.IntN(3) == 0 {
			_, had := cur[hk{k, slot}]
			if b.Delete(k, slot) != had {
				t.Fatalf("step %d: Delete(%s, %s) disagrees with the reference", step, k, slot)
			}
			delete(cur, hk{k, slot})
		} else {
			h := Holding{Kernel: k, Agent: AgentID(fmt.Sprint("a", step%2)), Slot: slot, Amount: NewDec(int64(step), 2)}
			b.Put(h)
			cur[hk{k, slot}] = h
		}
		if rng.IntN(5) == 0 {
			q, w := b.Seq(), want()
			if q.Len() != len(w) || b.Len() != len(w) || !holdingsEqual(q.Slice(), w) {
				t.Fatalf("step %d: %d holdings, want %d", step, q.Len(), len(w))
			}
			versions = append(versions, hv{q, w})
		}
	}
	for n, v := range versions {
		if !holdingsEqual(v.q.Slice(), v.want) {
			t.Fatalf("version %d changed after later edits", n)
		}
	}
	hs := []Holding{{Kernel: "b", Slot: "x", Amount: One}, {Kernel: "a", Slot: "y"}, {Kernel: "a", Slot: "x"}, {Kernel: "b", Slot: "x", Amount: Zero}}
	got := NewHoldingSeq(hs).Slice()
	if len(got) != 3 || got[0].Slot != "x" || got[1].Slot != "y" || got[2].Kernel != "b" || !got[2].Amount.IsZero() {
		t.Fatalf("NewHoldingSeq = %+v", got)
	}
	var nilSeq *HoldingSeq
	var nilUsage *DeviceUsage
	if nilSeq.Len() != 0 || nilSeq.Slice() != nil || nilUsage.Holdings() != nil || nilUsage.NumHoldings() != 0 {
		t.Fatal("a nil holding list is not empty")
	}
}

// TestSnapshotViewsConcurrent reads a fresh snapshot's lazy views from many
// goroutines at once (run with -race): all see the same, complete views.
func TestSnapshotViewsConcurrent(t *testing.T) {
	var kb KernelSeqBuilder
	var hb HoldingSeqBuilder
	for i := 0; i < 2000; i++ {
		kb.Put(kern(i, 0))
		hb.Put(Holding{Kernel: kid(i), Slot: SlotCUDAShares, Amount: NewDec(int64(i%50), 2)})
	}
	key := DeviceKey{Name: "cuda", ID: "gpu0"}
	for round := 0; round < 3; round++ {
		s := &Snapshot{Usage: map[DeviceKey]*DeviceUsage{key: {Key: key}}}
		s.SetKernelSeq(kb.Seq())
		s.Usage[key].SetHoldingSeq(hb.Seq())
		const readers = 8
		flats := make([][]*Kernel, readers)
		holds := make([][]Holding, readers)
		var wg sync.WaitGroup
		for g := 0; g < readers; g++ {
			wg.Go(func() {
				if g%2 == 0 {
					holds[g] = s.Holdings(key)
					flats[g] = s.Kernels()
				} else {
					flats[g] = s.Kernels()
					holds[g] = s.Usage[key].Holdings()
				}
				_ = s.Kernel(kid(g))
				_ = s.AllocMap()
			})
		}
		wg.Wait()
		for g := 1; g < readers; g++ {
			if &flats[g][0] != &flats[0][0] || &holds[g][0] != &holds[0][0] {
				t.Fatalf("reader %d got a view of its own", g)
			}
		}
		if len(flats[0]) != 2000 || len(holds[0]) != 2000 {
			t.Fatalf("views: %d kernels, %d holdings", len(flats[0]), len(holds[0]))
		}
		// The next round reads a new version.
		kb.Put(kern(round, 9))
		hb.Delete(kid(round), SlotCUDAShares)
		hb.Put(Holding{Kernel: kid(round), Slot: SlotCUDAShares, Amount: One})
	}
}

func TestSnapshotKernels(t *testing.T) {
	a0, a1, b, c := kern(1, 0), kern(1, 1), kern(2, 0), kern(3, 0)
	b.Alloc = Allocations{SlotCUDAShares: {"g": MustDec("0.5")}}
	c.Alloc = Allocations{SlotCUDAShares: {"g": MustDec("0.25")}, SlotCUDADevice: {"h": One}}
	s := &Snapshot{}
	s.SetKernels([]*Kernel{c, a0, b, a1})
	if got := s.Kernels(); !slices.Equal(got, []*Kernel{a1, b, c}) || s.NumKernels() != 3 {
		t.Fatalf("Kernels = %v", ids(got))
	}
	if s.Kernel(kid(1)) != a1 || s.Kernel(kid(9)) != nil || s.KernelSeq().Get(kid(3)) != c {
		t.Fatal("Kernel finds the wrong kernel")
	}
	if m := s.AllocMap(); len(m) != 2 || m["g"].String() != "0.75" || m["h"].String() != "1" {
		t.Fatalf("AllocMap = %v", m)
	}
	var empty Snapshot
	if empty.Kernels() != nil || empty.NumKernels() != 0 || empty.Kernel("x") != nil || empty.Holdings(DeviceKey{"cuda", "g"}) != nil {
		t.Fatal("an empty snapshot has kernels")
	}
}

// TestSeqEditCost asserts what makes a snapshot cheap to publish: one
// change and one Seq allocate a handful of objects, whatever the size.
func TestSeqEditCost(t *testing.T) {
	for _, n := range []int{1000, 50000} {
		var kb KernelSeqBuilder
		var hb HoldingSeqBuilder
		for i := 0; i < n; i++ {
			kb.Put(kern(i, 0))
			hb.Put(Holding{Kernel: kid(i), Slot: SlotCUDAShares})
		}
		kb.Seq()
		hb.Seq()
		k := kern(n/2, 1)
		i := 0
		allocs := testing.AllocsPerRun(100, func() {
			i++
			if i%2 == 0 {
				kb.Put(k)
				hb.Put(Holding{Kernel: k.ID, Slot: SlotCUDAShares, Amount: One})
			} else {
				kb.Delete(k.ID)
				hb.Delete(k.ID, SlotCUDAShares)
			}
			kb.Seq()
			hb.Seq()
		})
		// Per sequence: the chunk (and its struct), the index, the version.
		if allocs > 10 {
			t.Errorf("n=%d: %.1f allocations per change, want ≤ 10", n, allocs)
		}
	}
}

// BenchmarkSnapshotViews is what a reader pays once per snapshot it reads
// after one kernel changed: the flat kernel list and a changed device's
// holdings, built anew (the engine pays neither per change).
func BenchmarkSnapshotViews(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("kernels=%d", n), func(b *testing.B) {
			var kb KernelSeqBuilder
			var hb HoldingSeqBuilder
			ks := make([]*Kernel, n)
			for i := range ks {
				ks[i] = kern(i, 0)
				kb.Put(ks[i])
				if i%4 == 0 {
					hb.Put(Holding{Kernel: ks[i].ID, Slot: SlotCUDAShares, Amount: One})
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				k := ks[(i*7919)%n]
				kb.Put(k)
				hb.Put(Holding{Kernel: k.ID, Slot: SlotCUDAShares, Amount: One})
				_ = kb.Seq().Slice()
				_ = hb.Seq().Slice()
			}
		})
	}
}

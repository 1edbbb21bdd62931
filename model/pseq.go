package model

import (
	"cmp"
	"slices"
	"sort"
	"sync"
)

// Chunk bounds of a persistent sequence. A change copies one chunk (at
// most seqChunkMax elements) and the chunk index (about n/seqChunkMax
// pointers), so a new version costs a few KiB even at 50,000 elements.
const (
	seqChunkMax = 128
	seqChunkMin = seqChunkMax / 4
)

// seqOps orders the elements of a sequence by a key.
type seqOps[T, K any] interface {
	key(T) K
	cmp(a, b K) int
}

// pchunk is one run of a sequence, sorted by key. gen is the builder
// generation that made it: a builder edits in place only chunks of its
// current generation, which no published version can reach.
type pchunk[T any] struct {
	gen uint64
	xs  []T
}

// pseq is an immutable version of a sorted sequence, stored as chunks so
// that a version differing by one element shares every other chunk with
// its predecessor. Its flat view is built once, on first use.
type pseq[T, K any, O seqOps[T, K]] struct {
	chunks []*pchunk[T]
	n      int

	flatOnce sync.Once
	flat     []T
}

func (q *pseq[T, K, O]) get(k K) (T, bool) {
	ci, i, ok := search[T, K, O](q.chunks, k)
	if !ok {
		var zero T
		return zero, false
	}
	return q.chunks[ci].xs[i], true
}

// slice returns the elements as one shared slice, built on first use.
func (q *pseq[T, K, O]) slice() []T {
	if q.n == 0 {
		return nil
	}
	q.flatOnce.Do(func() {
		if len(q.chunks) == 1 {
			xs := q.chunks[0].xs
			q.flat = xs[:len(xs):len(xs)]
			return
		}
		flat := make([]T, 0, q.n)
		for _, c := range q.chunks {
			flat = append(flat, c.xs...)
		}
		q.flat = flat
	})
	return q.flat
}

func (q *pseq[T, K, O]) each(f func(T)) {
	for _, c := range q.chunks {
		for _, x := range c.xs {
			f(x)
		}
	}
}

// search finds key k in the chunks: the chunk it is in or belongs in (len
// when it sorts after every element) and its position there.
func search[T, K any, O seqOps[T, K]](chunks []*pchunk[T], k K) (ci, i int, found bool) {
	var o O
	ci = sort.Search(len(chunks), func(j int) bool {
		xs := chunks[j].xs
		return o.cmp(o.key(xs[len(xs)-1]), k) >= 0
	})
	if ci == len(chunks) {
		return ci, 0, false
	}
	i, found = slices.BinarySearchFunc(chunks[ci].xs, k, func(x T, k K) int { return o.cmp(o.key(x), k) })
	return ci, i, found
}

// pbuilder edits a sorted sequence and publishes immutable versions of it.
// Between two publications it edits the chunks it made in place; a
// published chunk is copied on its first change.
type pbuilder[T, K any, O seqOps[T, K]] struct {
	chunks []*pchunk[T]
	n      int
	gen    uint64
	// idxOwned says chunks (the index) is not shared with a published
	// version.
	idxOwned bool
	// last is the published version while nothing changed since.
	last *pseq[T, K, O]
}

func (b *pbuilder[T, K, O]) get(k K) (T, bool) {
	ci, i, ok := search[T, K, O](b.chunks, k)
	if !ok {
		var zero T
		return zero, false
	}
	return b.chunks[ci].xs[i], true
}

// seq publishes the current elements; without a change in between it
// returns the same version again.
func (b *pbuilder[T, K, O]) seq() *pseq[T, K, O] {
	if b.last == nil {
		b.last = &pseq[T, K, O]{chunks: b.chunks[:len(b.chunks):len(b.chunks)], n: b.n}
		b.idxOwned = false
		b.gen++
	}
	return b.last
}

// put inserts x, or replaces the element with its key.
func (b *pbuilder[T, K, O]) put(x T) {
	var o O
	b.last = nil
	if len(b.chunks) == 0 {
		b.ownIndex()
		b.chunks = append(b.chunks, b.newChunk(x))
		b.n++
		return
	}
	ci, i, found := search[T, K, O](b.chunks, o.key(x))
	if ci == len(b.chunks) {
		ci--
		i = len(b.chunks[ci].xs)
	}
	c := b.own(ci)
	if found {
		c.xs[i] = x
		return
	}
	c.xs = slices.Insert(c.xs, i, x)
	b.n++
	if len(c.xs) > seqChunkMax {
		h := len(c.xs) / 2
		right := b.newChunk(c.xs[h:]...)
		clear(c.xs[h:])
		c.xs = c.xs[:h]
		b.chunks = slices.Insert(b.chunks, ci+1, right)
	}
}

// putAll is put of each of xs in order. An empty builder is loaded from
// the sorted elements instead: the same result (of equal keys the last
// counts) without an insertion per element.
func (b *pbuilder[T, K, O]) putAll(xs []T) {
	if b.n > 0 || len(xs) == 0 {
		for _, x := range xs {
			b.put(x)
		}
		return
	}
	b.load(sortedUnique[T, K, O](xs))
}

// del removes the element with key k and reports whether it was there.
func (b *pbuilder[T, K, O]) del(k K) bool {
	ci, i, found := search[T, K, O](b.chunks, k)
	if !found {
		return false
	}
	b.last = nil
	c := b.own(ci)
	c.xs = slices.Delete(c.xs, i, i+1)
	b.n--
	switch {
	case len(c.xs) == 0:
		b.chunks = slices.Delete(b.chunks, ci, ci+1)
	case len(c.xs) < seqChunkMin && len(b.chunks) > 1:
		// Merge with a neighbour, or share evenly with it when both do not
		// fit one chunk, so that chunks stay between the bounds.
		lo := ci
		if lo == len(b.chunks)-1 {
			lo--
		}
		all := make([]T, 0, len(b.chunks[lo].xs)+len(b.chunks[lo+1].xs))
		all = append(append(all, b.chunks[lo].xs...), b.chunks[lo+1].xs...)
		if len(all) <= seqChunkMax {
			b.chunks[lo] = b.newChunk(all...)
			b.chunks = slices.Delete(b.chunks, lo+1, lo+2)
		} else {
			h := len(all) / 2
			b.chunks[lo], b.chunks[lo+1] = b.newChunk(all[:h]...), b.newChunk(all[h:]...)
		}
	}
	return true
}

// load replaces the contents with xs, which must be sorted by key without
// repeats, in chunks of even size.
func (b *pbuilder[T, K, O]) load(xs []T) {
	b.chunks, b.n, b.idxOwned, b.last = nil, len(xs), true, nil
	if len(xs) == 0 {
		return
	}
	nc := (len(xs) + seqChunkMax - 1) / seqChunkMax
	for c := 0; c < nc; c++ {
		b.chunks = append(b.chunks, b.newChunk(xs[c*len(xs)/nc:(c+1)*len(xs)/nc]...))
	}
}

// newChunk returns a chunk of this generation holding xs (copied), with
// room for one insertion beyond the bound.
func (b *pbuilder[T, K, O]) newChunk(xs ...T) *pchunk[T] {
	c := &pchunk[T]{gen: b.gen, xs: make([]T, len(xs), seqChunkMax+1)}
	copy(c.xs, xs)
	return c
}

// own makes chunk ci and the index editable in place. The copy has room
// for one insertion only: most changes replace or remove, and a copy sized
// for the bound would double what a change allocates.
func (b *pbuilder[T, K, O]) own(ci int) *pchunk[T] {
	b.ownIndex()
	c := b.chunks[ci]
	if c.gen != b.gen {
		c = &pchunk[T]{gen: b.gen, xs: append(make([]T, 0, len(c.xs)+1), c.xs...)}
		b.chunks[ci] = c
	}
	return c
}

func (b *pbuilder[T, K, O]) ownIndex() {
	if !b.idxOwned {
		b.chunks = slices.Clone(b.chunks)
		b.idxOwned = true
	}
}

// sortedUnique sorts a copy of xs by key; of elements with equal keys the
// last one stays.
func sortedUnique[T, K any, O seqOps[T, K]](xs []T) []T {
	var o O
	// Sorted by keys taken out once, with the position as the tie-break
	// (stable): a key behind a pointer (a *Kernel's ID) would otherwise be
	// fetched from memory at every comparison.
	type keyed struct {
		k K
		i int
	}
	ks := make([]keyed, len(xs))
	for i, x := range xs {
		ks[i] = keyed{o.key(x), i}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := o.cmp(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]T, 0, len(xs))
	for j, e := range ks {
		if j+1 < len(ks) && o.cmp(ks[j+1].k, e.k) == 0 {
			continue
		}
		out = append(out, xs[e.i])
	}
	return out
}

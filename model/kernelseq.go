package model

import "cmp"

type kernelOps struct{}

func (kernelOps) key(k *Kernel) KernelID { return k.ID }
func (kernelOps) cmp(a, b KernelID) int  { return cmp.Compare(a, b) }

// KernelSeq is an immutable sequence of kernels sorted by ID, stored as
// chunks so that a version differing by one kernel shares every other
// chunk with its predecessor (a persistent sequence). It is safe for
// concurrent use: its flat view (Slice) is built once, on first use.
//
// Immutability contract: neither a KernelSeq nor the slice Slice returns
// may be modified; the *Kernel values in it are shared as well. A nil
// *KernelSeq is empty.
type KernelSeq pseq[*Kernel, KernelID, kernelOps]

func (q *KernelSeq) p() *pseq[*Kernel, KernelID, kernelOps] {
	return (*pseq[*Kernel, KernelID, kernelOps])(q)
}

// NewKernelSeq returns the kernels as a sequence sorted by ID. ks is not
// kept; of kernels that share an ID, the last one counts.
func NewKernelSeq(ks []*Kernel) *KernelSeq {
	var b KernelSeqBuilder
	b.b.load(sortedUnique[*Kernel, KernelID, kernelOps](ks))
	return b.Seq()
}

// Len is the number of kernels.
func (q *KernelSeq) Len() int {
	if q == nil {
		return 0
	}
	return q.n
}

// Get returns the kernel with the id, or nil.
func (q *KernelSeq) Get(id KernelID) *Kernel {
	if q == nil {
		return nil
	}
	k, _ := q.p().get(id)
	return k
}

// Slice returns the kernels as one slice sorted by ID, built on first use
// and shared by every caller afterwards: never modify it.
func (q *KernelSeq) Slice() []*Kernel {
	if q == nil {
		return nil
	}
	return q.p().slice()
}

// Each calls f for every kernel in ID order, without building Slice.
func (q *KernelSeq) Each(f func(*Kernel)) {
	if q != nil {
		q.p().each(f)
	}
}

// KernelSeqBuilder edits a sequence of kernels and publishes immutable
// versions of it (Seq). Between two Seq calls it edits the chunks it made
// in place; a published chunk is copied on its first change, so a change
// costs O(1) in the number of kernels apart from copying the chunk index
// (n/128 pointers). The zero value is empty. It is not safe for concurrent
// use.
type KernelSeqBuilder struct {
	b pbuilder[*Kernel, KernelID, kernelOps]
}

// Len is the number of kernels.
func (b *KernelSeqBuilder) Len() int { return b.b.n }

// Get returns the kernel with the id, or nil.
func (b *KernelSeqBuilder) Get(id KernelID) *Kernel {
	k, _ := b.b.get(id)
	return k
}

// Put inserts k, or replaces the kernel with its ID.
func (b *KernelSeqBuilder) Put(k *Kernel) { b.b.put(k) }

// PutAll is Put of each kernel of ks in turn (of kernels that share an ID,
// the last one counts). Into an empty builder it sorts once instead of
// inserting one by one: a one-shot scan adds 10,000 kernels in directory
// order, and inserting each cost more than reading its file's JSON record.
func (b *KernelSeqBuilder) PutAll(ks []*Kernel) { b.b.putAll(ks) }

// Delete removes the kernel with the id and reports whether it was there.
func (b *KernelSeqBuilder) Delete(id KernelID) bool { return b.b.del(id) }

// Seq publishes the current kernels as an immutable sequence. Without a
// change in between, it returns the same sequence again (with its view).
func (b *KernelSeqBuilder) Seq() *KernelSeq { return (*KernelSeq)(b.b.seq()) }

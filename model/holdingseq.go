package model

import "cmp"

type holdingOps struct{}

// holdingKey orders holdings: by kernel, then slot.
type holdingKey struct {
	kernel KernelID
	slot   SlotName
}

func (holdingOps) key(h Holding) holdingKey { return holdingKey{h.Kernel, h.Slot} }

func (holdingOps) cmp(a, b holdingKey) int {
	if c := cmp.Compare(a.kernel, b.kernel); c != 0 {
		return c
	}
	return cmp.Compare(a.slot, b.slot)
}

// CarriesHoldings reports whether devices of the plugin list holdings per
// kernel. CPU cores and memory do not: nearly every kernel holds memory, so
// a list there says nothing a total does not.
func CarriesHoldings(name DeviceName) bool { return name != "cpu" && name != "mem" }

// HoldingSeq is an immutable list of one device's holdings sorted by
// kernel then slot, a persistent sequence like KernelSeq: a version that
// differs by one kernel's entries shares every other chunk with its
// predecessor. Safe for concurrent use; a nil *HoldingSeq is empty.
type HoldingSeq pseq[Holding, holdingKey, holdingOps]

func (q *HoldingSeq) p() *pseq[Holding, holdingKey, holdingOps] {
	return (*pseq[Holding, holdingKey, holdingOps])(q)
}

// NewHoldingSeq returns the holdings sorted by kernel then slot; hs is not
// kept, and of holdings with the same kernel and slot the last one counts.
func NewHoldingSeq(hs []Holding) *HoldingSeq {
	var b HoldingSeqBuilder
	b.b.load(sortedUnique[Holding, holdingKey, holdingOps](hs))
	return b.Seq()
}

// Len is the number of holdings.
func (q *HoldingSeq) Len() int {
	if q == nil {
		return 0
	}
	return q.n
}

// Slice returns the holdings as one slice, built on first use and shared
// by every caller afterwards: never modify it.
func (q *HoldingSeq) Slice() []Holding {
	if q == nil {
		return nil
	}
	return q.p().slice()
}

// HoldingSeqBuilder edits one device's holdings and publishes immutable
// versions of them (Seq), as KernelSeqBuilder does for kernels. The zero
// value is empty; it is not safe for concurrent use.
type HoldingSeqBuilder struct {
	b pbuilder[Holding, holdingKey, holdingOps]
}

// Len is the number of holdings.
func (b *HoldingSeqBuilder) Len() int { return b.b.n }

// Put inserts h, or replaces the holding of its kernel and slot.
func (b *HoldingSeqBuilder) Put(h Holding) { b.b.put(h) }

// PutAll is Put of each holding of hs in turn; into an empty builder it
// sorts once (see KernelSeqBuilder.PutAll).
func (b *HoldingSeqBuilder) PutAll(hs []Holding) { b.b.putAll(hs) }

// Delete removes the kernel's holding of the slot and reports whether it
// was there.
func (b *HoldingSeqBuilder) Delete(k KernelID, slot SlotName) bool {
	return b.b.del(holdingKey{k, slot})
}

// Seq publishes the current holdings; without a change in between, it
// returns the same sequence again.
func (b *HoldingSeqBuilder) Seq() *HoldingSeq { return (*HoldingSeq)(b.b.seq()) }

package render

import (
	"github.com/fgtop/fgtop/ui/kit"
)
import "github.com/fgtop/fgtop/model"

// DeriveCache memoises per-snapshot derivation by the identity of the
// immutable values it came from: the engine publishes each snapshot with
// the *model.Kernel and *model.DeviceUsage values of unchanged kernels and
// devices shared from the one before, so re-deriving a snapshot where one
// kernel changed formats one kernel, not all of them. Entries no snapshot
// uses any more are swept, so the cache stays within a few times the
// snapshot's size.
type DeriveCache struct {
	kern   map[*model.Kernel]*kernCached
	usages map[*model.DeviceUsage]*usageCached
	gen    uint64 // the snapshot being derived; entries carry the last one that used them
	// looks is each kernel's look, kept while the kernel lives so its
	// colour does not change under the operator's eyes; lookN is the
	// number of looks they were chosen from.
	Looks map[model.KernelID]uint8
	lookN int
	// prev is the last snapshot's derivation and the options it was made
	// with: a snapshot where only the telemetry and the clock moved (the
	// NVML poll at rest, every second) is derived from it (retelemetry).
	prev     *Derived
	prevOpts DeriveOptions
	// Full counts the derivations made from scratch and Reused those made
	// from the previous one; tests and benchmarks read them.
	Full, Reused int
}

// kernCached is what one kernel value formats to.
type kernCached struct {
	gen      uint64
	Short    string
	StateLvl kit.Level
	Slots    []slotVal
	// who: owner, session and use cells.
	Who kernWho
	// Devices column and filter haystack, valid for tagSig and devIdx.
	tagSig uint64
	devIdx []int
	Devs   string
	search string
}

type slotVal struct {
	slot model.SlotName
	Text string
	f    float64
}

// usageCached is one device usage, grouped per kernel and per agent.
type usageCached struct {
	gen       uint64
	kernOf    []model.KernelID
	KernAmts  []float64
	sums      []string // exact per-kernel totals on the device
	agentOf   []model.AgentID
	agentAmts []float64
}

// NewDeriveCache is an empty cache; a console keeps one across snapshots.
func NewDeriveCache() *DeriveCache {
	return &DeriveCache{kern: map[*model.Kernel]*kernCached{}, usages: map[*model.DeviceUsage]*usageCached{},
		Looks: map[model.KernelID]uint8{}}
}

// begin starts deriving a new snapshot.
func (c *DeriveCache) begin() { c.gen++ }

// End forgets entries the snapshot just derived did not use, once they
// outnumber the used ones: the sweep then costs no more than the
// derivation that made the garbage.
func (c *DeriveCache) End(kernels, usages int) {
	if len(c.kern) > 2*kernels+64 {
		for k, kc := range c.kern {
			if kc.gen != c.gen {
				delete(c.kern, k)
			}
		}
	}
	if len(c.usages) > 2*usages+64 {
		for u, uc := range c.usages {
			if uc.gen != c.gen {
				delete(c.usages, u)
			}
		}
	}
}

func (c *DeriveCache) kernel(k *model.Kernel) *kernCached {
	if kc, ok := c.kern[k]; ok {
		kc.gen = c.gen
		return kc
	}
	kc := &kernCached{gen: c.gen, Short: kit.ShortKernel(k.ID), Who: newKernWho(k)}
	switch k.State {
	case model.KernelStale:
		kc.StateLvl = kit.LvlWarn
	case model.KernelBroken:
		kc.StateLvl = kit.LvlCrit
	case model.KernelPending:
		kc.StateLvl = kit.LvlDim
	default:
		kc.StateLvl = kit.LvlOK
	}
	for slot, m := range k.Alloc {
		var sum model.Dec
		for _, v := range m {
			sum = sum.Add(v)
		}
		kc.Slots = append(kc.Slots, slotVal{slot: slot, Text: listAmount(slot, sum), f: sum.Float64()})
	}
	c.kern[k] = kc
	return kc
}

// listAmount is an amount as the kernel list prints it: a whole-unit
// slot's whole amount (a MIG slice a resource.txt writes "1.00") as the
// devices pane prints it, "1"; bytes in binary units; shares with their
// digits. Only the text: the record's amount stays as written.
func listAmount(slot model.SlotName, v model.Dec) string {
	if model.DefaultSlotTypes().TypeOf(slot) == model.SlotTypeBytes {
		return kit.FmtSlot(slot, v)
	}
	return kit.FmtWhole(slot, v)
}

func (c *DeriveCache) usage(u *model.DeviceUsage) *usageCached {
	if uc, ok := c.usages[u]; ok {
		uc.gen = c.gen
		return uc
	}
	uc := &usageCached{gen: c.gen}
	var sums []model.Dec
	var slots []model.SlotName // each sum's slot; "" for a sum over several
	agentPos := map[model.AgentID]int{}
	for _, h := range u.Holdings() {
		v := h.Amount.Float64()
		if n := len(uc.kernOf); n > 0 && uc.kernOf[n-1] == h.Kernel {
			uc.KernAmts[n-1] += v
			sums[n-1] = sums[n-1].Add(h.Amount)
			if slots[n-1] != h.Slot {
				slots[n-1] = ""
			}
		} else {
			uc.kernOf = append(uc.kernOf, h.Kernel)
			uc.KernAmts = append(uc.KernAmts, v)
			sums = append(sums, h.Amount)
			slots = append(slots, h.Slot)
		}
		if p, ok := agentPos[h.Agent]; ok {
			uc.agentAmts[p] += v
		} else {
			agentPos[h.Agent] = len(uc.agentOf)
			uc.agentOf = append(uc.agentOf, h.Agent)
			uc.agentAmts = append(uc.agentAmts, v)
		}
	}
	uc.sums = make([]string, len(sums))
	for i, d := range sums {
		uc.sums[i] = listAmount(slots[i], d)
	}
	c.usages[u] = uc
	return uc
}

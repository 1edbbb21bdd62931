package history

import (
	"fmt"
	"time"

	"github.com/fgtop/fgtop/model"
)

// allocEnt is one step of decoding an allocation: a slot begins (first),
// and, unless none, a device's amount of it.
type allocEnt struct {
	slot  model.SlotName
	dev   model.DeviceID
	amt   model.Dec
	first bool
	none  bool
}

// flatAlloc is an allocation as its record has it, in order, without
// the two levels of maps decodeAlloc builds: the sessions walk reads a
// week's 500,000 allocations and needs the maps of fewer than half of
// them (a session's arrival), and building maps was most of the read.
type flatAlloc struct {
	ents []allocEnt
	// irregular: a slot with no device, or a slot or a device of a slot
	// named twice (never written by the recorder; a damaged or hostile
	// record may hold it). The maps are then the only reading: they keep
	// what decodeAlloc keeps.
	irregular bool
	// n: the record listed slots (decodeAlloc gives nil for none).
	n int
}

// decodeFlat reads what decodeAlloc reads, with the same calls on d (the
// same strings and amounts interned, the same errors).
func decodeFlat(d *dec) flatAlloc {
	n := d.count()
	fa := flatAlloc{n: n}
	if n == 0 {
		return fa
	}
	for i := 0; i < n && d.err == nil; i++ {
		slot := model.SlotName(d.istr())
		m := d.count()
		if m == 0 {
			fa.irregular = true
			fa.ents = append(fa.ents, allocEnt{slot: slot, first: true, none: true})
			continue
		}
		if fa.ents == nil {
			// One allocation of the right size: the entries counted
			// on the bytes first (a kernel holds cpu, mem and GPUs).
			fa.ents = make([]allocEnt, 0, m+countEnts(*d, m, n-i-1))
		}
		start := len(fa.ents)
		for j := 0; j < m && d.err == nil; j++ {
			id := model.DeviceID(d.istr())
			fa.ents = append(fa.ents, allocEnt{slot: slot, dev: id, amt: d.dec(), first: j == 0})
		}
		for k := range start {
			if fa.ents[k].slot == slot {
				fa.irregular = true
			}
		}
		for a := start; a < len(fa.ents); a++ {
			for b := start; b < a; b++ {
				if fa.ents[a].dev == fa.ents[b].dev {
					fa.irregular = true
				}
			}
		}
	}
	return fa
}

// countEnts counts the entries of the n slots after the m devices d is
// at (d is a copy: the caller's is not moved), one for a slot with
// none; 0 where the bytes end early (the decode then fails).
func countEnts(d dec, m, n int) int {
	total := 0
	for j := 0; j < m && d.err == nil; j++ {
		d.strBytes()
		d.strBytes()
	}
	for i := 0; i < n && d.err == nil; i++ {
		d.strBytes()
		m := d.count()
		total += max(m, 1)
		for j := 0; j < m && d.err == nil; j++ {
			d.strBytes()
			d.strBytes()
		}
	}
	if d.err != nil {
		return 0
	}
	return total
}

// toMap is the allocation decodeAlloc would have built of the same bytes.
func (fa *flatAlloc) toMap() model.Allocations {
	if fa.n == 0 {
		return nil
	}
	al := make(model.Allocations, fa.n)
	var devs map[model.DeviceID]model.Dec
	for i := range fa.ents {
		e := &fa.ents[i]
		if e.first {
			devs = map[model.DeviceID]model.Dec{}
			al[e.slot] = devs
		}
		if !e.none {
			devs[e.dev] = e.amt
		}
	}
	return al
}

// oneHeld is a slot's map of one device, held in one amount: the Dec
// itself, which is never changed once made and which the reader gives
// every equal amount of a segment.
type oneHeld struct {
	dev model.DeviceID
	amt model.Dec
}

// maxManyDevs is the most devices of a slot's map shared by its
// entries (manyHeld): a kernel's cores are a few, its GPUs fewer.
const maxManyDevs = 8

// manyHeld is a slot's map of two to maxManyDevs devices, its entries in
// the order the record lists them (two orders of the same map are two
// keys: a map missed, never a wrong one), each amount its Dec as for
// oneHeld.
type manyHeld struct {
	n    int
	devs [maxManyDevs]model.DeviceID
	amts [maxManyDevs]model.Dec
}

// maxShared bounds the slot maps of one device toMapShared keeps for
// sharing; maxManyShared those of several (a key is 200 bytes).
const (
	maxShared     = 1 << 16
	maxManyShared = 1 << 14
)

// sharedMaps are the slot maps toMapShared has made, by what they hold.
type sharedMaps struct {
	one  map[oneHeld]map[model.DeviceID]model.Dec
	many map[manyHeld]map[model.DeviceID]model.Dec
}

func newSharedMaps() *sharedMaps {
	return &sharedMaps{one: map[oneHeld]map[model.DeviceID]model.Dec{}, many: map[manyHeld]map[model.DeviceID]model.Dec{}}
}

// toMapShared is toMap of a regular allocation, each slot's map taken
// from sh (and kept there) where an earlier allocation held the same
// devices in the same Decs: a week's 200,000 arrivals hold a few
// thousand such of one device and a few thousand core ranges, and a map
// each was half the memory the sessions keep, each page of it a fault.
// Maps are never changed once decoded (cloneHeld), so sharing them is
// not seen.
func (fa *flatAlloc) toMapShared(sh *sharedMaps) model.Allocations {
	if fa.n == 0 || fa.irregular {
		return fa.toMap()
	}
	al := make(model.Allocations, fa.n)
	for i := 0; i < len(fa.ents); {
		e := &fa.ents[i]
		j := i + 1
		for j < len(fa.ents) && !fa.ents[j].first {
			j++
		}
		switch {
		case j == i+1:
			k := oneHeld{dev: e.dev, amt: e.amt}
			m := sh.one[k]
			if m == nil {
				if len(sh.one) >= maxShared {
					clear(sh.one)
				}
				m = map[model.DeviceID]model.Dec{e.dev: e.amt}
				sh.one[k] = m
			}
			al[e.slot] = m
		case j-i <= maxManyDevs:
			k := manyHeld{n: j - i}
			for x := i; x < j; x++ {
				k.devs[x-i], k.amts[x-i] = fa.ents[x].dev, fa.ents[x].amt
			}
			m := sh.many[k]
			if m == nil {
				if len(sh.many) >= maxManyShared {
					clear(sh.many)
				}
				m = fa.slotMap(i, j)
				sh.many[k] = m
			}
			al[e.slot] = m
		default:
			al[e.slot] = fa.slotMap(i, j)
		}
		i = j
	}
	return al
}

// slotMap is the map of entries [i, j) of a regular allocation.
func (fa *flatAlloc) slotMap(i, j int) map[model.DeviceID]model.Dec {
	devs := make(map[model.DeviceID]model.Dec, j-i)
	for k := i; k < j; k++ {
		devs[fa.ents[k].dev] = fa.ents[k].amt
	}
	return devs
}

// holds: some amount of some slot (holds of the maps).
func (fa *flatAlloc) holds() bool {
	if fa.irregular {
		return holds(fa.toMap())
	}
	return len(fa.ents) > 0
}

// identical is allocIdentical of the two allocations' maps.
func (fa *flatAlloc) identical(o *flatAlloc) bool {
	if !fa.irregular && !o.irregular && len(fa.ents) == len(o.ents) {
		eq := true
		for i := range fa.ents {
			a, b := &fa.ents[i], &o.ents[i]
			if a.slot != b.slot || a.dev != b.dev || !same(a.amt, b.amt) {
				eq = false
				break
			}
		}
		if eq {
			return true
		}
	}
	return allocIdentical(fa.toMap(), o.toMap())
}

// within reports whether every amount fa holds is held, Equal, in a
// (no change of a session that arrived with a).
func (fa *flatAlloc) within(a model.Allocations) bool {
	if fa.irregular {
		for slot, devs := range fa.toMap() {
			for dev, amt := range devs {
				if had, ok := a[slot][dev]; !ok || !had.Equal(amt) {
					return false
				}
			}
		}
		return true
	}
	for i := range fa.ents {
		e := &fa.ents[i]
		if had, ok := a[e.slot][e.dev]; !ok || !had.Equal(e.amt) {
			return false
		}
	}
	return true
}

// withinFlat is within(base's maps) for a regular base (each slot and
// device once, no slot without a device), read flat.
func (fa *flatAlloc) withinFlat(base *flatAlloc) bool {
	if fa.irregular {
		return fa.within(base.toMap())
	}
	for i := range fa.ents {
		e := &fa.ents[i]
		found := false
		for j := range base.ents {
			if b := &base.ents[j]; b.dev == e.dev && b.slot == e.slot {
				found = b.amt.Equal(e.amt)
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sessHead is a kernel's head as the sessions walk keeps it: the
// allocation flat, its maps made only when asked for (alloc), and what
// the kernel requested (its SLOTS; shared, never changed).
type sessHead struct {
	kernelHead // Alloc unset: alloc()
	fa         flatAlloc
	slots      model.ResourceSlot
}

// alloc is the head's allocation as maps.
func (h *sessHead) alloc() model.Allocations { return h.fa.toMap() }

// same is sameHead of the two heads.
func (h *sessHead) same(o *sessHead) bool {
	return h.ID == o.ID && h.Agent == o.Agent && h.State == o.State && h.Session == o.Session && h.User == o.User &&
		h.Project == o.Project && h.fa.identical(&o.fa) && slotsIdentical(h.slots, o.slots)
}

// decodeSessHeadRest is decodeHeadRest (all devices) keeping the
// allocation flat.
func decodeSessHeadRest(d *dec, id model.KernelID) sessHead {
	k := &model.Kernel{ID: id}
	var fa flatAlloc
	var slots model.ResourceSlot
	for f := 0; f <= fSlots && d.err == nil; f++ {
		switch f {
		case fAlloc:
			fa = decodeFlat(d)
		case fRecord:
			decodeRecordHead(d, k)
		case fPath:
			skipPath(d)
		case fSlots:
			slots = d.islots()
		default:
			decodeField(d, k, f)
		}
	}
	h := sessHeadOf(k, fa)
	h.slots = slots
	return h
}

// sessHeadOf is the sessions walk's head of k holding fa.
func sessHeadOf(k *model.Kernel, fa flatAlloc) sessHead {
	h := sessHead{kernelHead: kernelHead{ID: k.ID, Agent: k.Agent, State: k.State}, fa: fa}
	if r := k.Record; r != nil {
		h.Session, h.User, h.Project = r.SessionID, r.OwnerUserID, r.OwnerProjectID
	}
	return h
}

// decodeSessPatch is decodePatchHead over prev for the sessions walk: the
// head after the patch, and the patch's mask.
func decodeSessPatch(d *dec, prev *sessHead) (sessHead, uint32) {
	mask := uint32(d.uvarint())
	if mask >= 1<<nFields {
		d.fail(fmt.Errorf("field mask %#x", mask))
		return sessHead{}, 0
	}
	if mask&sessFields == 0 {
		return sessHead{}, mask
	}
	k := &model.Kernel{ID: prev.ID, Agent: prev.Agent, State: prev.State}
	if prev.Session != "" || prev.User != "" || prev.Project != "" {
		k.Record = &model.KernelRecord{SessionID: prev.Session, OwnerUserID: prev.User, OwnerProjectID: prev.Project}
	}
	fa, slots := prev.fa, prev.slots
	for f := 0; f <= fSlots && d.err == nil; f++ {
		switch {
		case mask&(1<<f) == 0:
		case f == fAlloc:
			fa = decodeFlat(d)
		case f == fRecord:
			decodeRecordHead(d, k)
		case f == fPath:
			skipPath(d)
		case f == fSlots:
			slots = d.islots()
		default:
			decodeField(d, k, f)
		}
	}
	h := sessHeadOf(k, fa)
	h.slots = slots
	return h, mask
}

// sessCkHeads are a checkpoint's kernels as the sessions walk keeps them.
type sessCkHeads map[model.KernelID]*sessHead

// sessCkptHeads is histWalk.ckptHeads for the sessions walk.
func (h *histWalk) sessCkptHeads(sr *segRead) sessCkHeads {
	inCk := sessCkHeads{}
	var chunk []sessHead
	w := walker{onGroup: func(_ time.Time, grp []rawRec, ckpt bool) {
		if !ckpt {
			return
		}
		for _, rr := range grp {
			if rr.typ == recKernel {
				d := dec{b: rr.body, in: h.in}
				kh := decodeSessHeadRest(&d, model.KernelID(d.id()))
				if d.err == nil {
					if len(chunk) == cap(chunk) {
						chunk = make([]sessHead, 0, max(2*cap(chunk), 1024))
					}
					chunk = append(chunk, kh)
					inCk[kh.ID] = &chunk[len(chunk)-1]
				}
			}
		}
	}}
	ckOnly := &segRead{file: sr.file, data: &segData{Checkpoint: sr.data.Checkpoint}}
	w.scan(ckOnly, nil, time.Time{})
	return inCk
}

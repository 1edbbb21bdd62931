package placement

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// minMemory is FractionAllocMap.allocate's min_memory, the only value the
// agent passes: EVENLY ignores devices with less free.
var minMemory = model.NewDec(1, -2)

// StrandedSlot is the capacity of one fractional slot that requests of one
// size cannot use.
type StrandedSlot struct {
	Slot model.SlotName
	// Request is the size asked about.
	Request model.Dec
	// Whole is set when a request of this size must fit on one device
	// (fragmentation not allowed and the request is at most one device's
	// capacity); Need is then the free capacity a device must have to take
	// one, and Takes what one takes from it after quantum rounding.
	Whole bool
	Need  model.Dec
	Takes model.Dec
	// Free is the slot's free capacity over the agent's devices.
	Free model.Dec
	// Total is the stranded part of Free.
	Total model.Dec
	// Devices lists the devices with stranded capacity, in map order.
	Devices []StrandedDevice
}

// StrandedDevice is the stranded capacity of one device.
type StrandedDevice struct {
	Device   model.DeviceID
	Free     model.Dec
	Stranded model.Dec
	Why      string
}

// Stranded computes, for requests of size amount of a fractional slot, the
// free shares on each device that no such request can use. It is computed
// from the allocator's rules, not by trial placement, so it is cheap
// (linear in the devices):
//
//   - Shares below the quantum grid are stranded for any request: what a
//     kernel gets is rounded down to a multiple of the quantum, so a device
//     with 0.05 free and quantum 0.1 can give nothing, and the 0.05 of a
//     device with 0.35 free is never handed out.
//   - EVENLY skips devices with less than min_memory (0.01) free.
//   - Fragmentation not allowed and the request at most the capacity of
//     the map's first device (the fragmentation guard's assumption), EVENLY:
//     each request must fit on one device, which needs Need free (the
//     request rounded down to the quantum, plus one quantum when it is not
//     a multiple of it, and at least the request) and then holds Takes. A
//     device holds as many whole requests as fit in turn; what is left over
//     is stranded, all of its free shares when not even one fits. This is
//     the rule the guard means; Backend.AI's EVENLY still splits a request
//     that passed the guard when it does not fit on the first device in
//     priority order, which this does not model.
//   - The same with FILL: the guard only needs one device with Need free,
//     after which FILL may split; without such a device everything free is
//     stranded for this size.
//   - Fragmentation not allowed and a larger request: it must be split into
//     near-equal quantum multiples, the smallest being the request over the
//     number of devices rounded down to the quantum; a device with less
//     free cannot take part.
//   - Fragmentation allowed: a request can be split over any devices, so
//     beyond the rules above nothing is stranded.
//
// Whether the agent has enough free capacity in total is not stranding:
// Preview reports that as InsufficientResource. ok is false for a slot that
// is not fractional on this node, and for a request that rounds down to
// nothing (NotMultipleOfQuantum).
func (n *Node) Stranded(slot model.SlotName, amount model.Dec) (StrandedSlot, bool) {
	out := StrandedSlot{Slot: slot, Request: amount, Free: model.Zero, Total: model.Zero}
	p := n.Plugin(slot.DeviceName())
	if p == nil || !p.Fractional || amount.Sign() <= 0 || !amount.IsFinite() {
		return out, false
	}
	q := n.settings.quantum()
	r2, err := amount.Quantize(-2, apd.RoundHalfEven)
	if err != nil {
		return out, false
	}
	takes := floorTo(r2, q)
	if takes.Sign() <= 0 {
		return out, false
	}
	threshold := q
	if p.Strategy == alloc.Evenly && q.Less(minMemory) {
		threshold = minMemory
	}

	sf := n.slotFree(p, slot)
	ids, frees, first := sf.ids, sf.frees, sf.first
	if len(ids) == 0 {
		return out, false
	}

	forbid := n.settings.ForbidFragmentation
	var need model.Dec // the least a device must have free to take part
	guardOnly := false // FILL: the guard is a condition on the node, not per device
	switch {
	case forbid && amount.Cmp(first) <= 0:
		d := floorTo(amount, q)
		need = d
		if d.Less(amount) {
			need = d.Add(q) // the guard wants one extra quantum
		}
		need = model.Max(need, amount) // EVENLY's fit test compares the raw request
		if p.Strategy == alloc.Fill {
			guardOnly = true
			break
		}
		out.Whole = true
		out.Need, out.Takes = need, takes
	case forbid:
		need = floorTo(quo(amount, model.NewDec(int64(len(ids)), 0)), q)
	}
	if guardOnly {
		// FILL may split a request once the guard found one device with
		// need free; without such a device every request is refused.
		refused := true
		for _, g := range sf.grids {
			if g.Cmp(need) >= 0 {
				refused = false
				break
			}
		}
		if refused {
			out.Free = sf.total
			for i, f := range frees {
				if f.Sign() > 0 {
					out.Total = out.Total.Add(f)
					out.Devices = append(out.Devices, StrandedDevice{Device: ids[i], Free: f, Stranded: f,
						Why: fmt.Sprintf("no device has %s free, so the fragmentation guard refuses every request of this size", need)})
				}
			}
			return out, true
		}
		need = model.Zero
	}
	if need.Less(threshold) {
		need = threshold
	}

	out.Free = sf.total
	for i, id := range ids {
		f := frees[i]
		if f.Sign() <= 0 {
			continue
		}
		grid := sf.grids[i]
		var stranded model.Dec
		var why string
		switch {
		case grid.Less(need) && out.Whole:
			stranded = f
			why = fmt.Sprintf("%s free, a whole request needs %s on one device (fragmentation not allowed)", f, need)
		case grid.Less(need) && forbid:
			stranded = f
			why = fmt.Sprintf("%s free, less than the smallest part (%s) of any split without fragmentation", f, need)
		case grid.Less(need):
			stranded = f
			why = fmt.Sprintf("%s free, below the smallest amount the allocator hands out (%s)", f, need)
		case out.Whole:
			// Whole requests one after the other: k fit, the rest is left.
			k, _ := f.Sub(need).QuoInteger(takes)
			left := f.Sub(takes.Mul(k.Add(model.One)))
			if left.Sign() > 0 {
				stranded = left
				why = fmt.Sprintf("%s left after %s whole request(s) of %s", left, k.Add(model.One), takes)
			}
		default:
			if rest := sf.rests[i]; rest.Sign() > 0 {
				stranded = rest
				why = fmt.Sprintf("%s below the quantum %s", rest, q)
			}
		}
		if stranded.Sign() > 0 {
			out.Total = out.Total.Add(stranded)
			out.Devices = append(out.Devices, StrandedDevice{Device: id, Free: f, Stranded: stranded, Why: why})
		}
	}
	return out, true
}

// slotFree is a fractional slot's free capacity as Stranded reads it; it
// depends only on the node's allocations, so a Node computes it once per
// state instead of once per preview.
type slotFree struct {
	ids   []model.DeviceID
	frees []model.Dec // capacity − allocation, map order
	grids []model.Dec // floorTo(free, quantum)
	rests []model.Dec // free − grid
	first model.Dec   // the capacity of the slot's first device
	total model.Dec   // Σ positive free, in map order
}

// slotFree returns the node's slotFree for slot (of plugin p), building it
// if the node changed since it was last built.
func (n *Node) slotFree(p *Plugin, slot model.SlotName) *slotFree {
	if sf := n.free[slot]; sf != nil {
		return sf
	}
	q := n.settings.quantum()
	shares := p.m.SlotFree(slot)
	sf := &slotFree{
		ids:   make([]model.DeviceID, len(shares)),
		frees: make([]model.Dec, len(shares)),
		grids: make([]model.Dec, len(shares)),
		rests: make([]model.Dec, len(shares)),
		total: p.m.SlotFreeTotal(slot),
	}
	for i, sh := range shares {
		sf.ids[i], sf.frees[i] = sh.Device, sh.Amount
		sf.grids[i] = floorTo(sh.Amount, q)
		sf.rests[i] = sh.Amount.Sub(sf.grids[i])
	}
	if len(shares) > 0 {
		sf.first = n.capacity(p, sf.ids[0])
	}
	if n.free == nil {
		n.free = map[model.SlotName]*slotFree{}
	}
	n.free[slot] = sf
	return sf
}

// floorTo rounds a non-negative x down to a multiple of q (zero for x ≤ 0).
func floorTo(x, q model.Dec) model.Dec {
	if x.Sign() <= 0 || q.Sign() <= 0 {
		return model.Zero
	}
	k, err := x.QuoInteger(q)
	if err != nil {
		return model.Zero
	}
	return k.Mul(q)
}

// quo is x / y, zero when it cannot be computed.
func quo(x, y model.Dec) model.Dec {
	r, err := x.Quo(y)
	if err != nil {
		return model.Zero
	}
	return r
}

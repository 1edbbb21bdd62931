package placement

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// refFreeOf and refStranded are FreeOf and Stranded as they were before
// they read the free capacities the maps and the Node derive once per
// state: every call walks the map's allocations. TestPreviewMatchesReference
// checks the two agree.

func (n *Node) refFreeOf(slot model.SlotName) model.Dec {
	p := n.Plugin(slot.DeviceName())
	if p == nil {
		return model.Zero
	}
	total := model.Zero
	al := p.m.Allocations()
	for _, s := range al {
		if s.Slot != slot {
			continue
		}
		for _, sh := range s.Shares {
			if f := n.capacity(p, sh.Device).Sub(sh.Amount); f.Sign() > 0 {
				total = total.Add(f)
			}
		}
	}
	return total
}

func (n *Node) refStranded(slot model.SlotName, amount model.Dec) (StrandedSlot, bool) {
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

	var ids []model.DeviceID
	var frees []model.Dec
	var first model.Dec
	for _, s := range p.m.Allocations() {
		if s.Slot != slot {
			continue
		}
		for _, sh := range s.Shares {
			if len(ids) == 0 {
				first = n.capacity(p, sh.Device)
			}
			ids = append(ids, sh.Device)
			frees = append(frees, n.capacity(p, sh.Device).Sub(sh.Amount))
		}
	}
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
		for _, f := range frees {
			if floorTo(f, q).Cmp(need) >= 0 {
				refused = false
				break
			}
		}
		if refused {
			for i, f := range frees {
				if f.Sign() > 0 {
					out.Free = out.Free.Add(f)
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

	for i, id := range ids {
		f := frees[i]
		if f.Sign() <= 0 {
			continue
		}
		out.Free = out.Free.Add(f)
		grid := floorTo(f, q)
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
			if rest := f.Sub(grid); rest.Sign() > 0 {
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

// randomSnapshot is a node of random GPUs, cores and memory with random
// live kernels, split between one to three agents (or none: the whole
// node).
func randomSnapshot(rng *rand.Rand) *model.Snapshot {
	capacities := []string{"1.00", "1", "1.0", "0.5", "2.0", "1.00", "1.00"}
	s := &model.Snapshot{}
	ngpu, ncore := rng.IntN(17), rng.IntN(65)
	for i := range ngpu {
		s.Devices = append(s.Devices, gpu(fmt.Sprintf("GPU-%02d", i), rng.IntN(3)-1, capacities[rng.IntN(len(capacities))]))
	}
	for i := range ncore {
		s.Devices = append(s.Devices, core(i, rng.IntN(2)))
	}
	s.Devices = append(s.Devices, memDev(fmt.Sprint((1+rng.IntN(512))*gib)))
	nagents := rng.IntN(4)
	for a := range nagents {
		ag := model.Agent{ID: model.AgentID(fmt.Sprintf("agent-%d", a)), Owns: map[model.DeviceName][]model.DeviceID{}}
		for i := range ngpu {
			if i%nagents == a {
				ag.Owns["cuda"] = append(ag.Owns["cuda"], model.DeviceID(fmt.Sprintf("GPU-%02d", i)))
			}
		}
		for i := range ncore {
			if i%nagents == a {
				ag.Owns["cpu"] = append(ag.Owns["cpu"], model.DeviceID(fmt.Sprint(i)))
			}
		}
		s.Agents = append(s.Agents, ag)
	}
	shares := []string{"0.05", "0.1", "0.25", "0.3", "0.333", "0.5", "0.75", "1.00", "0.07"}
	var ks []*model.Kernel
	for k := range rng.IntN(60) {
		al := model.Allocations{"mem": {"root": model.NewDec(int64(1+rng.IntN(8))*gib, 0)}}
		if ngpu > 0 {
			al["cuda.shares"] = map[model.DeviceID]model.Dec{
				model.DeviceID(fmt.Sprintf("GPU-%02d", rng.IntN(ngpu))): dec(shares[rng.IntN(len(shares))])}
		}
		if ncore > 0 && rng.IntN(2) == 0 {
			al["cpu"] = map[model.DeviceID]model.Dec{model.DeviceID(fmt.Sprint(rng.IntN(ncore))): model.One}
		}
		var agent model.AgentID
		if nagents > 0 {
			agent = s.Agents[rng.IntN(nagents)].ID
		}
		ks = append(ks, &model.Kernel{ID: model.KernelID(fmt.Sprintf("k%03d", k)), Agent: agent, State: model.KernelOK, Alloc: al})
	}
	s.SetKernels(ks)
	return s
}

func randomRequest(rng *rand.Rand) alloc.Request {
	var r alloc.Request
	if rng.IntN(5) > 0 {
		r = append(r, alloc.SlotAmount{Slot: model.SlotCUDAShares, Amount: model.NewDec(int64(rng.IntN(400)), -int32(1+rng.IntN(3)))})
	}
	if rng.IntN(2) == 0 {
		r = append(r, alloc.SlotAmount{Slot: model.SlotCPU, Amount: model.NewDec(int64(rng.IntN(40)), 0)})
	}
	if rng.IntN(2) == 0 {
		r = append(r, alloc.SlotAmount{Slot: model.SlotMem, Amount: model.NewDec(int64(rng.IntN(64))*gib, 0)})
	}
	return r
}

// renderPreview writes out everything a preview reports.
func renderPreview(pv *Preview) string {
	var b strings.Builder
	for _, a := range pv.Agents {
		fmt.Fprintf(&b, "[%s]", a.Agent)
		for _, d := range a.Alloc {
			fmt.Fprintf(&b, " %s%s", d.Device, d.Alloc)
		}
		fmt.Fprintf(&b, " kind=%q err=%v reason=%q", a.ErrKind, a.Err, a.Reason)
		for _, f := range a.Free {
			fmt.Fprintf(&b, " free %s=%s", f.Slot, f.Amount)
		}
		for _, s := range a.Stranded {
			b.WriteString(" " + renderStranded(s, true))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func renderStranded(s StrandedSlot, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ok=%v %s req=%s whole=%v need=%s takes=%s free=%s total=%s", ok, s.Slot, s.Request, s.Whole,
		s.Need, s.Takes, s.Free, s.Total)
	for _, d := range s.Devices {
		fmt.Fprintf(&b, " {%s %s %s %q}", d.Device, d.Free, d.Stranded, d.Why)
	}
	return b.String()
}

// TestPreviewMatchesReference runs many requests through one long-lived
// planner per random node (whose maps and nodes keep what they derive
// from their allocations between previews) and checks each preview
// against one from a planner built fresh for it, and the free and
// stranded capacities against the per-call reference; then it changes the
// long-lived nodes (Allocate, Free) and checks again.
func TestPreviewMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	quanta := []model.Dec{{}, dec("0.1"), dec("0.05"), dec("0.25")}
	for iter := range 300 {
		s := randomSnapshot(rng)
		settings := Settings{Strategy: alloc.Strategy(rng.IntN(2)), ForbidFragmentation: rng.IntN(2) == 0,
			Quantum: quanta[rng.IntN(len(quanta))], Policy: alloc.AffinityPolicy(rng.IntN(2))}
		p := NewPlanner(s, settings)
		for step := range 10 {
			r := randomRequest(rng)
			got, want := renderPreview(p.Preview(r)), renderPreview(NewPlanner(s, settings).Preview(r))
			if got != want {
				t.Fatalf("iter %d step %d request %v:\n got %s\nwant %s", iter, step, r, got, want)
			}
		}
		// Change the long-lived nodes: each preview must now follow them.
		for _, st := range p.Agents() {
			var held []alloc.KernelAllocation
			for step := range 10 {
				r := randomRequest(rng)
				if step%3 == 2 && len(held) > 0 {
					if err := st.Node.Free(held[0]); err != nil {
						t.Fatal(err)
					}
					held = held[1:]
				} else if k, err := st.Node.Allocate(r); err == nil {
					held = append(held, k)
				}
				for _, slot := range []model.SlotName{model.SlotCUDAShares, model.SlotCPU, model.SlotMem} {
					if g, w := st.Node.FreeOf(slot), st.Node.refFreeOf(slot); g.String() != w.String() {
						t.Fatalf("iter %d step %d: FreeOf(%s) = %s, want %s", iter, step, slot, g, w)
					}
					for _, e := range r {
						gs, gok := st.Node.Stranded(slot, e.Amount)
						ws, wok := st.Node.refStranded(slot, e.Amount)
						if g, w := renderStranded(gs, gok), renderStranded(ws, wok); g != w {
							t.Fatalf("iter %d step %d: Stranded(%s, %s):\n got %s\nwant %s", iter, step, slot, e.Amount, g, w)
						}
					}
				}
				if g, w := outcomeOf(st.Node.Try(r)), outcomeOf(st.Node.Clone().Allocate(r)); g != w {
					t.Fatalf("iter %d step %d: Try %s, want %s", iter, step, g, w)
				}
			}
		}
	}
}

func outcomeOf(k alloc.KernelAllocation, err error) string {
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, d := range k {
		fmt.Fprintf(&b, "%s%s ", d.Device, d.Alloc)
	}
	return b.String()
}

package placement

import (
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// TestSlotBasedAgentKeepsHostMemory: in main's slot-based form an agent's
// memory map is the host's (only the amount it reports is split), in the
// draft's device-based form its share replaces the capacity.
func TestSlotBasedAgentKeepsHostMemory(t *testing.T) {
	gib := func(n int64) model.Dec { return model.NewDec(n<<30, 0) }
	devs := []model.Device{{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: gib(4)}}
	req := alloc.Request{{Slot: model.SlotMem, Amount: gib(3)}}
	for _, tc := range []struct {
		name  string
		agent model.Agent
		fits  bool
	}{
		{"slot-based", model.Agent{ID: "a", Mem: gib(2), Given: model.ResourceSlot{model.SlotMem: gib(2)}}, true},
		{"device-based", model.Agent{ID: "a", Mem: gib(2), Owns: map[model.DeviceName][]model.DeviceID{}}, false},
	} {
		s := &model.Snapshot{Devices: devs, Agents: []model.Agent{tc.agent}}
		// The agent's own allocator (the manager would not send 3G to an
		// agent given 2G: TestManagerCapacity).
		ap := ForAgent(s, &s.Agents[0], Settings{}).Preview(req)
		if got := ap.OK(); got != tc.fits {
			t.Errorf("%s: 3G of a 4G host with 2G given: fits %v, want %v (%s)", tc.name, got, tc.fits, ap.Reason)
		}
	}
}

// TestPhysicalAfter: what a placement leaves on each device counts every
// agent's holdings, and only a total above capacity is an overcommit.
func TestPhysicalAfter(t *testing.T) {
	k := model.DeviceKey{Name: "cuda", ID: "g0"}
	s := &model.Snapshot{Devices: []model.Device{{ID: "g0", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")},
		{ID: "g1", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")}},
		Usage: map[model.DeviceKey]*model.DeviceUsage{k: {Key: k, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.90")}}}}
	ph := PhysicalOf(s)
	if f := ph.FreeOf(model.SlotCUDAShares, nil); f.String() != "1.10" {
		t.Errorf("free %s, want 1.10", f)
	}
	a := alloc.Allocation{{Slot: model.SlotCUDAShares, Shares: []alloc.Share{{Device: "g0", Amount: model.MustDec("0.10")}, {Device: "g1", Amount: model.MustDec("0.50")}}}}
	if _, over := ph.After(a); over {
		t.Error("0.90 + 0.10 on 1.00 is not an overcommit")
	}
	a[0].Shares[0].Amount = model.MustDec("0.20")
	ds, over := ph.After(a)
	if !over || !ds[0].Overcommit || ds[0].TotalAfter.String() != "1.10" || ds[1].Overcommit {
		t.Errorf("0.90 + 0.20 on 1.00: %+v %v", ds, over)
	}
	c := ph.Clone()
	c.Add(a, 1)
	if f := ph.FreeOf(model.SlotCUDAShares, nil); f.String() != "1.10" {
		t.Errorf("Add on a clone changed the original: free %s", f)
	}
}

// TestManagerCapacity: in main's slot-based form the manager sends an
// agent only what fits the amount it is given less what its kernels hold,
// whatever its allocator (over every device) could take; the reason says
// the numbers, which add up.
func TestManagerCapacity(t *testing.T) {
	devs := []model.Device{{ID: "g0", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")},
		{ID: "g1", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")}}
	s := &model.Snapshot{Devices: devs, Agents: []model.Agent{
		{ID: "a", Given: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.0")}, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.6")}},
		{ID: "b", Given: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.0")}},
	}}
	pv := NewPlanner(s, Settings{}).Preview(alloc.Request{{Slot: model.SlotCUDAShares, Amount: model.MustDec("0.5")}})
	a, b := pv.Agents[0], pv.Agents[1]
	if a.OK() || a.Reason != "the manager would not send it there: the agent reports 0.4 cuda.shares free (given 1.0, its kernels hold 0.6), 0.5 requested" {
		t.Errorf("agent a: ok %v, %q", a.OK(), a.Reason)
	}
	if !b.OK() {
		t.Errorf("agent b, given 1.0 and holding nothing: %s", b.Reason)
	}
}

// TestManagerRefusalSaysPhysicalFree: after a slot-based apply moved
// amount from a to b while a's kernels still hold it, b reports more free
// than the node physically has. The refusal quotes what b reports (the
// manager's rule) and what is physically free, so that the agents' free
// amounts in a reason never add up past the node's free total.
func TestManagerRefusalSaysPhysicalFree(t *testing.T) {
	gpu := func(id string) model.Device {
		return model.Device{ID: model.DeviceID(id), Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")}
	}
	held := func(id, v string) *model.DeviceUsage {
		k := model.DeviceKey{Name: "cuda", ID: model.DeviceID(id)}
		return &model.DeviceUsage{Key: k, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec(v)}}
	}
	s := &model.Snapshot{Devices: []model.Device{gpu("g0"), gpu("g1"), gpu("g2"), gpu("g3")},
		Usage: map[model.DeviceKey]*model.DeviceUsage{},
		Agents: []model.Agent{
			{ID: "a", Given: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.0")}, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.40")}},
			{ID: "b", Given: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("3.0")}, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.60")}},
		}}
	for _, u := range []*model.DeviceUsage{held("g0", "0.90"), held("g1", "0.50"), held("g2", "0.60")} {
		s.Usage[u.Key] = u
	}
	pv := NewPlanner(s, Settings{}).Preview(alloc.Request{{Slot: model.SlotCUDAShares, Amount: model.MustDec("2.45")}})
	b := pv.Agents[1]
	want := "the manager would not send it there: the agent reports 2.40 cuda.shares free (given 3.0, its kernels hold 0.60; only 2.00 is physically free on the node: the other agents' kernels hold the rest), 2.45 requested"
	if b.OK() || b.Reason != want {
		t.Errorf("agent b: ok %v\n got %q\nwant %q", b.OK(), b.Reason, want)
	}
	// A request within what is physically free is not refused for it.
	pv = NewPlanner(s, Settings{}).Preview(alloc.Request{{Slot: model.SlotCUDAShares, Amount: model.MustDec("0.5")}})
	if a := pv.Agents[0]; a.OK() || a.Reason != "the manager would not send it there: the agent reports 0 cuda.shares free (given 1.0, its kernels hold 1.40), 0.5 requested" {
		t.Errorf("agent a: ok %v, %q", a.OK(), a.Reason)
	}
}

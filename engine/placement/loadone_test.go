package placement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// slotPick is a slot a random allocation may hold, on devices among ids
// (some of which the node may lack).
type slotPick struct {
	slot model.SlotName
	ids  []model.DeviceID
}

// randomAllocs makes random allocations: 1 to 3 of picks (a pick listed
// twice comes twice as often), each on 1 or 2 of its devices with one of
// amts; one amount in infinite is Infinity, one slot in empty holds no
// device (0: never).
type randomAllocs struct {
	picks           []slotPick
	amts            []string
	infinite, empty int
}

func (g randomAllocs) next(rng *rand.Rand) model.Allocations {
	a := model.Allocations{}
	for range 1 + rng.IntN(3) {
		p := g.picks[rng.IntN(len(g.picks))]
		devs := map[model.DeviceID]model.Dec{}
		for range 1 + rng.IntN(2) {
			amt := g.amts[rng.IntN(len(g.amts))]
			if rng.IntN(g.infinite) == 0 {
				amt = "Infinity"
			}
			devs[p.ids[rng.IntN(len(p.ids))]] = model.MustDec(amt)
		}
		if g.empty > 0 && rng.IntN(g.empty) == 0 {
			devs = map[model.DeviceID]model.Dec{}
		}
		a[p.slot] = devs
	}
	return a
}

// loadFunc loads an allocation onto a node.
type loadFunc func(n *Node) (alloc.KernelAllocation, []Skip)

// sameLoads loads 3000 of gen's allocations onto two nodes of devs, each
// through its side of what pair makes of the allocation (names[0] and
// names[1] say which), and fails where they differ: the part loaded, the
// entries skipped, the maps after; about a third are freed again on both.
// At least 300 must load whole (no entry skipped): the fast path must
// have been taken.
func sameLoads(t *testing.T, stream uint64, devs []model.Device, gen randomAllocs, names [2]string, pair func(rng *rand.Rand, a model.Allocations) (got, want loadFunc)) {
	t.Helper()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, stream))
	fast, ref := NewNode(devs, Settings{}), NewNode(devs, Settings{})
	whole := 0
	for i := range 3000 {
		a := gen.next(rng)
		gotLoad, wantLoad := pair(rng, a)
		got, gotSkip := gotLoad(fast)
		want, wantSkip := wantLoad(ref)
		if gotSkip == nil {
			whole++
		}
		if g, w := fmt.Sprint(got, gotSkip), fmt.Sprint(want, wantSkip); g != w {
			t.Fatalf("seed %d, allocation %d %v:\n%-7s %s\n%-7s %s", seed, i, a, names[0], g, names[1], w)
		}
		if g, w := fmt.Sprint(fast.State()), fmt.Sprint(ref.State()); g != w {
			t.Fatalf("seed %d, allocation %d %v: the maps after\n%-7s %s\n%-7s %s", seed, i, a, names[0], g, names[1], w)
		}
		if rng.IntN(3) == 0 {
			if err := fast.Free(got); err != nil {
				t.Fatal(err)
			}
			if err := ref.Free(want); err != nil {
				t.Fatal(err)
			}
		}
	}
	if whole < 300 {
		t.Fatalf("seed %d: only %d of 3000 allocations loaded whole", seed, whole)
	}
}

// TestLoadOneIsLoadAll: Load of one allocation (the fast path where the
// maps hold it whole) gives what LoadAll of it gives, the loaded part,
// the skipped entries and the maps after, on random allocations over a
// node of GPUs, cores and memory: whole and fractional amounts, several
// slots and devices, and entries the maps cannot hold (a device or
// plugin the node lacks, a slot the device is not, an infinite amount),
// loaded one after another onto the same maps.
func TestLoadOneIsLoadAll(t *testing.T) {
	cuda := slotPick{model.SlotCUDAShares, []model.DeviceID{"A", "B", "C", "D"}}
	gen := randomAllocs{
		picks: []slotPick{cuda, cuda, {model.SlotCPU, []model.DeviceID{"0", "1", "2", "3"}},
			{model.SlotMem, []model.DeviceID{"root", "A"}}, {"rocm.device", []model.DeviceID{"0"}}},
		amts:     []string{"0.1", "0.25", "0.5", "1", "1.0", "0.01", "4294967296"},
		infinite: 40, empty: 20,
	}
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), gpu("C", 1, "2.0"), core(0, 0), core(1, 0), core(2, 1), memDev("68719476736")}
	sameLoads(t, 30, devs, gen, [2]string{"Load", "LoadAll"}, func(_ *rand.Rand, a model.Allocations) (loadFunc, loadFunc) {
		return func(n *Node) (alloc.KernelAllocation, []Skip) {
				if _, ok := n.loadOne(model.Allocations{}, nil); !ok {
					t.Fatal("an empty allocation is not loaded whole")
				}
				return n.Load(a)
			}, func(n *Node) (alloc.KernelAllocation, []Skip) {
				loaded, skipped := n.LoadAll([]model.Allocations{a})
				return loaded, skipped[0]
			}
	})
}

// TestLoadOneIsLoadAllTwoSlotsOfAPlugin: a plugin whose devices are of
// two slots (shares on some GPUs, whole devices on others) is loaded
// with its slots in LoadAll's order whatever order a's map gives them.
func TestLoadOneIsLoadAllTwoSlotsOfAPlugin(t *testing.T) {
	gen := randomAllocs{
		picks: []slotPick{{model.SlotCUDAShares, []model.DeviceID{"A", "B"}}, {model.SlotCUDADevice, []model.DeviceID{"E", "F"}},
			{model.SlotCPU, []model.DeviceID{"0", "1"}}},
		amts:     []string{"0.1", "0.5", "1"},
		infinite: 50,
	}
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), wholeGPU("E", 0), wholeGPU("F", 1), core(0, 0), core(1, 1)}
	sameLoads(t, 32, devs, gen, [2]string{"Load", "LoadAll"}, func(_ *rand.Rand, a model.Allocations) (loadFunc, loadFunc) {
		return func(n *Node) (alloc.KernelAllocation, []Skip) { return n.Load(a) },
			func(n *Node) (alloc.KernelAllocation, []Skip) {
				loaded, skipped := n.LoadAll([]model.Allocations{a})
				return loaded, skipped[0]
			}
	})
}

// TestLoadOfIsLoadOfThePart: loading the part of an allocation of the
// plugins kept (LoadOf, what a replay loads of a record made without
// the host's devices) is Load of that part, made as a map: the same
// allocation loaded, the same skips, the same maps after, freeing
// included.
func TestLoadOfIsLoadOfThePart(t *testing.T) {
	cuda := slotPick{model.SlotCUDAShares, []model.DeviceID{"A", "B", "C"}}
	gen := randomAllocs{
		picks: []slotPick{cuda, cuda, {model.SlotCPU, []model.DeviceID{"0", "1", "2"}}, {model.SlotMem, []model.DeviceID{"root", "A"}}},
		amts:  []string{"0.1", "0.25", "0.5", "1", "0.01", "4294967296"}, infinite: 7,
	}
	keeps := []func(model.DeviceName) bool{
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") && n != model.DeviceName("mem") },
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") },
		func(model.DeviceName) bool { return true },
		func(model.DeviceName) bool { return false },
	}
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), core(0, 0), core(1, 0), memDev("68719476736")}
	sameLoads(t, 31, devs, gen, [2]string{"LoadOf", "Load"}, func(rng *rand.Rand, a model.Allocations) (loadFunc, loadFunc) {
		keep := keeps[rng.IntN(len(keeps))]
		part := model.Allocations{}
		for slot, m := range a {
			if keep(slot.DeviceName()) {
				part[slot] = m
			}
		}
		return func(n *Node) (alloc.KernelAllocation, []Skip) { return n.LoadOf(a, keep) },
			func(n *Node) (alloc.KernelAllocation, []Skip) { return n.Load(part) }
	})
}

// listedAlloc is an allocation as Entries lists it, its slots and each
// slot's devices in the order the generator shuffled them.
type listedAlloc []struct {
	slot model.SlotName
	dev  model.DeviceID
	amt  model.Dec
}

func (l listedAlloc) Len() int { return len(l) }
func (l listedAlloc) At(i int) (model.SlotName, model.DeviceID, model.Dec) {
	return l[i].slot, l[i].dev, l[i].amt
}

// TestLoadEntriesIsLoadOf: an allocation loaded from its entries, in
// any order of its slots and of their devices (what a replay loads of a
// record's arrival, history.Held), is LoadOf of its maps: the same
// allocation loaded, the same skips, the same maps after, freeing
// included; an allocation the maps cannot hold whole goes the maps' way.
func TestLoadEntriesIsLoadOf(t *testing.T) {
	cuda := slotPick{model.SlotCUDAShares, []model.DeviceID{"A", "B", "C"}}
	gen := randomAllocs{
		picks: []slotPick{cuda, cuda, {model.SlotCUDADevice, []model.DeviceID{"E", "F"}}, {model.SlotCPU, []model.DeviceID{"0", "1", "2"}},
			{model.SlotMem, []model.DeviceID{"root", "A"}}},
		amts: []string{"0.1", "0.25", "0.5", "1", "0.01", "4294967296"}, infinite: 7,
	}
	keeps := []func(model.DeviceName) bool{
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") && n != model.DeviceName("mem") },
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") },
		func(model.DeviceName) bool { return true },
		func(model.DeviceName) bool { return false },
	}
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), wholeGPU("E", 0), wholeGPU("F", 1), core(0, 0), core(1, 0), memDev("68719476736")}
	whole := 0
	sameLoads(t, 33, devs, gen, [2]string{"LoadEntries", "LoadOf"}, func(rng *rand.Rand, a model.Allocations) (loadFunc, loadFunc) {
		keep := keeps[rng.IntN(len(keeps))]
		var l listedAlloc
		slots := slices.Collect(maps.Keys(a))
		rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		for _, slot := range slots {
			ids := slices.Collect(maps.Keys(a[slot]))
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, id := range ids {
				l = append(l, struct {
					slot model.SlotName
					dev  model.DeviceID
					amt  model.Dec
				}{slot, id, a[slot][id]})
			}
		}
		return func(n *Node) (alloc.KernelAllocation, []Skip) {
				if _, ok := n.loadEntries(listedAlloc{}, keep); !ok {
					t.Fatal("no entries are not loaded whole")
				}
				loaded, skipped := n.LoadEntries(l, keep, func() model.Allocations { return a })
				if skipped == nil {
					whole++
				}
				return loaded, skipped
			},
			func(n *Node) (alloc.KernelAllocation, []Skip) { return n.LoadOf(a, keep) }
	})
	if whole == 0 {
		t.Fatal("no allocation was loaded from its entries whole")
	}
}

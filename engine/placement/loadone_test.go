package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestLoadOneIsLoadAll: Load of one allocation (the fast path where the
// maps hold it whole) gives what LoadAll of it gives, the loaded part,
// the skipped entries and the maps after, on random allocations over a
// node of GPUs, cores and memory: whole and fractional amounts, several
// slots and devices, and entries the maps cannot hold (a device or
// plugin the node lacks, a slot the device is not, an infinite amount),
// loaded one after another onto the same maps.
func TestLoadOneIsLoadAll(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 30))
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), gpu("C", 1, "2.0"), core(0, 0), core(1, 0), core(2, 1), memDev("68719476736")}
	amts := []string{"0.1", "0.25", "0.5", "1", "1.0", "0.01", "4294967296", "Infinity"}
	fast, ref := NewNode(devs, Settings{}), NewNode(devs, Settings{})
	whole := 0
	for i := range 3000 {
		a := model.Allocations{}
		for range 1 + rng.IntN(3) {
			var slot model.SlotName
			var ids []model.DeviceID
			switch rng.IntN(5) {
			case 0, 1:
				slot, ids = model.SlotCUDAShares, []model.DeviceID{"A", "B", "C", "D"}
			case 2:
				slot, ids = model.SlotCPU, []model.DeviceID{"0", "1", "2", "3"}
			case 3:
				slot, ids = model.SlotMem, []model.DeviceID{"root", "A"}
			default:
				slot, ids = model.SlotName("rocm.device"), []model.DeviceID{"0"}
			}
			devs := map[model.DeviceID]model.Dec{}
			for range 1 + rng.IntN(2) {
				amt := amts[rng.IntN(len(amts)-1)]
				if rng.IntN(40) == 0 {
					amt = "Infinity"
				}
				devs[ids[rng.IntN(len(ids))]] = model.MustDec(amt)
			}
			if rng.IntN(20) == 0 {
				devs = map[model.DeviceID]model.Dec{}
			}
			a[slot] = devs
		}
		if _, ok := fast.loadOne(model.Allocations{}, nil); !ok {
			t.Fatal("an empty allocation is not loaded whole")
		}
		got, gotSkip := fast.Load(a)
		want, wantSkip := ref.LoadAll([]model.Allocations{a})
		if gotSkip == nil {
			whole++
		}
		if g, w := fmt.Sprint(got, gotSkip), fmt.Sprint(want, wantSkip[0]); g != w {
			t.Fatalf("seed %d, allocation %d %v:\nLoad    %s\nLoadAll %s", seed, i, a, g, w)
		}
		if g, w := fmt.Sprint(fast.State()), fmt.Sprint(ref.State()); g != w {
			t.Fatalf("seed %d, allocation %d %v: the maps after\nLoad    %s\nLoadAll %s", seed, i, a, g, w)
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
		t.Fatalf("seed %d: only %d of 3000 allocations took the fast path", seed, whole)
	}
}

// TestLoadOfIsLoadOfThePart: loading the part of an allocation of the
// plugins kept (LoadOf, what a replay loads of a record made without
// the host's devices) is Load of that part, made as a map: the same
// allocation loaded, the same skips, the same maps after, freeing
// included.
func TestLoadOfIsLoadOfThePart(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 31))
	devs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), core(0, 0), core(1, 0), memDev("68719476736")}
	amts := []string{"0.1", "0.25", "0.5", "1", "0.01", "4294967296", "Infinity"}
	keeps := []func(model.DeviceName) bool{
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") && n != model.DeviceName("mem") },
		func(n model.DeviceName) bool { return n != model.DeviceName("cpu") },
		func(model.DeviceName) bool { return true },
		func(model.DeviceName) bool { return false },
	}
	of, ref := NewNode(devs, Settings{}), NewNode(devs, Settings{})
	whole := 0
	for i := range 3000 {
		a := model.Allocations{}
		for range 1 + rng.IntN(3) {
			var slot model.SlotName
			var ids []model.DeviceID
			switch rng.IntN(4) {
			case 0, 1:
				slot, ids = model.SlotCUDAShares, []model.DeviceID{"A", "B", "C"}
			case 2:
				slot, ids = model.SlotCPU, []model.DeviceID{"0", "1", "2"}
			default:
				slot, ids = model.SlotMem, []model.DeviceID{"root", "A"}
			}
			m := map[model.DeviceID]model.Dec{}
			for range 1 + rng.IntN(2) {
				m[ids[rng.IntN(len(ids))]] = model.MustDec(amts[rng.IntN(len(amts))])
			}
			a[slot] = m
		}
		keep := keeps[rng.IntN(len(keeps))]
		part := model.Allocations{}
		for slot, m := range a {
			if keep(slot.DeviceName()) {
				part[slot] = m
			}
		}
		got, gotSkip := of.LoadOf(a, keep)
		want, wantSkip := ref.Load(part)
		if gotSkip == nil {
			whole++
		}
		if g, w := fmt.Sprint(got, gotSkip), fmt.Sprint(want, wantSkip); g != w {
			t.Fatalf("seed %d, allocation %d %v:\nLoadOf %s\nLoad   %s", seed, i, a, g, w)
		}
		if g, w := fmt.Sprint(of.State()), fmt.Sprint(ref.State()); g != w {
			t.Fatalf("seed %d, allocation %d %v: the maps after\nLoadOf %s\nLoad   %s", seed, i, a, g, w)
		}
		if rng.IntN(3) == 0 {
			if err := of.Free(got); err != nil {
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

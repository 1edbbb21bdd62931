package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// snapView is what a snapshot said when it was published, in plain values,
// to check later that nothing published changed afterwards.
type snapView struct {
	snap     *model.Snapshot
	kernels  []*model.Kernel
	holdings map[model.DeviceKey][]model.Holding
}

func viewOf(s *model.Snapshot) snapView {
	v := snapView{snap: s, kernels: slices.Clone(s.Kernels()), holdings: map[model.DeviceKey][]model.Holding{}}
	for k, u := range s.Usage {
		v.holdings[k] = slices.Clone(u.Holdings())
	}
	return v
}

// holdingsFromKernels derives every device's holdings from the kernels by
// brute force: each allocation entry on an accelerator, sorted by kernel
// then slot; devices absent from want hold nothing.
func holdingsFromKernels(ks []*model.Kernel) map[model.DeviceKey][]model.Holding {
	out := map[model.DeviceKey][]model.Holding{}
	for _, k := range ks {
		for slot, m := range k.Alloc {
			if n := slot.DeviceName(); n == "cpu" || n == "mem" {
				continue
			}
			for id, v := range m {
				key := model.DeviceKey{Name: slot.DeviceName(), ID: id}
				out[key] = append(out[key], model.Holding{Kernel: k.ID, Agent: k.Agent, Slot: slot, Amount: v})
			}
		}
	}
	for _, hs := range out {
		slices.SortFunc(hs, func(a, b model.Holding) int {
			if c := cmp.Compare(a.Kernel, b.Kernel); c != 0 {
				return c
			}
			return cmp.Compare(a.Slot, b.Slot)
		})
	}
	return out
}

func sameHoldings(a, b []model.Holding) bool {
	return slices.EqualFunc(a, b, func(x, y model.Holding) bool {
		return x.Kernel == y.Kernel && x.Agent == y.Agent && x.Slot == y.Slot && x.Amount.String() == y.Amount.String()
	})
}

// TestStateSnapshotsPersistent drives the state with random creates,
// rewrites (including agent moves, broken and torn files) and deletes, and
// checks after each snapshot that the incrementally kept kernel list and
// per-device holdings are exactly what the kernels say, and at the end
// that no published snapshot changed. With bulk, the state is in bulk mode
// (Build's) from the start and again after every snapshot, so that puts
// are collected, deletes and moves end it, and PutAll runs on empty and on
// filled sequences.
func TestStateSnapshotsPersistent(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		bulk bool
	}{{1, false}, {2, false}, {1, true}, {3, true}} {
		seed := tc.seed
		t.Run(fmt.Sprint(seed, " bulk=", tc.bulk), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 5))
			st := newState(&Options{Node: "t", Roots: []scratch.Root{{Path: "/r0", Agent: "a0"}, {Path: "/r1", Agent: "a1"}}, Clock: func() time.Time { return time.Unix(0, 0) }})
			st.bulk = tc.bulk
			gpus := []model.DeviceID{"g0", "g1", "g2"}
			spec := func() *resourcefile.Spec {
				a := model.Allocations{
					model.SlotCUDAShares: {gpus[rng.IntN(3)]: model.NewDec(int64(rng.IntN(100)), -2)},
					model.SlotCPU:        {model.DeviceID(fmt.Sprint(rng.IntN(8))): model.One},
					model.SlotMem:        {"root": model.NewDec(int64(1+rng.IntN(8))<<30, 0)},
				}
				if rng.IntN(3) == 0 {
					a[model.SlotCUDAShares][gpus[rng.IntN(3)]] = model.MustDec("0.10")
					a[model.SlotCUDADevice] = map[model.DeviceID]model.Dec{gpus[rng.IntN(3)]: model.One}
				}
				// Amounts of other forms (0.5, 0.125): a total's form is
				// the finest of its terms left, as a fresh sum's.
				switch rng.IntN(4) {
				case 0:
					a[model.SlotCUDAShares][gpus[rng.IntN(3)]] = model.NewDec(int64(1+rng.IntN(9)), -1)
				case 1:
					a[model.SlotCUDAShares][gpus[rng.IntN(3)]] = model.MustDec("0.125")
				}
				return &resourcefile.Spec{Alloc: a}
			}
			live := map[model.KernelID]bool{}
			var views []snapView
			for step := 0; step < 600; step++ {
				id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", rng.IntN(150)))
				agent := model.AgentID(fmt.Sprint("a", rng.IntN(2)))
				switch r := rng.IntN(10); {
				case r < 2 && live[id]:
					st.removeKernel(id)
					delete(live, id)
				case r < 3:
					// Torn or malformed: stale when it parsed before.
					st.upsertKernel(kernelRead{root: "/" + strings.Replace(string(agent), "a", "r", 1), id: id, path: "/r/x", err: errors.New("bad")})
					live[id] = true
				default:
					st.upsertKernel(kernelRead{root: "/" + strings.Replace(string(agent), "a", "r", 1), id: id, path: "/r/x", spec: spec()})
					live[id] = true
				}
				if rng.IntN(3) > 0 {
					continue
				}
				s := st.snapshot()
				st.bulk = tc.bulk
				ks := s.Kernels()
				if len(ks) != len(live) || s.NumKernels() != len(live) {
					t.Fatalf("step %d: %d kernels, want %d", step, len(ks), len(live))
				}
				want := holdingsFromKernels(ks)
				for k, u := range s.Usage {
					if !sameHoldings(u.Holdings(), want[k]) || u.NumHoldings() != len(want[k]) {
						t.Fatalf("step %d: device %s holds %v, the kernels say %v", step, k, u.Holdings(), want[k])
					}
				}
				for k := range want {
					if s.Usage[k] == nil {
						t.Fatalf("step %d: device %s has holdings but no usage", step, k)
					}
				}
				fresh, freshAgent := freshSums(ks)
				for k, u := range s.Usage {
					for slot, v := range u.Held {
						if w := fresh[k][slot]; v.String() != w.String() {
							t.Fatalf("step %d: device %s holds %s %s; a fresh sum of its kernels' is %s", step, k, v, slot, w)
						}
					}
				}
				for _, ag := range s.Agents {
					for slot, v := range ag.Held {
						if w, ok := freshAgent[ag.ID][slot]; ok && v.String() != w.String() {
							t.Fatalf("step %d: agent %s holds %s %s; a fresh sum of its kernels' is %s", step, ag.ID, v, slot, w)
						}
					}
				}
				views = append(views, viewOf(s))
			}
			for n, v := range views {
				if !slices.Equal(v.snap.Kernels(), v.kernels) {
					t.Fatalf("snapshot %d: kernels changed after it was published", n)
				}
				for k, hs := range v.holdings {
					if !sameHoldings(v.snap.Usage[k].Holdings(), hs) {
						t.Fatalf("snapshot %d: holdings of %s changed after it was published", n, k)
					}
				}
			}
		})
	}
}

// TestUpdateCostFlat is the per-change cost in allocated bytes at 1,000 and
// 20,000 kernels: publishing must not copy anything proportional to the
// number of kernels (it did: ~2.3 MB per change at 50,000).
func TestUpdateCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 21,000 kernels")
	}
	bytesPerChange := func(n int) float64 {
		st, specs := loadedState(t, n)
		const changes = 200
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < changes; i++ {
			id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", (i*7919)%n))
			st.upsertKernel(kernelRead{root: "/r", id: id, path: "/r/x", spec: specs[i%2]})
			st.snapshot()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / changes
	}
	small, large := bytesPerChange(1000), bytesPerChange(20000)
	t.Logf("allocated per change: %.0f B at 1,000 kernels, %.0f B at 20,000", small, large)
	if large > 2*small+16<<10 {
		t.Errorf("allocated per change grows with the kernels: %.0f B at 1,000, %.0f B at 20,000", small, large)
	}
}

// TestBulkRemove removes, in bulk mode, kernels whose puts are still
// collected: one without any holding (a broken file), one with them. Neither
// may come back when bulk mode ends.
func TestBulkRemove(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *resourcefile.Spec
		err  error
	}{
		{"broken file", nil, errors.New("bad")},
		{"holds a GPU", &resourcefile.Spec{Alloc: model.Allocations{model.SlotCUDAShares: {"g0": model.MustDec("0.5")}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(&Options{Node: "t", Roots: []scratch.Root{{Path: "/r", Agent: "a"}}, Clock: func() time.Time { return time.Unix(0, 0) }})
			st.bulk = true
			keep := &resourcefile.Spec{Alloc: model.Allocations{model.SlotCUDAShares: {"g0": model.MustDec("0.25")}}}
			st.upsertKernel(kernelRead{root: "/r", id: "k1", path: "/r/k1", spec: keep})
			st.upsertKernel(kernelRead{root: "/r", id: "k2", path: "/r/k2", spec: tc.spec, err: tc.err})
			st.removeKernel("k2")
			st.upsertKernel(kernelRead{root: "/r", id: "k3", path: "/r/k3", spec: keep})
			s := st.snapshot()
			var got []model.KernelID
			for _, k := range s.Kernels() {
				got = append(got, k.ID)
			}
			if !slices.Equal(got, []model.KernelID{"k1", "k3"}) {
				t.Fatalf("kernels %v, want [k1 k3]", got)
			}
			key := model.DeviceKey{Name: "cuda", ID: "g0"}
			want := holdingsFromKernels(s.Kernels())[key]
			if !sameHoldings(s.Usage[key].Holdings(), want) || len(want) != 2 {
				t.Fatalf("holdings %v, want %v", s.Usage[key].Holdings(), want)
			}
		})
	}
}

// freshSums are each device's and each agent's totals summed afresh from
// the kernels, as Backend.AI sums them.
func freshSums(ks []*model.Kernel) (map[model.DeviceKey]model.ResourceSlot, map[model.AgentID]model.ResourceSlot) {
	dev := map[model.DeviceKey]model.ResourceSlot{}
	agent := map[model.AgentID]model.ResourceSlot{}
	for _, k := range ks {
		for slot, m := range k.Alloc {
			for id, v := range m {
				key := model.DeviceKey{Name: slot.DeviceName(), ID: id}
				if dev[key] == nil {
					dev[key] = model.ResourceSlot{}
				}
				if old, ok := dev[key][slot]; ok {
					dev[key][slot] = old.Add(v)
				} else {
					dev[key][slot] = v
				}
				if agent[k.Agent] == nil {
					agent[k.Agent] = model.ResourceSlot{}
				}
				if old, ok := agent[k.Agent][slot]; ok {
					agent[k.Agent][slot] = old.Add(v)
				} else {
					agent[k.Agent][slot] = v
				}
			}
		}
	}
	return dev, agent
}

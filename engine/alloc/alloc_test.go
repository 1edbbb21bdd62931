package alloc

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func intp(n int) *int { return &n }

func dec(s string) model.Dec { return model.MustDec(s) }

func req(kv ...string) Request {
	var r Request
	for i := 0; i+1 < len(kv); i += 2 {
		r = append(r, SlotAmount{model.SlotName(kv[i]), dec(kv[i+1])})
	}
	return r
}

// flat renders an allocation as "slot/dev=amount" strings in order.
func flat(a Allocation) []string {
	var out []string
	for _, s := range a {
		for _, sh := range s.Shares {
			out = append(out, fmt.Sprintf("%s/%s=%s", s.Slot, sh.Device, sh.Amount))
		}
	}
	return out
}

func gpus(slot string, capacity string, numa ...*int) []DeviceSlot {
	devs := make([]DeviceSlot, len(numa))
	for i, n := range numa {
		devs[i] = DeviceSlot{ID: model.DeviceID(fmt.Sprintf("g%d", i)), Slot: model.SlotName(slot),
			SlotType: model.SlotTypeCount, Capacity: dec(capacity), NUMANode: n}
	}
	return devs
}

func cores(n int, perNode int) []DeviceSlot {
	devs := make([]DeviceSlot, n)
	for i := range devs {
		devs[i] = DeviceSlot{ID: model.DeviceID(fmt.Sprint(i)), Slot: model.SlotCPU,
			SlotType: model.SlotTypeCount, Capacity: dec("1"), NUMANode: intp(i / perNode)}
	}
	return devs
}

// TestSeedScenario is the documented seed: two 1.0-share GPUs on NUMA 0
// and 1, EVENLY, INTERLEAVED, quantum 0.01.
func TestSeedScenario(t *testing.T) {
	const a, b = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	m := NewFractionMap([]DeviceSlot{
		{ID: a, Slot: model.SlotCUDAShares, Capacity: dec("1.0"), NUMANode: intp(0)},
		{ID: b, Slot: model.SlotCUDAShares, Capacity: dec("1.0"), NUMANode: intp(1)},
	}, Evenly, dec("0.01"), nil)
	computers := map[model.DeviceName]Map{"cuda": m}
	order := []model.DeviceName{"cuda"}

	steps := []struct {
		request string
		want    []string
		state   []string
	}{
		{"0.2", []string{"cuda.shares/" + b + "=0.20"},
			[]string{"cuda.shares/" + a + "=0", "cuda.shares/" + b + "=0.20"}},
		{"1.2", []string{"cuda.shares/" + a + "=0.60", "cuda.shares/" + b + "=0.60"},
			[]string{"cuda.shares/" + a + "=0.60", "cuda.shares/" + b + "=0.80"}},
	}
	for _, st := range steps {
		got, err := Allocate(computers, req("cuda.shares", st.request), order, Interleaved, Options{})
		if err != nil {
			t.Fatalf("request %s: %v", st.request, err)
		}
		alloc, _ := got.Get("cuda")
		if g := flat(alloc); !reflect.DeepEqual(g, st.want) {
			t.Errorf("request %s: got %v, want %v", st.request, g, st.want)
		}
		if g := flat(m.Allocations()); !reflect.DeepEqual(g, st.state) {
			t.Errorf("after %s: map %v, want %v", st.request, g, st.state)
		}
	}
}

// node builds the three-plugin node used by the orchestration tests: four
// GPUs (g0, g1 on NUMA 0; g2, g3 on NUMA 1) with 0.5 shares used on each of
// g0 and g1, eight cores (0-3 on NUMA 0, 4-7 on NUMA 1) and 64 GiB of
// memory.
func node(t *testing.T) map[model.DeviceName]Map { return nodeUsing(t, "0.5") }

// nodeUsing is node with the given shares used on g0 and g1.
func nodeUsing(t *testing.T, used string) map[model.DeviceName]Map {
	t.Helper()
	cuda := NewFractionMap(gpus("cuda.shares", "1.0", intp(0), intp(0), intp(1), intp(1)), Evenly, dec("0.01"), nil)
	if err := cuda.Apply(Allocation{{Slot: "cuda.shares", Shares: []Share{{"g0", dec(used)}, {"g1", dec(used)}}}}); err != nil {
		t.Fatal(err)
	}
	cpu := NewDiscreteMap(cores(8, 4), Evenly, nil)
	mem := NewDiscreteMap([]DeviceSlot{{ID: "root", Slot: model.SlotMem, SlotType: model.SlotTypeBytes,
		Capacity: dec("68719476736")}}, Fill, nil)
	return map[model.DeviceName]Map{"cuda": cuda, "cpu": cpu, "mem": mem}
}

var allocOrder = []model.DeviceName{"cuda", "cpu", "mem"}

func TestAllocateAcrossDeviceTypes(t *testing.T) {
	tests := []struct {
		name    string
		used    string // shares already used on g0 and g1 (default 0.5)
		request Request
		policy  AffinityPolicy
		want    map[model.DeviceName][]string
	}{
		{
			// The GPU lands on NUMA 1 (its cluster is the less loaded one,
			// and 0.8 does not fit on the half-used NUMA 0 devices), so
			// the cores come from NUMA 1 first.
			name:    "gpu on numa 1 pulls numa 1 cores",
			request: req("cuda.shares", "0.8", "cpu", "2", "mem", "1073741824"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g3=0.80"},
				"cpu":  {"cpu/4=1", "cpu/5=1"},
				"mem":  {"mem/root=1073741824"},
			},
		},
		{
			// The request order does not matter, allocation-order does.
			name:    "request order is irrelevant",
			request: req("mem", "1073741824", "cpu", "2", "cuda.shares", "0.8"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g3=0.80"},
				"cpu":  {"cpu/4=1", "cpu/5=1"},
				"mem":  {"mem/root=1073741824"},
			},
		},
		{
			// More cores than NUMA 1 has: its four first, then the
			// secondary set (NUMA 0).
			name:    "secondary set after the primary",
			request: req("cuda.shares", "0.8", "cpu", "6"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g3=0.80"},
				"cpu":  {"cpu/0=1", "cpu/1=1", "cpu/4=1", "cpu/5=1", "cpu/6=1", "cpu/7=1"},
			},
		},
		{
			// With NUMA 0's GPUs full, 1.6 splits over g2 and g3 and the
			// primary set is NUMA 1 alone.
			name:    "two gpus on one node",
			used:    "1.0",
			request: req("cuda.shares", "1.6", "cpu", "2"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g2=0.80", "cuda.shares/g3=0.80"},
				"cpu":  {"cpu/4=1", "cpu/5=1"},
			},
		},
		{
			// 1.6 over the interleaved order g2, g0, g3, g1 (free 1.0,
			// 0.5, 1.0, 0.5): three devices give 0.54/0.53/0.53, four give
			// a perfectly even 0.40 each, which wins. GPUs on both nodes
			// make two primary sets, and the cores interleave over them.
			name:    "gpus on both nodes interleave cores",
			request: req("cuda.shares", "1.6", "cpu", "4"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g2=0.40", "cuda.shares/g0=0.40", "cuda.shares/g3=0.40", "cuda.shares/g1=0.40"},
				"cpu":  {"cpu/0=1", "cpu/1=1", "cpu/4=1", "cpu/5=1"},
			},
		},
		{
			// Backend.AI's window logic assumes the order is by free
			// capacity; the interleaved order is not, so g0 (0.5 free) is
			// given 0.80 and ends at 1.30 of 1.0. Reproduced on purpose.
			name:    "over-commit reproduced",
			request: req("cuda.shares", "2.4"),
			want: map[model.DeviceName][]string{
				"cuda": {"cuda.shares/g2=0.80", "cuda.shares/g0=0.80", "cuda.shares/g3=0.80"},
			},
		},
		{
			// No GPU requested: the cpu is the first device type and is
			// interleaved over the NUMA nodes.
			name:    "zero gpu request makes cpu the first type",
			request: req("cuda.shares", "0", "cpu", "2"),
			want: map[model.DeviceName][]string{
				"cuda": nil,
				"cpu":  {"cpu/0=1", "cpu/4=1"},
			},
		},
		{
			name:    "prefer single node for the first type",
			request: req("cpu", "2"),
			policy:  PreferSingleNode,
			want: map[model.DeviceName][]string{
				"cpu": {"cpu/0=1", "cpu/1=1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used := tt.used
			if used == "" {
				used = "0.5"
			}
			computers := nodeUsing(t, used)
			got, err := Allocate(computers, tt.request, allocOrder, tt.policy, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d device types, want %d: %v", len(got), len(tt.want), got)
			}
			for dev, want := range tt.want {
				a, ok := got.Get(dev)
				if !ok {
					t.Fatalf("no allocation for %s", dev)
				}
				if g := flat(a); !reflect.DeepEqual(g, want) {
					t.Errorf("%s: got %v, want %v", dev, g, want)
				}
			}
			// Allocation order is kept in the result.
			var names []model.DeviceName
			for _, d := range got {
				names = append(names, d.Device)
			}
			for i := 1; i < len(names); i++ {
				if indexOf(allocOrder, names[i-1]) > indexOf(allocOrder, names[i]) {
					t.Errorf("result order %v does not follow %v", names, allocOrder)
				}
			}
		})
	}
}

func indexOf(xs []model.DeviceName, x model.DeviceName) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func TestAllocateRollback(t *testing.T) {
	tests := []struct {
		name     string
		request  Request
		order    []model.DeviceName
		wantKind string
	}{
		{"memory short after gpu and cpu", req("cuda.shares", "0.8", "cpu", "2", "mem", "1e20"),
			allocOrder, KindInsufficientResource},
		{"cpu short after gpu", req("cuda.shares", "1.5", "cpu", "9"), allocOrder, KindInsufficientResource},
		{"fragmented gpu", req("cuda.shares", "2.5", "cpu", "1"), allocOrder, KindFractionalResourceFragmented},
		{"device missing from the order", req("cuda.shares", "0.5", "tpu.device", "1"), allocOrder, KindValueError},
		{"device without a map", req("cuda.shares", "0.5", "tpu.device", "1"),
			append(allocOrder[:3:3], "tpu"), KindKeyError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			computers := node(t)
			before := map[model.DeviceName][]string{}
			for n, m := range computers {
				before[n] = flat(m.Allocations())
			}
			opts := Options{ForbidFragmentation: tt.wantKind == KindFractionalResourceFragmented}
			_, err := Allocate(computers, tt.request, tt.order, Interleaved, opts)
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *alloc.Error", err)
			}
			if ae.Kind() != tt.wantKind {
				t.Errorf("kind %s, want %s (%v)", ae.Kind(), tt.wantKind, err)
			}
			for n, m := range computers {
				if g := flat(m.Allocations()); !reflect.DeepEqual(g, before[n]) {
					t.Errorf("%s changed: %v, was %v", n, g, before[n])
				}
			}
		})
	}
}

func TestFreeKernel(t *testing.T) {
	computers := node(t)
	before := map[model.DeviceName]Allocation{}
	for n, m := range computers {
		before[n] = m.Allocations()
	}
	k, err := Allocate(computers, req("cuda.shares", "1.2", "cpu", "3", "mem", "4096"), allocOrder, Interleaved, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Free(computers, k); err != nil {
		t.Fatal(err)
	}
	for n, m := range computers {
		// Numeric comparison: a free leaves "0.00" where the fresh map had
		// "0", exactly as Backend.AI does.
		for _, s := range m.Allocations() {
			for _, sh := range s.Shares {
				want, _ := before[n].Get(s.Slot, sh.Device)
				if !sh.Amount.Equal(want) {
					t.Errorf("after free %s/%s holds %s, want %s", n, sh.Device, sh.Amount, want)
				}
			}
		}
	}
	// A free naming an unknown device changes nothing.
	bad := KernelAllocation{{Device: "cpu", Alloc: Allocation{{Slot: "cpu", Shares: []Share{{"0", dec("1")}, {"99", dec("1")}}}}}}
	snap := flat(computers["cpu"].Allocations())
	if err := Free(computers, bad); err == nil {
		t.Error("freeing an unknown device succeeded")
	}
	if g := flat(computers["cpu"].Allocations()); !reflect.DeepEqual(g, snap) {
		t.Errorf("failed free changed the map: %v, was %v", g, snap)
	}
}

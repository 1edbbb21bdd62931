package placement

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

func dec(s string) model.Dec { return model.MustDec(s) }

// gpu is a fractional GPU device; numa < 0 is unknown.
func gpu(id string, numa int, capacity string) model.Device {
	return model.Device{ID: model.DeviceID(id), Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
		Capacity: dec(capacity), NUMANode: numa}
}

func wholeGPU(id string, numa int) model.Device {
	return model.Device{ID: model.DeviceID(id), Name: "cuda", Slot: model.SlotCUDADevice, SlotType: model.SlotTypeCount,
		Capacity: model.One, NUMANode: numa}
}

func core(id, numa int) model.Device {
	return model.Device{ID: model.DeviceID(fmt.Sprint(id)), Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount,
		Capacity: model.One, Index: id, NUMANode: numa}
}

func memDev(bytes string) model.Device {
	return model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: dec(bytes), NUMANode: -1}
}

func steps(t *testing.T, texts ...string) []Step {
	t.Helper()
	out := make([]Step, len(texts))
	for i, s := range texts {
		st, err := ParseStep(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = st
	}
	return out
}

func sharesString(sh []alloc.Share) string {
	parts := make([]string, len(sh))
	for i, s := range sh {
		parts[i] = string(s.Device) + "=" + s.Amount.String()
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// TestRun covers simulations step by step: what each step did, the final
// alloc map and state.
func TestRun(t *testing.T) {
	twoGPUs := []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0")}
	for _, tc := range []struct {
		name     string
		devs     []model.Device
		settings Settings
		steps    []string
		want     []string // per step: allocation/released, or the error kind
		allocMap string
		state    string
	}{
		{
			name: "seed", devs: twoGPUs, steps: []string{"cuda.shares=0.2", "cuda.shares=1.2"},
			want:     []string{"{cuda.shares: {B: 0.20}}", "{cuda.shares: {A: 0.60, B: 0.60}}"},
			allocMap: "{A=0.60 B=0.80}", state: "{cuda.shares: {A: 0.60, B: 0.80}}",
		},
		{
			name: "seed fill", devs: twoGPUs, settings: Settings{Strategy: alloc.Fill}, steps: []string{"cuda.shares=0.2", "cuda.shares=1.2"},
			// As in the corpus's seed-doc-fill: the less loaded NUMA node
			// comes first, so 1.2 fills B before topping up A.
			want:     []string{"{cuda.shares: {A: 0.20}}", "{cuda.shares: {B: 1.00, A: 0.20}}"},
			allocMap: "{A=0.40 B=1.00}", state: "{cuda.shares: {A: 0.40, B: 1.00}}",
		},
		{
			name: "free to zero drops the device from alloc_map", devs: twoGPUs,
			steps:    []string{"cuda.shares=0.2", "cuda.shares=0.5", "free=1"},
			want:     []string{"{cuda.shares: {B: 0.20}}", "{cuda.shares: {B: 0.50}}", "{cuda.shares: {B: 0.20}}"},
			allocMap: "{B=0.50}", state: "{cuda.shares: {A: 0, B: 0.50}}",
		},
		{
			name: "every kernel freed", devs: twoGPUs, steps: []string{"cuda.shares=0.2", "free=1"},
			want:     []string{"{cuda.shares: {B: 0.20}}", "{cuda.shares: {B: 0.20}}"},
			allocMap: "{}", state: "{cuda.shares: {A: 0, B: 0.00}}",
		},
		{
			name: "failures do not stop the run", devs: twoGPUs,
			steps:    []string{"cuda.shares=5", "free=1", "cuda.shares=1", "free=2", "free=2"},
			want:     []string{"InsufficientResource", "NotAllocated", "{cuda.shares: {B: 1.00}}", "{cuda.shares: {B: 1.00}}", "AlreadyFreed"},
			allocMap: "{}", state: "{cuda.shares: {A: 0, B: 0.00}}",
		},
		{
			name: "whole GPUs, discrete", devs: []model.Device{wholeGPU("0", 0), wholeGPU("1", 1)},
			steps:    []string{"cuda.device=1", "cuda.device=1", "cuda.device=1"},
			want:     []string{"{cuda.device: {0: 1}}", "{cuda.device: {1: 1}}", "InsufficientResource"},
			allocMap: "{0=1 1=1}", state: "{cuda.device: {0: 1, 1: 1}}",
		},
		{
			name: "cores follow the GPU's NUMA node", devs: []model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"),
				core(0, 0), core(1, 0), core(2, 1), core(3, 1), memDev("1073741824")},
			steps:    []string{"cuda.shares=0.5,cpu=2,mem=512m"},
			want:     []string{"{cuda.shares: {B: 0.50}, cpu: {2: 1, 3: 1}, mem: {root: 536870912}}"},
			allocMap: "{B=0.50}",
			state:    "{cuda.shares: {A: 0, B: 0.50}, cpu: {0: 0, 1: 0, 2: 1, 3: 1}, mem: {root: 536870912}}",
		},
		{
			name: "a plugin missing from allocation-order", devs: twoGPUs, settings: Settings{Order: []model.DeviceName{"cpu"}},
			steps: []string{"cuda.shares=1"}, want: []string{"ValueError"}, allocMap: "{}", state: "{cuda.shares: {A: 0, B: 0}}",
		},
		{
			name: "alloc map slots of another plugin", devs: []model.Device{core(0, 0), core(1, 0)},
			settings: Settings{AllocMapSlots: []model.SlotName{"cpu"}},
			steps:    []string{"cpu=1"}, want: []string{"{cpu: {0: 1}}"}, allocMap: "{0=1}", state: "{cpu: {0: 1, 1: 0}}",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(NewNode(tc.devs, tc.settings), steps(t, tc.steps...), RunOptions{Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Steps {
				got := r.ErrKind
				switch {
				case got != "":
				case r.Step.IsFree():
					got = FlattenAllocation(r.Released).String()
				default:
					got = FlattenAllocation(r.Alloc).String()
				}
				if got != tc.want[i] {
					t.Errorf("step %d (%s): %s, want %s", i+1, r.Step.Text, got, tc.want[i])
				}
				if r.StateAfter == nil {
					t.Errorf("step %d: no trace", i+1)
				}
			}
			if got := sharesString(res.AllocMap); got != tc.allocMap {
				t.Errorf("alloc map %s, want %s", got, tc.allocMap)
			}
			if got := res.State.String(); got != tc.state {
				t.Errorf("state %s, want %s", got, tc.state)
			}
		})
	}
}

func TestRunRefusesInvalidSteps(t *testing.T) {
	_, err := Run(NewNode([]model.Device{gpu("A", 0, "1")}, Settings{}), steps(t, "free=1"), RunOptions{})
	if err == nil {
		t.Fatal("a free before any request ran")
	}
}

// TestLoad covers loading live allocations: what fits the maps is applied,
// the rest is reported.
func TestLoad(t *testing.T) {
	n := NewNode([]model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0"), core(0, 0), core(1, 1)}, Settings{})
	loaded, skipped := n.Load(model.Allocations{
		"cuda.shares": {"A": dec("0.50"), "Z": dec("0.25")},
		"cuda.device": {"B": dec("1")},
		"cpu":         {"0": dec("1"), "7": dec("1")},
		"rocm.shares": {"0": dec("1")},
	})
	if got := n.State().String(); got != "{cuda.shares: {A: 0.50, B: 0}, cpu: {0: 1, 1: 0}}" {
		t.Errorf("state %s", got)
	}
	if len(loaded) != 2 || loaded[0].Device != "cuda" || loaded[1].Device != "cpu" {
		t.Errorf("loaded %+v", loaded)
	}
	var why []string
	for _, s := range skipped {
		why = append(why, s.String())
	}
	want := []string{
		"1 on cpu:7 (cpu): not a device of this node or partition",
		"1 on cuda:B (cuda.device): the device holds cuda.shares here",
		"0.25 on cuda:Z (cuda.shares): not a device of this node or partition",
		"1 on rocm:0 (rocm.shares): no rocm devices here",
	}
	if strings.Join(why, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(why, "\n"), strings.Join(want, "\n"))
	}
	if got := sharesString(n.AllocMap([]alloc.KernelAllocation{loaded})); got != "{A=0.50}" {
		t.Errorf("alloc map %s", got)
	}
}

// TestTryLeavesTheNode checks that Try and Clone work on copies.
func TestTryLeavesTheNode(t *testing.T) {
	n := NewNode([]model.Device{gpu("A", 0, "1.0"), gpu("B", 1, "1.0")}, Settings{})
	if _, err := n.Allocate(alloc.Request{{Slot: "cuda.shares", Amount: dec("0.5")}}); err != nil {
		t.Fatal(err)
	}
	before := n.State().String()
	c := n.Clone()
	for range 3 {
		if _, err := n.Try(alloc.Request{{Slot: "cuda.shares", Amount: dec("1.2")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Allocate(alloc.Request{{Slot: "cuda.shares", Amount: dec("0.1")}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.State().String(); got != before {
		t.Errorf("the node changed: %s, was %s", got, before)
	}
	_, err := n.Try(alloc.Request{{Slot: "cuda.shares", Amount: dec("9")}})
	var ae *alloc.Error
	if !errors.As(err, &ae) || ae.Kind() != alloc.KindInsufficientResource {
		t.Errorf("Try(9): %v", err)
	}
}

func TestParseDeviceSpecs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // id/slot/type/capacity/numa per device
		wantErr  bool
	}{
		{name: "corpus shape", in: `[{"id": "0", "slot_name": "cuda.shares", "capacity": "13.5", "numa_node": null},
			{"id": "GPU-1", "slot_name": "cuda.shares", "capacity": 1.00, "numa_node": 1}]`,
			want: "0 cuda.shares count 13.5 -1; GPU-1 cuda.shares count 1.00 1"},
		{name: "a case object", in: `{"id": "x", "devices": [{"id": "3", "slot_name": "cpu", "capacity": "1", "numa_node": 0}]}`,
			want: "3 cpu count 1 0"},
		{name: "slot types", in: `[{"id": "m", "slot_name": "cuda.device:1g.5gb-mig", "capacity": "1", "numa_node": 0},
			{"id": "root", "slot_name": "mem", "capacity": "1024", "numa_node": null, "slot_type": "bytes"}]`,
			want: "m cuda.device:1g.5gb-mig unique 1 0; root mem bytes 1024 -1"},
		{name: "empty", in: `[]`, wantErr: true},
		{name: "no id", in: `[{"slot_name": "cpu", "capacity": "1"}]`, wantErr: true},
		{name: "no capacity", in: `[{"id": "0", "slot_name": "cpu"}]`, wantErr: true},
		{name: "bad capacity", in: `[{"id": "0", "slot_name": "cpu", "capacity": "x"}]`, wantErr: true},
		{name: "negative capacity", in: `[{"id": "0", "slot_name": "cpu", "capacity": "-1"}]`, wantErr: true},
		{name: "negative numa", in: `[{"id": "0", "slot_name": "cpu", "capacity": "1", "numa_node": -1}]`, wantErr: true},
		{name: "bad slot type", in: `[{"id": "0", "slot_name": "cpu", "capacity": "1", "slot_type": "unified"}]`, wantErr: true},
		{name: "object without devices", in: `{"id": "x"}`, wantErr: true},
		{name: "not JSON", in: `slot_name = "cuda"`, wantErr: true},
		{name: "trailing data", in: `[] []`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devs, err := ParseDeviceSpecs([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %v, want an error", devs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, d := range devs {
				parts = append(parts, fmt.Sprintf("%s %s %s %s %d", d.ID, d.Slot, d.SlotType, d.Capacity, d.NUMANode))
			}
			if got := strings.Join(parts, "; "); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

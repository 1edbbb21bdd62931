package alloc

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// Expected values were printed by CPython 3.11's decimal module:
// x.remainder_near(q) and alloc_map.round_down(x, q).
func TestRemainderNearAndRoundDown(t *testing.T) {
	tests := []struct{ x, q, rem, down string }{
		{"0.125", "0.01", "0.005", "0.120"},
		{"0.135", "0.01", "-0.005", "0.130"},
		{"0.88", "0.25", "-0.12", "0.75"},
		{"0.60", "0.1", "0.00", "0.60"},
		{"1.0", "0.01", "0.00", "1.00"},
		{"0", "0.25", "0.00", "0.00"},
		{"0.00", "0.1", "0.00", "0.00"},
		{"3.50", "0.1", "0.00", "3.50"},
		{"1.03", "0.25", "0.03", "1.00"},
		{"-0.5", "0.3", "0.1", "-0.6"},
		{"100", "0.01", "0.00", "100.00"},
		{"0.004", "0.01", "0.004", "0.000"},
		{"1E+2", "0.01", "0.00", "100.00"},
		{"0.375", "0.25", "-0.125", "0.250"},
		{"0.625", "0.25", "0.125", "0.500"},
	}
	for _, tt := range tests {
		t.Run(tt.x+"/"+tt.q, func(t *testing.T) {
			r, err := remainderNear(dec(tt.x), dec(tt.q))
			if err != nil {
				t.Fatal(err)
			}
			if r.String() != tt.rem {
				t.Errorf("remainder_near = %s, want %s", r, tt.rem)
			}
			d, err := roundDown(dec(tt.x), dec(tt.q))
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != tt.down {
				t.Errorf("round_down = %s, want %s", d, tt.down)
			}
		})
	}
	if _, err := remainderNear(dec("1"), dec("0")); err == nil {
		t.Error("remainder_near by zero succeeded")
	}
}

func TestFnmatchCase(t *testing.T) {
	tests := []struct {
		name, pat string
		want      bool
	}{
		{"cuda.device:1g.5gb-mig", "cuda.device:*-mig", true},
		{"cuda.device", "cuda.device:*-mig", false},
		{"cuda.device:10g-mig", "cuda.device:*-mig", true},
		{"cuda.device:10g-MIG", "cuda.device:*-mig", false}, // case-sensitive
		{"a/b", "a*", true}, // '/' is not special
		{"abc", "a?c", true},
		{"abc", "a[bx]c", true},
		{"abc", "a[!bx]c", false},
		{"a]c", "a[]]c", true},
		{"a-c", "a[a-]c", true},
		{"abc", "a[a-c]c", true},
		{"abc", "a[c-a]c", false}, // reversed range matches nothing
		{"a[c", "a[c", true},      // unclosed '[' is literal
		{"", "*", true},
		{"x", "", false},
	}
	for _, tt := range tests {
		if got := fnmatchCase(tt.name, tt.pat); got != tt.want {
			t.Errorf("fnmatchcase(%q, %q) = %v, want %v", tt.name, tt.pat, got, tt.want)
		}
	}
}

// xDevs builds devices a0, a1, ... of slot "x" with the given capacities
// and no NUMA node.
func xDevs(caps ...string) []DeviceSlot {
	devs := make([]DeviceSlot, len(caps))
	for i, c := range caps {
		devs[i] = DeviceSlot{ID: model.DeviceID("a" + string(rune('0'+i))), Slot: "x",
			SlotType: model.SlotTypeCount, Capacity: dec(c)}
	}
	return devs
}

// TestLegacyOrdering covers the no-hint path (a nil *AffinityHint: every
// device by free capacity), with expectations from Backend.AI's own unit
// tests of the alloc maps.
func TestLegacyOrdering(t *testing.T) {
	type step struct {
		request   string
		minMemory string // "" for the default
		wantState []string
		wantKind  string
		free      bool // free this step's allocation afterwards
	}
	tests := []struct {
		name  string
		build func() Map
		steps []step
	}{
		{
			name:  "fraction fill",
			build: func() Map { return NewFractionMap(xDevs("1.0", "1.0"), Fill, model.Dec{}, nil) },
			steps: []step{
				{request: "1.5", wantState: []string{"x/a0=1.00", "x/a1=0.50"}},
				{request: "1.5", wantKind: KindInsufficientResource, wantState: []string{"x/a0=1.00", "x/a1=0.50"}},
			},
		},
		{
			name:  "fraction evenly with uneven capacities",
			build: func() Map { return NewFractionMap(xDevs("0.8", "0.75", "0.7", "0.3", "0.0"), Evenly, model.Dec{}, nil) },
			steps: []step{
				{request: "2.31", free: true,
					wantState: []string{"x/a0=0.67", "x/a1=0.67", "x/a2=0.67", "x/a3=0.30", "x/a4=0"}},
				{request: "2", wantState: []string{"x/a0=0.67", "x/a1=0.67", "x/a2=0.66", "x/a3=0.00", "x/a4=0"}},
			},
		},
		{
			name:  "fraction evenly min_memory",
			build: func() Map { return NewFractionMap(xDevs("0.05", "0.1", "0.2", "0.3", "0.0"), Evenly, model.Dec{}, nil) },
			steps: []step{
				{request: "0.66", wantKind: KindInsufficientResource,
					wantState: []string{"x/a0=0", "x/a1=0", "x/a2=0", "x/a3=0", "x/a4=0"}},
				{request: "0.06", minMemory: "0.6", wantKind: KindInsufficientResource,
					wantState: []string{"x/a0=0", "x/a1=0", "x/a2=0", "x/a3=0", "x/a4=0"}},
				{request: "0.2", free: true, wantState: []string{"x/a0=0", "x/a1=0", "x/a2=0.20", "x/a3=0", "x/a4=0"}},
				{request: "0.2", minMemory: "0.25", free: true,
					wantState: []string{"x/a0=0", "x/a1=0", "x/a2=0.00", "x/a3=0.20", "x/a4=0"}},
				{request: "0.65", free: true,
					wantState: []string{"x/a0=0.05", "x/a1=0.10", "x/a2=0.20", "x/a3=0.30", "x/a4=0"}},
				{request: "0.6", minMemory: "0.1",
					wantState: []string{"x/a0=0.00", "x/a1=0.10", "x/a2=0.20", "x/a3=0.30", "x/a4=0"}},
			},
		},
		{
			name: "quantum 0.25 evenly",
			build: func() Map {
				return NewFractionMap(xDevs("1", "1"), Evenly, dec("0.25"), nil)
			},
			steps: []step{
				{request: "1.75", free: true, wantState: []string{"x/a0=0.75", "x/a1=0.75"}},
				{request: "0.24", wantKind: KindNotMultipleOfQuantum, wantState: []string{"x/a0=0.00", "x/a1=0.00"}},
				{request: "0.52", wantState: []string{"x/a0=0.00", "x/a1=0.50"}},
			},
		},
		{
			name:  "discrete evenly",
			build: func() Map { return NewDiscreteMap(xDevs("100", "100"), Evenly, nil) },
			steps: []step{
				{request: "130", wantState: []string{"x/a0=65", "x/a1=65"}},
				{request: "15", wantState: []string{"x/a0=73", "x/a1=72"}},
				{request: "99", wantKind: KindInsufficientResource, wantState: []string{"x/a0=73", "x/a1=72"}},
			},
		},
		{
			name:  "discrete evenly to a tight fill",
			build: func() Map { return NewDiscreteMap(xDevs("10", "10", "10"), Evenly, nil) },
			steps: []step{
				{request: "7", wantState: []string{"x/a0=3", "x/a1=2", "x/a2=2"}},
				{request: "23", wantState: []string{"x/a0=10", "x/a1=10", "x/a2=10"}},
			},
		},
		{
			name:  "discrete fill",
			build: func() Map { return NewDiscreteMap(xDevs("100", "100"), Fill, nil) },
			steps: []step{
				{request: "130", wantState: []string{"x/a0=100", "x/a1=30"}},
				{request: "71", wantKind: KindInsufficientResource, wantState: []string{"x/a0=100", "x/a1=30"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.build()
			for i, st := range tt.steps {
				opts := Options{}
				if st.minMemory != "" {
					mm := dec(st.minMemory)
					opts.MinMemory = &mm
				}
				got, err := m.Allocate(req("x", st.request), nil, opts)
				switch {
				case st.wantKind == "" && err != nil:
					t.Fatalf("step %d: %v", i, err)
				case st.wantKind != "":
					var ae *Error
					if !errors.As(err, &ae) || ae.Kind() != st.wantKind {
						t.Fatalf("step %d: error %v, want %s", i, err, st.wantKind)
					}
				}
				if g := flat(m.Allocations()); !reflect.DeepEqual(g, st.wantState) {
					t.Errorf("step %d: state %v, want %v", i, g, st.wantState)
				}
				if st.free {
					if err := m.Free(got); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// migDevs is the mock CUDA plugin's mix: MIG slices (unique) and whole GPUs.
func migDevs(shareSlot model.SlotName) []DeviceSlot {
	return []DeviceSlot{
		{ID: "a0", Slot: "cuda.device:1g.5gb-mig", SlotType: model.SlotTypeUnique, Capacity: dec("1")},
		{ID: "a1", Slot: "cuda.device:1g.5gb-mig", SlotType: model.SlotTypeUnique, Capacity: dec("1")},
		{ID: "a2", Slot: shareSlot, SlotType: model.SlotTypeCount, Capacity: dec("1")},
		{ID: "a3", Slot: shareSlot, SlotType: model.SlotTypeCount, Capacity: dec("1")},
		{ID: "a4", Slot: "cuda.device:3g.20gb-mig", SlotType: model.SlotTypeUnique, Capacity: dec("1")},
	}
}

var mockExclusive = []string{"cuda.device:*-mig", "cuda.device", "cuda.shares"}

func TestExclusiveAndUniqueSlots(t *testing.T) {
	maps := map[string]func() Map{
		"discrete": func() Map { return NewDiscreteMap(migDevs("cuda.device"), Evenly, mockExclusive) },
		"fraction fill": func() Map {
			return NewFractionMap(migDevs("cuda.shares"), Fill, model.Dec{}, mockExclusive)
		},
		"fraction evenly": func() Map {
			return NewFractionMap(migDevs("cuda.shares"), Evenly, model.Dec{}, mockExclusive)
		},
	}
	tests := []struct {
		name     string
		request  Request
		wantKind string
		want     map[string][]string // by map
	}{
		{"mig with whole gpus", req("cuda.device", "2", "cuda.device:1g.5gb-mig", "1"), KindInvalidResourceCombination, nil},
		{"two mig profiles", req("cuda.device:3g.20gb-mig", "1", "cuda.device:1g.5gb-mig", "1"), KindInvalidResourceCombination, nil},
		{"unique asked for 2", req("cuda.device:1g.5gb-mig", "2"), KindInvalidResourceArgument, nil},
		{"unique asked for 0.3", req("cuda.device:1g.5gb-mig", "0.3"), KindInvalidResourceArgument, nil},
		{"zero is a no-op", req("cuda.device:1g.5gb-mig", "0"), "", nil},
		{"one mig slice", req("cuda.device:1g.5gb-mig", "1"), "", map[string][]string{
			"discrete":      {"cuda.device:1g.5gb-mig/a0=1"},
			"fraction fill": {"cuda.device:1g.5gb-mig/a0=1.00"},
			// EVENLY best-fits from the tail of the order.
			"fraction evenly": {"cuda.device:1g.5gb-mig/a1=1.00"},
		}},
	}
	for mname, build := range maps {
		for _, tt := range tests {
			t.Run(mname+"/"+tt.name, func(t *testing.T) {
				m := build()
				before := flat(m.Allocations())
				got, err := m.Allocate(tt.request, nil, Options{})
				if tt.wantKind != "" {
					if !errors.Is(err, &Error{kind: tt.wantKind}) {
						t.Fatalf("error %v, want %s", err, tt.wantKind)
					}
					if g := flat(m.Allocations()); !reflect.DeepEqual(g, before) {
						t.Errorf("failed allocation changed the map: %v", g)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if g := flat(got); !reflect.DeepEqual(g, tt.want[mname]) {
					t.Errorf("got %v, want %v", g, tt.want[mname])
				}
			})
		}
	}
}

func TestErrorsIsAndAs(t *testing.T) {
	m := NewFractionMap(xDevs("1.0"), Evenly, model.Dec{}, nil)
	_, err := Allocate(map[model.DeviceName]Map{"x": m}, req("x", "2"), []model.DeviceName{"x"}, Interleaved, Options{})
	if !errors.Is(err, ErrInsufficientResource) {
		t.Errorf("errors.Is(%v, ErrInsufficientResource) = false", err)
	}
	if errors.Is(err, ErrNotMultipleOfQuantum) {
		t.Errorf("errors.Is matched the wrong kind")
	}
	var ae *Error
	if !errors.As(err, &ae) || ae.Kind() != KindInsufficientResource || ae.Slot != "x" || !ae.IsResourceError() {
		t.Errorf("errors.As: %#v", ae)
	}
	want := "InsufficientResource: FractionAllocMap: insufficient allocatable amount! (x (tag: 'x'), allocating 2 out of 1.0)"
	if ae.Msg != want {
		t.Errorf("message %q, want %q", ae.Msg, want)
	}

	// The upstream crash: nothing free, and a request that rounds to 0.00.
	full := NewFractionMap(xDevs("1.0"), Evenly, model.Dec{}, nil)
	if _, err := full.Allocate(req("x", "1.0"), &AffinityHint{}, Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = full.Allocate(req("x", "0.004"), &AffinityHint{}, Options{})
	if !errors.As(err, &ae) || ae.Kind() != KindIndexError || ae.IsResourceError() {
		t.Errorf("tiny request on a full map: %v", err)
	}

	// NaN amounts are refused as Python's comparison would refuse them.
	_, err = full.Allocate(req("x", "NaN"), nil, Options{})
	if !errors.As(err, &ae) || ae.Kind() != KindInvalidOperation {
		t.Errorf("NaN request: %v", err)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	m := NewFractionMap(gpus("cuda.shares", "1.0", intp(0), intp(1)), Evenly, model.Dec{}, nil)
	c := m.Clone()
	if _, err := c.Allocate(req("cuda.shares", "0.5"), &AffinityHint{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if g := flat(m.Allocations()); !reflect.DeepEqual(g, []string{"cuda.shares/g0=0", "cuda.shares/g1=0"}) {
		t.Errorf("original changed through its clone: %v", g)
	}
	if g := flat(c.Allocations()); !reflect.DeepEqual(g, []string{"cuda.shares/g0=0", "cuda.shares/g1=0.50"}) {
		t.Errorf("clone: %v", g)
	}
	all := CloneAll(map[model.DeviceName]Map{"cuda": m})
	if all["cuda"] == Map(m) {
		t.Error("CloneAll returned the same map")
	}
}

func TestRequestHelpers(t *testing.T) {
	r := RequestFromSlots(model.ResourceSlot{"mem": dec("1"), "cpu": dec("2")})
	if len(r) != 2 || r[0].Slot != "cpu" || r[1].Slot != "mem" {
		t.Errorf("RequestFromSlots order: %v", r)
	}
	d := req("cpu", "1", "mem", "2", "cpu", "3").dedup()
	if len(d) != 2 || d[0].Slot != "cpu" || d[0].Amount.String() != "3" {
		t.Errorf("dedup (first position, last value): %v", d)
	}
	a := Allocation{{Slot: "cuda.shares", Shares: []Share{{"g1", dec("0.5")}, {"g0", dec("0.25")}}}}
	if got := AllocationFromModel(a.ToModel()).String(); got != "{cuda.shares: {g0: 0.25, g1: 0.5}}" {
		t.Errorf("model round trip: %s", got)
	}
	for _, s := range []string{"evenly", "FILL"} {
		if _, err := ParseStrategy(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseAffinityPolicy("sideways"); err == nil {
		t.Error("bad policy accepted")
	}
}

func TestOddFailures(t *testing.T) {
	tests := []struct {
		name     string
		m        Map
		request  Request
		opts     Options
		wantKind string
	}{
		{
			// Half-unit devices count as candidates but can take nothing:
			// Backend.AI gives up after 100 rounds with a bare ResourceError.
			name:     "discrete evenly without progress",
			m:        NewDiscreteMap(xDevs("0.5", "0.5", "2"), Evenly, nil),
			request:  req("x", "3"),
			wantKind: KindResourceError,
		},
		{
			name:     "guard on a zero-capacity device",
			m:        NewFractionMap(xDevs("0"), Evenly, model.Dec{}, nil),
			request:  req("x", "0.5"),
			opts:     Options{ForbidFragmentation: true},
			wantKind: KindDivisionByZero,
		},
		{
			name:     "repeated slot keeps its last value, which fits one device",
			m:        NewFractionMap(xDevs("1.0", "1.0"), Evenly, model.Dec{}, nil),
			request:  req("x", "1.5", "x", "1.0"), // repeated slot: the last value counts
			opts:     Options{ForbidFragmentation: true},
			wantKind: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := flat(tt.m.Allocations())
			_, err := tt.m.Allocate(tt.request, nil, tt.opts)
			if tt.wantKind == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Kind() != tt.wantKind {
				t.Fatalf("error %v, want %s", err, tt.wantKind)
			}
			if g := flat(tt.m.Allocations()); !reflect.DeepEqual(g, before) {
				t.Errorf("failed allocation changed the map: %v, was %v", g, before)
			}
		})
	}
}

func TestDeviceSlotFrom(t *testing.T) {
	d := &model.Device{ID: "GPU-1", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
		Capacity: dec("1.00"), NUMANode: -1}
	if ds := DeviceSlotFrom(d); ds.NUMANode != nil || ds.ID != "GPU-1" || ds.Capacity.String() != "1.00" {
		t.Errorf("unknown NUMA node: %+v", ds)
	}
	d.NUMANode = 1
	if ds := DeviceSlotFrom(d); ds.NUMANode == nil || *ds.NUMANode != 1 {
		t.Errorf("NUMA node 1: %+v", ds)
	}
}

package history

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// allocWithin is the sessions walk's old test of a change, on maps: every
// amount b holds is held, Equal, in a.
func allocWithin(a, b model.Allocations) bool {
	for slot, devs := range b {
		for dev, amt := range devs {
			if had, ok := a[slot][dev]; !ok || !had.Equal(amt) {
				return false
			}
		}
	}
	return true
}

// encodeRawAlloc writes an allocation entry by entry, duplicates and
// empty slots as given (what a damaged or hostile record may hold).
func encodeRawAlloc(e *enc, slots []rawSlot) {
	e.uvarint(uint64(len(slots)))
	for _, s := range slots {
		e.str(s.slot)
		e.uvarint(uint64(len(s.devs)))
		for _, d := range s.devs {
			e.str(d[0])
			e.str(d[1])
		}
	}
}

type rawSlot struct {
	slot string
	devs [][2]string
}

// TestFlatAllocMatchesMaps: the sessions walk reads allocations flat; on
// every shape, the recorder's and irregular ones, it says what the maps
// decodeAlloc builds say (the allocation, held or not, identical, within).
func TestFlatAllocMatchesMaps(t *testing.T) {
	cases := []struct {
		name      string
		slots     []rawSlot
		irregular bool
	}{
		{"none", nil, false},
		{"one", []rawSlot{{"cuda.shares", [][2]string{{"0", "0.5"}}}}, false},
		{"one, another amount", []rawSlot{{"cuda.shares", [][2]string{{"0", "0.25"}}}}, false},
		{"one, another slot", []rawSlot{{"cpu", [][2]string{{"0", "0.5"}}}}, false},
		{"two slots", []rawSlot{{"cuda.shares", [][2]string{{"0", "0.5"}, {"1", "1.00"}}}, {"cpu", [][2]string{{"3", "1"}}}}, false},
		{"an empty slot", []rawSlot{{"cuda.shares", nil}}, true},
		{"an empty slot beside one", []rawSlot{{"cpu", nil}, {"cuda.shares", [][2]string{{"0", "0.5"}}}}, true},
		{"a slot twice: the second replaces", []rawSlot{{"cuda.shares", [][2]string{{"0", "0.5"}}}, {"cuda.shares", [][2]string{{"1", "0.25"}}}}, true},
		{"a device twice: the last counts", []rawSlot{{"cuda.shares", [][2]string{{"0", "0.5"}, {"0", "0.7"}}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := enc{}
			encodeRawAlloc(&e, c.slots)
			dm := dec{b: e.b}
			want := decodeAlloc(&dm)
			df := dec{b: e.b, in: newInterner()}
			fa := decodeFlat(&df)
			if dm.err != nil || df.err != nil {
				t.Fatalf("errors: maps %v, flat %v", dm.err, df.err)
			}
			if fa.irregular != c.irregular {
				t.Fatalf("irregular %v, want %v", fa.irregular, c.irregular)
			}
			got := fa.toMap()
			if !allocIdentical(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("flat %v, maps %v", got, want)
			}
			if fa.holds() != holds(want) {
				t.Fatalf("holds %v, maps %v", fa.holds(), holds(want))
			}
			others := []model.Allocations{nil, want,
				{model.SlotCUDAShares: {"0": model.MustDec("0.50")}},
				{model.SlotCUDAShares: {"0": model.MustDec("0.5"), "1": model.MustDec("1")}, "cpu": {"3": model.MustDec("1")}},
				{model.SlotCUDAShares: {"1": model.MustDec("0.25")}}}
			for _, o := range others {
				if fa.within(o) != allocWithin(o, want) {
					t.Fatalf("within %v: %v, maps %v", o, fa.within(o), allocWithin(o, want))
				}
			}
			for _, o := range cases {
				e2 := enc{}
				encodeRawAlloc(&e2, o.slots)
				d2 := dec{b: e2.b}
				fo := decodeFlat(&d2)
				if fa.identical(&fo) != allocIdentical(want, fo.toMap()) {
					t.Fatalf("identical to %q: %v, maps %v", o.name, fa.identical(&fo), allocIdentical(want, fo.toMap()))
				}
				// Within a regular arrival read flat (the sessions walk
				// keeps an arrival's maps for later) is within its maps.
				if !fo.irregular && fa.withinFlat(&fo) != allocWithin(fo.toMap(), want) {
					t.Fatalf("within %q flat: %v, maps %v", o.name, fa.withinFlat(&fo), allocWithin(fo.toMap(), want))
				}
			}
		})
	}
	// A bad amount fails as decodeAlloc fails.
	e := enc{}
	encodeRawAlloc(&e, []rawSlot{{"cuda.shares", [][2]string{{"0", "x"}}}})
	dm, df := dec{b: e.b}, dec{b: e.b, in: newInterner()}
	decodeAlloc(&dm)
	decodeFlat(&df)
	if dm.err == nil || df.err == nil || dm.err.Error() != df.err.Error() {
		t.Fatalf("a bad amount: maps %v, flat %v", dm.err, df.err)
	}
}

// TestToMapSharedIsToMap: the arrivals' maps made sharing slots are, on
// every shape of TestFlatAllocMatchesMaps's, the maps toMap makes; a
// slot of one device held in the same amount (the interner's one Dec) by
// two allocations is one map, and one of two devices, or in another
// amount, is not shared; a slot of several devices is shared where it
// lists the same devices in the same amounts and order, not in another
// amount's form or past maxManyDevs.
func TestToMapSharedIsToMap(t *testing.T) {
	in := newInterner()
	one := newSharedMaps()
	read := func(slots []rawSlot) flatAlloc {
		e := enc{}
		encodeRawAlloc(&e, slots)
		d := dec{b: e.b, in: in}
		fa := decodeFlat(&d)
		if d.err != nil {
			t.Fatal(d.err)
		}
		return fa
	}
	shapes := [][]rawSlot{nil,
		{{"cuda.shares", [][2]string{{"0", "0.5"}}}},
		{{"cuda.shares", [][2]string{{"0", "0.5"}, {"1", "1.00"}}}, {"cpu", [][2]string{{"3", "1"}}}},
		{{"cpu", [][2]string{{"3", "1"}}}, {"mem", [][2]string{{"host", "4294967296"}}}, {"cuda.shares", [][2]string{{"0", "0.5"}}}},
		{{"cuda.shares", nil}},
		{{"cuda.shares", [][2]string{{"0", "0.5"}}}, {"cuda.shares", [][2]string{{"1", "0.25"}}}},
		{{"cuda.shares", [][2]string{{"0", "0.5"}, {"0", "0.7"}}}},
	}
	for round := range 2 {
		for i, sh := range shapes {
			fa := read(sh)
			got, want := fa.toMapShared(one), fa.toMap()
			if !allocIdentical(got, want) || (got == nil) != (want == nil) || len(got) != len(want) {
				t.Fatalf("round %d shape %d: shared %v, toMap %v", round, i, got, want)
			}
		}
	}
	same := func(a, b map[model.DeviceID]model.Dec) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	shared := func(slots []rawSlot) model.Allocations {
		fa := read(slots)
		return fa.toMapShared(one)
	}
	a, b, c := shared(shapes[1]), shared(shapes[3]), shared(shapes[2])
	d := shared([]rawSlot{{"cuda.shares", [][2]string{{"0", "0.25"}}}})
	if !same(a["cuda.shares"], b["cuda.shares"]) {
		t.Error("cuda.shares 0.5 on device 0, held twice: two maps")
	}
	if same(a["cuda.shares"], c["cuda.shares"]) || same(a["cuda.shares"], d["cuda.shares"]) {
		t.Error("a slot of two devices, or another amount, shares the map of one")
	}
	if !same(b["cpu"], c["cpu"]) {
		t.Error("cpu 1 on device 3, held twice: two maps")
	}

	cores := func(amt string, ids ...string) []rawSlot {
		var devs [][2]string
		for _, id := range ids {
			devs = append(devs, [2]string{id, amt})
		}
		return []rawSlot{{"cuda.shares", [][2]string{{"0", "0.5"}}}, {"cpu", devs}}
	}
	r1, r2 := shared(cores("1", "4", "5", "6")), shared(cores("1", "4", "5", "6"))
	if !same(r1["cpu"], r2["cpu"]) || !same(r1["cuda.shares"], r2["cuda.shares"]) {
		t.Error("cores 4-6 held twice in the same amounts: two maps")
	}
	for name, other := range map[string]model.Allocations{
		"another order":   shared(cores("1", "6", "5", "4")),
		"another form":    shared(cores("1.0", "4", "5", "6")),
		"another device":  shared(cores("1", "4", "5", "7")),
		"one device more": shared(cores("1", "4", "5", "6", "7")),
	} {
		if same(r1["cpu"], other["cpu"]) {
			t.Errorf("%s shares the map of cores 4-6", name)
		}
		if want := other["cpu"]; len(want) < 3 {
			t.Errorf("%s: cpu %v", name, want)
		}
	}
	wide := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8"}
	w1, w2 := shared(cores("1", wide...)), shared(cores("1", wide...))
	if same(w1["cpu"], w2["cpu"]) || len(w1["cpu"]) != len(wide) {
		t.Errorf("a map of %d devices (past maxManyDevs) shared, or not made whole: %v", len(wide), w1["cpu"])
	}

	// Past its bound the cache starts again; every map is still toMap's.
	for i := range maxManyShared + 10 {
		fa := read(cores("1", strconv.Itoa(i), strconv.Itoa(i+1)))
		if got, want := fa.toMapShared(one), fa.toMap(); !allocIdentical(got, want) {
			t.Fatalf("map %d: shared %v, toMap %v", i, got, want)
		}
	}
	if len(one.many) > maxManyShared {
		t.Errorf("%d maps of several devices kept, bound %d", len(one.many), maxManyShared)
	}
}

package resourcefile

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/fgtop/fgtop/model"
)

// sharedFile is a resource.txt in the figures' shape of a real one.
func sharedFile(cpus string) []byte {
	return []byte("SCRATCH_SIZE=0m\nMOUNTS=/a:/b:ro\n" +
		`SLOTS={"cpu":"2","mem":"4294967296","cuda.shares":"0.5"}` + "\nUNIFIED_DEVICES=[]\n" +
		"CUDA.SHARES_SHARES=GPU-2d02:0.50\nCPU_SHARES=" + cpus + "\nMEM_SHARES=root:4g\n")
}

// TestSharedSharesRepeatedLines checks what a Shared shares: identical
// SLOTS and *_SHARES lines give the same maps, ids are one copy, distinct
// lines stay distinct, and the tables stop growing at their bound.
func TestSharedSharesRepeatedLines(t *testing.T) {
	types := model.DefaultSlotTypes()
	sh := NewShared()
	opts := ParseOptions{FiguresOnly: true, Shared: sh}
	a, err := opts.Parse(sharedFile("0:1,1:1"), types)
	if err != nil {
		t.Fatal(err)
	}
	b, err := opts.Parse(sharedFile("2:1,3:1"), types)
	if err != nil {
		t.Fatal(err)
	}
	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	if !same(a.Slots, b.Slots) || !same(a.Alloc[model.SlotCUDAShares], b.Alloc[model.SlotCUDAShares]) || !same(a.Alloc[model.SlotMem], b.Alloc[model.SlotMem]) {
		t.Error("identical lines were not shared")
	}
	if same(a.Alloc[model.SlotCPU], b.Alloc[model.SlotCPU]) || same(a.Alloc, b.Alloc) {
		t.Error("distinct lines (or whole allocations) were shared")
	}
	if got := b.Alloc[model.SlotCPU]["3"].String(); got != "1" {
		t.Errorf("cpu 3 = %s", got)
	}
	idOf := func(s *Spec) string {
		for id := range s.Alloc[model.SlotCUDAShares] {
			return string(id)
		}
		return ""
	}
	// A spec parsed after the line left the table (a distinct amount) still
	// shares the id's one copy.
	c, err := opts.Parse([]byte("SCRATCH_SIZE=0m\nMOUNTS=\nSLOTS={}\nCUDA.SHARES_SHARES=GPU-2d02:0.25\n"), types)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(idOf(a)) != unsafe.StringData(idOf(c)) {
		t.Error("the GPU id is not one shared copy")
	}

	// Fill the tables past their bound: parses stay right, tables stop.
	for i := range maxSharedValues + 10 {
		s, err := opts.Parse(sharedFile(fmt.Sprintf("%d:1", i)), types)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s.Alloc[model.SlotCPU]); n != 1 {
			t.Fatalf("file %d: %d cpu entries", i, n)
		}
	}
	if len(sh.lines) != maxSharedValues || len(sh.names) > maxSharedValues || len(sh.slots) > maxSharedValues {
		t.Errorf("tables grew to %d lines, %d names, %d slots", len(sh.lines), len(sh.names), len(sh.slots))
	}
}

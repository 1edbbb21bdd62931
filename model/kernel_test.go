package model

import "testing"

// TestEachHeldSkipsCPUAndMem: cpu and mem amounts are not holdings of a
// device; every other slot's amounts are, keyed by the slot's plugin.
func TestEachHeldSkipsCPUAndMem(t *testing.T) {
	a := Allocations{
		"cpu":         {"0": MustDec("1")},
		"mem":         {"root": MustDec("4294967296")},
		"cuda.shares": {"gpu0": MustDec("0.5"), "gpu1": MustDec("0.25")},
		"cuda.device": {"gpu2": MustDec("1")},
	}
	got := map[DeviceKey]string{}
	a.EachHeld(func(k DeviceKey, slot SlotName, amt Dec) { got[k] = string(slot) + "=" + amt.String() })
	want := map[DeviceKey]string{
		{Name: "cuda", ID: "gpu0"}: "cuda.shares=0.5",
		{Name: "cuda", ID: "gpu1"}: "cuda.shares=0.25",
		{Name: "cuda", ID: "gpu2"}: "cuda.device=1",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v: got %q, want %q", k, got[k], v)
		}
	}
}

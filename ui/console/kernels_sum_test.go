package console

import (
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// A kernel's amount on a followed MIG GPU is the exact sum of what it
// holds on each of its instances, never a float's rendering.
func TestAddDecStrings(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"0.1", "0.2", "0.3"}, // 0.30000000000000004 as float64
		{"1.00", "1.00", "2.00"},
		{"1", "0.25", "1.25"},
		{"x", "1", "x+1"},
	} {
		if got := addDecStrings(tt.a, tt.b); got != tt.want {
			t.Errorf("addDecStrings(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMIGKernelOnTwoInstancesSumsExactly(t *testing.T) {
	s := fake.Node(fake.Options{})
	for _, k := range s.Kernels() {
		if k.ID == "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d" {
			k.Alloc["cuda.device:20g-mig"] = map[model.DeviceID]model.Dec{fake.MIG(4): model.MustDec("1")}
		}
	}
	fake.Finish(s)
	a := testApp(t, 120, 40, s, Options{})
	typeKeys(a, "jjjj") // GPU4, in MIG mode
	kv := a.Kernels.Showing
	if len(kv.Rows) != 1 || len(kv.OnDev) != 1 {
		t.Fatalf("GPU4 (MIG): rows %v on %v, want the one kernel", kv.Rows, kv.OnDev)
	}
	if got, err := model.ParseDec(kv.OnDev[0]); err != nil || !got.Equal(model.MustDec("2")) {
		t.Errorf("on GPU4 = %q, want 2 (1 on each of two instances)", kv.OnDev[0])
	}
}

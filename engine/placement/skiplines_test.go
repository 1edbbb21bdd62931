package placement

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestSkipLines: one line per plugin and reason, naming each device and
// kernel once, in the order first seen, the rest counted.
func TestSkipLines(t *testing.T) {
	skip := func(k, slot, dev, why string) KernelSkip {
		return KernelSkip{model.KernelID(k), Skip{model.SlotName(slot), model.DeviceID(dev), model.MustDec("1"), why}}
	}
	const notHere = "not a device of this node or partition"
	var many []KernelSkip
	for k := range 6 {
		for c := 16; c < 20; c++ {
			many = append(many, skip(fmt.Sprintf("k%d", k), "cpu", fmt.Sprint(c), notHere))
		}
	}
	many = append(many, skip("k2", "mem", "root", "the device holds cpu here"), skip("k9", "cpu", "3", notHere))
	for _, c := range []struct {
		name  string
		skips []KernelSkip
		want  []string
	}{
		{"none", nil, []string{}},
		{"one", []KernelSkip{skip("k1", "cuda.shares", "d1", "no cuda devices here")},
			[]string{"cuda of 1 kernel not loaded: no cuda devices here (1 on cuda:d1; kernels k1)"}},
		{"many", many, []string{
			"cpu of 7 kernels not loaded: " + notHere + " (on cpu:16, cpu:17, cpu:18, cpu:19 and 1 more; kernels k0, k1, k2, k3 and 3 more)",
			"mem of 1 kernel not loaded: the device holds cpu here (1 on mem:root; kernels k2)",
		}},
	} {
		if got := SkipLines(c.skips); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

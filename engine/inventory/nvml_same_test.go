//go:build cgo && linux

package inventory

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestNVMLSameReadingSameTelemetry: a GPU whose readings hold still
// publishes the telemetry of the poll before (the same pointer: no
// allocation, and the engine's comparison is a pointer compare); a
// reading that moves gets a telemetry of its own, and the one published
// before is left as it was (snapshots hold it).
func TestNVMLSameReadingSameTelemetry(t *testing.T) {
	m := newDGX(t, "dgxh100")
	var temp atomic.Uint32
	temp.Store(40)
	m.devs[1].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return temp.Load(), nvml.SUCCESS }
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{}), nil)
	ctx := context.Background()
	poll := func() *Inventory {
		t.Helper()
		inv, err := src.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	a, b := poll(), poll()
	ga, gb := gpus(a), gpus(b)
	if len(ga) != 8 || len(gb) != 8 {
		t.Fatalf("%d and %d GPUs", len(ga), len(gb))
	}
	for i := range ga {
		if ga[i].Telemetry == nil || ga[i].Telemetry != gb[i].Telemetry {
			t.Errorf("GPU %d: a still reading is published anew", i)
		}
	}
	if !Equal(a, b) {
		t.Error("two still readings are unequal")
	}
	temp.Store(41)
	c := poll()
	gc := gpus(c)
	if gc[1].Telemetry == gb[1].Telemetry || gc[1].Telemetry.TempC.V != 41 || gb[1].Telemetry.TempC.V != 40 {
		t.Errorf("GPU 1 moved: new %+v, published before %+v", gc[1].Telemetry.TempC, gb[1].Telemetry.TempC)
	}
	if gc[0].Telemetry != gb[0].Telemetry {
		t.Error("GPU 0 held still, yet its telemetry is new")
	}
	if Equal(b, c) {
		t.Error("a moved reading compares equal")
	}
}

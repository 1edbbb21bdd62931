package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestOwnerIsOwnsDevice: the set lookup answers what Agent.OwnsDevice
// does for every device, listed or not, of plugins the partition lists
// or not (mem among them), and for an agent without a partition.
func TestOwnerIsOwnsDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 7))
	names := []model.DeviceName{"cuda", "mem", "cpu", "rocm"}
	for trial := range 200 {
		a := model.Agent{ID: "a"}
		if trial%10 != 0 {
			a.Owns = map[model.DeviceName][]model.DeviceID{}
			for _, n := range names {
				if r.IntN(3) == 0 {
					continue
				}
				ids := []model.DeviceID{}
				for i := range 8 {
					if r.IntN(2) == 0 {
						ids = append(ids, model.DeviceID(fmt.Sprint(i)))
					}
				}
				a.Owns[n] = ids
			}
		}
		owns := Owner(&a)
		for _, n := range names {
			for i := range 9 {
				k := model.DeviceKey{Name: n, ID: model.DeviceID(fmt.Sprint(i))}
				if got, want := owns(k), a.OwnsDevice(k); got != want {
					t.Fatalf("trial %d: %v with %v: Owner %v, OwnsDevice %v", trial, k, a.Owns, got, want)
				}
			}
		}
	}
}

package placement

import (
	"errors"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestEmptyNode: the host's cores and memory join a simulation on an empty
// node only when described or named by a request; this machine is read
// only when a request names what is not described; a device list that has
// them keeps its own, and describing them again is refused.
func TestEmptyNode(t *testing.T) {
	gpu := model.Device{ID: "0", Name: "cuda", Slot: "cuda.shares", SlotType: model.SlotTypeCount, Capacity: model.One}
	listedCPU := model.Device{ID: "0", Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount, Capacity: model.One}
	machine := []model.Device{
		{ID: "0", Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount, Capacity: model.One},
		{ID: "1", Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount, Capacity: model.One},
		{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: model.NewDec(1<<30, 0)},
	}
	gib := model.NewDec(4<<30, 0)
	for _, tc := range []struct {
		name     string
		accel    []model.Device
		host     Host
		want     map[model.DeviceName]int // devices per name
		readHost bool
		listed   model.DeviceName
	}{
		{"accelerators only", []model.Device{gpu}, Host{Requests: []string{"cuda.shares=0.5"}}, map[model.DeviceName]int{"cuda": 1}, false, ""},
		{"a request names cpu", []model.Device{gpu}, Host{Requests: []string{"cuda.shares=0.5,cpu=1"}}, map[model.DeviceName]int{"cuda": 1, "cpu": 2}, true, ""},
		{"described host", []model.Device{gpu}, Host{CPUs: 8, CPUNUMA: 2, Mem: gib}, map[model.DeviceName]int{"cuda": 1, "cpu": 8, "mem": 1}, false, ""},
		{"described cores, a request names mem", []model.Device{gpu}, Host{CPUs: 4, Requests: []string{"mem=1g"}}, map[model.DeviceName]int{"cuda": 1, "cpu": 4, "mem": 1}, true, ""},
		{"a listed cpu keeps its own", []model.Device{gpu, listedCPU}, Host{Requests: []string{"cpu=1"}}, map[model.DeviceName]int{"cuda": 1, "cpu": 1}, false, ""},
		{"a listed cpu described again", []model.Device{gpu, listedCPU}, Host{CPUs: 4}, nil, false, "cpu"},
		{"a request that does not parse", []model.Device{gpu}, Host{Requests: []string{"cpu=="}}, map[model.DeviceName]int{"cuda": 1}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			tc.host.Read = func() []model.Device { read = true; return slices.Clone(machine) }
			devs, err := EmptyNode(tc.accel, tc.host)
			var listed *HostListedError
			if tc.listed != "" {
				if !errors.As(err, &listed) || listed.Name != tc.listed {
					t.Fatalf("err %v, want the listed %s refused", err, tc.listed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[model.DeviceName]int{}
			for _, d := range devs {
				got[d.Name]++
			}
			if len(got) != len(tc.want) {
				t.Errorf("devices %v, want %v", got, tc.want)
			}
			for n, c := range tc.want {
				if got[n] != c {
					t.Errorf("%s: %d devices, want %d (all: %v)", n, got[n], c, got)
				}
			}
			if read != tc.readHost {
				t.Errorf("this machine read: %v, want %v", read, tc.readHost)
			}
		})
	}
}

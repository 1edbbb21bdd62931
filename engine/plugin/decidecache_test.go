package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// swapInner is an NVML-kind source whose reading a test sets; every poll
// returns a new copy of it, as the NVML reader does.
type swapInner struct{ inv inventory.Inventory }

func (s *swapInner) Poll(context.Context) (*inventory.Inventory, error) {
	c := s.inv
	return &c, nil
}

func (s *swapInner) Close() error { return nil }

// TestPollReusesTheDecisionExactly: a poll whose inputs (the wrapped
// reading, the settings read from etcd, etcd's failure, the kernels'
// evidence) all equal the last poll's returns the last poll's reading
// itself; a change of any one of them, in turn, gives a new reading, the
// one a source that never polled before makes from the same inputs. A
// cache that left an input out would return the stale reading at that
// step.
func TestPollReusesTheDecisionExactly(t *testing.T) {
	root := t.TempDir()
	devs := fourGPUs()
	for i := range devs[:4] {
		devs[i].Telemetry = &model.Telemetry{MemUsed: model.Some(uint64(0)), UtilGPU: model.Some(uint32(0))}
	}
	inner := &swapInner{inv: inventory.Inventory{Devices: devs,
		SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
		Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok", Detail: "fake: 4 GPU(s)"}}}
	opts := Options{Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}}, EvidenceRoots: []string{root}, EvidenceEvery: time.Hour}
	var readings []EtcdReading
	src := NewSource(inner, opts)
	defer src.Close()
	// fresh is what a source that never polled makes of the same inputs.
	fresh := func() *inventory.Inventory {
		t.Helper()
		o := opts
		o.Inputs.Evidence = ScanEvidence([]string{root})
		f := NewSource(inner, o)
		defer f.Close()
		for _, r := range readings {
			f.take(r)
		}
		inv, err := f.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	poll := func() *inventory.Inventory {
		t.Helper()
		inv, err := src.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	last := poll()
	if again := poll(); again != last {
		t.Fatalf("the same inputs gave a new reading: %+v", again.Plugin)
	}
	fractional := Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"})
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"a GPU's telemetry", func() {
			devs := append([]model.Device(nil), inner.inv.Devices...)
			devs[1].Telemetry = &model.Telemetry{MemUsed: model.Some(uint64(1 << 30)), UtilGPU: model.Some(uint32(0))}
			inner.inv.Devices = devs
		}},
		{"the device list", func() {
			inner.inv.Devices = append([]model.Device{}, inner.inv.Devices[1:]...)
		}},
		{"the source's issues", func() {
			inner.inv.Issues = []model.Issue{{Severity: model.SevWarning, Code: model.IssueDeviceSource, Message: "x"}}
		}},
		{"settings read from etcd", func() {
			readings = append(readings, EtcdReading{Settings: map[model.AgentID]*Settings{"": fractional}})
		}},
		{"a setting changed", func() {
			readings = append(readings, EtcdReading{Settings: map[model.AgentID]*Settings{"": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "40g"})}})
		}},
		{"the agents' settings differ", func() {
			readings = append(readings, EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": fractional, "i-b": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "10g"})}})
		}},
		{"etcd fails", func() {
			readings = append(readings, EtcdReading{Err: errors.New("connection refused")})
		}},
		{"etcd answers with no settings", func() {
			readings = append(readings, EtcdReading{Settings: map[model.AgentID]*Settings{}})
		}},
		{"a kernel's evidence", func() {
			d := filepath.Join(root, "11111111-1111-4111-8111-111111111111", "config")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "resource.txt"), []byte("CUDA.SHARES_SHARES=GPU-bbbbbbbb-0000-0000-0000-000000000000:0.5\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		step.change()
		if n := len(readings); n > 0 {
			src.take(readings[n-1])
		}
		got := poll()
		if reflect.DeepEqual(got, last) {
			t.Fatalf("%s: the reading did not change: %+v %v", step.name, got.Plugin, got.Issues)
		}
		if want := fresh(); !reflect.DeepEqual(unmoved(got), unmoved(want)) {
			t.Fatalf("%s: got\n%+v %v\nwant (a new source)\n%+v %v", step.name, got.Plugin, got.Issues, want.Plugin, want.Issues)
		}
		if again := poll(); again != got {
			t.Fatalf("%s: a poll of the same inputs after it gave a new reading", step.name)
		}
		last = got
	}
}

// unmoved is inv without the issue that says the settings changed while
// fgtop watched (Source.moved, TestSettingsMovedWhileWatched): it is made
// of the readings before, which a new source has not seen.
func unmoved(inv *inventory.Inventory) *inventory.Inventory {
	out := *inv
	out.Issues = slices.DeleteFunc(slices.Clone(inv.Issues), func(iss model.Issue) bool {
		return strings.Contains(iss.Message, "while fgtop watched")
	})
	return &out
}

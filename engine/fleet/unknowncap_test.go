package fleet

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestSummaryUnknownCapacity: a peer whose GPU capacity is unknown (its
// fractional settings never read) is summarised without a made-up
// capacity: the device reads held/?, its free is not negative, the
// node's total is "?", and the JSON leaves both capacities out.
func TestSummaryUnknownCapacity(t *testing.T) {
	s := shortNode()
	s.Devices[0].Capacity, s.Devices[0].CapacityUnknown = model.Zero, true
	key := s.Devices[0].Key()
	s.Usage = map[model.DeviceKey]*model.DeviceUsage{key: {Key: key, Held: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.50")}, Kernels: 1}}
	sum := Summarize(s, Settings{})
	a := sum.Devices[0]
	if !a.CapacityUnknown || a.CapacityText() != "?" || a.Free.Sign() != 0 {
		t.Errorf("device A %+v, want unknown capacity, free 0", a)
	}
	if sum.Unknown != 1 || sum.CapacityText() != "?" || sum.Capacity.String() != "2.00" || sum.Held.String() != "0.50" {
		t.Errorf("summary unknown %d capacity %s (%s) held %s", sum.Unknown, sum.CapacityText(), sum.Capacity, sum.Held)
	}
	if got := sum.String(); !strings.Contains(got, "held 0.50/?") || !strings.Contains(got, "A=0.50/?") {
		t.Errorf("summary line %q", got)
	}
	now := time.Unix(1000, 0)
	j := nodeJSON(&Node{Addr: "n", Name: "n", State: Live, LastSeen: now, Snap: s, Sum: sum})
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	if j.Capacity != nil || j.Devices[0].Capacity != nil || j.Devices[0].Free != nil || j.Devices[1].Capacity == nil {
		t.Errorf("JSON %s: want the node's and A's capacity absent, B's present", b)
	}
	// Neither is what is free of the node nor its largest fit: against
	// A counted as full they read 0 where the node may take more.
	if j.Free != nil || j.Largest != nil || sum.FreeText() != "?" || sum.LargestText() != "?" {
		t.Errorf("JSON %s, free %s, largest %s: want both unknown", b, sum.FreeText(), sum.LargestText())
	}
	// The --once table (it panicked on the absent capacity).
	var tb strings.Builder
	WriteTable(&tb, JSONFleet{Nodes: []JSONNode{j}})
	if !strings.Contains(tb.String(), " 0.50/? ") || strings.Count(tb.String(), " ? ") < 2 {
		t.Errorf("table:\n%s", tb.String())
	}
	// --fit: refused only because A counts as full is not an answer.
	req, err := ParseRequest("cuda.shares=2.5")
	if err != nil {
		t.Fatal(err)
	}
	fit := FitJSON(&Fleet{Nodes: []Node{{Addr: "n", Name: "n", State: Live, LastSeen: now, Snap: s, Sum: sum}}}, req, Settings{})
	if f := fit.Nodes[0].Fit; f == nil || f.Fits || !f.Unknown || !strings.HasPrefix(f.Reason, "unknown: the capacity of 1 cuda.shares device(s) is not known") {
		t.Errorf("fit %+v", f)
	}
	// One that fits on what is known fits.
	req, _ = ParseRequest("cuda.shares=0.5")
	fit = FitJSON(&Fleet{Nodes: []Node{{Addr: "n", Name: "n", State: Live, LastSeen: now, Snap: s, Sum: sum}}}, req, Settings{})
	if f := fit.Nodes[0].Fit; f == nil || !f.Fits {
		t.Errorf("fit of 0.5 %+v", f)
	}
}

// TestSummaryUnknownQuantum: a fractional node that could not read its
// quantum_size has no largest fit and no --fit answer for shares, until
// the fleet's --quantum gives one; its held and free are still known.
func TestSummaryUnknownQuantum(t *testing.T) {
	s := shortNode()
	s.Allocator = model.Allocator{Fractional: true, Quantum: model.MustDec("0.5")}
	known := Summarize(s, Settings{})
	if known.QuantumUnknown || known.LargestText() == "?" || known.Largest.Sign() <= 0 {
		t.Fatalf("known quantum: %+v", known)
	}
	s.Allocator.Quantum = model.Zero
	sum := Summarize(s, Settings{})
	if !sum.QuantumUnknown || sum.LargestText() != "?" || sum.FreeText() != known.FreeText() {
		t.Errorf("unknown quantum: largest %s free %s, want ? and %s", sum.LargestText(), sum.FreeText(), known.FreeText())
	}
	now := time.Unix(1000, 0)
	fl := &Fleet{Nodes: []Node{{Addr: "n", Name: "n", State: Live, LastSeen: now, Snap: s, Sum: sum}}}
	if j := nodeJSON(&fl.Nodes[0]); j.Largest != nil || j.Free == nil {
		t.Errorf("JSON largest %v free %v: want largest absent, free present", j.Largest, j.Free)
	}
	req, _ := ParseRequest("cuda.shares=0.5")
	f := FitJSON(fl, req, Settings{}).Nodes[0].Fit
	if f == nil || f.Fits || !f.Unknown || !strings.Contains(f.Reason, "quantum_size") {
		t.Errorf("fit %+v: want unknown, naming the quantum_size", f)
	}
	if got := FitRequest(s, req, Settings{}); !got.Unknown || got.OK {
		t.Errorf("FitRequest %+v: want unknown", got)
	}
	// Given by the fleet's flag, the node is judged with it.
	var withQ Settings
	withQ.Quantum = model.MustDec("0.5")
	if f := FitJSON(fl, req, withQ).Nodes[0].Fit; f == nil || f.Unknown {
		t.Errorf("fit with --quantum %+v", f)
	}
	if sum := Summarize(s, withQ); sum.QuantumUnknown || sum.LargestText() == "?" {
		t.Errorf("summary with --quantum: %+v", sum)
	}
}

// TestFitMockUnread: a node whose mock plugin settings were not read
// registers its GPUs in a guessed mode (discrete) with unknown capacities.
// --fit answered against the guess: a request of shares "no device of this
// node has cuda.shares", one of whole GPUs refused for 0 free. Neither is
// known; a request of what the guess does not decide (cpu) is answered.
func TestFitMockUnread(t *testing.T) {
	s := shortNode()
	s.Source = model.SourceInfo{Kind: "mock", Health: "degraded"}
	for i := range s.Devices {
		if s.Devices[i].Name == "cuda" {
			s.Devices[i].Slot, s.Devices[i].Capacity, s.Devices[i].CapacityUnknown = model.SlotCUDADevice, model.Zero, true
		}
	}
	sum := Summarize(s, Settings{})
	now := time.Unix(1000, 0)
	fl := &Fleet{Nodes: []Node{{Addr: "n", Name: "n", State: Live, LastSeen: now, Snap: s, Sum: sum}}}
	for _, text := range []string{"cuda.shares=0.5", "cuda.device=1,cpu=1"} {
		req, err := ParseRequest(text)
		if err != nil {
			t.Fatal(err)
		}
		f := FitJSON(fl, req, Settings{}).Nodes[0].Fit
		if f == nil || f.Fits || !f.Unknown || !strings.Contains(f.Reason, "the mock plugin's settings in etcd were not read") || !strings.Contains(f.Reason, "--mock-etcd FILE") {
			t.Errorf("%s: fit %+v, want unknown, saying why", text, f)
		}
	}
	req, _ := ParseRequest("cpu=1")
	if f := FitJSON(fl, req, Settings{}).Nodes[0].Fit; f == nil || !f.Fits {
		t.Errorf("cpu=1: fit %+v", f)
	}
}

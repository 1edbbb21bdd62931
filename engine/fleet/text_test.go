package fleet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// The --once table: a line a node, "-" for the figures of a node without
// any, the error last.
func TestWriteTable(t *testing.T) {
	held, capa := model.NewDec(15, -1), model.NewDec(4, 0)
	var b bytes.Buffer
	WriteTable(&b, JSONFleet{Nodes: []JSONNode{
		{Node: "gpu-a", State: "live", GPUs: intp(4), Held: &held, Capacity: &capa, Free: &capa, Largest: &capa, Pieces: intp(2), Kernels: intp(3), Issues: intp(0), Address: "10.0.0.1:2222"},
		{Node: "gpu-b", State: "unreachable", Address: "10.0.0.2:2222", Error: "connection refused"},
	}})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NODE") {
		t.Fatalf("%q", b.String())
	}
	// The unreachable node's counts are not known: "-", never 0.
	if f := strings.Fields(lines[2]); len(f) < 9 || f[2] != "-" || f[7] != "-" || f[8] != "-" {
		t.Errorf("unreachable node's counts: %q", lines[2])
	}
	for i, want := range [][]string{{"gpu-a", "live", "1.5/4", "10.0.0.1:2222"}, {"gpu-b", "unreachable", " - ", "connection refused"}} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %d %q lacks %q", i+1, lines[i+1], w)
			}
		}
	}
}

func intp(n int) *int { return &n }

// --fit: memory said as a size, the overcommit painted by the caller's
// red, a node that does not fit with its reason.
func TestWriteFit(t *testing.T) {
	var b bytes.Buffer
	WriteFit(&b, JSONFitReport{Request: "cuda.shares=0.5,mem=4294967296", Fits: []string{"gpu-a"}, Overcommits: []string{"gpu-a"},
		Nodes: []JSONNode{
			{Node: "gpu-a", Fit: &JSONFit{Fits: true, Placement: map[string]map[string]string{"cuda.shares": {"GPU-1": "0.5"}},
				Devices: []placement.DeviceAfter{{Device: "GPU-1", Slot: "cuda.shares", Overcommit: true, TotalAfter: model.NewDec(11, -1), Capacity: model.NewDec(1, 0),
					HeldNow: model.NewDec(6, -1), Adds: model.NewDec(5, -1)}}}},
			{Node: "gpu-b", Fit: &JSONFit{Reason: "insufficient cuda.shares"}},
		}}, func(s string) string { return "<red>" + s + "</red>" })
	for _, w := range []string{"request cuda.shares=0.5,mem=4g fits on 1 node(s), <red>1 of them only by overcommitting a device</red>",
		"fits  gpu-a", "0.5 cuda.shares on GPU-1", "<red>! OVERCOMMIT</red>: GPU-1 would hold 1.1 of 1 cuda.shares", "no    gpu-b", "insufficient cuda.shares"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
	// At a past moment (--at) the figures are then's, not now's.
	b.Reset()
	WriteFit(&b, JSONFitReport{Request: "cuda.shares=0.5", At: "2026-11-30T03:00:00Z", Fits: []string{"gpu-a"}, Overcommits: []string{"gpu-a"},
		Nodes: []JSONNode{{Node: "gpu-a", Fit: &JSONFit{Fits: true, Placement: map[string]map[string]string{"cuda.shares": {"GPU-1": "0.5"}},
			Devices: []placement.DeviceAfter{{Device: "GPU-1", Slot: "cuda.shares", Overcommit: true, TotalAfter: model.NewDec(11, -1), Capacity: model.NewDec(1, 0),
				HeldNow: model.NewDec(6, -1), Adds: model.NewDec(5, -1)}}}}}}, func(s string) string { return s })
	if got := b.String(); !strings.Contains(got, "fits on 1 node(s) as the fleet was at 2026-11-30T03:00:00Z") || !strings.Contains(got, "(0.6 held then + 0.5)") || strings.Contains(got, "held now") {
		t.Errorf("--fit --at:\n%s", got)
	}
}

// TestWriteFitNamesDevices: --fit names a node's GPUs as its console and
// `fgtop simulate` do, by their index (GPU1), not their ids, and keeps
// the id for what has no such name (memory's "root"); the JSON adds the
// name beside each device, its placement still keyed by id.
func TestWriteFitNamesDevices(t *testing.T) {
	// Listed out of index order, so a name by position would be wrong.
	devs := []model.Device{
		{ID: "GPU-7f3a", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00"), Index: 1},
		{ID: "GPU-0c1d", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00"), Index: 0},
		{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: model.NewDec(64<<30, 0), NUMANode: -1},
	}
	s := &model.Snapshot{Node: "gpu-a", Devices: devs, Agents: []model.Agent{
		{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"GPU-7f3a", "GPU-0c1d"}}, Mem: model.NewDec(64<<30, 0)},
	}}
	// GPU0 nearly full: the request lands on GPU1 alone.
	held := model.MustDec("0.90")
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a1", Slots: model.ResourceSlot{model.SlotCUDAShares: held},
		Alloc: model.Allocations{model.SlotCUDAShares: {"GPU-0c1d": held}}}})
	req, err := ParseRequest("cuda.shares=0.5,mem=1g")
	if err != nil {
		t.Fatal(err)
	}
	fl := &Fleet{Nodes: []Node{{Addr: "a:1", Name: "gpu-a", State: Live, Snap: s, Sum: Summarize(s, Settings{})}}}
	r := FitJSON(fl, req, Settings{})
	if len(r.Fits) != 1 {
		t.Fatalf("fits %v: %+v", r.Fits, r.Nodes[0].Fit)
	}
	if got := r.Nodes[0].Fit.Placement["cuda.shares"]; got["GPU-7f3a"] != "0.50" || len(got) != 1 {
		t.Fatalf("placement %v, want 0.50 on GPU-7f3a alone (keyed by id)", got)
	}
	names := map[string]string{}
	for _, d := range r.Nodes[0].Devices {
		names[d.Device] = d.Name
	}
	if names["GPU-7f3a"] != "GPU1" || names["GPU-0c1d"] != "GPU0" {
		t.Errorf("JSON devices' names %v", names)
	}
	var b strings.Builder
	WriteFit(&b, r, func(s string) string { return s })
	for _, want := range []string{"0.50 cuda.shares on GPU1", "1g mem on root"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "GPU-7f3a") {
		t.Errorf("names the GPU by its id:\n%s", b.String())
	}
}

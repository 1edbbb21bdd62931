package placement

import (
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// benchNode is a node of 16 one-share GPUs (8 per NUMA node), 64 cores and
// 512 GiB, with kernels live kernels spread over the GPUs; agents > 1
// splits GPUs and cores between that many agents (device-based).
func benchNode(kernels, agents int) *model.Snapshot {
	s := &model.Snapshot{}
	for i := range 16 {
		s.Devices = append(s.Devices, gpu(fmt.Sprintf("GPU-%02d", i), i/8, "1.00"))
	}
	for i := range 64 {
		s.Devices = append(s.Devices, core(i, i/32))
	}
	s.Devices = append(s.Devices, memDev(fmt.Sprint(512*gib)))
	for a := range agents {
		ag := model.Agent{ID: model.AgentID(fmt.Sprintf("agent-%d", a))}
		if agents > 1 {
			ag.Owns = map[model.DeviceName][]model.DeviceID{}
			for i := a * 16 / agents; i < (a+1)*16/agents; i++ {
				ag.Owns["cuda"] = append(ag.Owns["cuda"], model.DeviceID(fmt.Sprintf("GPU-%02d", i)))
			}
			for i := a * 64 / agents; i < (a+1)*64/agents; i++ {
				ag.Owns["cpu"] = append(ag.Owns["cpu"], model.DeviceID(fmt.Sprint(i)))
			}
		}
		s.Agents = append(s.Agents, ag)
	}
	var ks []*model.Kernel
	// Small kernels: 0.05 share on one GPU each and 1 GiB, in turn, so
	// that a GPU holds at most 0.60 with 160 kernels; the first 32 also
	// hold a core each (half of each agent's cores stay free).
	for k := range kernels {
		g := k % 16
		a := g * agents / 16
		al := model.Allocations{
			"cuda.shares": {model.DeviceID(fmt.Sprintf("GPU-%02d", g)): dec("0.05")},
			"mem":         {"root": model.NewDec(gib, 0)},
		}
		if k < 32 {
			al["cpu"] = map[model.DeviceID]model.Dec{model.DeviceID(fmt.Sprint(a*64/agents + k/agents)): model.One}
		}
		ks = append(ks, &model.Kernel{
			ID: model.KernelID(fmt.Sprintf("k%05d", k)), Agent: model.AgentID(fmt.Sprintf("agent-%d", a)), State: model.KernelOK, Alloc: al,
		})
	}
	s.SetKernels(ks)
	return s
}

// BenchmarkPreview is one whole placement preview (every agent: placement
// on a copy of its maps, free capacity, stranded capacity) on a node of 16
// GPUs; the planner is built once per snapshot, outside the loop.
func BenchmarkPreview(b *testing.B) {
	for _, bc := range []struct {
		name     string
		agents   int
		settings Settings
		request  string
	}{
		{"1agent-16gpu/shares=1.2", 1, Settings{}, "cuda.shares=1.2"},
		{"1agent-16gpu/shares=0.5-nofrag", 1, Settings{ForbidFragmentation: true}, "cuda.shares=0.5"},
		{"1agent-16gpu/shares=1.2,cpu=4,mem=16g", 1, Settings{}, "cuda.shares=1.2,cpu=4,mem=16g"},
		{"2agents-8gpu/shares=1.2", 2, Settings{}, "cuda.shares=1.2"},
		{"1agent-16gpu/shares=20-insufficient", 1, Settings{}, "cuda.shares=20"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := NewPlanner(benchNode(160, bc.agents), bc.settings)
			r := req(b, bc.request)
			if pv := p.Preview(r); len(pv.Agents) != bc.agents || (bc.request != "cuda.shares=20") != pv.Agents[0].OK() {
				b.Fatalf("unexpected preview: %s", outcome(pv.Agents[0]))
			}
			b.ReportAllocs()
			done := testfix.CPUClock(b)
			for b.Loop() {
				p.Preview(r)
			}
			done()
		})
	}
}

// BenchmarkTry is the placement alone on 16 GPUs (Node.Try: clone the
// cuda map, allocate).
func BenchmarkTry(b *testing.B) {
	st := ForAgent(benchNode(160, 1), nil, Settings{})
	r := alloc.Request{{Slot: model.SlotCUDAShares, Amount: dec("1.2")}}
	b.ReportAllocs()
	done := testfix.CPUClock(b)
	for b.Loop() {
		if _, err := st.Node.Try(r); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkNewPlanner is the per-snapshot cost: build every agent's maps
// and load its kernels.
func BenchmarkNewPlanner(b *testing.B) {
	for _, kernels := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("kernels=%d", kernels), func(b *testing.B) {
			s := benchNode(kernels, 2)
			b.ReportAllocs()
			done := testfix.CPUClock(b)
			for b.Loop() {
				NewPlanner(s, Settings{})
			}
			done()
		})
	}
}

// BenchmarkFirstPreview is a planner built for one preview, as a fleet
// fit does per node: the per-snapshot cost plus the first preview, which
// derives the free capacities and orders of the maps it uses.
func BenchmarkFirstPreview(b *testing.B) {
	s := benchNode(160, 1)
	r := req(b, "cuda.shares=1.2,cpu=4,mem=16g")
	b.ReportAllocs()
	done := testfix.CPUClock(b)
	for b.Loop() {
		if pv := NewPlanner(s, Settings{}).Preview(r); !pv.Agents[0].OK() {
			b.Fatal(outcome(pv.Agents[0]))
		}
	}
	done()
}

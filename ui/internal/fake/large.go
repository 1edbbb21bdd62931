package fake

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Large returns a busy node for benchmarks: gpus fGPUs of 1.00 share with
// telemetry, 64 cores, two agents each owning half, and kernels kernels
// spread over the GPUs (some split over two), deterministic for a given
// size.
func Large(gpus, kernels int) *model.Snapshot {
	s := &model.Snapshot{
		Seq: 1, Time: T0, Node: "gpu-node-large", Mode: "manual", HostMemBytes: 2048 * gib,
		Source: model.SourceInfo{Kind: "nvml", Health: "ok"},
	}
	own := [2]map[model.DeviceName][]model.DeviceID{{}, {}}
	for g := 0; g < gpus; g++ {
		id := model.DeviceID(fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", 0x5eed0000+g*7919, g))
		s.Devices = append(s.Devices, model.Device{
			ID: id, Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
			Capacity: model.MustDec("1.00"), Index: g, Model: "H100 80GB HBM3", UUID: string(id)[4:],
			NUMANode: g % 2, MemoryBytes: 80 * gib, Processors: 132,
			Telemetry: &model.Telemetry{
				UtilGPU: model.Some(uint32(g * 6 % 101)), MemUsed: model.Some(uint64(int64(g*5%80) * gib)),
				MemTotal: model.Some(uint64(80 * gib)), TempC: model.Some(uint32(40 + g*3%45)),
				PowerMW: model.Some(uint32(100_000 + g*25_000%600_000)), PowerCapMW: model.Some(uint32(700_000)),
			},
		})
		own[g%2]["cuda"] = append(own[g%2]["cuda"], id)
	}
	for c := 0; c < 64; c++ {
		id := model.DeviceID(strconv.Itoa(c))
		s.Devices = append(s.Devices, model.Device{ID: id, Name: "cpu", Slot: model.SlotCPU,
			SlotType: model.SlotTypeCount, Capacity: model.One, Index: c, NUMANode: c / 32})
		own[c/32]["cpu"] = append(own[c/32]["cpu"], id)
	}
	s.Devices = append(s.Devices, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem,
		SlotType: model.SlotTypeBytes, Capacity: model.NewDec(2048*gib, 0), NUMANode: -1})
	s.Agents = []model.Agent{
		{ID: "i-large-numa0", Owns: own[0], Mem: model.NewDec(1000*gib, 0)},
		{ID: "i-large-numa1", Owns: own[1], Mem: model.NewDec(1000*gib, 0)},
	}
	states := []model.KernelState{model.KernelOK, model.KernelOK, model.KernelOK, model.KernelOK,
		model.KernelOK, model.KernelOK, model.KernelOK, model.KernelStale, model.KernelOK, model.KernelPending}
	kerns := make([]*model.Kernel, 0, kernels)
	for i := 0; i < kernels; i++ {
		g := i % gpus
		id := model.KernelID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(i)*2654435761, i&0xffff, i%4096, (i*7)%4096, i))
		a := model.Allocations{
			model.SlotCUDAShares: {s.Devices[g].ID: model.NewDec(int64(1+i%3), -2)},
			model.SlotCPU:        {model.DeviceID(strconv.Itoa(i % 64)): model.One},
			model.SlotMem:        {"root": model.NewDec(int64(1+i%8)*gib, 0)},
		}
		if i%5 == 0 {
			a[model.SlotCUDAShares][s.Devices[(g+1)%gpus].ID] = model.NewDec(1, -2)
		}
		st := states[i%len(states)]
		if st == model.KernelPending {
			a = nil
		}
		k := &model.Kernel{
			ID: id, Agent: s.Agents[(g % 2)].ID, Alloc: a, State: st, Slots: slotsOf(a),
			Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/resource.txt",
			Seen: T0.Add(-time.Duration(i) * 37 * time.Second),
			Record: &model.KernelRecord{KernelID: id, AgentID: s.Agents[(g % 2)].ID,
				SessionID:   fmt.Sprintf("%08x-5e55-4000-8000-%012x", i/2, i/2),
				SessionType: []string{"interactive", "batch", "inference"}[i%3],
				OwnerUserID: fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xa11ce000+i%40, i%40), OwnerProjectID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", 0xb0b0+i%4),
				Image: "cr.backend.ai/stable/python-pytorch:2.4-py311-cuda12.4"},
		}
		if st != model.KernelPending {
			k.Container = CID(id)
			if i%3 != 2 {
				k.Use = &model.KernelUse{Procs: 1, MemUsed: model.Some(uint64(int64(1+i%20) * gib)), Util: model.Some(uint32(i * 7 % 101))}
				if k.Use.Util.V == 0 {
					k.Use.Procs, k.Use.IdleSince, k.Use.Idle = 0, T0.Add(-time.Hour), true
					s.IdleKernels++
				}
			}
		}
		kerns = append(kerns, k)
	}
	s.SetKernels(kerns)
	Finish(s)
	return s
}

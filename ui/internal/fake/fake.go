// Package fake builds realistic model.Snapshot values for the ui package's
// tests, benchmarks and screenshots: the node the Backend.AI fixtures
// describe (4 × A100 as 1.00-share fGPUs, 32 cores on 2 NUMA nodes, two
// agents in manual mode), plus one MIG GPU, with one device over capacity,
// one kernel drifting onto a device its agent does not own and one torn
// resource.txt. It computes usage the way the engine does (sum per slot,
// holdings per kernel) so the figures are self-consistent.
package fake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
)

// T0 is the fixed moment fixtures are taken at; tests run their clock from
// it so ages and "updated 3s ago" never depend on the wall clock.
var T0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// Agent ids of the fixture node (agent.multi-agent.device-based.toml).
const (
	Agent0 model.AgentID = "i-gpu-node01-numa0"
	Agent1 model.AgentID = "i-gpu-node01-numa1"
)

const (
	gib          = int64(1) << 30
	scratchRoot  = "/var/lib/backend.ai/scratches"
	uuidPrefix   = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d0"
	migParentIdx = 5
)

// GPU returns the device id of fixture GPU n (1-based, as in the fixtures'
// "...2d01").
func GPU(n int) model.DeviceID { return model.DeviceID(fmt.Sprintf("%s%d", uuidPrefix, n)) }

// MIG returns the id of MIG slice gi on the MIG GPU.
func MIG(gi int) model.DeviceID {
	return model.DeviceID(fmt.Sprintf("MIG-%s/%d/0", GPU(migParentIdx), gi))
}

// Options change the fixture.
type Options struct {
	// Source: "nvml" (default, healthy with telemetry), "degraded" (NVML
	// works partly: some readings fail) or "mock" (mock-accelerator.toml,
	// no telemetry at all).
	Source string
}

// Node returns the fixture snapshot.
func Node(o Options) *model.Snapshot {
	s := &model.Snapshot{
		Seq:          42,
		Time:         T0,
		Node:         "gpu-node01",
		Mode:         "manual",
		ConfigPath:   "/etc/backend.ai/agent.toml",
		HostMemBytes: 256 * gib,
	}
	for i := 1; i <= 4; i++ {
		s.Devices = append(s.Devices, a100(i, model.SlotCUDAShares, model.MustDec("1.00")))
	}
	parent := a100(migParentIdx, model.SlotCUDADevice, model.MustDec("1"))
	parent.Capacity = model.Zero // in MIG mode only the slices are allocatable
	s.Devices = append(s.Devices, parent,
		migSlice(3, "cuda.device:10g-mig", "1g.10gb", 10*gib),
		migSlice(4, "cuda.device:20g-mig", "2g.20gb", 20*gib))
	for c := 0; c < 32; c++ {
		s.Devices = append(s.Devices, model.Device{
			ID: model.DeviceID(strconv.Itoa(c)), Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount,
			Capacity: model.MustDec("1"), Index: c, NUMANode: c / 16,
		})
	}
	s.Devices = append(s.Devices, model.Device{
		ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes,
		Capacity: model.NewDec(256*gib, 0), NUMANode: -1,
	})

	s.Agents = []model.Agent{
		{ID: Agent0, ScratchRoot: scratchRoot, Mem: model.NewDec(120*gib, 0),
			Owns: map[model.DeviceName][]model.DeviceID{"cuda": {GPU(1), GPU(3)}, "cpu": cores(0, 16)}},
		{ID: Agent1, ScratchRoot: scratchRoot, Mem: model.NewDec(120*gib, 0),
			Owns: map[model.DeviceName][]model.DeviceID{"cuda": {GPU(2), GPU(4), GPU(migParentIdx), MIG(3), MIG(4)}, "cpu": cores(16, 32)}},
	}

	type k struct {
		id    string
		agent model.AgentID
		age   time.Duration
		alloc model.Allocations
		state model.KernelState
	}
	ks := []k{
		// A: cpu-only (resource.cpu-only.txt).
		{"1b9e0c44-7a2d-4f6e-9c3b-8d5a1e2f7c90", Agent0, 3*time.Hour + 12*time.Minute,
			alloc(model.SlotCPU, "4:1,5:1", model.SlotMem, "4g"), model.KernelOK},
		// B: 0.50 on ...2d04 (resource.cuda-shares-single.txt).
		{"3f2a6c1e-5b7d-4e8a-9f0c-1d2e3a4b5c6d", Agent1, 2*time.Hour + 5*time.Minute,
			alloc(model.SlotCUDAShares, share(4, "0.50"), model.SlotCPU, "16:1,17:1", model.SlotMem, "16g"), model.KernelOK},
		// C: 1.2 split as 0.60 + 0.60 on ...2d02 and ...2d03; ...2d03 belongs
		// to the other agent: drift.
		{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63", Agent1, 47 * time.Minute,
			alloc(model.SlotCUDAShares, share(2, "0.60")+","+share(3, "0.60"),
				model.SlotCPU, "18:1,19:1,20:1,21:1,22:1,23:1,24:1,25:1", model.SlotMem, "32g"), model.KernelOK},
		// D and E together hold 1.10 of ...2d01's 1.00: over capacity.
		{"7d0e9b3a-1c4f-4a2b-8e6d-0f9a8b7c6d5e", Agent0, 26 * time.Hour,
			alloc(model.SlotCUDAShares, share(1, "0.50"), model.SlotCPU, "0:1,1:1", model.SlotMem, "24g"), model.KernelOK},
		{"8e4c2a6f-0b9d-4c7e-a1f3-5e2d4c6b8a0f", Agent0, 9 * time.Minute,
			alloc(model.SlotCUDAShares, share(1, "0.60"), model.SlotCPU, "2:1,3:1", model.SlotMem, "24g"), model.KernelOK},
		{"9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", Agent0, 15 * time.Minute,
			alloc(model.SlotCUDAShares, share(3, "0.20"), model.SlotCPU, "6:1", model.SlotMem, "8g"), model.KernelOK},
		// A MIG slice (resource.cuda-mig.txt).
		{"5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", Agent1, 5 * time.Hour,
			alloc("cuda.device:10g-mig", string(MIG(3))+":1", model.SlotCPU, "26:1,27:1", model.SlotMem, "8g"), model.KernelOK},
		// A torn resource.txt: the last good contribution is kept.
		{"d2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f60", Agent1, 31 * time.Minute,
			alloc(model.SlotCUDAShares, share(2, "0.30"), model.SlotCPU, "28:1", model.SlotMem, "4g"), model.KernelStale},
		// A kernel whose resource.txt is not written yet.
		{"f0e1d2c3-b4a5-4968-8776-655443322110", Agent0, 4 * time.Second, nil, model.KernelPending},
	}
	var kerns []*model.Kernel
	for _, kk := range ks {
		kern := &model.Kernel{
			ID: model.KernelID(kk.id), Agent: kk.agent,
			Path:  fmt.Sprintf("%s/%s/config/resource.txt", scratchRoot, kk.id),
			Alloc: kk.alloc, State: kk.state, Seen: T0.Add(-kk.age), ModTime: T0.Add(-kk.age),
			Slots: slotsOf(kk.alloc),
		}
		if kk.state == model.KernelStale {
			kern.Problem = &model.Issue{Severity: model.SevWarning, Code: model.IssueParse,
				Message: "CUDA.SHARES_SHARES: invalid decimal \"0.3\\x00\" (file torn while being written?)",
				File:    kern.Path, Line: 5, Kernel: kern.ID}
		}
		kerns = append(kerns, kern)
	}
	s.SetKernels(kerns)
	Finish(s)

	ka := s.Kernel("c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63")
	kst := s.Kernel("d2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f60")
	s.Issues = append(s.Issues,
		model.Issue{Severity: model.SevError, Code: model.IssueOverCapacity,
			Message: "cuda:" + string(GPU(1)) + " holds 1.10 of 1.00 cuda.shares",
			Device:  model.DeviceKey{Name: "cuda", ID: GPU(1)}},
		model.Issue{Severity: model.SevWarning, Code: model.IssueDriftNotOwner,
			Message: fmt.Sprintf("kernel %s of %s holds 0.60 cuda.shares on cuda:%s, owned by %s", ka.ID, Agent1, GPU(3), Agent0),
			File:    ka.Path, Device: model.DeviceKey{Name: "cuda", ID: GPU(3)}, Kernel: ka.ID, Agent: Agent1},
		*kst.Problem,
	)

	telemetry(s, o.Source)
	if o.Source != "mock" {
		uses(s)
	}
	sortIssues(s.Issues)
	return s
}

// Owners of the fixture's kernels (recovery.json), by kernel id prefix.
var records = map[string]struct{ user, project, session, typ, image string }{
	"1b9e0c44": {"ed3a25b5-014e-43a4-bc1e-7de34e150625", "1257967d-0ffa-42bb-af65-1b74af04ec9a", "11471295-3f56-42cf-8e38-6e0c29204abf", "interactive", "cr.backend.ai/stable/python:3.11-ubuntu22.04"},
	"3f2a6c1e": {"ed3a25b5-014e-43a4-bc1e-7de34e150625", "1257967d-0ffa-42bb-af65-1b74af04ec9a", "5b0e7c1d-2a3f-4e6b-9c8d-7f1a2b3c4d5e", "interactive", "cr.backend.ai/stable/python-pytorch:2.4-py311-cuda12.4"},
	"c41a8f2d": {"9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d", "1257967d-0ffa-42bb-af65-1b74af04ec9a", "21e330bf-e15a-47a9-9183-df27ccd257b6", "batch", "cr.backend.ai/stable/ngc-pytorch:24.08-pytorch2.5-py310-cuda12.6"},
	"7d0e9b3a": {"4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f", "6d5c4b3a-2f1e-4d0c-8b9a-7f6e5d4c3b2a", "3e2d1c0b-9a8f-47e6-b5d4-c3b2a1908f7e", "batch", "cr.backend.ai/stable/python-tensorflow:2.15-py311-cuda12.3"},
	"8e4c2a6f": {"4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f", "6d5c4b3a-2f1e-4d0c-8b9a-7f6e5d4c3b2a", "3e2d1c0b-9a8f-47e6-b5d4-c3b2a1908f7e", "batch", "cr.backend.ai/stable/python-tensorflow:2.15-py311-cuda12.3"},
	"9a1b2c3d": {"ed3a25b5-014e-43a4-bc1e-7de34e150625", "1257967d-0ffa-42bb-af65-1b74af04ec9a", "8f7e6d5c-4b3a-4291-8e0d-9c8b7a6f5e4d", "inference", "cr.backend.ai/stable/vllm:0.6.3-cuda12.4"},
	"d2e3f4a5": {"9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d", "1257967d-0ffa-42bb-af65-1b74af04ec9a", "0f1e2d3c-4b5a-4697-8877-665544332211", "interactive", "cr.backend.ai/stable/python-pytorch:2.4-py311-cuda12.4"},
	// 5a6b7c8d (the MIG kernel) runs on an agent older than recovery.json.
}

// CID returns the container id the fixture gives a kernel (its CID= line).
func CID(id model.KernelID) string {
	return strings.Repeat(strings.ReplaceAll(string(id), "-", "")[:16], 4)
}

// uses fills what the engine derives from the processes: kernels' owners
// (records), containers, allocated against used and holding but idle.
func uses(s *model.Snapshot) {
	type u struct {
		procs  int
		memGiB int64
		util   int // -1: memory only
		idle   time.Duration
	}
	table := map[string]u{
		"7d0e9b3a": {1, 18, 55, 0}, "8e4c2a6f": {1, 20, 42, 0}, "c41a8f2d": {2, 45, 64, 0},
		"3f2a6c1e": {0, 0, 0, 34 * time.Minute}, "9a1b2c3d": {0, 0, 0, 3 * time.Minute}, "d2e3f4a5": {0, 0, 0, 31 * time.Minute},
	}
	s.IdleAfter = 10 * time.Minute
	var ks []*model.Kernel
	for _, k := range s.Kernels() {
		nk := *k
		p := string(k.ID)[:8]
		if r, ok := records[p]; ok {
			nk.Record = &model.KernelRecord{Path: strings.TrimSuffix(k.Path, "resource.txt") + "recovery.json", KernelID: k.ID, AgentID: k.Agent,
				SessionID: r.session, SessionType: r.typ, OwnerUserID: r.user, OwnerProjectID: r.project, Image: r.image, Architecture: "x86_64"}
			nk.AgentBy = model.AgentByRecord
		}
		if k.State != model.KernelPending {
			nk.Container = CID(k.ID)
		}
		if x, ok := table[p]; ok {
			use := &model.KernelUse{Procs: x.procs}
			if x.procs > 0 {
				use.MemUsed = model.Some(uint64(x.memGiB * gib))
			}
			if x.util >= 0 {
				use.Util = model.Some(uint32(x.util))
			}
			for _, key := range k.Devices() {
				if key.Name != "cuda" {
					continue
				}
				d := model.DeviceUse{Device: key, Capacity: model.MustDec("1.00"), Util: use.Util}
				for _, m := range k.Alloc {
					d.Held = d.Held.Add(m[key.ID])
				}
				if x.procs > 0 {
					d.Procs, d.MemUsed = 1, model.Some(uint64(x.memGiB*gib/int64(x.procs)))
				}
				use.Devices = append(use.Devices, d)
			}
			if x.idle > 0 {
				use.IdleSince = T0.Add(-x.idle)
				use.Idle = x.idle >= s.IdleAfter
				if use.Idle {
					s.IdleKernels++
				}
			}
			nk.Use = use
		}
		ks = append(ks, &nk)
	}
	s.SetKernels(ks)
	for i := range s.Devices {
		t := s.Devices[i].Telemetry
		if t == nil || t.Processes == nil {
			continue
		}
		t.ProcUtil = model.Some(true)
		for j := range t.Processes {
			p := &t.Processes[j]
			p.Start = uint64(360000 + p.PID)
			if p.Kernel != "" {
				p.Owner, p.Container = model.ProcKernel, CID(p.Kernel)
			} else {
				p.Owner = model.ProcForeign
			}
		}
	}
}

func telemetry(s *model.Snapshot, source string) {
	switch source {
	case "mock":
		s.Source = model.SourceInfo{Kind: "mock", Health: "ok", Detail: "/etc/backend.ai/mock-accelerator.toml"}
		return
	case "degraded":
		s.Source = model.SourceInfo{Kind: "nvml", Health: "degraded",
			Detail: "nvmlDeviceGetTemperature: GPU is lost (GPU 2, 00000000:47:00.0)"}
		s.Issues = append(s.Issues, model.Issue{Severity: model.SevError, Code: model.IssueDeviceSource,
			Message: s.Source.Detail, Device: model.DeviceKey{Name: "cuda", ID: GPU(3)}})
	default:
		s.Source = model.SourceInfo{Kind: "nvml", Health: "ok", Detail: "driver 570.133.20, NVML 12.570.133.20"}
	}
	type tl struct{ util, memGiB, temp, powerW int }
	readings := map[model.DeviceID]tl{
		GPU(1): {97, 38, 81, 362}, GPU(2): {64, 31, 66, 251},
		GPU(3): {12, 22, 47, 98}, GPU(4): {0, 1, 34, 61}, GPU(migParentIdx): {-1, 9, 41, 83},
	}
	procs := map[model.DeviceID][]model.Process{
		GPU(1): {
			{PID: 48113, Name: "python3", UsedMem: model.Some(uint64(18 * gib)), SMUtil: model.Some[uint32](55), Kernel: "7d0e9b3a-1c4f-4a2b-8e6d-0f9a8b7c6d5e"},
			{PID: 48877, Name: "torchrun", UsedMem: model.Some(uint64(20 * gib)), SMUtil: model.Some[uint32](42), Kernel: "8e4c2a6f-0b9d-4c7e-a1f3-5e2d4c6b8a0f"},
		},
		GPU(2): {{PID: 51220, Name: "python3", UsedMem: model.Some(uint64(31 * gib)), SMUtil: model.Some[uint32](64), Kernel: "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63"}},
		GPU(3): {
			{PID: 51221, Name: "python3", UsedMem: model.Some(uint64(14 * gib)), SMUtil: model.Some[uint32](12), Kernel: "c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63"},
			{PID: 60001, Name: "nvidia-smi", UsedMem: model.Opt[uint64]{}, SMUtil: model.Some[uint32](0)},
		},
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		r, ok := readings[d.ID]
		if !ok {
			if d.IsMIG() {
				d.Telemetry = &model.Telemetry{MemTotal: model.Some(uint64(d.MemoryBytes)), MemUsed: model.Some(uint64(3 * gib))}
			}
			continue
		}
		t := &model.Telemetry{
			MemUsed: model.Some(uint64(int64(r.memGiB) * gib)), MemTotal: model.Some(uint64(40 * gib)),
			TempC: model.Some(uint32(r.temp)), PowerMW: model.Some(uint32(r.powerW * 1000)),
			PowerCapMW: model.Some(uint32(400_000)), MIGMode: model.Some(d.ID == GPU(migParentIdx)),
			Processes: procs[d.ID],
		}
		if r.util >= 0 {
			t.UtilGPU, t.UtilMem = model.Some(uint32(r.util)), model.Some(uint32(r.util/2))
		}
		if source == "degraded" && d.ID == GPU(3) {
			t.TempC, t.PowerMW, t.UtilGPU = model.Opt[uint32]{}, model.Opt[uint32]{}, model.Opt[uint32]{}
			t.Errors = []string{"temperature: GPU is lost", "power: GPU is lost", "utilization: GPU is lost"}
		}
		d.Telemetry = t
	}
}

func a100(n int, slot model.SlotName, capacity model.Dec) model.Device {
	return model.Device{
		ID: GPU(n), Name: "cuda", Slot: slot, SlotType: model.SlotTypeCount, Capacity: capacity,
		Index: n - 1, Model: "A100-SXM4-40GB", UUID: string(GPU(n)), NUMANode: (n - 1) % 2,
		MemoryBytes: 40 * gib, Processors: 108,
	}
}

func migSlice(gi int, slot model.SlotName, profile string, mem int64) model.Device {
	return model.Device{
		ID: MIG(gi), Name: "cuda", Slot: slot, SlotType: model.SlotTypeUnique, Capacity: model.MustDec("1"),
		Index: migParentIdx - 1, Model: "A100-SXM4-40GB MIG " + profile, Parent: GPU(migParentIdx),
		NUMANode: 0, MemoryBytes: mem, Processors: 14 * (gi - 2),
	}
}

func cores(from, to int) []model.DeviceID {
	var out []model.DeviceID
	for c := from; c < to; c++ {
		out = append(out, model.DeviceID(strconv.Itoa(c)))
	}
	return out
}

func share(gpu int, amount string) string { return string(GPU(gpu)) + ":" + amount }

// alloc builds Allocations from slot, "id:amount,..." pairs; mem amounts
// are binary sizes.
func alloc(pairs ...any) model.Allocations {
	out := model.Allocations{}
	for i := 0; i+1 < len(pairs); i += 2 {
		var slot model.SlotName
		switch v := pairs[i].(type) {
		case model.SlotName:
			slot = v
		case string:
			slot = model.SlotName(v)
		}
		m := map[model.DeviceID]model.Dec{}
		spec := pairs[i+1].(string)
		if slot == model.SlotMem && !strings.Contains(spec, ":") {
			spec = "root:" + spec // memory is one device, "root"
		}
		for _, e := range splitComma(spec) {
			id, v := cutLast(e)
			if slot == model.SlotMem {
				d, err := model.ParseBinarySize(v)
				if err != nil {
					panic(err)
				}
				m[model.DeviceID(id)] = d
				continue
			}
			m[model.DeviceID(id)] = model.MustDec(v)
		}
		out[slot] = m
	}
	return out
}

// slotsOf is what the kernel requested: the sum of its allocation per slot
// (the fixtures' SLOTS can exceed it by quantum rounding; not modelled).
func slotsOf(a model.Allocations) model.ResourceSlot {
	out := model.ResourceSlot{}
	for slot, m := range a {
		for _, v := range m {
			out[slot] = out[slot].Add(v)
		}
	}
	return out
}

// Finish fills Usage, each agent's Held and Kernels from the kernels, as the
// engine does: stale kernels keep their last good contribution, broken and
// pending ones contribute nothing.
func Finish(s *model.Snapshot) {
	s.Usage = map[model.DeviceKey]*model.DeviceUsage{}
	agents := map[model.AgentID]*model.Agent{}
	for i := range s.Agents {
		s.Agents[i].Held = model.ResourceSlot{}
		s.Agents[i].Kernels = 0
		agents[s.Agents[i].ID] = &s.Agents[i]
	}
	holdings := map[model.DeviceKey][]model.Holding{}
	for _, k := range s.Kernels() {
		a := agents[k.Agent]
		if a != nil {
			a.Kernels++
		}
		if k.State != model.KernelOK && k.State != model.KernelStale {
			continue
		}
		for slot, m := range k.Alloc {
			for id, v := range m {
				key := model.DeviceKey{Name: slot.DeviceName(), ID: id}
				u := s.Usage[key]
				if u == nil {
					u = &model.DeviceUsage{Key: key, Held: model.ResourceSlot{}}
					s.Usage[key] = u
				}
				u.Held[slot] = u.Held[slot].Add(v)
				holdings[key] = append(holdings[key], model.Holding{Kernel: k.ID, Agent: k.Agent, Slot: slot, Amount: v})
				if a != nil {
					a.Held[slot] = a.Held[slot].Add(v)
				}
			}
		}
	}
	for key, hs := range holdings {
		s.Usage[key].SetHoldings(hs)
	}
}

func sortIssues(is []model.Issue) {
	slices.SortStableFunc(is, func(a, b model.Issue) int {
		if a.Severity != b.Severity {
			return int(b.Severity) - int(a.Severity)
		}
		if c := cmpStr(a.Code, b.Code); c != 0 {
			return c
		}
		return cmpStr(a.File, b.File)
	})
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// cutLast splits "id:amount" at the last ':' (MIG ids contain none, but
// UUIDs never do either; the last colon is the amount's).
func cutLast(s string) (string, string) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// bootAgo is how long the demo host has been up when the node starts: its
// fake /proc/uptime and its processes' start times count from there.
const bootAgo = 36 * time.Hour

// firstPID is the first PID the demo's processes get.
const firstPID = 4100

// demoProc is one synthetic GPU process: on which device, how much memory,
// how busy, until when.
type demoProc struct {
	pid    uint32
	kernel model.KernelID
	dev    model.DeviceID
	comm   string
	// mem is a fixed amount of device memory (the processes that are not
	// a kernel's); memShare, when set, is the part of the device's memory
	// a kernel's process uses (its share of the device times how much of
	// that it fills), so a process on a 5 GB MIG slice uses part of 5 GB.
	mem      uint64
	memShare float64
	util     uint32
	// idleAt is the virtual time it stops computing (its job is done but
	// the kernel keeps the GPU); zero means never.
	idleAt time.Duration
}

// procTable is the demo host's GPU processes, shared between the node's
// goroutine (which starts and stops them) and the engine's polls.
type procTable struct {
	mu    sync.Mutex
	procs map[uint32]*demoProc
	// byKernel lists each kernel's PIDs, for stopping them.
	byKernel map[model.KernelID][]uint32
	nextPID  uint32
	// vnow is the node's virtual time, for busy processes turning idle.
	vnow atomic.Int64
}

// owners is the demo's population: users in projects.
type owners struct {
	users    []string
	projects []string
	// projectOf is each user's project (index into projects).
	projectOf []int
}

// newOwners draws the demo's users and projects from the seed, apart from
// the simulation's own stream.
func newOwners(seed int64) owners {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6f776e657273))
	var o owners
	for range 4 {
		o.projects = append(o.projects, uuidFrom(rng))
	}
	for range 14 {
		o.users = append(o.users, uuidFrom(rng))
		o.projectOf = append(o.projectOf, rng.IntN(len(o.projects)))
	}
	return o
}

// uuidFrom draws a version-4 UUID.
func uuidFrom(rng *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// kernelRand is a kernel's own random stream: its owner, session and
// processes are drawn from it, so they leave the simulation's stream (and
// every seed's kernels and placements) as they were.
func kernelRand(seed int64, id model.KernelID, salt string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(salt))
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

var (
	demoImages = []struct{ registry, project, name, tag, arch string }{
		{"cr.backend.ai", "stable", "python-pytorch", "2.4-py311-cuda12.4", "x86_64"},
		{"cr.backend.ai", "stable", "python-tensorflow", "2.15-py311-cuda12.3", "x86_64"},
		{"cr.backend.ai", "stable", "ngc-pytorch", "24.08-pytorch2.5-py310-cuda12.6", "x86_64"},
		{"cr.backend.ai", "stable", "vllm", "0.6.3-cuda12.4", "x86_64"},
		{"cr.backend.ai", "multiarch", "python", "3.11-ubuntu22.04", "x86_64"},
	}
	demoComms = []string{"python3", "python3", "torchrun", "jupyter-kernel", "vllm", "tritonserver"}
)

// kernelRecord is the kernel's recovery.json, as Backend.AI's
// KernelRecoveryScratchData dumps it (compact JSON, no final newline).
type kernelRecord struct {
	ID       string `json:"id"`
	AgentID  string `json:"agent_id"`
	ImageRef struct {
		Name         string  `json:"name"`
		Project      *string `json:"project"`
		Tag          string  `json:"tag"`
		Registry     string  `json:"registry"`
		Architecture string  `json:"architecture"`
		IsLocal      bool    `json:"is_local"`
	} `json:"image_ref"`
	Version       int `json:"version"`
	OwnershipData struct {
		KernelID       string  `json:"kernel_id"`
		SessionID      string  `json:"session_id"`
		AgentID        string  `json:"agent_id"`
		OwnerUserID    *string `json:"owner_user_id"`
		OwnerProjectID *string `json:"owner_project_id"`
	} `json:"ownership_data"`
	NetworkID           string `json:"network_id"`
	NetworkDriver       string `json:"network_driver"`
	SessionType         string `json:"session_type"`
	BlockServicePorts   bool   `json:"block_service_ports"`
	DomainSocketProxies []any  `json:"domain_socket_proxies"`
	ServicePorts        []any  `json:"service_ports"`
	ReplInPort          int    `json:"repl_in_port"`
	ReplOutPort         int    `json:"repl_out_port"`
}

// recordText is a kernel's recovery.json: owner and project from the
// demo's population, a session of its own, an image, a session type.
func (n *Node) recordText(k *kernelRec) ([]byte, error) {
	rng := kernelRand(n.Seed, k.id, "record")
	var r kernelRecord
	r.ID, r.AgentID = string(k.id), string(n.parts[k.agent].id)
	img := demoImages[rng.IntN(len(demoImages))]
	r.ImageRef.Name, r.ImageRef.Tag, r.ImageRef.Registry, r.ImageRef.Architecture = img.name, img.tag, img.registry, img.arch
	proj := img.project
	r.ImageRef.Project = &proj
	r.Version = 1
	u := rng.IntN(len(n.owners.users))
	user, project := n.owners.users[u], n.owners.projects[n.owners.projectOf[u]]
	session := uuidFrom(rng)
	r.OwnershipData.KernelID, r.OwnershipData.SessionID, r.OwnershipData.AgentID = r.ID, session, r.AgentID
	r.OwnershipData.OwnerUserID, r.OwnershipData.OwnerProjectID = &user, &project
	r.NetworkID, r.NetworkDriver = "bai-singlenode-"+session, "bridge"
	switch x := rng.Float64(); {
	case x < 0.55:
		r.SessionType = "interactive"
	case x < 0.9:
		r.SessionType = "batch"
	default:
		r.SessionType = "inference"
	}
	r.DomainSocketProxies, r.ServicePorts = []any{}, []any{}
	port := 30000 + 2*int(rng.IntN(5000))
	r.ReplInPort, r.ReplOutPort = port, port+1
	return json.Marshal(&r)
}

// startProcs starts a kernel's GPU processes once its container exists:
// none for about one kernel in five that holds a GPU (a notebook that
// holds it and does not use it), else one or two, busy or not, some of
// which finish their work and leave the GPU held but idle. Each gets a
// /proc/<pid> entry whose cgroup names the kernel's container, as docker
// with the systemd cgroup driver on cgroup v2 writes it.
func (n *Node) startProcs(k *kernelRec) error {
	var devs []model.DeviceID
	var held []model.Dec
	for _, d := range k.placement {
		if d.Device != "cuda" {
			continue
		}
		for _, sl := range d.Alloc {
			for _, sh := range sl.Shares {
				if sh.Amount.Sign() > 0 {
					devs = append(devs, sh.Device)
					held = append(held, sh.Amount)
				}
			}
		}
	}
	if len(devs) == 0 {
		return nil
	}
	rng := kernelRand(n.Seed, k.id, "procs")
	count := 1
	switch x := rng.Float64(); {
	case x < 0.2:
		count = 0
	case x < 0.35:
		count = 2
	}
	count = max(count, min(len(devs), count*len(devs)))
	now := time.Duration(n.procs.vnow.Load())
	var started []*demoProc
	for i := range count {
		di := i % len(devs)
		p := &demoProc{kernel: k.id, dev: devs[di], comm: demoComms[rng.IntN(len(demoComms))]}
		// Memory: part of what the share entitles it to.
		p.memShare = held[di].Float64() * (0.2 + 0.7*rng.Float64())
		if rng.Float64() < 0.75 {
			p.util = uint32(20 + rng.IntN(76))
			if rng.Float64() < 0.35 {
				p.idleAt = now + time.Duration(5+rng.IntN(20))*time.Second
			}
		}
		started = append(started, p)
	}
	n.procs.mu.Lock()
	defer n.procs.mu.Unlock()
	for _, p := range started {
		p.pid = n.procs.nextPID
		n.procs.nextPID++
		if err := n.writeProc(p.pid, p.comm, now, "0::/system.slice/docker-"+k.cid+".scope\n"); err != nil {
			return err
		}
		n.procs.procs[p.pid] = p
		n.procs.byKernel[k.id] = append(n.procs.byKernel[k.id], p.pid)
	}
	return nil
}

// stopProcs ends a kernel's processes (its container is stopping).
func (n *Node) stopProcs(id model.KernelID) error {
	n.procs.mu.Lock()
	defer n.procs.mu.Unlock()
	for _, pid := range n.procs.byKernel[id] {
		delete(n.procs.procs, pid)
		if err := os.RemoveAll(filepath.Join(n.procRoot, fmt.Sprint(pid))); err != nil {
			return fmt.Errorf("demo: stop process %d: %w", pid, err)
		}
	}
	delete(n.procs.byKernel, id)
	return nil
}

// startForeign starts the GPU processes that are not Backend.AI's: a
// display server on the host, and a container someone ran by hand with
// `docker run --gpus`, which no kernel's resource.txt names.
func (n *Node) startForeign(gpus []model.DeviceID) error {
	if len(gpus) < 2 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(n.Seed), 0x666f726569676e))
	cid := fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	foreign := []struct {
		p      demoProc
		cgroup string
	}{
		{demoProc{dev: gpus[0], comm: "Xorg", mem: 24 << 20}, "0::/system.slice/display-manager.service\n"},
		{demoProc{dev: gpus[1], comm: "python3", mem: 6 << 30, util: 35}, "0::/system.slice/docker-" + cid + ".scope\n"},
	}
	n.procs.mu.Lock()
	defer n.procs.mu.Unlock()
	for i := range foreign {
		p := foreign[i].p
		p.pid = n.procs.nextPID
		n.procs.nextPID++
		if err := n.writeProc(p.pid, p.comm, 0, foreign[i].cgroup); err != nil {
			return err
		}
		n.procs.procs[p.pid] = &p
	}
	return nil
}

// writeProc writes /proc/<pid>/stat and cgroup for a process started at
// virtual time at, and moves the host's uptime to at least then (written
// whole by rename: the engine reads it concurrently).
func (n *Node) writeProc(pid uint32, comm string, at time.Duration, cgroup string) error {
	dir := filepath.Join(n.procRoot, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: process %d: %w", pid, err)
	}
	ticks := uint64((bootAgo + at) / (time.Second / 100))
	if err := writeAtomic(filepath.Join(n.procRoot, "uptime"), fmt.Sprintf("%d.%02d %d.00\n", ticks/100, ticks%100, ticks/50)); err != nil {
		return err
	}
	stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 2048000 4096\n", pid, comm, pid, pid, ticks)
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644); err != nil {
		return fmt.Errorf("demo: process %d: %w", pid, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		return fmt.Errorf("demo: process %d: %w", pid, err)
	}
	return nil
}

func writeAtomic(path, text string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// gpuSource is the demo's device source: the mock plugin's devices, with
// GPU telemetry from the synthetic processes, named through /proc by
// inventory.ProcessReader exactly as the NVML source names real ones. The
// fractional GPUs give per-process utilisation samples; the MIG slices, as
// on real hardware, memory only.
type gpuSource struct {
	inventory.Source
	n *Node

	mu     sync.Mutex
	reader *inventory.ProcessReader
}

func (g *gpuSource) Poll(ctx context.Context) (*inventory.Inventory, error) {
	inv, err := g.Source.Poll(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.reader.EndPoll()
	out := *inv
	out.Devices = slices.Clone(inv.Devices)
	t := g.n.procs
	vnow := time.Duration(t.vnow.Load())
	t.mu.Lock()
	byDev := map[model.DeviceID][]*demoProc{}
	for _, p := range t.procs {
		byDev[p.dev] = append(byDev[p.dev], p)
	}
	t.mu.Unlock()
	for i := range out.Devices {
		d := &out.Devices[i]
		if d.Name != "cuda" {
			continue
		}
		ps := byDev[d.ID]
		slices.SortFunc(ps, func(a, b *demoProc) int { return int(a.pid) - int(b.pid) })
		tel := &model.Telemetry{MemTotal: model.Some(uint64(d.MemoryBytes))}
		raw := make([]inventory.RawProcess, len(ps))
		var mem uint64
		var util uint32
		for j, p := range ps {
			u := p.utilAt(g.n.Seed, vnow)
			pm := p.memOn(d)
			raw[j] = inventory.RawProcess{PID: p.pid, UsedMem: model.Some(pm)}
			if !d.IsMIG() {
				raw[j].SMUtil, raw[j].MemUtil = model.Some(u), model.Some(u/3)
			}
			mem += pm
			util += u
		}
		tel.Processes = g.reader.Read(raw, g.reader.Mark())
		tel.MemUsed = model.Some(min(mem, uint64(d.MemoryBytes)))
		tel.ProcUtil = model.Some(!d.IsMIG())
		if !d.IsMIG() {
			// NVML reads utilisation, temperature and power on a whole GPU;
			// a MIG instance's handle has none of them, only memory.
			util = min(util, 100)
			tel.UtilGPU, tel.UtilMem = model.Some(util), model.Some(util/3)
			temp, power := thermal(g.n.Seed, d.ID, util, mem, vnow)
			tel.TempC, tel.PowerMW, tel.PowerCapMW = model.Some(temp), model.Some(power), model.Some(uint32(demoPowerCapMW))
		}
		d.Telemetry = tel
	}
	out.Source.Kind = inventory.KindDemo
	out.Source.Detail += "; " + DemoTelemetryNote
	return &out, nil
}

// DemoTelemetryNote is how the demo's device source says its readings are
// made up (in the source detail, next to the mock plugin's).
const DemoTelemetryNote = "demo telemetry (synthetic)"

// The demo GPUs' power envelope, as an A100-SXM4-40GB's: idle draw with
// nothing running, and the board's power limit.
const (
	demoIdleMW     = 52_000
	demoPowerCapMW = 400_000
)

// memOn is the device memory the process uses on d.
func (p *demoProc) memOn(d *model.Device) uint64 {
	if p.memShare == 0 {
		return p.mem
	}
	capF := d.Capacity.Float64()
	if capF <= 0 {
		capF = 1
	}
	return uint64(min(p.memShare/capF, 1) * float64(d.MemoryBytes))
}

// utilAt is the process's SM utilisation at virtual time now: its
// nominal load with a slow wobble of a few points either side (training
// steps, data loading), zero once its work is done. A function of the
// seed, the process and the time only, so a seed replays the same figures.
func (p *demoProc) utilAt(seed int64, now time.Duration) uint32 {
	if p.util == 0 || (p.idleAt > 0 && now >= p.idleAt) {
		return 0
	}
	u := float64(p.util) + 10*noise(seed, uint64(p.pid), now)
	return uint32(min(max(u, 1), 100))
}

// thermal is a GPU's temperature (°C) and power draw (mW) for its
// utilisation and memory in use: an idle floor of its own (no two boards
// run at quite the same temperature) plus what the load adds, with a
// little sensor noise.
func thermal(seed int64, dev model.DeviceID, util uint32, mem uint64, now time.Duration) (tempC, powerMW uint32) {
	h := fnv.New64a()
	h.Write([]byte(dev))
	id := h.Sum64()
	floor := 29 + float64(id%7)
	load := float64(util) / 100
	t := floor + 47*load + 1.5*noise(seed, id, now)
	memLoad := float64(mem) / float64(40<<30)
	p := demoIdleMW + 20_000*min(memLoad, 1) + 300_000*load + 4_000*noise(seed, id^0x706f776572, now)
	return uint32(min(max(t, 20), 95)), uint32(min(max(p, 30_000), demoPowerCapMW))
}

// noise is smooth value noise in [-1, 1] over virtual time: random values
// every four seconds of one stream (seed, key), linearly interpolated.
func noise(seed int64, key uint64, now time.Duration) float64 {
	const step = 4 * time.Second
	b := uint64(max(now, 0) / step)
	f := float64(max(now, 0)%step) / float64(step)
	at := func(b uint64) float64 {
		r := rand.New(rand.NewPCG(uint64(seed)^key, b))
		return 2*r.Float64() - 1
	}
	return at(b)*(1-f) + at(b+1)*f
}

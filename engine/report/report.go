// Package report turns snapshots into the documented machine-readable forms
// that scripts rely on: the full snapshot (schema fgtop.snapshot/v1) and
// Backend.AI's gpu_alloc_map.
package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Schema names the JSON layout SnapshotJSON writes. A change that removes or
// renames a field bumps the version; added fields do not.
const Schema = "fgtop.snapshot/v1"

// Snapshot is the fgtop.snapshot/v1 document. Decimals are strings in
// Python's str(Decimal) form; absent measurements are null; every list has
// a stable order (devices in inventory order, kernels by id, agents in
// config order, issues by severity).
type Snapshot struct {
	Schema       string           `json:"schema"`
	Seq          uint64           `json:"seq"`
	Time         string           `json:"time"`
	Node         string           `json:"node"`
	Mode         string           `json:"mode,omitempty"`
	Config       string           `json:"config,omitempty"`
	Source       model.SourceInfo `json:"source"`
	HostMemBytes int64            `json:"host_mem_bytes,omitempty"`
	// Allocator is how the agents allocate: what a placement preview run
	// away from the node needs besides devices and holdings.
	Allocator Allocator `json:"allocator"`
	// Plugin is the CUDA plugin the GPUs are registered as: its kind, the
	// rule that chose it (source) and where its settings come from.
	Plugin *model.PluginInfo `json:"plugin,omitempty"`
	// IdleKernels counts the kernels holding but idle: holding an
	// accelerator at 0 % for at least IdleAfterS seconds (0: marking off).
	IdleKernels int      `json:"idle_kernels"`
	IdleAfterS  float64  `json:"idle_after_s"`
	Devices     []Device `json:"devices"`
	Unknown     []Usage  `json:"unknown_devices"`
	Kernels     []Kernel `json:"kernels"`
	Agents      []Agent  `json:"agents"`
	Issues      []Issue  `json:"issues"`
	// AllocMap is the absolute map (agents before September 2026);
	// AllocMapRatio the current per-device ratio (AllocRatio).
	AllocMap      map[string]string `json:"alloc_map"`
	AllocMapRatio map[string]string `json:"alloc_map_ratio"`
}

// Allocator is model.Allocator: allocation_mode "fractional" or
// "discrete", quantum_size (fractional mode; "" where unknown), the
// agent.toml's affinity-policy and allocation-order ("" and [] without a
// config).
type Allocator struct {
	AllocationMode  string   `json:"allocation_mode"`
	QuantumSize     string   `json:"quantum_size,omitempty"`
	AffinityPolicy  string   `json:"affinity_policy,omitempty"`
	AllocationOrder []string `json:"allocation_order"`
}

// AllocatorOf spells out a snapshot's allocator settings; the exporter
// uses the same words.
func AllocatorOf(a model.Allocator) Allocator {
	out := Allocator{AllocationMode: "discrete", AffinityPolicy: a.AffinityPolicy, AllocationOrder: []string{}}
	if a.Fractional {
		out.AllocationMode = "fractional"
		if !a.Quantum.IsZero() {
			out.QuantumSize = a.Quantum.String()
		}
	}
	for _, n := range a.AllocationOrder {
		out.AllocationOrder = append(out.AllocationOrder, string(n))
	}
	return out
}

// Device is one device with what is held on it.
type Device struct {
	Key      string `json:"key"`
	Plugin   string `json:"plugin"`
	ID       string `json:"id"`
	Slot     string `json:"slot"`
	SlotType string `json:"slot_type"`
	// Capacity and Free are absent when the capacity is unknown (a
	// fractional plugin whose settings were never read).
	Capacity   *model.Dec        `json:"capacity,omitempty"`
	Held       map[string]string `json:"held"`
	Total      model.Dec         `json:"total"`
	Free       *model.Dec        `json:"free,omitempty"`
	Kernels    int               `json:"kernels"`
	Index      int               `json:"index"`
	Model      string            `json:"model,omitempty"`
	UUID       string            `json:"uuid,omitempty"`
	NUMANode   *int              `json:"numa_node"`
	Parent     string            `json:"parent,omitempty"`
	MemoryB    int64             `json:"memory_bytes,omitempty"`
	Processors int               `json:"processors,omitempty"`
	Telemetry  *Telemetry        `json:"telemetry,omitempty"`
}

// Usage is what is held on a device the inventory does not list.
type Usage struct {
	Key     string            `json:"key"`
	Held    map[string]string `json:"held"`
	Kernels int               `json:"kernels"`
}

// Telemetry mirrors model.Telemetry with null for N/A.
type Telemetry struct {
	MemUsed    *uint64   `json:"mem_used_bytes"`
	MemTotal   *uint64   `json:"mem_total_bytes"`
	UtilGPU    *uint32   `json:"util_gpu_pct"`
	UtilMem    *uint32   `json:"util_mem_pct"`
	TempC      *uint32   `json:"temp_c"`
	PowerMW    *uint32   `json:"power_mw"`
	PowerCapMW *uint32   `json:"power_cap_mw"`
	MIGMode    *bool     `json:"mig_mode"`
	Lost       bool      `json:"lost,omitempty"`
	Errors     []string  `json:"errors,omitempty"`
	Processes  []Process `json:"processes"`
	// ProcUtil: the processes carry per-process utilisation samples (true),
	// or memory only (false); null when processes are not listed.
	ProcUtil *bool `json:"proc_util"`
}

// Process is a process on a device.
type Process struct {
	PID     uint32  `json:"pid"`
	UsedMem *uint64 `json:"used_mem_bytes"`
	// SMUtil and MemUtil: per-process utilisation samples, null where
	// the driver gives none.
	SMUtil  *uint32 `json:"sm_util_pct"`
	MemUtil *uint32 `json:"mem_util_pct"`
	Name    string  `json:"name,omitempty"`
	// StartTicks: start time in clock ticks after boot (/proc/<pid>/stat).
	StartTicks uint64 `json:"start_ticks,omitempty"`
	Container  string `json:"container,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	// Owner: "kernel", "not-backendai", "gone", "pid-reused", "unknown".
	Owner  string `json:"owner,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Kernel is one kernel and its allocation.
type Kernel struct {
	ID          string                       `json:"id"`
	Agent       string                       `json:"agent"`
	Path        string                       `json:"path"`
	State       string                       `json:"state"`
	Slots       map[string]string            `json:"slots"`
	Allocations map[string]map[string]string `json:"allocations"`
	ModTime     string                       `json:"mod_time,omitempty"`
	Legacy      bool                         `json:"legacy,omitempty"`
	Problem     *Issue                       `json:"problem,omitempty"`
	// AgentBy says how the agent was found: "recovery.json",
	// "scratch-root", or "none" (agent is then "").
	AgentBy string `json:"agent_by,omitempty"`
	// From the kernel's recovery.json; absent without one.
	SessionID      string `json:"session_id,omitempty"`
	SessionType    string `json:"session_type,omitempty"`
	OwnerUserID    string `json:"owner_user_id,omitempty"`
	OwnerProjectID string `json:"owner_project_id,omitempty"`
	Image          string `json:"image,omitempty"`
	Architecture   string `json:"architecture,omitempty"`
	// Container is the CID= line's container id.
	Container string `json:"container,omitempty"`
	// Use is allocated against used; absent when nothing lists processes
	// for the devices it holds.
	Use *KernelUse `json:"use,omitempty"`
}

// KernelUse is model.KernelUse: what a kernel's GPU processes use beside
// what it holds.
type KernelUse struct {
	Procs   int     `json:"procs"`
	MemUsed *uint64 `json:"mem_used_bytes"`
	// UtilPct is its busiest device's utilisation by its processes; null
	// when it cannot be told (MemOnly: the driver gives memory only).
	UtilPct   *uint32     `json:"util_pct"`
	MemOnly   bool        `json:"mem_only,omitempty"`
	Idle      bool        `json:"idle"`
	IdleSince string      `json:"idle_since,omitempty"`
	Devices   []DeviceUse `json:"devices"`
}

// DeviceUse is one device in a KernelUse.
type DeviceUse struct {
	Device string    `json:"device"`
	Held   model.Dec `json:"held"`
	// Capacity is absent when the device's capacity is unknown.
	Capacity *model.Dec `json:"capacity,omitempty"`
	Procs    int        `json:"procs"`
	MemUsed  *uint64    `json:"mem_used_bytes"`
	UtilPct  *uint32    `json:"util_pct"`
}

// Agent is one agent with its partition and holdings.
type Agent struct {
	ID          string              `json:"id"`
	ScratchRoot string              `json:"scratch_root,omitempty"`
	Kernels     int                 `json:"kernels"`
	Held        map[string]string   `json:"held"`
	Owns        map[string][]string `json:"owns"`
	Mem         *model.Dec          `json:"mem_bytes,omitempty"`
	// Given is a slot-based partition's amount per slot for the agent.
	Given map[string]string `json:"given,omitempty"`
	// Restart says whether the agent's process runs the agent.toml on
	// disk; absent without a config.
	Restart *Restart `json:"restart,omitempty"`
	// ServiceAddr is the agent's [agent] service-addr; absent without a
	// config.
	ServiceAddr string `json:"service_addr,omitempty"`
	// Health is the last answer of the agent's GET /health; absent before
	// the first check or when none is made.
	Health *AgentHealth `json:"health,omitempty"`
}

// AgentHealth is model.AgentHealth: state "up", "down" or "unreachable".
type AgentHealth struct {
	State   string `json:"state"`
	URL     string `json:"url,omitempty"`
	Status  string `json:"status,omitempty"`
	Version string `json:"version,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Restart is model.Restart.
type Restart struct {
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
	PIDs   []int  `json:"pids,omitempty"`
}

// Issue is a model.Issue with the device spelled out.
type Issue struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Device   string `json:"device,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	Agent    string `json:"agent,omitempty"`
}

func slotMap(r model.ResourceSlot) map[string]string {
	out := make(map[string]string, len(r))
	for k, v := range r {
		out[string(k)] = v.String()
	}
	return out
}

func opt[T any](o model.Opt[T]) *T {
	if !o.Valid {
		return nil
	}
	v := o.V
	return &v
}

func issue(i model.Issue) Issue {
	out := Issue{Severity: i.Severity.String(), Code: i.Code, Message: i.Message, File: i.File, Line: i.Line,
		Kernel: string(i.Kernel), Agent: string(i.Agent)}
	if i.Device.ID != "" {
		out.Device = i.Device.String()
	}
	return out
}

// FromSnapshot builds the v1 document.
func FromSnapshot(s *model.Snapshot) *Snapshot { return fromSnapshot(s, true) }

// fromSnapshot builds the v1 document, its kernels only when withKernels
// (MarshalSnapshot writes them itself).
func fromSnapshot(s *model.Snapshot, withKernels bool) *Snapshot {
	out := &Snapshot{
		Schema: Schema, Seq: s.Seq, Time: s.Time.UTC().Format(time.RFC3339Nano), Node: s.Node, Mode: s.Mode,
		Config: s.ConfigPath, Source: s.Source, HostMemBytes: s.HostMemBytes, Allocator: AllocatorOf(s.Allocator),
		IdleKernels: s.IdleKernels, IdleAfterS: s.IdleAfter.Seconds(), Plugin: s.Plugin,
		Devices: []Device{}, Unknown: []Usage{}, Kernels: []Kernel{}, Agents: []Agent{}, Issues: []Issue{},
		AllocMap: AllocMapAbsolute(s), AllocMapRatio: AllocMap(s),
	}
	known := map[model.DeviceKey]bool{}
	for i := range s.Devices {
		d := &s.Devices[i]
		known[d.Key()] = true
		u := s.Usage[d.Key()]
		total := u.Total()
		dev := Device{
			Key: d.Key().String(), Plugin: string(d.Name), ID: string(d.ID), Slot: string(d.Slot), SlotType: string(d.SlotType),
			Held: map[string]string{}, Total: total,
			Index: d.Index, Model: d.Model, UUID: d.UUID, Parent: string(d.Parent), MemoryB: d.MemoryBytes, Processors: d.Processors,
		}
		if !d.CapacityUnknown {
			c, free := d.Capacity, d.Capacity.Sub(total)
			dev.Capacity, dev.Free = &c, &free
		}
		if d.NUMANode >= 0 {
			n := d.NUMANode
			dev.NUMANode = &n
		}
		if u != nil {
			dev.Held = slotMap(u.Held)
			dev.Kernels = u.Kernels
		}
		if t := d.Telemetry; t != nil {
			tj := &Telemetry{MemUsed: opt(t.MemUsed), MemTotal: opt(t.MemTotal), UtilGPU: opt(t.UtilGPU), UtilMem: opt(t.UtilMem),
				TempC: opt(t.TempC), PowerMW: opt(t.PowerMW), PowerCapMW: opt(t.PowerCapMW), MIGMode: opt(t.MIGMode),
				Lost: t.Lost, Errors: t.Errors, Processes: []Process{}, ProcUtil: opt(t.ProcUtil)}
			for _, p := range t.Processes {
				tj.Processes = append(tj.Processes, Process{PID: p.PID, UsedMem: opt(p.UsedMem), SMUtil: opt(p.SMUtil), MemUtil: opt(p.MemUtil),
					Name: p.Name, StartTicks: p.Start, Container: p.Container, Kernel: string(p.Kernel), Owner: string(p.Owner), Detail: p.Detail})
			}
			dev.Telemetry = tj
		}
		out.Devices = append(out.Devices, dev)
	}
	var unknown []model.DeviceKey
	for k := range s.Usage {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.SortFunc(unknown, func(a, b model.DeviceKey) int {
		if a.String() < b.String() {
			return -1
		}
		if a.String() > b.String() {
			return 1
		}
		return 0
	})
	for _, k := range unknown {
		u := s.Usage[k]
		out.Unknown = append(out.Unknown, Usage{Key: k.String(), Held: slotMap(u.Held), Kernels: u.Kernels})
	}
	if withKernels {
		for _, k := range s.Kernels() {
			out.Kernels = append(out.Kernels, kernelDoc(k))
		}
	}
	for _, a := range s.Agents {
		aj := Agent{ID: string(a.ID), ScratchRoot: a.ScratchRoot, Kernels: a.Kernels, Held: slotMap(a.Held)}
		if a.Restart.State != "" {
			aj.Restart = &Restart{State: string(a.Restart.State), Detail: a.Restart.Detail, PIDs: a.Restart.PIDs}
		}
		aj.ServiceAddr = a.ServiceAddr
		if h := a.Health; h.State != "" {
			aj.Health = &AgentHealth{State: string(h.State), URL: h.URL, Status: h.Status, Version: h.Version, Detail: h.Detail}
		}
		if a.Owns != nil {
			aj.Owns = map[string][]string{}
			for name, ids := range a.Owns {
				l := make([]string, len(ids))
				for i, id := range ids {
					l[i] = string(id)
				}
				aj.Owns[string(name)] = l
			}
		}
		if !a.Mem.IsZero() {
			m := a.Mem
			aj.Mem = &m
		}
		if a.Given != nil {
			aj.Given = slotMap(a.Given)
		}
		out.Agents = append(out.Agents, aj)
	}
	for _, i := range s.Issues {
		out.Issues = append(out.Issues, issue(i))
	}
	return out
}

// kernelDoc is one kernel of the document.
func kernelDoc(k *model.Kernel) Kernel {
	kj := Kernel{ID: string(k.ID), Agent: string(k.Agent), Path: k.Path, State: string(k.State),
		Slots: slotMap(k.Slots), Allocations: map[string]map[string]string{}, Legacy: k.Legacy, AgentBy: string(k.AgentBy)}
	if r := k.Record; r != nil {
		kj.SessionID, kj.SessionType, kj.OwnerUserID, kj.OwnerProjectID = r.SessionID, r.SessionType, r.OwnerUserID, r.OwnerProjectID
		kj.Image, kj.Architecture = r.Image, r.Architecture
	}
	if !k.ModTime.IsZero() {
		kj.ModTime = k.ModTime.UTC().Format(time.RFC3339Nano)
	}
	kj.Container = k.Container
	if u := k.Use; u != nil {
		kj.Use = kernelUseDoc(u)
	}
	for slot, devs := range k.Alloc {
		m := make(map[string]string, len(devs))
		for id, v := range devs {
			m[string(id)] = v.String()
		}
		kj.Allocations[string(slot)] = m
	}
	if k.Problem != nil {
		p := issue(*k.Problem)
		kj.Problem = &p
	}
	return kj
}

func kernelUseDoc(u *model.KernelUse) *KernelUse {
	uj := &KernelUse{Procs: u.Procs, MemUsed: opt(u.MemUsed), UtilPct: opt(u.Util), MemOnly: u.MemOnly, Idle: u.Idle,
		Devices: make([]DeviceUse, len(u.Devices))}
	if !u.IdleSince.IsZero() {
		uj.IdleSince = u.IdleSince.UTC().Format(time.RFC3339Nano)
	}
	for i, d := range u.Devices {
		uj.Devices[i] = DeviceUse{Device: d.Device.String(), Held: d.Held, Procs: d.Procs,
			MemUsed: opt(d.MemUsed), UtilPct: opt(d.Util)}
		if !d.CapacityUnknown {
			c := d.Capacity
			uj.Devices[i].Capacity = &c
		}
	}
	return uj
}

// AllocMap is Backend.AI's current gpu_alloc_map for the snapshot's
// kernels (PR #14327): device id → the per-device ratio quantized to four
// places, e.g. "0.2500" (model.Snapshot.AllocRatio).
func AllocMap(s *model.Snapshot) map[string]string {
	m := s.AllocRatio()
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = model.QuantizeAllocRatio(v).String()
	}
	return out
}

// AllocMapAbsolute is the map agents before September 2026 report: device
// id → str(Decimal) of cuda.shares + cuda.device.
func AllocMapAbsolute(s *model.Snapshot) map[string]string {
	m := s.AllocMap()
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = v.String()
	}
	return out
}

// Marshal encodes v as indented JSON without HTML escaping, ending in a
// newline.
func Marshal(v any, indent bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if !indent {
		return buf.Bytes(), nil
	}
	b := buf.Bytes()
	return indentCompact(make([]byte, 0, len(b)+len(b)/2), b, "  "), nil
}

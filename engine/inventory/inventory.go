// Package inventory reads a node's devices: GPUs from NVML (go-nvml, cgo
// builds on Linux only) or from a Backend.AI mock-accelerator.toml, plus the
// host's CPU cores and memory. Every source answers Poll with a complete
// Inventory in Backend.AI's terms (device ids, slots, capacities), cheap
// enough to call once a second.
//
// Device ids follow the plugin being mirrored (domain/backendai.md §7):
//
//   - mock: mother_uuid verbatim; a MIG slice "MIG-<mother_uuid>/<list index>/0".
//   - nvml, IDStyle "uuid" (default): "GPU-<uuid>", the enterprise fGPU
//     plugin's form; IDStyle "index": "0", "1", … as cuda_open registers them.
//     MIG slices keep NVML's "MIG-…" UUID in both styles.
//   - cpu: the core number ("0", "5"); mem: "root".
package inventory

import (
	"context"
	"sync"

	"github.com/fgtop/fgtop/model"
)

// Source kinds (model.SourceInfo.Kind).
const (
	KindNVML = "nvml"
	KindMock = "mock"
	// KindDemo is the demo node: the mock plugin's devices with
	// synthetic telemetry.
	KindDemo = "demo"
	// KindNone: no accelerator source, host CPU and memory only.
	KindNone = "none"
)

// Source health (model.SourceInfo.Health).
const (
	HealthOK = "ok"
	// HealthDegraded: the source works but something is wrong (a GPU is
	// lost, a device could not be enumerated).
	HealthDegraded = "degraded"
	// HealthUnavailable: no accelerator devices can be read at all (NVML
	// failed to initialise, the mock plugin is disabled); host devices are
	// still listed.
	HealthUnavailable = "unavailable"
)

// Inventory is one reading of a device source.
//
// Treat it as read-only: sources hand out the same backing arrays from poll
// to poll while nothing changed, which is what keeps polling cheap.
type Inventory struct {
	// Devices lists accelerators first (index order, MIG slices right after
	// their GPU), then CPU cores (by core number), then the mem "root".
	Devices []model.Device
	// SlotTypes is the known_slot_types this node would register.
	SlotTypes model.SlotTypes
	// Source says where the accelerators come from and how healthy that is.
	Source model.SourceInfo
	Issues []model.Issue
	// HostMemBytes is the host's MemTotal (0 when unknown).
	HostMemBytes int64
	// Fractional is set in fGPU fractional mode (slot "<name>.shares").
	Fractional bool
	// Quantum is quantum_size in fractional mode, zero otherwise.
	Quantum model.Dec
	// Plugin says which CUDA plugin the devices are registered as (set by
	// a plugin-aware source, nil otherwise).
	Plugin *model.PluginInfo
	// AgentUnregistered are, where the agents' device_masks differ, the
	// listed GPUs each agent's own plugin does not register (its mask
	// leaves them out): its kernels holding one are not on a device of
	// its. Nil when every agent registers every GPU listed.
	AgentUnregistered map[model.AgentID]map[model.DeviceID]bool
	// Unidentified are the GPUs an NVML source with UUID ids cannot list:
	// NVML has them but cannot read their UUID, their id there (a GPU lost
	// before fgtop started). A plugin that registers GPUs by index
	// (cuda_open) knows them by it and lists them (plugin.Source).
	Unidentified []UnidentifiedGPU
}

// UnidentifiedGPU is a GPU NVML lists whose UUID cannot be read.
type UnidentifiedGPU struct {
	// Devices are the GPU and its MIG slices as an NVML source with index
	// ids lists them.
	Devices []model.Device
	// NotListed is the issue in Inventory.Issues that says the GPU is left
	// out; Issues are what a source with index ids says of it instead
	// (that it is lost).
	NotListed model.Issue
	Issues    []model.Issue
}

// Notifier is implemented by a Source whose reading can change between
// polls for reasons of its own (plugin settings changed in etcd): the
// engine polls at once when Changed fires instead of waiting for the
// next tick.
type Notifier interface {
	Changed() <-chan struct{}
}

// Source produces Inventories.
type Source interface {
	// Poll reads the devices now. It is cheap enough to call once a second.
	// An error means no reading at all; partial failures are Issues and
	// Source.Health instead.
	Poll(ctx context.Context) (*Inventory, error)
	// Close releases what the source holds (NVML's Shutdown).
	Close() error
}

// accel is an accelerator source's part of a reading, before the host's
// devices are appended.
type accel struct {
	devices    []model.Device
	slotTypes  model.SlotTypes
	source     model.SourceInfo
	issues     []model.Issue
	fractional bool
	quantum    model.Dec
	// unidentified: Inventory.Unidentified.
	unidentified []UnidentifiedGPU
}

// assemble joins an accelerator reading and a host reading into one
// Inventory. host may be nil (no host devices).
func assemble(a *accel, host *HostInfo) *Inventory {
	inv := &Inventory{
		Source:     a.source,
		Fractional: a.fractional,
		Quantum:    a.quantum,
		// Made anew each poll that has any: shared, never changed.
		Unidentified: a.unidentified,
	}
	n := len(a.devices)
	if host != nil {
		n += len(host.Devices)
	}
	inv.Devices = make([]model.Device, 0, n)
	inv.Devices = append(inv.Devices, a.devices...)
	inv.SlotTypes = make(model.SlotTypes, len(a.slotTypes)+2)
	for k, v := range a.slotTypes {
		inv.SlotTypes[k] = v
	}
	inv.Issues = append(inv.Issues, a.issues...)
	if host != nil {
		inv.Devices = append(inv.Devices, host.Devices...)
		inv.HostMemBytes = host.MemBytes
		inv.Issues = append(inv.Issues, host.Issues...)
		// cpu and mem are intrinsic: the agent registers them whatever
		// the host reading says.
	}
	inv.SlotTypes[model.SlotCPU] = model.SlotTypeCount
	inv.SlotTypes[model.SlotMem] = model.SlotTypeBytes
	return inv
}

// hostOnly is the source used when there is no accelerator source: the
// host's CPU cores and memory, with the reason recorded.
type hostOnly struct {
	host   *Host
	info   model.SourceInfo
	issues []model.Issue

	// last caches the assembled reading for the last HostInfo seen.
	mu       sync.Mutex
	lastHost *HostInfo
	last     *Inventory
}

// NewHostOnly returns a Source listing only the host's CPU cores and memory,
// with Source Kind "none" and Health "unavailable". detail says why there
// are no accelerators; issues (for example a classified NVML Init failure)
// are reported with every poll.
func NewHostOnly(host *Host, detail string, issues ...model.Issue) Source {
	if host == nil {
		host = NewHost(HostOptions{})
	}
	return &hostOnly{
		host:   host,
		info:   model.SourceInfo{Kind: KindNone, Health: HealthUnavailable, Detail: detail},
		issues: issues,
	}
}

func (h *hostOnly) Poll(ctx context.Context) (*Inventory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hi := h.host.Read()
	if hi != h.lastHost || h.last == nil {
		h.last = assemble(&accel{source: h.info, issues: h.issues}, hi)
		h.lastHost = hi
	}
	inv := *h.last
	return &inv, nil
}

func (h *hostOnly) Close() error { return nil }

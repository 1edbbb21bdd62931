package model

import (
	"slices"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Snapshot is the engine's complete, immutable account of the node at one
// moment. Everything in it is shared between subscribers: never mutate it,
// nor any slice or map its methods return. Snapshots are read by many
// goroutines at once; their lazy views (Kernels, Holdings) are built
// once, race-free, on first use.
//
// Sharing contract: between two snapshots the engine reuses every
// *Kernel and *DeviceUsage that did not change (same pointer), and gives a
// changed one a new pointer. Consumers may cache derived data by pointer: a
// device's Holdings change only with its *DeviceUsage.
//
// Cost contract: publishing a snapshot costs the engine O(1) in the number
// of kernels: the kernel list and each device's holdings are persistent
// sequences (KernelSeq, HoldingSeq) that share all but one chunk with the
// previous snapshot's. A reader pays O(n) once per snapshot (or device) it
// reads a flat view of (Kernels, Holdings); Kernel, NumKernels,
// NumHoldings and KernelSeq().Each build none.
type Snapshot struct {
	Seq  uint64
	Time time.Time
	// Gen is the content's generation, set by the engine that built the
	// snapshot: two snapshots with the same non-zero Gen are equal in
	// everything but Seq and Time (an inventory poll that read what the
	// one before it read), so a subscriber that has derived one need not
	// derive the other. Zero says nothing (a snapshot built elsewhere: a
	// record's, a test's). Not in the JSON: a snapshot read back is
	// compared afresh.
	Gen  uint64 `json:"-"`
	Node string
	// Source describes where devices come from and how healthy that is.
	Source SourceInfo
	// Mode is the partition's allocation mode ("shared", "auto-split",
	// "manual"), "" when no agent config is loaded.
	Mode string
	// ConfigPath is the agent.toml in use ("" without one).
	ConfigPath string
	// ConfigHash is the hex SHA-256 of the agent.toml as the engine last
	// read it (it follows the file), ConfigUnusable while the file on disk
	// cannot be used, "" without a config. A console learns from it that a
	// partition draft made on other bytes went stale, with no read of its own.
	ConfigHash string `json:",omitempty"`
	// DraftFormat says the agent.toml is in the BEP-1044 device-based
	// form, which Backend.AI main cannot load: every screen says so.
	DraftFormat bool     `json:",omitempty"`
	Devices     []Device // inventory order
	Agents      []Agent  // config order
	Usage       map[DeviceKey]*DeviceUsage
	Issues      []Issue // sorted by severity (highest first), then code, file
	// HostMemBytes is the host's total memory (0 when unknown).
	HostMemBytes int64
	// Allocator is how the agents allocate (placement settings).
	Allocator Allocator
	// Plugin is the CUDA plugin the devices are registered as, and why;
	// nil when no NVML GPUs are mirrored through a plugin.
	Plugin *PluginInfo `json:",omitempty"`
	// IdleKernels is the number of kernels holding but idle (Kernel.Use.Idle):
	// holding an accelerator at 0 % utilisation for at least IdleAfter.
	IdleKernels int
	// IdleAfter is how long a kernel must stay at 0 % to count as idle
	// (0 when idle marking is off).
	IdleAfter time.Duration
	// SummaryKernels, when not nil, is the node's own count of its
	// kernels where the snapshot holds a summary of them instead (a node
	// seen through Prometheus: each agent's holdings as one row).
	SummaryKernels *int `json:",omitempty"`

	kernels *KernelSeq // sorted by ID; nil is empty
}

// SameContent reports whether s and o are one content (the same non-zero
// Gen: a poll that read what the one before it read), so what was derived
// from one holds for the other.
func (s *Snapshot) SameContent(o *Snapshot) bool {
	return s == o || s != nil && o != nil && s.Gen != 0 && s.Gen == o.Gen
}

// ConfigUnusable is Snapshot.ConfigHash while the agent.toml changed on
// disk into something the engine cannot use (it keeps the partition it
// last read): no draft's base has this hash.
const ConfigUnusable = "unusable"

// SourceInfo says where the device inventory comes from.
type SourceInfo struct {
	Kind   string `json:"kind"`   // "nvml", "mock", "demo", "none"
	Health string `json:"health"` // "ok", "degraded", "unavailable"
	Detail string `json:"detail,omitempty"`
}

// Holding is one kernel's amount of one slot on one device.
type Holding struct {
	Kernel KernelID
	Agent  AgentID
	Slot   SlotName
	Amount Dec
}

// DeviceUsage is everything held on one device.
type DeviceUsage struct {
	Key DeviceKey
	// Held is the total per slot over all kernels.
	Held ResourceSlot
	// Kernels is the number of kernels holding anything on the device, CPU
	// cores and memory included.
	Kernels int
	// ByAgent splits Held by the kernels' agent ("" for kernels no
	// record or root attributes): what each agent's own allocator counts
	// on the device (Backend.AI's alloc maps know only their own
	// kernels). Zero amounts are left out.
	ByAgent map[AgentID]ResourceSlot

	holdings *HoldingSeq // nil is none
}

// Holdings returns what each kernel holds on the device, sorted by kernel
// then slot. Only accelerators carry holdings (CarriesHoldings): CPU cores
// and memory keep totals only. The slice is built on first use and shared
// by every reader: never modify it.
func (u *DeviceUsage) Holdings() []Holding {
	if u == nil {
		return nil
	}
	return u.holdings.Slice()
}

// NumHoldings is the number of holdings, without building the slice.
func (u *DeviceUsage) NumHoldings() int {
	if u == nil {
		return 0
	}
	return u.holdings.Len()
}

// SetHoldings sets the holdings (in any order). It is for building a
// usage before it is shared: tests, fakes, tools.
func (u *DeviceUsage) SetHoldings(hs []Holding) { u.holdings = NewHoldingSeq(hs) }

// SetHoldingSeq sets the holdings from a published sequence; like
// SetHoldings, only before the usage is shared.
func (u *DeviceUsage) SetHoldingSeq(q *HoldingSeq) { u.holdings = q }

// Total returns what counts against the device's capacity: the sum over
// every slot held on it. For a CUDA GPU that is cuda.shares + cuda.device,
// scan_gpu_alloc_map's rule.
func (u *DeviceUsage) Total() Dec {
	if u == nil {
		return Zero
	}
	return Sum(valuesOf(u.Held)...)
}

func valuesOf(r ResourceSlot) []Dec {
	out := make([]Dec, 0, len(r))
	for _, n := range r.Names() {
		out = append(out, r[n])
	}
	return out
}

// Device returns the device with key k, or nil.
func (s *Snapshot) Device(k DeviceKey) *Device {
	for i := range s.Devices {
		if s.Devices[i].Key() == k {
			return &s.Devices[i]
		}
	}
	return nil
}

// Kernels returns the kernels sorted by ID. The slice is built on first
// use and shared by every reader of the snapshot: never modify it.
func (s *Snapshot) Kernels() []*Kernel { return s.kernels.Slice() }

// NumKernels is the number of kernels.
func (s *Snapshot) NumKernels() int { return s.kernels.Len() }

// Kernel returns the kernel with the id, or nil.
func (s *Snapshot) Kernel(id KernelID) *Kernel { return s.kernels.Get(id) }

// KernelSeq returns the kernels as the engine keeps them (nil when there
// are none).
func (s *Snapshot) KernelSeq() *KernelSeq { return s.kernels }

// Holdings returns the device's holdings (DeviceUsage.Holdings); nil for a
// device nothing is held on.
func (s *Snapshot) Holdings(k DeviceKey) []Holding { return s.Usage[k].Holdings() }

// SetKernels sets the kernels (in any order; of equal IDs the last counts).
// It is for building a snapshot before it is shared: tests, fakes, tools.
func (s *Snapshot) SetKernels(ks []*Kernel) { s.kernels = NewKernelSeq(ks) }

// SetKernelSeq sets the kernels from a published sequence; like
// SetKernels, only before the snapshot is shared.
func (s *Snapshot) SetKernelSeq(q *KernelSeq) { s.kernels = q }

// AllocMap is what Backend.AI's scan_gpu_alloc_map returned for these
// kernels before September 2026 (the absolute map, for older agents): per
// device id, the sum of cuda.shares and cuda.device; devices no kernel lists
// are absent.
func (s *Snapshot) AllocMap() map[DeviceID]Dec {
	out := map[DeviceID]Dec{}
	s.kernels.Each(func(k *Kernel) {
		for _, slot := range []SlotName{SlotCUDAShares, SlotCUDADevice} {
			for id, v := range k.Alloc[slot] {
				out[id] = out[id].Add(v)
			}
		}
	})
	return out
}

// AllocRatio is Backend.AI's current gpu_alloc_map (PR #14327, 26.4 and
// 26.8 backports) before it is quantized: per device id, the sum over every
// slot under the cuda device (shares, whole devices, MIG slots) of each
// kernel's amount on it divided by the device's capacity for that slot, in
// Python's 28-digit context; the raw amount where that capacity is unknown
// or not positive. Devices no kernel lists under cuda are absent; so are
// cpu and mem, and devices whose capacity fgtop cannot know
// (AllocRatioUnknown): their ratio would be an amount over a capacity of 1
// nobody gave. QuantizeAllocRatio gives the value upstream prints.
func (s *Snapshot) AllocRatio() map[DeviceID]Dec {
	out := map[DeviceID]Dec{}
	for k, u := range s.Usage {
		if k.Name != "cuda" || len(u.Held) == 0 || s.AllocRatioUnknown(k.ID) {
			continue
		}
		out[k.ID] = s.DeviceAllocRatio(k.ID)
	}
	return out
}

// DeviceAllocRatio is one device's AllocRatio value: per slot under cuda,
// what the kernels hold on it over the device's capacity for the slot (the
// raw amount where that is unknown or not positive), summed.
func (s *Snapshot) DeviceAllocRatio(id DeviceID) Dec {
	u := s.Usage[DeviceKey{Name: "cuda", ID: id}]
	if u == nil {
		return Zero
	}
	total := Zero
	for _, slot := range u.Held.Names() {
		v := u.Held[slot]
		for i := range s.Devices {
			d := &s.Devices[i]
			if d.Name == "cuda" && d.ID == id && d.Slot == slot && d.Capacity.Sign() > 0 {
				if q, err := v.Quo(d.Capacity); err == nil {
					v = q
				}
				break
			}
		}
		total = total.Add(v)
	}
	return total
}

// AllocRatioUnknown reports whether something is held on cuda device id
// and the device's capacity is unknown (Device.CapacityUnknown: the
// fractional plugin's settings were never read, or the mock plugin's, so
// that even its slot is a guess and shares held on a GPU guessed whole
// are no ratio over its 1), so the device's AllocRatio cannot be told.
func (s *Snapshot) AllocRatioUnknown(id DeviceID) bool {
	u := s.Usage[DeviceKey{Name: "cuda", ID: id}]
	if u == nil || len(u.Held) == 0 {
		return false
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		if d.Name == "cuda" && d.ID == id && d.CapacityUnknown {
			return true
		}
	}
	return false
}

// QuantizeAllocRatio rounds an AllocRatio value as upstream prints it:
// four decimal places (Decimal.quantize(Decimal("0.0001")), Python's
// default ROUND_HALF_EVEN), so 1/3 is "0.3333" and 0.25 is "0.2500".
func QuantizeAllocRatio(v Dec) Dec {
	q, err := v.Quantize(-4, apd.RoundHalfEven)
	if err != nil {
		return v
	}
	return q
}

func sortKeys(ks []DeviceKey) {
	slices.SortFunc(ks, func(a, b DeviceKey) int {
		if a.Name != b.Name {
			if a.Name < b.Name {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}

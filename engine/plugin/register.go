package plugin

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// Capacities is --fgpu-capacity: a share count for every GPU, or per
// device. Per-device keys match a GPU's id as the fractional plugin names
// it ("GPU-<uuid>"), its bare UUID, or its index.
type Capacities struct {
	All       model.Dec
	HasAll    bool
	PerDevice map[string]model.Dec
}

// Empty reports whether nothing is overridden.
func (c Capacities) Empty() bool { return !c.HasAll && len(c.PerDevice) == 0 }

// ParseCapacities reads --fgpu-capacity: "N" for every GPU, or
// "DEVICE=N,DEVICE=N" (a bare N among them sets the rest). N is a
// non-negative decimal with at most two places, as the plugin rounds.
func ParseCapacities(s string) (Capacities, error) {
	var c Capacities
	if len(s) > 64<<10 {
		return c, fmt.Errorf("too long")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return c, fmt.Errorf("empty: want N or DEVICE=N,...")
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		dev, num, per := strings.Cut(item, "=")
		if !per {
			num = dev
		}
		d, err := model.ParseDec(strings.TrimSpace(num))
		if err != nil || d.Sign() < 0 || len(num) > 32 {
			return Capacities{}, fmt.Errorf("%q: want a share count such as 16.5", item)
		}
		if d.Exponent() < -2 {
			return Capacities{}, fmt.Errorf("%q: at most two decimal places (the plugin rounds to 0.01)", item)
		}
		if !per {
			if c.HasAll {
				return Capacities{}, fmt.Errorf("%q: a share count for every GPU given twice", item)
			}
			c.All, c.HasAll = d, true
			continue
		}
		dev = strings.TrimSpace(dev)
		if dev == "" {
			return Capacities{}, fmt.Errorf("%q: want DEVICE=N", item)
		}
		if c.PerDevice == nil {
			c.PerDevice = map[string]model.Dec{}
		}
		if _, dup := c.PerDevice[dev]; dup {
			return Capacities{}, fmt.Errorf("device %s given twice", dev)
		}
		c.PerDevice[dev] = d
	}
	return c, nil
}

// of returns the override for a GPU, if any, and the per-device key that
// gave it ("" for the value for every GPU).
func (c Capacities) of(d *model.Device) (model.Dec, string, bool) {
	for _, k := range []string{string(d.ID), "GPU-" + d.UUID, d.UUID, strconv.Itoa(d.Index)} {
		if v, ok := c.PerDevice[k]; ok && k != "" {
			return v, k, true
		}
	}
	return c.All, "", c.HasAll
}

// Registration is the devices as a plugin registers them.
type Registration struct {
	Devices []model.Device
	// Masked are the GPUs device_mask leaves out (their NVML UUIDs).
	Masked []string
	Issues []model.Issue
	// IDs maps a GPU's id as given to the id it is registered by, where
	// they differ (cuda_open's index): an issue the device source made
	// names the GPU by the former.
	IDs map[model.DeviceID]model.DeviceID
	// Fractional and Quantum: the fractional plugin's alloc maps; Quantum
	// is zero, QuantumWhy saying why, where the settings do not give it.
	Fractional bool
	Quantum    model.Dec
	QuantumWhy string
}

// Register turns NVML's GPUs (ids "GPU-<uuid>", slot cuda.device, each
// with Index, UUID, MemoryBytes and Processors; MIG slices, before or
// after their GPU, with Parent its id) into what the plugin of kind
// registers with settings s (nil: never read) and capacity overrides c.
// Devices that are not cuda pass through.
//
//   - open (cuda_open): ids are the index ("0", "1", …, NVML's order, which
//     is PCI bus order); device_mask holds bare UUIDs, and a masked GPU is
//     skipped without renumbering the rest; slot cuda.device, capacity 1.
//   - fractional: ids "GPU-<uuid>"; device_mask entries match the id or
//     the bare UUID (assumed); slot cuda.shares with the assumed capacity
//     rule (Settings.Capacity) unless c overrides it; unknown (never a
//     made-up 1) when the settings were never read or the SM count is
//     unknown.
//
// Under the fractional plugin MIG slices keep their own ids and slots
// (cuda.device:<profile>-mig, capacity 1) under their GPU's new id, and
// go with a masked GPU; a GPU in MIG mode has no shares (capacity 0,
// unless --fgpu-capacity names it): its work runs in its slices. cuda_open
// registers no slice (its one slot is cuda.device), with an info issue.
func Register(devs []model.Device, kind string, s *Settings, c Capacities) Registration {
	var r Registration
	mask := map[string]bool{}
	for _, m := range maskItems(s, kind) {
		mask[m] = true
	}
	used := map[string]bool{}
	capUsed := map[string]bool{}
	newID := map[model.DeviceID]model.DeviceID{}
	dropped := map[model.DeviceID]bool{}
	var migOn, registered []string
	var unknownWhy byWhy
	migUnregistered := map[model.DeviceID]int{}
	// A GPU in MIG mode runs CUDA work only in its MIG slices: the
	// fractional plugin registers those (as the mock does, whose shares
	// are the sum over non-MIG devices), and no share on the GPU itself
	// can be placed.
	hasMIG := map[model.DeviceID]bool{}
	for i := range devs {
		if devs[i].Name == "cuda" && devs[i].IsMIG() {
			hasMIG[devs[i].Parent] = true
		}
	}
	r.Devices = make([]model.Device, 0, len(devs))
	for _, d := range devs {
		if d.Name != "cuda" {
			r.Devices = append(r.Devices, d)
			continue
		}
		if d.IsMIG() {
			// Its GPU may come after it: judged once every GPU is.
			r.Devices = append(r.Devices, d)
			continue
		}
		bare := d.UUID
		switch kind {
		case model.PluginCUDAOpen:
			if bare != "" && mask[bare] {
				used[bare] = true
				dropped[d.ID] = true
				r.Masked = append(r.Masked, "GPU-"+bare)
				continue
			}
			id := model.DeviceID(strconv.Itoa(d.Index))
			newID[d.ID] = id
			d.ID, d.Slot, d.SlotType, d.Capacity, d.CapacityUnknown = id, model.SlotCUDADevice, model.SlotTypeCount, model.One, false
		default:
			full := "GPU-" + bare
			if bare != "" && (mask[bare] || mask[full]) {
				used[bare], used[full] = mask[bare], mask[full]
				dropped[d.ID] = true
				r.Masked = append(r.Masked, full)
				continue
			}
			d.Slot, d.SlotType = model.SlotCUDAShares, model.SlotTypeCount
			registered = append(registered, fmt.Sprintf("%s (index %d)", d.ID, d.Index))
			v, k, ok := c.of(&d)
			mig := hasMIG[d.ID] || (d.Telemetry != nil && d.Telemetry.MIGMode.Valid && d.Telemetry.MIGMode.V)
			if ok && k != "" {
				// The operator named this GPU: their figure wins.
				capUsed[k] = true
				d.Capacity, d.CapacityUnknown = v, false
			} else if mig {
				d.Capacity, d.CapacityUnknown = model.Zero, false
				migOn = append(migOn, full)
			} else if ok {
				d.Capacity, d.CapacityUnknown = v, false
			} else if v, ok := s.Capacity(d.MemoryBytes, d.Processors); ok {
				d.Capacity, d.CapacityUnknown = v, false
			} else {
				d.Capacity, d.CapacityUnknown = model.Zero, true
				switch {
				case s == nil:
					unknownWhy = unknownWhy.add("the plugin settings were never read", string(d.ID))
				case s.BadUnits:
					unknownWhy = unknownWhy.add("unit_mem or unit_proc cannot be used", string(d.ID))
				case d.Processors <= 0:
					unknownWhy = unknownWhy.add("NVML does not tell its SM count", string(d.ID))
				default:
					unknownWhy = unknownWhy.add("NVML does not tell its memory size", string(d.ID))
				}
			}
		}
		r.Devices = append(r.Devices, d)
	}
	kept := r.Devices[:0]
	for _, d := range r.Devices {
		if d.Name == "cuda" && d.IsMIG() {
			if dropped[d.Parent] {
				continue
			}
			if id, ok := newID[d.Parent]; ok {
				d.Parent = id
			}
			if kind == model.PluginCUDAOpen {
				// cuda_open has one slot, cuda.device, one device per CUDA
				// index: a MIG slice is no device of its.
				migUnregistered[d.Parent]++
				continue
			}
		}
		kept = append(kept, d)
	}
	r.Devices = kept
	if kind == model.PluginCUDAFractional {
		// Unknown stays zero: the plugin's default is the default only
		// where the key is unset, which settings never read cannot say.
		r.Fractional = true
		switch {
		case s == nil:
			r.QuantumWhy = "the plugin settings were never read"
		case s.BadQuantum:
			r.QuantumWhy = "its quantum_size is not a positive decimal"
		default:
			r.Quantum = s.Quantum
		}
	}
	// A mistyped --fgpu-capacity key would otherwise leave that GPU on
	// the assumed rule without a word.
	switch {
	case kind == model.PluginCUDAFractional:
		var stray []string
		for k := range c.PerDevice {
			if !capUsed[k] {
				stray = append(stray, k)
			}
		}
		if len(stray) > 0 {
			sort.Strings(stray)
			there := "no GPU is registered"
			if len(registered) > 0 {
				there = "registered: " + strings.Join(registered, ", ")
			}
			r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssueFlagUnmatched,
				Message: fmt.Sprintf("--fgpu-capacity names %s, which is no GPU registered on this node (give GPU-<uuid>, the bare UUID or the index of a GPU that is not masked; %s)", strings.Join(stray, ", "), there)})
		}
	case !c.Empty():
		r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssueFlagUnmatched,
			Message: "--fgpu-capacity is not used: the GPUs are registered as cuda_open registers them (cuda.device, capacity 1 each), which has no shares"})
	}
	if kind == model.PluginCUDAOpen {
		if models := gpuModels(devs); len(models) > 1 {
			// CUDA's default order is FASTEST_FIRST ("the rest
			// unspecified"); only identical GPUs or PCI_BUS_ID make it
			// NVML's.
			r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
				Message: fmt.Sprintf("GPUs of different models (%s): cuda_open's ids are the CUDA runtime's order, fastest first unless the agent runs with CUDA_DEVICE_ORDER=PCI_BUS_ID, and fgtop numbers the GPUs in PCI bus order (NVML's), so an id may be another GPU than the one shown under it", strings.Join(models, ", "))})
		}
	}
	if len(newID) > 0 {
		r.IDs = newID
	}
	if len(migUnregistered) > 0 {
		var gpus []string
		named := map[model.DeviceID]bool{}
		for _, d := range r.Devices {
			if n := migUnregistered[d.ID]; n > 0 && d.Name == "cuda" && !d.IsMIG() {
				gpus = append(gpus, fmt.Sprintf("GPU %s (%d)", d.ID, n))
				named[d.ID] = true
			}
		}
		// A slice whose GPU NVML does not list is still named, by the
		// id it gives.
		var orphans []string
		for p, n := range migUnregistered {
			if !named[p] {
				orphans = append(orphans, fmt.Sprintf("GPU %s (%d)", p, n))
			}
		}
		sort.Strings(orphans)
		gpus = append(gpus, orphans...)
		r.Issues = append(r.Issues, model.Issue{Severity: model.SevInfo, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("MIG slices of %s not registered: cuda_open registers only cuda.device, one per GPU, and no cuda.device:*-mig slot", strings.Join(gpus, ", "))})
	}
	if len(migOn) > 0 {
		r.Issues = append(r.Issues, model.Issue{Severity: model.SevInfo, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("%s in MIG mode: registered with no cuda.shares (capacity 0); its MIG slices are its devices", strings.Join(migOn, ", "))})
	}
	if len(unknownWhy) > 0 {
		r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("cuda.shares capacity unknown for %s: shown as ?, not as 1; give it with --fgpu-capacity N or DEVICE=N,...", unknownWhy)})
	}
	if r.QuantumWhy != "" {
		r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("cuda.shares quantum_size unknown (%s): where shares would land is not judged (simulate takes it with --quantum)", r.QuantumWhy)})
	}
	if s != nil {
		var stray []string
		for _, m := range maskItems(s, kind) {
			if !used[m] {
				if strings.TrimSpace(m) != m {
					// The space is why it masks nothing: show it.
					m = `"` + m + `"`
				}
				stray = append(stray, m)
			}
		}
		if len(stray) > 0 {
			hint := ""
			if kind == model.PluginCUDAOpen {
				hint = " (cuda_open compares each item, as written between the commas, with a GPU's bare UUID exactly: lower-case, without GPU- or spaces)"
			}
			r.Issues = append(r.Issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
				Message: fmt.Sprintf("device_mask names %s, which masks no GPU on this node%s", strings.Join(stray, ", "), hint)})
		}
	}
	return r
}

// maskItems are s's device_mask items as the plugin of kind compares them
// with a GPU's UUID: cuda_open's as written between the commas, the
// fractional plugin's trimmed (assumed). Nil settings mask nothing.
func maskItems(s *Settings, kind string) []string {
	switch {
	case s == nil:
		return nil
	case kind == model.PluginCUDAOpen:
		return s.OpenMask
	default:
		return s.DeviceMask
	}
}

// maskKey is the GPU an item of maskItems names, as the plugin of kind
// matches it: cuda_open only the exact bare UUID, the fractional plugin
// the bare UUID with or without GPU- (assumed).
func maskKey(kind, item string) string {
	if kind == model.PluginCUDAOpen {
		return item
	}
	return strings.TrimPrefix(item, "GPU-")
}

// gpuModels are the distinct model names of the whole GPUs in devs, in
// first-seen order.
func gpuModels(devs []model.Device) []string {
	var out []string
	for i := range devs {
		if d := &devs[i]; d.Name == "cuda" && !d.IsMIG() && d.Model != "" && !slices.Contains(out, d.Model) {
			out = append(out, d.Model)
		}
	}
	return out
}

// byWhy lists GPUs under the reason each is named for, in the order the
// reasons first came: one reason is said once, not once per GPU (an
// 8-GPU node whose settings were never read repeated it 8 times).
type byWhy []struct {
	why string
	ids []string
}

func (b byWhy) add(why, id string) byWhy {
	for i := range b {
		if b[i].why == why {
			b[i].ids = append(b[i].ids, id)
			return b
		}
	}
	return append(b, struct {
		why string
		ids []string
	}{why, []string{id}})
}

// String is "GPU-a, GPU-b (why); GPU-c (why2)".
func (b byWhy) String() string {
	parts := make([]string, len(b))
	for i, g := range b {
		parts[i] = strings.Join(g.ids, ", ") + " (" + g.why + ")"
	}
	return strings.Join(parts, "; ")
}

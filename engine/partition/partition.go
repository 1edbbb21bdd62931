package partition

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Inventory is what the partition is computed over: the node's devices
// (CPU cores and the "mem" device included) and, when no "mem" device is
// listed, the host's memory.
type Inventory struct {
	Devices []model.Device
	// HostMem is the host's memory in bytes, used when Devices has no
	// "mem" device; zero when unknown.
	HostMem model.Dec
	// AcceleratorsUnknown says no accelerator source could be read: Devices
	// holds only the host's cores and memory, so accelerator names and IDs
	// cannot be checked.
	AcceleratorsUnknown bool
	// Source describes the device source, for messages.
	Source model.SourceInfo
	// Plugin is how the CUDA plugin was decided and where its settings
	// came from (nil without one), for messages.
	Plugin *model.PluginInfo
	// mockUnread is why the mock plugin's settings were not read, as its
	// warning says it ("" when they were, or not known).
	mockUnread string
}

// InventoryOf takes the inventory from a snapshot.
func InventoryOf(s *model.Snapshot) Inventory {
	if s == nil {
		return Inventory{}
	}
	return Inventory{Devices: s.Devices, HostMem: model.NewDec(s.HostMemBytes, 0), Source: s.Source, Plugin: s.Plugin,
		// The inventory's kinds and health words (engine/inventory).
		// A capacity not known (plugin settings never read) is treated as
		// an unknown accelerator set: nothing is judged against a zero;
		// so are GPUs each agent registers with settings of its own.
		AcceleratorsUnknown: AcceleratorsUnknown(s.Source, s.Devices, s.Plugin), mockUnread: MockUnread(s)}
}

// MockUnread is why the mock plugin's settings were not read, from its
// warning in s ("the mock plugin's settings could not be read from the
// agent's etcd (etcd at ...: connection refused ...)"); "" when they were
// read or the warning is not in s.
func MockUnread(s *model.Snapshot) string {
	if s == nil || !mockGuessed(s.Source) {
		return ""
	}
	for _, iss := range s.Issues {
		if isMockUnread(iss) {
			why, _, _ := strings.Cut(iss.Message, ": fgtop assumes")
			return why
		}
	}
	return ""
}

// AcceleratorsUnknown is Inventory.AcceleratorsUnknown of a device set:
// no accelerator source, one unavailable, a capacity not known, GPUs each
// agent registers with settings of its own, or a mock plugin whose
// settings were not read. The engine and check judge by this one rule.
func AcceleratorsUnknown(src model.SourceInfo, devices []model.Device, pl *model.PluginInfo) bool {
	return src.Kind == "none" || src.Health == "unavailable" || model.AnyCapacityUnknown(devices) ||
		(pl != nil && pl.SettingsDiffer) || mockGuessed(src)
}

// mockGuessed: the mock plugin's devices are the defaults' guess, its
// settings in etcd not read (engine/inventory's degraded mock).
func mockGuessed(src model.SourceInfo) bool {
	return src.Kind == "mock" && src.Health == "degraded"
}

// Guessed reports whether what a kernel or an agent holds of slot on a
// node whose devices come from src cannot be judged: the mock plugin's
// settings were not read, and slot is one of those its allocation mode
// decides (cuda.device or cuda.shares, and the GPUs' capacities in it),
// which fgtop only guessed. A MIG slice's slot is the same in either mode.
func Guessed(src model.SourceInfo, slot model.SlotName) bool {
	if !mockGuessed(src) || slot.MinorType() != "" {
		return false
	}
	m := slot.MajorType()
	return m == "device" || m == "shares"
}

// GuessedHeld reports whether held, what kernels hold on a device, cannot be
// judged against its capacity: it has an amount of a slot whose capacity
// there is the guessed mode's (cuda.shares on a GPU guessed whole).
func GuessedHeld(src model.SourceInfo, held model.ResourceSlot) bool {
	for slot, v := range held {
		if !v.IsZero() && Guessed(src, slot) {
			return true
		}
	}
	return false
}

// MockSettingsHint says what gives fgtop the mock plugin's settings when
// they could not be read from the agent's etcd (the reason, said before
// it, tells what would let them be read there).
const MockSettingsHint = "give them with --mock-etcd FILE"

// UnknownNote says why AcceleratorsUnknown is set and what would tell: no
// accelerator source (pass --devices), or GPUs listed whose capacity is
// unknown (the CUDA plugin settings were not read: --fgpu-capacity or
// --plugin-config), so an operator is not sent after a device source
// that works.
func (inv Inventory) UnknownNote() string {
	if inv.Plugin != nil && inv.Plugin.SettingsDiffer && len(inv.Devices) > 0 {
		return "the agents' CUDA plugin settings differ (node scopes in etcd), so each agent registers the GPUs with its own units or mode and the devices shown are the first agent's: accelerator amounts in the config were not checked against each agent's registration; give the agents the same settings"
	}
	if mockGuessed(inv.Source) {
		why := inv.mockUnread
		if why == "" {
			why = "the mock plugin's settings were not read from the agent's etcd"
		}
		return why + ": the accelerators shown are its defaults' (discrete mode), a guess, so nothing is judged against them: the config's accelerator amounts and what the kernels hold in the slots its mode decides (cuda.device, cuda.shares) were not checked; " + MockSettingsHint
	}
	if inv.Source.Kind != "none" && inv.Source.Health != "unavailable" {
		var ids []string
		for i := range inv.Devices {
			if inv.Devices[i].CapacityUnknown {
				ids = append(ids, string(inv.Devices[i].ID))
			}
		}
		if len(ids) > 0 {
			return fmt.Sprintf("the capacity of %s is unknown (%s): accelerator capacities in the config were not checked; give them with --fgpu-capacity or the settings with --plugin-config",
				strings.Join(ids, ", "), inv.Plugin.CapacityWhy())
		}
	}
	detail := inv.Source.Detail
	if detail == "" {
		detail = "no accelerator source"
	}
	return "accelerator devices are unknown (" + detail + "): accelerator device names and IDs in the config were not checked; pass --devices"
}

// ValidateOptions are the agentconfig validation options this inventory
// calls for.
func (inv Inventory) ValidateOptions() agentconfig.ValidateOptions {
	return agentconfig.ValidateOptions{AcceleratorsUnknown: inv.AcceleratorsUnknown, SlotsUnknown: mockGuessed(inv.Source)}
}

// MemTotal is the node's memory in bytes: the "mem" devices' capacity, or
// HostMem.
func (inv Inventory) MemTotal() model.Dec {
	total, found := model.Zero, false
	for _, d := range inv.Devices {
		if d.Slot == model.SlotMem {
			total, found = total.Add(d.Capacity), true
		}
	}
	if found {
		return total
	}
	return inv.HostMem
}

// Partition is the effective partition of a config on a node: what each
// agent may use, computed the way the agent computes it.
type Partition struct {
	// Mode is the configured allocation mode; Effective is the one the
	// agent applies (a single agent is always shared).
	Mode      string `json:"mode"`
	Effective string `json:"effective_mode"`
	// Format is the allocation format (slot-based or device-based), and
	// FormatGuessed says the file does not tell.
	Format        agentconfig.Format `json:"format"`
	FormatGuessed bool               `json:"format_guessed,omitempty"`
	// Exclusive is true when each device belongs to at most one agent
	// (device-based auto-split and manual with several agents).
	Exclusive bool        `json:"exclusive"`
	Agents    []AgentPart `json:"agents"`
	// Totals is total_slots (the sum of device capacities per slot) and
	// Available is Totals minus the reserved cpu, mem and disk.
	Totals    model.ResourceSlot `json:"totals"`
	Available model.ResourceSlot `json:"available"`
	// MemTotal is the node's memory in bytes (zero when unknown).
	MemTotal model.Dec `json:"mem_total"`
	// Unowned lists, for an exclusive manual partition, the devices no
	// agent owns (the agent itself never reports them).
	Unowned []model.DeviceKey `json:"-"`
	// Notes say what the operator should know about this partition.
	Notes []string `json:"notes,omitempty"`
}

// AgentPart is one agent's share.
type AgentPart struct {
	ID model.AgentID `json:"id"`
	// Owns lists the devices the agent may use, by plugin, natural-sorted;
	// nil means every device (shared, or the slot-based format, where
	// devices are not exclusive). Every plugin of the node is listed
	// (possibly empty) so that "not listed" never reads as "owned".
	Owns map[model.DeviceName][]model.DeviceID `json:"owns"`
	// Mem is the agent's memory in bytes; zero when not partitioned
	// (shared), as model.Agent.Mem.
	Mem model.Dec `json:"mem"`
	// Capacity is what the agent may allocate per slot: its devices'
	// capacities and its mem (slot-based: its agent_slot amounts).
	Capacity model.ResourceSlot `json:"capacity"`
	// Reserved is what the agent subtracts from the node's totals per
	// slot when it reports its capacity.
	Reserved model.ResourceSlot `json:"reserved"`
	// Scaling is the stats scaling factor per slot.
	Scaling model.ResourceSlot `json:"scaling"`
	// ungiven are the slots a manual slot-based file gives the agent no
	// readable amount of (left out, or cpu = "fifteen"): Capacity counts
	// them 0, as the allocator's arithmetic does, but the agent is not
	// given 0 (the agent refuses the file), so Fill leaves them out of
	// Given.
	ungiven []model.SlotName
}

// OwnsDevice reports whether the agent's partition includes the device;
// memory is split by amount, so every agent has "mem:root".
func (a *AgentPart) OwnsDevice(k model.DeviceKey) bool {
	if a.Owns == nil || k.Name == "mem" {
		return true
	}
	return slices.Contains(a.Owns[k.Name], k.ID)
}

// Agent returns the part of agent id, or nil.
func (p *Partition) Agent(id model.AgentID) *AgentPart {
	for i := range p.Agents {
		if p.Agents[i].ID == id {
			return &p.Agents[i]
		}
	}
	return nil
}

// Owners returns the agents whose partition includes device k, in config
// order.
func (p *Partition) Owners(k model.DeviceKey) []model.AgentID {
	var out []model.AgentID
	for i := range p.Agents {
		if p.Agents[i].OwnsDevice(k) {
			out = append(out, p.Agents[i].ID)
		}
	}
	return out
}

// Fill sets Owns and Mem of the agents with the same ids, for the engine's
// Snapshot.
func (p *Partition) Fill(agents []model.Agent) {
	for i := range agents {
		ap := p.Agent(agents[i].ID)
		if ap == nil {
			continue
		}
		agents[i].Mem = ap.Mem
		agents[i].Owns = nil
		agents[i].Given = nil
		if p.Format == agentconfig.FormatSlotBased && p.Effective != agentconfig.ModeShared && len(p.Agents) > 1 {
			agents[i].Given = maps.Clone(ap.Capacity)
			for _, s := range ap.ungiven {
				delete(agents[i].Given, s)
			}
		}
		if ap.Owns != nil {
			agents[i].Owns = make(map[model.DeviceName][]model.DeviceID, len(ap.Owns))
			for n, ids := range ap.Owns {
				agents[i].Owns[n] = slices.Clone(ids)
			}
		}
	}
}

// NoteNotExclusive is the note every slot-based partition carries.
const NoteNotExclusive = "slot-based format: devices are NOT exclusive. Every agent allocates from every device; only the capacity each agent reports to the manager is partitioned, so two agents can place work on the same GPU or core"

// noteGuessed says the format came from a guess.
func noteGuessed(f agentconfig.Format) string {
	if f == agentconfig.FormatSlotBased {
		return "the file has no allocation tables, so it does not say which multi-agent design it follows; fgtop reads it as Backend.AI main's slot-based form (the only one main loads); the BEP-1044 draft would deal devices out exclusively"
	}
	return "the file has no allocation tables, so it does not say which multi-agent design it follows; this is the BEP-1044 device-based reading (exclusive devices: the file's format before this change, or --format device-based); Backend.AI main does not make devices exclusive, and fgtop reads a file without tables as main's slot-based form when it loads it again"
}

// NamedAgentIDs are the partition's agents' ids, in its order; nil when
// one's id is one Backend.AI makes up at every start (agentconfig.UnsetID),
// which no record knows it by: a record is then not to be judged another
// node's by its agents.
func (p *Partition) NamedAgentIDs() []model.AgentID {
	var ids []model.AgentID
	for _, a := range p.Agents {
		if agentconfig.UnsetID(a.ID) {
			return nil
		}
		ids = append(ids, a.ID)
	}
	return ids
}

// Effective computes the partition cfg gives on the node, per
// domain/backendai.md §5: §5.2 (BEP-1044) for the device-based format and
// §5.1 for the slot-based one.
func Effective(cfg *agentconfig.Config, inv Inventory) *Partition {
	p := &Partition{
		Mode: cfg.Mode, Effective: cfg.Mode, Format: cfg.AllocFormat, FormatGuessed: cfg.FormatGuessed,
		MemTotal: inv.MemTotal(),
	}
	p.Totals = agentconfig.Totals(inv.Devices)
	for s := range p.Totals {
		if Guessed(inv.Source, s) {
			// The node's total of a slot only guessed is no total: a
			// manual file's amounts of it are each agent's all the same,
			// and a slot the file does not name is not made up as 0.
			delete(p.Totals, s)
		}
	}
	if _, ok := p.Totals[model.SlotMem]; !ok && !p.MemTotal.IsZero() {
		p.Totals[model.SlotMem] = p.MemTotal
	}
	p.Available = model.ResourceSlot{}
	for s, t := range p.Totals {
		p.Available[s] = t.Sub(cfg.Reserved(s))
	}
	if cfg.FormatGuessed && len(cfg.Agents) > 1 && cfg.Mode != agentconfig.ModeShared {
		p.Notes = append(p.Notes, noteGuessed(cfg.AllocFormat))
	}
	if p.MemTotal.IsZero() {
		p.Notes = append(p.Notes, "the host's memory is unknown: memory shares cannot be computed")
	}
	if cfg.AllocFormat == agentconfig.FormatSlotBased {
		slotBased(p, cfg, inv.AcceleratorsUnknown)
		return p
	}
	deviceBased(p, cfg, inv)
	return p
}

// pluginIDs groups the node's discrete devices (all but mem) by plugin,
// natural-sorted.
func pluginIDs(devices []model.Device) (map[model.DeviceName][]model.DeviceID, []model.DeviceName) {
	ids := map[model.DeviceName][]model.DeviceID{}
	var names []model.DeviceName
	for _, d := range devices {
		if d.Name == "mem" {
			continue
		}
		if _, ok := ids[d.Name]; !ok {
			names = append(names, d.Name)
		}
		ids[d.Name] = append(ids[d.Name], d.ID)
	}
	for _, l := range ids {
		agentconfig.SortNatural(l)
	}
	agentconfig.SortNatural(names)
	return ids, names
}

// deviceBased is §5.2: SHARED (or one agent) gives every agent every
// device; AUTO_SPLIT deals natural-sorted devices fill-from-front and
// divides mem; MANUAL takes the configured lists.
func deviceBased(p *Partition, cfg *agentconfig.Config, inv Inventory) {
	n := len(cfg.Agents)
	if n <= 1 {
		p.Effective = agentconfig.ModeShared
	}
	ids, names := pluginIDs(inv.Devices)
	p.Agents = make([]AgentPart, n)
	for i, a := range cfg.Agents {
		p.Agents[i].ID = a.ID
	}
	switch p.Effective {
	case agentconfig.ModeAutoSplit:
		p.Exclusive = true
		for _, name := range names {
			for i, part := range Deal(ids[name], n) {
				own(&p.Agents[i], name)
				p.Agents[i].Owns[name] = part
			}
		}
		for i, m := range SplitAmount(p.Available[model.SlotMem], n) {
			p.Agents[i].Mem = m
		}
	case agentconfig.ModeManual:
		p.Exclusive = true
		for i, a := range cfg.Agents {
			ap := &p.Agents[i]
			for _, name := range names {
				own(ap, name)
			}
			if a.Alloc == nil {
				continue
			}
			own(ap, "cpu")
			ap.Owns["cpu"] = sortedIDs(a.Alloc.CPU)
			for name, l := range a.Alloc.Devices {
				ap.Owns[name] = sortedIDs(l)
			}
			ap.Mem = a.Alloc.Mem
		}
		for _, name := range names {
			for _, id := range ids[name] {
				k := model.DeviceKey{Name: name, ID: id}
				if len(p.Owners(k)) == 0 {
					p.Unowned = append(p.Unowned, k)
				}
			}
		}
	default: // shared
	}
	// Capacities, reserved amounts and scaling factors (§5.2 "Applying the
	// partitions").
	for i := range p.Agents {
		ap := &p.Agents[i]
		ap.Capacity = model.ResourceSlot{}
		for _, d := range inv.Devices {
			if d.Name == "mem" {
				continue
			}
			if ap.OwnsDevice(d.Key()) {
				ap.Capacity[d.Slot] = ap.Capacity[d.Slot].Add(d.Capacity)
			} else if _, ok := ap.Capacity[d.Slot]; !ok {
				ap.Capacity[d.Slot] = model.Zero
			}
		}
		if p.Effective == agentconfig.ModeShared {
			if !p.MemTotal.IsZero() {
				ap.Capacity[model.SlotMem] = p.MemTotal
			}
		} else {
			ap.Capacity[model.SlotMem] = ap.Mem
		}
		ap.Reserved, ap.Scaling = model.ResourceSlot{}, model.ResourceSlot{}
		for s, total := range p.Totals {
			amt := ap.Capacity[s]
			avail := p.Available[s]
			ap.Reserved[s] = model.Max(model.Zero, total.Sub(model.Min(amt, avail)))
			switch {
			case p.Effective == agentconfig.ModeShared:
				ap.Scaling[s] = model.One
			case avail.Sign() <= 0:
				ap.Scaling[s] = model.Zero
			default:
				ap.Scaling[s], _ = amt.Quo(avail)
			}
		}
	}
}

func own(ap *AgentPart, name model.DeviceName) {
	if ap.Owns == nil {
		ap.Owns = map[model.DeviceName][]model.DeviceID{}
	}
	if _, ok := ap.Owns[name]; !ok {
		ap.Owns[name] = []model.DeviceID{}
	}
}

func sortedIDs(ids []model.DeviceID) []model.DeviceID {
	out := slices.Clone(ids)
	if out == nil {
		out = []model.DeviceID{}
	}
	agentconfig.SortNatural(out)
	return slices.Compact(out)
}

// slotBased is §5.1: every agent keeps every device; only the capacity it
// reports (agent_slot) is partitioned. Where the node's accelerators are
// unknown (accelUnknown), a manual file's device slots are what each agent
// is given all the same, without a node total to hold them against.
func slotBased(p *Partition, cfg *agentconfig.Config, accelUnknown bool) {
	n := len(cfg.Agents)
	p.Notes = append(p.Notes, NoteNotExclusive)
	p.Agents = make([]AgentPart, n)
	for i, a := range cfg.Agents {
		p.Agents[i] = AgentPart{ID: a.ID, Capacity: model.ResourceSlot{}, Reserved: model.ResourceSlot{}, Scaling: model.ResourceSlot{}}
	}
	for s, total := range p.Totals {
		avail := p.Available[s]
		var per []model.Dec
		switch cfg.Mode {
		case agentconfig.ModeAutoSplit:
			if s.MajorType() == "shares" {
				// FractionAllocMap: plain division, unrounded.
				q, err := avail.Quo(model.NewDec(int64(n), 0))
				if err != nil {
					q = model.Zero
				}
				per = slices.Repeat([]model.Dec{q}, n)
			} else {
				per = SplitAmount(avail, n)
			}
		case agentconfig.ModeManual:
			per = make([]model.Dec, n)
			for i, a := range cfg.Agents {
				var given bool
				if per[i], given = agentconfig.SlotAmount(a.Alloc, s); !given || slices.Contains(a.Alloc.Unread, s) {
					p.Agents[i].ungiven = append(p.Agents[i].ungiven, s)
				}
			}
		default:
			per = slices.Repeat([]model.Dec{avail}, n)
		}
		for i := range p.Agents {
			ap := &p.Agents[i]
			ap.Capacity[s] = per[i]
			ap.Reserved[s] = model.Max(total.Sub(per[i]), model.Zero)
			switch {
			case cfg.Mode == agentconfig.ModeAutoSplit:
				ap.Scaling[s], _ = model.One.Quo(model.NewDec(int64(n), 0))
			case cfg.Mode == agentconfig.ModeManual && avail.Sign() > 0:
				ap.Scaling[s], _ = per[i].Quo(avail)
			case cfg.Mode == agentconfig.ModeManual:
				ap.Scaling[s] = model.Zero
			default:
				ap.Scaling[s] = model.One
			}
		}
	}
	if accelUnknown && cfg.Mode == agentconfig.ModeManual {
		for i, a := range cfg.Agents {
			if a.Alloc == nil {
				continue
			}
			for s, v := range a.Alloc.Slots {
				if _, known := p.Totals[s]; !known {
					p.Agents[i].Capacity[s] = v
				}
			}
		}
	}
	if cfg.Mode != agentconfig.ModeShared {
		for i := range p.Agents {
			p.Agents[i].Mem = p.Agents[i].Capacity[model.SlotMem]
		}
	}
}

// Deal deals ids (already natural-sorted) to n agents fill-from-front:
// q, r = divmod(len(ids), n); agents below index r take q+1, the others q.
func Deal(ids []model.DeviceID, n int) [][]model.DeviceID {
	out := make([][]model.DeviceID, n)
	if n == 0 {
		return out
	}
	q, r := len(ids)/n, len(ids)%n
	next := 0
	for i := range n {
		take := q
		if i < r {
			take++
		}
		out[i] = slices.Clone(ids[next : next+take])
		if out[i] == nil {
			out[i] = []model.DeviceID{}
		}
		next += take
	}
	return out
}

// SplitAmount divides a discrete amount over n agents the way
// DiscretePropertyAllocMap does: q, r = divmod(total, n), and the agents
// whose index is below r get one more unit (a byte, for memory).
func SplitAmount(total model.Dec, n int) []model.Dec {
	out := make([]model.Dec, n)
	if n == 0 {
		return out
	}
	nd := model.NewDec(int64(n), 0)
	q, err1 := total.QuoInteger(nd)
	r, err2 := total.Rem(nd)
	if err1 != nil || err2 != nil {
		return out
	}
	for i := range n {
		out[i] = q
		// Python compares the index with the Decimal remainder.
		if model.NewDec(int64(i), 0).Less(r) {
			out[i] = q.Add(model.One)
		}
	}
	return out
}

// Key writes a device key as "cuda:<id>".
func Key(k model.DeviceKey) string { return string(k.Name) + ":" + string(k.ID) }

// ParseKey reads "cuda:<id>"; ok is false without a plugin prefix.
func ParseKey(s string) (model.DeviceKey, bool) {
	name, id, ok := strings.Cut(s, ":")
	if !ok || name == "" || id == "" {
		return model.DeviceKey{}, false
	}
	return model.DeviceKey{Name: model.DeviceName(name), ID: model.DeviceID(id)}, true
}

// IDRanges writes ids compactly: runs of consecutive integers as "0-15",
// anything else as is, comma-separated ("0-7,16", "a, b").
func IDRanges(ids []model.DeviceID) string {
	if len(ids) == 0 {
		return "none"
	}
	nums := make([]int, 0, len(ids))
	for _, id := range ids {
		n, err := strconv.Atoi(string(id))
		if err != nil || n < 0 || strconv.Itoa(n) != string(id) {
			s := make([]string, len(ids))
			for i, id := range ids {
				s[i] = string(id)
			}
			return strings.Join(s, ", ")
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var parts []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", nums[i], nums[j]))
		} else {
			parts = append(parts, strconv.Itoa(nums[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ParseIDRanges reads "0-7,16" into core ids.
func ParseIDRanges(s string) ([]model.DeviceID, error) {
	var out []model.DeviceID
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			out = append(out, model.DeviceID(part))
			continue
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("bad range %q: want LOW-HIGH with LOW <= HIGH", part)
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("range %q is too large", part)
		}
		for i := a; i <= b; i++ {
			out = append(out, model.DeviceID(strconv.Itoa(i)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no core ids in %q", s)
	}
	return out, nil
}

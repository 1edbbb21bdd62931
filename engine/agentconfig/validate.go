package agentconfig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// Validate runs the checks the agent makes when its allocator starts
// (InvalidResourceConfigError, ResourceOverAllocatedError, the slot-based
// ValueError) against the node's devices, with the agent's wording. With
// devices nil the inventory is unknown and only the checks that need none
// run (device exclusivity across agents). The load-time rules are in
// Problems already; Validate does not repeat them.
func (c *Config) Validate(devices []model.Device) []Problem {
	return c.ValidateWith(devices, ValidateOptions{})
}

// ValidateOptions tune Validate.
type ValidateOptions struct {
	// AcceleratorsUnknown says devices lists only the host's cores and
	// memory because no accelerator source could be read (no NVML, a broken
	// mock file): names and IDs of other plugins are then not checked,
	// rather than all reported as unknown.
	AcceleratorsUnknown bool
	// SlotsUnknown says even the accelerators' slot names are a guess
	// (the mock plugin's settings not read: its mode decides cuda.device
	// or cuda.shares): a slot-based agent is not held to cover them.
	SlotsUnknown bool
}

// ValidateWith is Validate with options.
func (c *Config) ValidateWith(devices []model.Device, opts ValidateOptions) []Problem {
	v := &validator{c: c, devices: devices, partial: opts.AcceleratorsUnknown, slotsGuessed: opts.SlotsUnknown}
	v.doc, _ = indexTOML(c.Raw)
	if devices != nil {
		v.reserved()
	}
	if c.Mode != ModeManual {
		return v.out
	}
	switch c.AllocFormat {
	case FormatDeviceBased:
		if c.Format != FormatSingle {
			if devices != nil {
				v.unknownDevices()
			}
			v.exclusive()
		}
	case FormatSlotBased:
		if devices != nil {
			v.slotCoverage()
			v.zeroAvailable()
			v.overAllocated()
		}
	}
	return v.out
}

type validator struct {
	c       *Config
	devices []model.Device
	partial bool
	// slotsGuessed: ValidateOptions.SlotsUnknown.
	slotsGuessed bool
	doc          *tomlDoc
	out          []Problem
}

func (v *validator) add(at []string, agent model.AgentID, format string, a ...any) {
	p := Problem{Agent: agent, Message: fmt.Sprintf(format, a...)}
	if v.doc != nil {
		p.Line = v.doc.lineOfPath(at)
	}
	v.out = append(v.out, p)
}

// agentPath is where agent i's allocation table is.
func (v *validator) agentPath(i int, keys ...string) []string {
	if v.c.Format == FormatSingle || !v.c.Agents[i].OwnAlloc {
		return append([]string{"resource", "allocations"}, keys...)
	}
	return append([]string{arrElem("agents", i), "resource"}, keys...)
}

// Totals sums device capacities per slot: total_slots.
func Totals(devices []model.Device) model.ResourceSlot {
	t := model.ResourceSlot{}
	for _, d := range devices {
		t[d.Slot] = t[d.Slot].Add(d.Capacity)
	}
	return t
}

// Reserved returns the config's reserved amount of a slot: reserved-cpu,
// reserved-mem and reserved-disk apply to cpu, mem and disk; nothing else
// is reserved.
func (c *Config) Reserved(slot model.SlotName) model.Dec {
	switch slot {
	case model.SlotCPU:
		return c.ReservedCPU
	case model.SlotMem:
		return c.ReservedMem
	case "disk":
		return c.ReservedDisk
	}
	return model.Zero
}

// reserved: a reservation larger than the node's total is an
// InvalidResourceConfigError.
func (v *validator) reserved() {
	totals := Totals(v.devices)
	for _, s := range []struct {
		slot model.SlotName
		key  string
	}{{model.SlotCPU, "reserved-cpu"}, {model.SlotMem, "reserved-mem"}} {
		total, ok := totals[s.slot]
		if !ok {
			continue // the inventory does not know this slot
		}
		r := v.c.Reserved(s.slot)
		if total.Less(r) {
			v.add([]string{"resource", s.key}, "", "%s (%s) is larger than the node's total %s (%s): the agent stops at start-up (InvalidResourceConfigError)", s.key, amount(s.slot, r), s.slot, amount(s.slot, total))
		}
	}
}

// plugins returns device name -> natural-sorted device ids.
func plugins(devices []model.Device) map[model.DeviceName][]model.DeviceID {
	out := map[model.DeviceName][]model.DeviceID{}
	for _, d := range devices {
		out[d.Name] = append(out[d.Name], d.ID)
	}
	for _, ids := range out {
		SortNatural(ids)
	}
	return out
}

func joinIDs[E ~string](ids []E) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// unknownDevices: every device name and ID an agent lists must exist.
func (v *validator) unknownDevices() {
	avail := plugins(v.devices)
	names := make([]model.DeviceName, 0, len(avail))
	for n := range avail {
		names = append(names, n)
	}
	SortNatural(names)
	for i, a := range v.c.Agents {
		if a.Alloc == nil {
			continue
		}
		check := func(name model.DeviceName, ids []model.DeviceID, at []string) {
			have, ok := avail[name]
			if !ok && v.partial && name != "cpu" && name != "mem" {
				return // the accelerator inventory is unknown
			}
			if !ok {
				v.add(at, a.ID, "Agent %s: Unknown device '%s'. Available: %s", a.ID, name, joinIDs(names))
				return
			}
			var unknown []model.DeviceID
			for _, id := range ids {
				if !slices.Contains(have, id) {
					unknown = append(unknown, id)
				}
			}
			if len(unknown) == 0 {
				return
			}
			// The agent stops at the first unknown ID; one line per agent and
			// plugin, in its words, names the rest too.
			more := ""
			if len(unknown) > 1 {
				more = fmt.Sprintf(" (also unknown: %s)", joinIDs(unknown[1:]))
			}
			v.add(at, a.ID, "Agent %s: Unknown device ID '%s' for '%s'. Available: %s%s", a.ID, unknown[0], name, joinIDs(have), more)
		}
		if a.Alloc.HasCPU {
			if _, ok := avail["cpu"]; ok {
				check("cpu", a.Alloc.CPU, v.agentPath(i, "cpu"))
			}
		}
		for _, n := range a.Alloc.DeviceNames() {
			check(n, a.Alloc.Devices[n], v.agentPath(i, "devices", string(n)))
		}
	}
}

// exclusive: a device (anything but mem) may be listed by one agent only.
func (v *validator) exclusive() {
	type claim struct {
		agents []model.AgentID
		at     []string
	}
	claims := map[model.DeviceKey]*claim{}
	var order []model.DeviceKey
	for i, a := range v.c.Agents {
		if a.Alloc == nil {
			continue
		}
		take := func(name model.DeviceName, ids []model.DeviceID, at []string) {
			if name == "mem" {
				return
			}
			listed := map[model.DeviceID]bool{}
			for _, id := range ids {
				if listed[id] {
					v.add(at, a.ID, "Agent %s: device '%s:%s' is listed twice", a.ID, name, id)
				}
				listed[id] = true
				k := model.DeviceKey{Name: name, ID: id}
				cl := claims[k]
				if cl == nil {
					cl = &claim{}
					claims[k] = cl
					order = append(order, k)
				}
				if !slices.Contains(cl.agents, a.ID) {
					cl.agents = append(cl.agents, a.ID)
				}
				cl.at = at
			}
		}
		take("cpu", a.Alloc.CPU, v.agentPath(i, "cpu"))
		for _, n := range a.Alloc.DeviceNames() {
			take(n, a.Alloc.Devices[n], v.agentPath(i, "devices", string(n)))
		}
	}
	for _, k := range order {
		cl := claims[k]
		if len(cl.agents) > 1 {
			v.add(cl.at, "", "Device '%s:%s' assigned to multiple agents: %s", k.Name, k.ID, joinIDs(cl.agents))
		}
	}
}

// deviceSlots are the non-cpu/mem slots the loaded plugins expose, sorted.
func deviceSlots(devices []model.Device) []model.SlotName {
	var out []model.SlotName
	for _, d := range devices {
		if d.Slot == model.SlotCPU || d.Slot == model.SlotMem || slices.Contains(out, d.Slot) {
			continue
		}
		out = append(out, d.Slot)
	}
	slices.Sort(out)
	return out
}

// UnknownSlots says, one line each, where an agent's devices table names
// a slot none of the node's plugins registers (a typo: "cuda.shres"):
// Backend.AI loads and starts with it and never reads it, so the agent's
// amount of the slot meant is not what the file seems to say. Nil where
// the devices are not known.
func (c *Config) UnknownSlots(devices []model.Device) []string {
	known := deviceSlots(devices)
	if len(known) == 0 {
		return nil
	}
	return c.slotWarnings(func(a *AgentConfig, s model.SlotName) string {
		if err := model.CheckSlot(s, known); err != nil {
			return fmt.Sprintf("agent %s: devices names %v; Backend.AI ignores a slot no plugin registers", a.ID, err)
		}
		return ""
	})
}

// SlotTyposBlind is UnknownSlots for a node whose accelerators are not
// known (no NVML, no --devices): which slots a plugin registers cannot be
// said, so only a slot a small edit away from cuda.shares or cuda.device
// (cuda.shres, cuda.Shares) is warned of, as a likely typo; any other
// name may be a plugin's fgtop does not know.
func (c *Config) SlotTyposBlind() []string {
	common := []model.SlotName{model.SlotCUDAShares, model.SlotCUDADevice}
	return c.slotWarnings(func(a *AgentConfig, s model.SlotName) string {
		if base, _, minor := strings.Cut(string(s), ":"); minor && slices.Contains(common, model.SlotName(base)) {
			// A MIG slice's slot (cuda.device:10g-mig): its name begins
			// with cuda.device, which is no typo of it.
			return ""
		}
		var ue *model.UnknownSlotError
		if err := model.CheckSlot(s, common); errors.As(err, &ue) && ue.Suggest != "" {
			return fmt.Sprintf("agent %s: devices names %q, not a slot of the CUDA plugins (did you mean %s?); the node's accelerators are unknown here, so which slots its plugins register is not checked", a.ID, s, ue.Suggest)
		}
		return ""
	})
}

// slotWarnings is warn's line for each accelerator slot of each agent's
// devices table that it finds fault with: once per slot among the agents
// that take the shared table, once per agent that has its own.
func (c *Config) slotWarnings(warn func(a *AgentConfig, s model.SlotName) string) []string {
	var out []string
	said := map[model.SlotName]bool{}
	for i := range c.Agents {
		a := &c.Agents[i]
		if a.Alloc == nil {
			continue
		}
		for _, s := range slices.Sorted(maps.Keys(a.Alloc.Slots)) {
			if s == model.SlotCPU || s == model.SlotMem || said[s] && !a.OwnAlloc {
				continue
			}
			if w := warn(a, s); w != "" {
				said[s] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// slotCoverage: in slot-based manual mode every slot of every loaded plugin
// must be in each agent's devices (the agent raises ValueError otherwise).
func (v *validator) slotCoverage() {
	for i, a := range v.c.Agents {
		if a.Alloc == nil {
			continue
		}
		for _, s := range deviceSlots(v.devices) {
			if v.slotsGuessed && s != model.SlotCPU && s != model.SlotMem {
				continue
			}
			if _, ok := a.Alloc.Slots[s]; !ok {
				v.add(v.agentPath(i, "devices"), a.ID, "Agent %s: slot '%s' of a loaded plugin is missing from devices: in manual mode every agent needs an amount for every slot, e.g. devices = { \"%s\" = \"1.0\" } (the agent stops at start-up with ValueError)", a.ID, s, s)
			}
		}
	}
}

// eachSlot calls f for every slot the node has, cpu and mem first, with
// its total and available total (total minus reserved).
func (v *validator) eachSlot(f func(s model.SlotName, total, avail model.Dec)) {
	totals := Totals(v.devices)
	for _, s := range append([]model.SlotName{model.SlotCPU, model.SlotMem}, deviceSlots(v.devices)...) {
		if total, ok := totals[s]; ok {
			f(s, total, total.Sub(v.c.Reserved(s)))
		}
	}
}

// overAllocated is ResourceOverAllocatedError: per slot, the sum over
// agents of (available_total - max(total - configured, 0)) must not exceed
// available_total.
func (v *validator) overAllocated() {
	v.eachSlot(func(s model.SlotName, total, avail model.Dec) {
		sum, given := model.Zero, model.Zero
		var ids []model.AgentID
		var confs, counts []model.Dec
		for _, a := range v.c.allocatorAgents() {
			conf, ok := SlotAmount(a.Alloc, s)
			if !ok {
				continue
			}
			counted := avail.Sub(model.Max(total.Sub(conf), model.Zero))
			sum = sum.Add(counted)
			given = given.Add(conf)
			ids = append(ids, a.ID)
			confs = append(confs, conf)
			counts = append(counts, counted)
		}
		if avail.Less(sum) {
			// The fix first: what each agent can have with the others as
			// they are, in the slot's unit. Then both sums with their
			// terms: the agents' amounts as written, and what the agent
			// counts of each (the amount less the reservation, at most the
			// available total), so every number printed adds up; in one
			// unit, bytes where a size would not add up.
			reserved := v.c.Reserved(s)
			unit := slotUnit(s, append(slices.Concat(confs, counts), given, sum, avail, total, reserved)...)
			var limits []string
			for i, id := range ids {
				most := avail.Sub(sum.Sub(counts[i])).Add(reserved)
				most = model.Max(model.Min(most, total), model.Zero)
				// Beside the limit, what the agent is given in the same
				// form (120g, not 128849018880 bytes beside 8g), as
				// written when a size would not be exact: no sum is made
				// here.
				given := slotUnit(s, confs[i])(confs[i], true)
				l := fmt.Sprintf("%s at most %s (it is given %s)", id, amountAtMost(s, most), given)
				if i == 0 {
					l = fmt.Sprintf("%s can have at most %s (it is given %s)", id, amountAtMost(s, most), given)
				}
				limits = append(limits, l)
			}
			givenParts := make([]string, len(ids))
			countedParts := make([]string, len(ids))
			for i := range ids {
				givenParts[i] = string(ids[i]) + " " + unit(confs[i], false)
				countedParts[i] = unit(counts[i], false)
			}
			v.add(nil, "", "Resource slot '%s' is over-allocated: with the other agents' amounts as they are, %s; the agents are given %s in total (%s); the agent counts each amount less the reservation of %s, at most the %s available, which makes %s = %s, more than the %s available (total %s minus reserved %s): the agent stops at start-up (ResourceOverAllocatedError)",
				s, strings.Join(limits, ", "), unit(given, true), strings.Join(givenParts, " + "), unit(reserved, true), unit(avail, true),
				strings.Join(countedParts, " + "), unit(sum, true), unit(avail, true), unit(total, true), unit(reserved, true))
		}
	})
}

// zeroAvailable: in manual mode the agent divides each agent's amount by
// the slot's available total (total minus reserved) for the stats scaling
// factors, so an available total of zero (reserved-cpu = the number of
// cores) stops it at start-up with DivisionByZero.
func (v *validator) zeroAvailable() {
	v.eachSlot(func(s model.SlotName, total, avail model.Dec) {
		// Only a reservation empties a slot; a plugin reporting a slot of
		// zero capacity is not a config problem.
		if avail.IsZero() && v.c.Reserved(s).Sign() > 0 {
			key := map[model.SlotName]string{model.SlotCPU: "reserved-cpu", model.SlotMem: "reserved-mem"}[s]
			v.add([]string{"resource", key}, "", "nothing of slot '%s' is left for the agents (total %s minus reserved %s is 0): in manual mode the agent stops at start-up (DivisionByZero); lower %s", s, amount(s, total), amount(s, v.c.Reserved(s)), key)
		}
	})
}

// allocatorAgents are the agents the allocator keeps: it keys them by id,
// so entries that run under the same inherited [agent] id are one agent,
// the last of them.
func (c *Config) allocatorAgents() []AgentConfig {
	last := map[model.AgentID]int{}
	for i, a := range c.Agents {
		if !a.IDSet && a.InheritedID != "" {
			last[a.InheritedID] = i
		}
	}
	var out []AgentConfig
	for i, a := range c.Agents {
		if !a.IDSet && a.InheritedID != "" && last[a.InheritedID] != i {
			continue
		}
		out = append(out, a)
	}
	return out
}

// SlotAmount returns what a slot-based allocation configures for slot s:
// cpu, mem, or devices[s].
func SlotAmount(a *Allocation, s model.SlotName) (model.Dec, bool) {
	if a == nil {
		return model.Zero, false
	}
	switch s {
	case model.SlotCPU:
		return a.CPUCount, a.HasCPU
	case model.SlotMem:
		return a.Mem, a.HasMem
	}
	d, ok := a.Slots[s]
	return d, ok
}

// slotUnit prints the figures of one message so that they add up as
// printed: sizes where each prints exactly, else (a size rounded to 9.31g)
// every one in bytes, a figure that stands alone (last) with the unit.
func slotUnit(s model.SlotName, all ...model.Dec) func(v model.Dec, last bool) string {
	if s != model.SlotMem && s != "disk" {
		return func(v model.Dec, _ bool) string { return v.String() }
	}
	for _, v := range all {
		if back, err := model.ParseFiniteBinarySize(amount(s, v)); err != nil || !back.Equal(v) {
			// Bytes throughout, the unit said once after each sum and
			// figure: mixing 16686018560 with 15.54g hides the sum.
			return func(v model.Dec, last bool) string {
				if last {
					return v.String() + " bytes"
				}
				return v.String()
			}
		}
	}
	return func(v model.Dec, _ bool) string { return amount(s, v) }
}

// amountAtMost prints a limit in the slot's unit: a size for bytes (see
// SizeAtMost).
func amountAtMost(s model.SlotName, d model.Dec) string {
	if s != model.SlotMem && s != "disk" {
		return d.String()
	}
	return SizeAtMost(d)
}

// SizeAtMost prints a byte limit as a size, its hundredths rounded down:
// a size rounded up would say more than the limit allows.
func SizeAtMost(d model.Dec) string {
	n, err := d.Int64()
	if err != nil || n < 0 || n >= 1<<56 {
		return model.FormatBinarySize(d)
	}
	shift, unit := 0, ""
	for _, u := range []struct {
		shift int
		unit  string
	}{{40, "t"}, {30, "g"}, {20, "m"}, {10, "k"}} {
		if n >= 1<<u.shift {
			shift, unit = u.shift, u.unit
			break
		}
	}
	if unit == "" {
		return strconv.FormatInt(n, 10)
	}
	h := n * 100 >> shift
	text := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%d.%02d", h/100, h%100), "0"), ".")
	return text + unit
}

// amount prints a slot amount: bytes as a binary size, others as decimals.
func amount(s model.SlotName, d model.Dec) string {
	if s == model.SlotMem || s == "disk" {
		return model.FormatBinarySize(d)
	}
	return d.String()
}

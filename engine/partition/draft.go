package partition

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// Request is a partition change as an operator states it (the CLI's plan
// and apply flags; the console's editor builds the same).
type Request struct {
	// From is a draft agent.toml whose mode and allocation tables replace
	// the current ones (matched by agent id); nil when none.
	From *agentconfig.Config
	// Mode switches allocation-mode ("" keeps it). Switching to manual
	// starts from the partition in effect (auto-split's deal; shared starts
	// from the auto-split deal too), so a mode switch alone changes nothing
	// about who owns what.
	Mode string
	// Moves give each device to an agent, taking it from whoever had it.
	Moves []Move
	// CPU sets agents' core lists (device-based) or counts (slot-based).
	CPU []CPUSet
	// Mem sets agents' memory in bytes.
	Mem []MemSet
	// Slots set agents' amounts in the slot-based format (cpu count, mem,
	// device slots such as cuda.shares).
	Slots []SlotSet
	// Format asks for an allocation format. "" keeps the file's, and a
	// file that does not say (no allocation tables) gets Backend.AI main's
	// slot-based form; FormatDeviceBased writes the BEP-1044 draft form,
	// which main cannot load, so it is only ever written when asked for.
	// Tables already in the file are never converted.
	Format agentconfig.Format
}

// Move gives Device ("cuda:<id>", or a bare id that only one plugin has)
// to Agent.
type Move struct {
	Device string
	Agent  model.AgentID
}

// CPUSet sets an agent's cores: IDs in the device-based format, Count in
// the slot-based one (the CLI's "0-7,16" or "15").
type CPUSet struct {
	Agent model.AgentID
	Spec  string
}

// MemSet sets an agent's memory.
type MemSet struct {
	Agent model.AgentID
	Bytes model.Dec
	// Text is the size as the user wrote it ("-10g"), echoed in errors;
	// empty: Bytes is echoed.
	Text string
}

// Empty reports whether the request changes nothing.
func (r Request) Empty() bool {
	return r.From == nil && r.Mode == "" && len(r.Moves) == 0 && len(r.CPU) == 0 && len(r.Mem) == 0 && len(r.Slots) == 0 && r.Format == ""
}

// Draft applies req to a copy of cur and returns it, with the reasons it
// could not apply parts of the request (unknown agents, --move in the
// slot-based format, ...). The draft keeps cur's bytes so Render can edit
// them; validating it is Build's job.
func Draft(cur *agentconfig.Config, inv Inventory, req Request) (*agentconfig.Config, []string) {
	d := cur.Clone()
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	agentIdx := func(id model.AgentID) int {
		for i, a := range d.Agents {
			if a.ID == id {
				return i
			}
		}
		fail("unknown agent %q%s; the config's agents are: %s", id, didYouMean(id, d.AgentIDs()), joinAgents(d.AgentIDs()))
		return -1
	}

	if f := req.From; f != nil && !f.FormatGuessed && f.AllocFormat != d.AllocFormat && !cur.FormatGuessed && f.Mode == agentconfig.ModeManual {
		// Refused before any of the draft is taken: its tables judged as
		// the file's read as errors of the file (a slot "missing" on a
		// line of it, an "internal" overlap of edits).
		fail("%s", convertRefusal("the draft "+f.Path, f.AllocFormat, cur.AllocFormat))
	} else if f != nil {
		seen := map[model.AgentID]bool{}
		for _, fa := range f.Agents {
			i := agentIdx(fa.ID)
			if i < 0 {
				continue
			}
			seen[fa.ID] = true
			d.Agents[i].Alloc = fa.Alloc.Clone()
			d.Agents[i].OwnAlloc = fa.Alloc != nil
		}
		for _, a := range d.Agents {
			if !seen[a.ID] && len(d.Agents) > 1 {
				fail("the draft %s does not mention agent %q; fgtop does not remove agents", f.Path, a.ID)
			}
		}
		d.Mode = f.Mode
		if !f.FormatGuessed && f.AllocFormat != d.AllocFormat {
			d.AllocFormat = f.AllocFormat
		}
		if d.Format != agentconfig.FormatSingle {
			d.GlobalAlloc = f.GlobalAlloc.Clone()
			if f.Format == agentconfig.FormatSingle {
				d.GlobalAlloc = nil
			}
		} else if len(d.Agents) == 1 {
			d.GlobalAlloc = d.Agents[0].Alloc
		}
	}

	if req.Format != "" && req.Format != d.AllocFormat {
		// Tables the file keeps would have to be converted, which fgtop
		// does not do; a file without any (or whose tables this change
		// drops) takes the format asked for.
		keeps := d.Mode == agentconfig.ModeManual && (req.Mode == "" || req.Mode == agentconfig.ModeManual)
		switch {
		case req.Format != agentconfig.FormatSlotBased && req.Format != agentconfig.FormatDeviceBased:
			fail("unknown format %q: want slot-based or device-based", req.Format)
		case !cur.FormatGuessed && keeps:
			fail("%s", convertRefusal("--format", req.Format, d.AllocFormat))
		default:
			d.AllocFormat = req.Format
		}
	}

	if req.Mode != "" && req.Mode != d.Mode {
		switch req.Mode {
		case agentconfig.ModeManual:
			materialize(d, inv)
		case agentconfig.ModeShared, agentconfig.ModeAutoSplit:
			for i := range d.Agents {
				d.Agents[i].Alloc, d.Agents[i].OwnAlloc = nil, false
			}
			d.GlobalAlloc = nil
		default:
			fail("unknown mode %q: want shared, auto-split or manual", req.Mode)
		}
		if req.Mode == agentconfig.ModeManual || req.Mode == agentconfig.ModeShared || req.Mode == agentconfig.ModeAutoSplit {
			d.Mode = req.Mode
		}
	}

	needManual := func(what string) bool {
		if d.Mode != agentconfig.ModeManual {
			fail("%s needs allocation-mode manual (it is %s): add --mode manual; the partition in effect is the starting point", what, d.Mode)
			return false
		}
		return true
	}
	alloc := func(i int) *agentconfig.Allocation {
		if d.Agents[i].Alloc == nil {
			d.Agents[i].Alloc = &agentconfig.Allocation{}
		}
		d.Agents[i].OwnAlloc = true
		return d.Agents[i].Alloc
	}

	for _, mv := range req.Moves {
		if d.AllocFormat == agentconfig.FormatSlotBased {
			fail("--move %s=%s: devices are not exclusive in the slot-based format; only the device-based format (BEP-1044) assigns devices to agents", mv.Device, mv.Agent)
			continue
		}
		// An agent the config does not have is said first: "add --mode
		// manual" sent the operator round to be told that only then.
		to := agentIdx(mv.Agent)
		if to < 0 || !needManual(fmt.Sprintf("--move %s=%s", mv.Device, mv.Agent)) {
			continue
		}
		key, ok := resolveDevice(mv.Device, d, inv, fail)
		if !ok {
			continue
		}
		if key.Name == "mem" {
			fail("--move %s: memory is split by amount, not moved; use --mem AGENT=SIZE", mv.Device)
			continue
		}
		for i := range d.Agents {
			if a := d.Agents[i].Alloc; a != nil && i != to {
				if key.Name == "cpu" {
					if slices.Contains(a.CPU, key.ID) {
						alloc(i).CPU = slices.DeleteFunc(slices.Clone(a.CPU), func(x model.DeviceID) bool { return x == key.ID })
					}
				} else if slices.Contains(a.Devices[key.Name], key.ID) {
					a = alloc(i)
					a.Devices[key.Name] = slices.DeleteFunc(slices.Clone(a.Devices[key.Name]), func(x model.DeviceID) bool { return x == key.ID })
				}
			}
		}
		a := alloc(to)
		if key.Name == "cpu" {
			if !slices.Contains(a.CPU, key.ID) {
				a.CPU = append(slices.Clone(a.CPU), key.ID)
				agentconfig.SortNatural(a.CPU)
			}
			a.HasCPU = true
			continue
		}
		if a.Devices == nil {
			a.Devices = map[model.DeviceName][]model.DeviceID{}
		}
		if !slices.Contains(a.Devices[key.Name], key.ID) {
			l := append(slices.Clone(a.Devices[key.Name]), key.ID)
			agentconfig.SortNatural(l)
			a.Devices[key.Name] = l
		}
	}

	for _, cs := range req.CPU {
		i := agentIdx(cs.Agent)
		if i < 0 || !needManual("--cpu "+string(cs.Agent)+"="+cs.Spec) {
			continue
		}
		if d.AllocFormat == agentconfig.FormatSlotBased {
			n, err := model.ParseDec(cs.Spec)
			if iv, ierr := n.Int64(); err != nil || ierr != nil || iv < 0 || !n.IsFinite() {
				fail("--cpu %s=%s: the slot-based format takes a core count, e.g. --cpu %s=15", cs.Agent, cs.Spec, cs.Agent)
				continue
			}
			a := alloc(i)
			a.HasCPU, a.CPUCount, a.CPU = true, n, nil
			continue
		}
		ids, err := ParseIDRanges(cs.Spec)
		if err != nil {
			fail("--cpu %s=%s: %v", cs.Agent, cs.Spec, err)
			continue
		}
		agentconfig.SortNatural(ids)
		a := alloc(i)
		a.HasCPU, a.CPU = true, slices.Compact(ids)
	}

	for _, ms := range req.Mem {
		i := agentIdx(ms.Agent)
		if i < 0 || !needManual("--mem "+string(ms.Agent)) {
			continue
		}
		// The console's mem field refuses the same (partition.CheckMem).
		if err := CheckMem(ms.Bytes, inv.MemTotal(), cur.MemoryAlignSize); err != nil {
			text := ms.Text
			if text == "" {
				text = model.FormatBinarySize(ms.Bytes)
			}
			fail("--mem %s=%s: %v", ms.Agent, text, err)
			continue
		}
		a := alloc(i)
		a.HasMem, a.Mem = true, ms.Bytes
	}
	for _, ss := range req.Slots {
		what := "--slot " + ss.String()
		if d.AllocFormat == agentconfig.FormatDeviceBased && d.Mode == agentconfig.ModeManual {
			fail("%s: the file's allocation tables are in the BEP-1044 device-based format, which assigns devices (--move, --cpu IDS), not amounts", what)
			continue
		}
		i := agentIdx(ss.Agent)
		if i < 0 || !needManual(what) {
			continue
		}
		a := alloc(i)
		switch ss.Slot {
		case model.SlotCPU:
			a.HasCPU, a.CPUCount, a.CPU = true, ss.Amount, nil
		case model.SlotMem:
			if err := CheckMem(ss.Amount, inv.MemTotal(), cur.MemoryAlignSize); err != nil {
				fail("%s: %v", what, err)
				continue
			}
			a.HasMem, a.Mem = true, ss.Amount
		default:
			if a.Slots == nil {
				a.Slots = map[model.SlotName]model.Dec{}
			}
			a.Slots[ss.Slot] = ss.Amount
		}
	}
	if d.Format == agentconfig.FormatSingle && len(d.Agents) == 1 {
		d.GlobalAlloc = d.Agents[0].Alloc
	}
	return d, errs
}

// convertRefusal says why a change asking for format want is refused on a
// file whose allocation tables are in format have.
func convertRefusal(who string, want, have agentconfig.Format) string {
	return fmt.Sprintf("%s asks for the %s format, but the file's allocation tables are %s: fgtop keeps a file's format and does not convert its tables; "+
		"switch to auto-split first (--mode auto-split drops the tables), then --mode manual --format %s", who, want, have, want)
}

// resolveDevice reads "name:id" or a bare id. An id no plugin has is
// still returned when the plugin is named, so that the validation names it
// with the agent's wording ("Unknown device ID ...").
func resolveDevice(spec string, d *agentconfig.Config, inv Inventory, fail func(string, ...any)) (model.DeviceKey, bool) {
	var byName *names.Devices
	if len(inv.Devices) > 0 {
		byName = names.NewDevices(inv.Devices, "this node")
	}
	unknown := func() {
		has := accelerators(byName, inv.Devices)
		if k, ok := ParseKey(spec); ok {
			// cpu:99 is refused with the cores the node has, not its GPUs.
			var ids []model.DeviceID
			for _, dev := range inv.Devices {
				if dev.Name == k.Name && !dev.IsAccelerator() {
					ids = append(ids, dev.ID)
				}
			}
			if len(ids) > 0 {
				has = []string{string(k.Name) + ":" + IDRanges(ids)}
			}
		}
		fail("Unknown device '%s': no device on this node has that ID or name; name it as PLUGIN:ID, its label (GPU0) or a unique prefix of its id. This node has %s",
			spec, strings.Join(has, ", "))
	}
	if k, ok := ParseKey(spec); ok {
		if byName != nil && !slices.ContainsFunc(inv.Devices, func(d model.Device) bool { return d.Key() == k }) {
			// A unique prefix of a key (cuda:c593…) is that device.
			r, err := byName.Resolve(spec)
			var amb *names.AmbiguousError
			if err != nil && !errors.As(err, &amb) {
				// PLUGIN:LABEL (cuda:GPU2, cuda:MIG 4/0): the label the
				// refusal below offers, with its plugin named; a device of
				// another plugin is not meant.
				if byLabel, lerr := byName.Resolve(string(k.ID)); lerr == nil && byLabel.Name == k.Name {
					r, err = byLabel, nil
				}
			}
			switch {
			case err == nil:
				return r, true
			case errors.As(err, &amb):
				fail("device '%s' is ambiguous: %s; name it as PLUGIN:ID", spec, strings.Join(amb.Candidates, ", "))
				return model.DeviceKey{}, false
			case slices.ContainsFunc(inv.Devices, func(d model.Device) bool { return d.Name == k.Name }):
				// An id none of the plugin's devices has is refused here,
				// listing the node's devices, rather than written into
				// the draft for agent.toml's validation to refuse.
				unknown()
				return model.DeviceKey{}, false
			}
		}
		// Plugins the node does not report go through: the validation
		// names them ("Unknown device 'tpu'. Available: ...").
		return k, true
	}
	var found []model.DeviceKey
	for _, dev := range inv.Devices {
		if string(dev.ID) == spec {
			found = append(found, dev.Key())
		}
	}
	if len(inv.Devices) == 0 {
		// No inventory: look in the config's own lists.
		for _, a := range d.Agents {
			if a.Alloc == nil {
				continue
			}
			if slices.Contains(a.Alloc.CPU, model.DeviceID(spec)) {
				found = appendKey(found, model.DeviceKey{Name: "cpu", ID: model.DeviceID(spec)})
			}
			for n, ids := range a.Alloc.Devices {
				if slices.Contains(ids, model.DeviceID(spec)) {
					found = appendKey(found, model.DeviceKey{Name: n, ID: model.DeviceID(spec)})
				}
			}
		}
	}
	if len(found) == 0 && byName != nil {
		// Any other name fgtop shows: the console's label (GPU1, MIG 4/0),
		// a UUID, the console's …a104, a unique prefix.
		r, err := byName.Resolve(spec)
		var amb *names.AmbiguousError
		switch {
		case err == nil:
			return r, true
		case errors.As(err, &amb):
			fail("device '%s' is ambiguous: %s; name it as PLUGIN:ID", spec, strings.Join(amb.Candidates, ", "))
			return model.DeviceKey{}, false
		}
		unknown()
		return model.DeviceKey{}, false
	}
	switch len(found) {
	case 1:
		return found[0], true
	case 0:
		fail("Unknown device '%s': no device on this node has that ID; name it as PLUGIN:ID (e.g. cuda:%s)", spec, spec)
	default:
		names := make([]string, len(found))
		for i, k := range found {
			names[i] = Key(k)
		}
		fail("device '%s' is ambiguous: %s; name it as PLUGIN:ID", spec, strings.Join(names, ", "))
	}
	return model.DeviceKey{}, false
}

// accelerators describes the node's accelerators as the errors list them
// ("cuda:GPU-…01 (GPU0)"); CPU cores and memory are named by PLUGIN:ID.
func accelerators(byName *names.Devices, devs []model.Device) []string {
	var out []string
	for _, d := range devs {
		if d.IsAccelerator() {
			out = append(out, byName.Describe(d.Key()))
		}
	}
	if len(out) == 0 {
		return []string{"no accelerators"}
	}
	return out
}

func appendKey(ks []model.DeviceKey, k model.DeviceKey) []model.DeviceKey {
	if slices.Contains(ks, k) {
		return ks
	}
	return append(ks, k)
}

// materialize turns the partition in effect into explicit manual tables,
// so that switching to manual changes nothing by itself. From shared, the
// starting point is the auto-split deal (manual has to be exclusive).
func materialize(d *agentconfig.Config, inv Inventory) {
	src := d.Clone()
	if src.Mode == agentconfig.ModeShared {
		src.Mode = agentconfig.ModeAutoSplit
	}
	p := Effective(src, inv)
	all, _ := pluginIDs(inv.Devices)
	for i := range d.Agents {
		ap := p.Agent(d.Agents[i].ID)
		if ap.Owns == nil {
			// One agent: it has everything.
			ap.Owns = all
		}
		a := &agentconfig.Allocation{HasCPU: true, HasMem: true, Mem: ap.Mem}
		if d.AllocFormat == agentconfig.FormatSlotBased {
			// Every slot of every plugin gets an amount: the agent refuses
			// to start in manual mode when one is missing from devices.
			a.CPUCount = ap.Capacity[model.SlotCPU]
			a.Slots = map[model.SlotName]model.Dec{}
			for s, v := range ap.Capacity {
				if s != model.SlotCPU && s != model.SlotMem {
					a.Slots[s] = roundDownShares(v)
				}
			}
		} else {
			a.CPU = slices.Clone(ap.Owns["cpu"])
			if a.CPU == nil {
				a.CPU = []model.DeviceID{}
			}
			a.Devices = map[model.DeviceName][]model.DeviceID{}
			for n, ids := range ap.Owns {
				if n != "cpu" && len(ids) > 0 {
					a.Devices[n] = slices.Clone(ids)
				}
			}
		}
		d.Agents[i].Alloc, d.Agents[i].OwnAlloc = a, true
	}
	if d.Format == agentconfig.FormatSingle {
		d.GlobalAlloc = d.Agents[0].Alloc
	} else {
		d.GlobalAlloc = nil
	}
}

// roundDownShares cuts a fractional split (auto-split divides shares
// unrounded: 4 over 3 agents is 1.333...) to hundredths, rounding down so
// the agents' amounts never add up to more than the node has: what an
// operator would write, and never a ResourceOverAllocatedError.
func roundDownShares(v model.Dec) model.Dec {
	if v.Exponent() >= -2 {
		return v
	}
	r, err := v.Quantize(-2, apd.RoundDown)
	if err != nil {
		return v
	}
	return r
}

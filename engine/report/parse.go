package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// MaxLine is the longest snapshot line Parse takes: a 10,000-kernel node's
// document is about 6 MB, so this leaves room and still bounds what a
// misbehaving or hostile peer can make a reader hold.
const MaxLine = 64 << 20

// ParseLine reads one line of a follow stream: a heartbeat (hb set, snap
// nil) or an fgtop.snapshot/v1 document. The line comes from another
// machine: every string of the document it returns has been through
// untrusted.Text, so no escape sequence a peer sends reaches a terminal.
func ParseLine(line []byte) (snap *Snapshot, hb *Heartbeat, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil, errors.New("empty line")
	}
	if len(line) > MaxLine {
		return nil, nil, fmt.Errorf("line of %d bytes: at most %d", len(line), MaxLine)
	}
	var probe struct {
		Heartbeat bool   `json:"heartbeat"`
		Schema    string `json:"schema"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if probe.Heartbeat {
		var h Heartbeat
		if err := json.Unmarshal(line, &h); err != nil {
			return nil, nil, fmt.Errorf("heartbeat: %w", err)
		}
		untrusted.Clean(&h)
		return nil, &h, nil
	}
	if probe.Schema != Schema {
		return nil, nil, fmt.Errorf("schema %s: want %q", untrusted.Text(truncate(probe.Schema, 40)), Schema)
	}
	var s Snapshot
	if err := json.Unmarshal(line, &s); err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	untrusted.Clean(&s)
	return &s, nil, nil
}

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Model turns a v1 document back into the snapshot it was made from, as
// far as the document carries it: devices, usage per device (totals and
// each kernel's holdings, rebuilt from the kernels' allocations), kernels,
// agents with their partitions, issues. What it does not carry (a kernel's
// first-seen time, unified devices) stays zero. Every decimal must parse:
// a document that does not is refused rather than shown with a wrong total.
func (r *Snapshot) Model() (*model.Snapshot, error) {
	s := &model.Snapshot{Seq: r.Seq, Node: r.Node, Mode: r.Mode, ConfigPath: r.Config, Source: r.Source,
		HostMemBytes: r.HostMemBytes, Usage: map[model.DeviceKey]*model.DeviceUsage{},
		IdleKernels: r.IdleKernels, IdleAfter: time.Duration(r.IdleAfterS * float64(time.Second))}
	a, err := r.Allocator.model()
	if err != nil {
		return nil, err
	}
	s.Allocator = a
	s.Plugin = r.Plugin
	if r.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			return nil, fmt.Errorf("time %q: %w", truncate(r.Time, 40), err)
		}
		s.Time = t
	}
	for i, d := range r.Devices {
		var capacity model.Dec
		if d.Capacity != nil {
			if !d.Capacity.IsFinite() {
				return nil, fmt.Errorf("device %s: capacity is not a finite decimal", d.Key)
			}
			if d.Capacity.Sign() < 0 {
				return nil, fmt.Errorf("device %s: capacity %s is negative: no device offers less than nothing", d.Key, truncate(d.Capacity.String(), 40))
			}
			capacity = *d.Capacity
		}
		md := model.Device{ID: model.DeviceID(d.ID), Name: model.DeviceName(d.Plugin), Slot: model.SlotName(d.Slot),
			SlotType: model.SlotType(d.SlotType), Capacity: capacity, CapacityUnknown: d.Capacity == nil, Index: d.Index, Model: d.Model, UUID: d.UUID,
			NUMANode: -1, Parent: model.DeviceID(d.Parent), MemoryBytes: d.MemoryB, Processors: d.Processors}
		if md.Name == "" || md.ID == "" {
			return nil, fmt.Errorf("device %d: no plugin or id", i)
		}
		if d.NUMANode != nil {
			md.NUMANode = *d.NUMANode
		}
		if t := d.Telemetry; t != nil {
			md.Telemetry = t.model()
		}
		s.Devices = append(s.Devices, md)
		if len(d.Held) > 0 || d.Kernels > 0 {
			held, err := heldSlots(d.Held)
			if err != nil {
				return nil, fmt.Errorf("device %s: %w", d.Key, err)
			}
			s.Usage[md.Key()] = &model.DeviceUsage{Key: md.Key(), Held: held, Kernels: d.Kernels}
		}
	}
	for _, u := range r.Unknown {
		name, id, ok := strings.Cut(u.Key, ":")
		if !ok {
			return nil, fmt.Errorf("unknown device %q: want PLUGIN:ID", truncate(u.Key, 40))
		}
		held, err := heldSlots(u.Held)
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", u.Key, err)
		}
		k := model.DeviceKey{Name: model.DeviceName(name), ID: model.DeviceID(id)}
		s.Usage[k] = &model.DeviceUsage{Key: k, Held: held, Kernels: u.Kernels}
	}
	kernels := make([]*model.Kernel, 0, len(r.Kernels))
	holdings := map[model.DeviceKey][]model.Holding{}
	for _, k := range r.Kernels {
		mk := &model.Kernel{ID: model.KernelID(k.ID), Agent: model.AgentID(k.Agent), Path: k.Path,
			State: model.KernelState(k.State), Legacy: k.Legacy, AgentBy: model.AgentBasis(k.AgentBy)}
		var err error
		// A kernel's slots are its resource.txt's SLOTS as written, which
		// the node publishes even when negative or NaN (its own check
		// flags the kernel): only its allocations on devices count, below.
		// Refused, a NaN in one kernel's SLOTS made the whole node
		// unreachable in the fleet.
		if mk.Slots, err = slotsAsWritten(k.Slots); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.ID, err)
		}
		if k.ModTime != "" {
			if mk.ModTime, err = time.Parse(time.RFC3339Nano, k.ModTime); err != nil {
				return nil, fmt.Errorf("kernel %s: mod_time: %w", k.ID, err)
			}
			// When the node first saw the kernel is not in the document;
			// its file's time is the closest it says.
			mk.Seen = mk.ModTime
		}
		if len(k.Allocations) > 0 {
			mk.Alloc = model.Allocations{}
			for slot, devs := range k.Allocations {
				m := make(map[model.DeviceID]model.Dec, len(devs))
				for id, v := range devs {
					d, err := model.ParseDec(v)
					if err != nil || !d.IsFinite() {
						return nil, fmt.Errorf("kernel %s: %s on %s: %q is not a decimal", k.ID, slot, id, truncate(v, 40))
					}
					if d.Sign() < 0 {
						return nil, fmt.Errorf("kernel %s: %s on %s: %q is negative: no kernel holds less than nothing", k.ID, slot, id, truncate(v, 40))
					}
					m[model.DeviceID(id)] = d
					name := model.SlotName(slot).DeviceName()
					if model.CarriesHoldings(name) && (mk.State == model.KernelOK || mk.State == model.KernelStale) {
						key := model.DeviceKey{Name: name, ID: model.DeviceID(id)}
						holdings[key] = append(holdings[key], model.Holding{Kernel: mk.ID, Agent: mk.Agent, Slot: model.SlotName(slot), Amount: d})
					}
				}
				mk.Alloc[model.SlotName(slot)] = m
			}
		}
		if k.SessionID != "" || k.Image != "" || k.OwnerUserID != "" {
			mk.Record = &model.KernelRecord{KernelID: mk.ID, AgentID: mk.Agent, SessionID: k.SessionID, SessionType: k.SessionType,
				OwnerUserID: k.OwnerUserID, OwnerProjectID: k.OwnerProjectID, Image: k.Image, Architecture: k.Architecture}
		}
		mk.Container = k.Container
		if k.Use != nil {
			u, err := k.Use.model()
			if err != nil {
				return nil, fmt.Errorf("kernel %s: use: %w", k.ID, err)
			}
			mk.Use = u
		}
		if k.Problem != nil {
			p := k.Problem.model()
			mk.Problem = &p
		}
		kernels = append(kernels, mk)
	}
	s.SetKernels(kernels)
	for key, hs := range holdings {
		u := s.Usage[key]
		if u == nil {
			// Held by kernels, yet the document lists no usage: its totals
			// are what was published, so none is invented here.
			continue
		}
		u.SetHoldings(hs)
	}
	for _, a := range r.Agents {
		ma := model.Agent{ID: model.AgentID(a.ID), ScratchRoot: a.ScratchRoot, Kernels: a.Kernels}
		var err error
		if ma.Held, err = heldSlots(a.Held); err != nil {
			return nil, fmt.Errorf("agent %s: %w", a.ID, err)
		}
		if a.Owns != nil {
			ma.Owns = map[model.DeviceName][]model.DeviceID{}
			for name, ids := range a.Owns {
				l := make([]model.DeviceID, len(ids))
				for i, id := range ids {
					l[i] = model.DeviceID(id)
				}
				ma.Owns[model.DeviceName(name)] = l
			}
		}
		if a.Mem != nil {
			ma.Mem = *a.Mem
		}
		if a.Given != nil {
			if ma.Given, err = slots(a.Given); err != nil {
				return nil, fmt.Errorf("agent %s: given: %w", a.ID, err)
			}
		}
		if a.Restart != nil {
			ma.Restart = model.Restart{State: model.RestartState(a.Restart.State), Detail: a.Restart.Detail, PIDs: a.Restart.PIDs}
		}
		ma.ServiceAddr = a.ServiceAddr
		if h := a.Health; h != nil {
			ma.Health = model.AgentHealth{State: model.AgentHealthState(h.State), URL: h.URL, Status: h.Status, Version: h.Version, Detail: h.Detail}
		}
		s.Agents = append(s.Agents, ma)
	}
	for _, i := range r.Issues {
		s.Issues = append(s.Issues, i.model())
	}
	if bad := badKernelIDs(r.Kernels); len(bad) > 0 {
		s.Issues = append(s.Issues, bad...)
		slices.SortStableFunc(s.Issues, func(a, b model.Issue) int { return cmp.Compare(b.Severity, a.Severity) })
	}
	return s, nil
}

// badKernelIDs is an issue for each kernel whose id, or whose record's
// session, owner or project id, is not a UUID: Backend.AI makes them all
// UUIDs and a node's fgtop lists only such kernel directories, so another
// id is a peer's invention. It is shown (escaped, as every string of the
// document is) rather than dropped.
func badKernelIDs(ks []Kernel) []model.Issue {
	var out []model.Issue
	for _, k := range ks {
		var bad []string
		for _, id := range []struct{ name, v string }{{"kernel id", k.ID}, {"session_id", k.SessionID},
			{"owner_user_id", k.OwnerUserID}, {"owner_project_id", k.OwnerProjectID}} {
			if (id.v != "" || id.name == "kernel id") && !untrusted.IsUUID(id.v) {
				bad = append(bad, fmt.Sprintf(`%s "%s"`, id.name, untrusted.Text(truncate(id.v, 80))))
			}
		}
		if len(bad) > 0 {
			out = append(out, model.Issue{Severity: model.SevWarning, Code: model.IssueBadID, Kernel: model.KernelID(k.ID),
				Message: strings.Join(bad, ", ") + " not a UUID, as Backend.AI makes them"})
		}
	}
	return out
}

// heldSlots reads what a device or an agent holds. Backend.AI allocates
// no negative amount, and a node's fgtop leaves one a resource.txt claims
// out of its totals (a parse-error issue), so a negative one is a peer's
// invention: taken, it would show more free than the device's capacity
// (held -3.50 of 4.00, 7.70 free). It is refused as a NaN is.
func heldSlots(m map[string]string) (model.ResourceSlot, error) {
	out, err := slots(m)
	if err != nil {
		return nil, err
	}
	for k, v := range out {
		if v.Sign() < 0 {
			return nil, fmt.Errorf("held %s: %q is negative: nothing holds less than nothing", truncate(string(k), 40), truncate(m[string(k)], 40))
		}
	}
	return out, nil
}

// slotsAsWritten is slots taking NaN and Infinity too: a kernel's SLOTS
// as its file says them.
func slotsAsWritten(m map[string]string) (model.ResourceSlot, error) {
	out := make(model.ResourceSlot, len(m))
	for k, v := range m {
		d, err := model.ParseDec(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a decimal", truncate(k, 40), truncate(v, 40))
		}
		out[model.SlotName(k)] = d
	}
	return out, nil
}

func slots(m map[string]string) (model.ResourceSlot, error) {
	out := make(model.ResourceSlot, len(m))
	for k, v := range m {
		d, err := model.ParseDec(v)
		if err != nil || !d.IsFinite() {
			return nil, fmt.Errorf("%s: %q is not a decimal", truncate(k, 40), truncate(v, 40))
		}
		out[model.SlotName(k)] = d
	}
	return out, nil
}

func (i Issue) model() model.Issue {
	out := model.Issue{Code: i.Code, Message: i.Message, File: i.File, Line: i.Line, Kernel: model.KernelID(i.Kernel), Agent: model.AgentID(i.Agent)}
	switch i.Severity {
	case "info":
		out.Severity = model.SevInfo
	case "warning":
		out.Severity = model.SevWarning
	default:
		out.Severity = model.SevError
	}
	if name, id, ok := strings.Cut(i.Device, ":"); ok {
		out.Device = model.DeviceKey{Name: model.DeviceName(name), ID: model.DeviceID(id)}
	}
	return out
}

func some[T any](p *T) model.Opt[T] {
	if p == nil {
		return model.Opt[T]{}
	}
	return model.Some(*p)
}

func (t *Telemetry) model() *model.Telemetry {
	out := &model.Telemetry{MemUsed: some(t.MemUsed), MemTotal: some(t.MemTotal), UtilGPU: some(t.UtilGPU), UtilMem: some(t.UtilMem),
		TempC: some(t.TempC), PowerMW: some(t.PowerMW), PowerCapMW: some(t.PowerCapMW), MIGMode: some(t.MIGMode),
		Lost: t.Lost, Errors: t.Errors, ProcUtil: some(t.ProcUtil)}
	for _, p := range t.Processes {
		out.Processes = append(out.Processes, model.Process{PID: p.PID, UsedMem: some(p.UsedMem), SMUtil: some(p.SMUtil), MemUtil: some(p.MemUtil),
			Name: p.Name, Start: p.StartTicks, Container: p.Container, Kernel: model.KernelID(p.Kernel), Owner: model.ProcOwner(p.Owner), Detail: p.Detail})
	}
	return out
}

// model is a kernel's use back as the snapshot holds it.
func (u *KernelUse) model() (*model.KernelUse, error) {
	out := &model.KernelUse{Procs: u.Procs, MemUsed: some(u.MemUsed), Util: some(u.UtilPct), MemOnly: u.MemOnly, Idle: u.Idle}
	if u.IdleSince != "" {
		t, err := time.Parse(time.RFC3339Nano, u.IdleSince)
		if err != nil {
			return nil, fmt.Errorf("idle_since %q: %w", truncate(u.IdleSince, 40), err)
		}
		out.IdleSince = t
	}
	for _, d := range u.Devices {
		name, id, ok := strings.Cut(d.Device, ":")
		if !ok {
			return nil, fmt.Errorf("device %q: want PLUGIN:ID", truncate(d.Device, 40))
		}
		if !d.Held.IsFinite() || (d.Capacity != nil && !d.Capacity.IsFinite()) {
			return nil, fmt.Errorf("device %s: held and capacity must be finite decimals", truncate(d.Device, 40))
		}
		if d.Held.Sign() < 0 || (d.Capacity != nil && d.Capacity.Sign() < 0) {
			return nil, fmt.Errorf("device %s: held and capacity must not be negative", truncate(d.Device, 40))
		}
		du := model.DeviceUse{Device: model.DeviceKey{Name: model.DeviceName(name), ID: model.DeviceID(id)},
			Held: d.Held, CapacityUnknown: d.Capacity == nil, Procs: d.Procs, MemUsed: some(d.MemUsed), Util: some(d.UtilPct)}
		if d.Capacity != nil {
			du.Capacity = *d.Capacity
		}
		out.Devices = append(out.Devices, du)
	}
	return out, nil
}

// model is the allocator settings back as the snapshot holds them.
func (a Allocator) model() (model.Allocator, error) {
	out := model.Allocator{Fractional: a.AllocationMode == "fractional", AffinityPolicy: a.AffinityPolicy}
	if a.QuantumSize != "" {
		q, err := model.ParseDec(a.QuantumSize)
		if err != nil || !q.IsFinite() || q.Sign() <= 0 {
			return out, fmt.Errorf("allocator: quantum_size %q is not a positive decimal", truncate(a.QuantumSize, 40))
		}
		out.Quantum = q
	}
	for _, n := range a.AllocationOrder {
		out.AllocationOrder = append(out.AllocationOrder, model.DeviceName(n))
	}
	return out, nil
}

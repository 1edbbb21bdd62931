package history

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/internal/parallel"
	"github.com/fgtop/fgtop/model"
)

// state is the record replayed up to some moment: everything of a
// snapshot, kernels kept encoded until a snapshot is built.
type state struct {
	seq     uint64
	time    time.Time
	meta    metaRec
	devices []model.Device
	agents  []model.Agent
	// totals is the last agents' totals record, undecoded (one comes with
	// every change): put on the agents when a snapshot is built.
	totals []byte
	// usage holds each device's last totals record, undecoded: over hours
	// of replay most are replaced before a snapshot is built.
	usage   map[model.DeviceKey][]byte
	kernels map[model.KernelID][]byte
	// patches: the patch records of a kernel since its record, applied
	// when a snapshot is built (most kernels patched in a replay are gone
	// by then, and are never decoded).
	patches map[model.KernelID][][]byte
	issues  []model.Issue
	minute  *minuteRec
	// devTime is when the devices record in force was written.
	devTime time.Time
}

func newState() *state {
	return &state{usage: map[model.DeviceKey][]byte{}, kernels: map[model.KernelID][]byte{}, patches: map[model.KernelID][][]byte{}}
}

// group is the records of one snapshot, applied once its tick is read.
type group struct {
	recs []rawRec
}

type rawRec struct {
	typ  byte
	body []byte
}

// apply applies one record of a complete group.
func (st *state) apply(typ byte, body []byte) error {
	switch typ {
	case recMeta:
		var m metaRec
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("meta record: %w", err)
		}
		st.meta = m
	case recDevices:
		var ds []model.Device
		if err := json.Unmarshal(body, &ds); err != nil {
			return fmt.Errorf("devices record: %w", err)
		}
		st.devices = ds
	case recAgents:
		var as []model.Agent
		if err := json.Unmarshal(body, &as); err != nil {
			return fmt.Errorf("agents record: %w", err)
		}
		st.agents = as
	case recUsage:
		d := dec{b: body}
		k := model.DeviceKey{Name: model.DeviceName(d.str()), ID: model.DeviceID(d.str())}
		if d.err != nil {
			return fmt.Errorf("usage record: %w", d.err)
		}
		st.usage[k] = body
	case recTotals:
		st.totals = body
	case recUsageGone:
		d := dec{b: body}
		k := model.DeviceKey{Name: model.DeviceName(d.str()), ID: model.DeviceID(d.str())}
		if d.err != nil {
			return fmt.Errorf("usage record: %w", d.err)
		}
		delete(st.usage, k)
	case recUsageCalc:
		d := dec{b: body}
		k := model.DeviceKey{Name: model.DeviceName(d.str()), ID: model.DeviceID(d.str())}
		if d.err != nil {
			return fmt.Errorf("usage record: %w", d.err)
		}
		delete(st.usage, k)
	case recKernel:
		d := dec{b: body}
		id := model.KernelID(d.id())
		if d.err != nil || id == "" {
			return fmt.Errorf("kernel record without an id")
		}
		st.kernels[id] = body
		delete(st.patches, id)
	case recKernelPatch:
		d := dec{b: body}
		id := model.KernelID(d.id())
		if _, ok := st.kernels[id]; d.err != nil || !ok {
			return fmt.Errorf("a patch of kernel %q, which the record does not have", id)
		}
		st.patches[id] = append(st.patches[id], body)
	case recKernelGone:
		d := dec{b: body}
		id := model.KernelID(d.id())
		if d.err != nil {
			return fmt.Errorf("kernel record: %w", d.err)
		}
		delete(st.kernels, id)
		delete(st.patches, id)
	case recIssues:
		d := dec{b: body}
		is := decodeIssues(&d)
		if d.err != nil {
			return fmt.Errorf("issues record: %w", d.err)
		}
		st.issues = is
	case recIssuesPatch:
		d := dec{b: body}
		is := decodeIssuesPatch(&d, st.issues)
		if d.err != nil {
			return fmt.Errorf("issues record: %w", d.err)
		}
		st.issues = is
	default:
		return fmt.Errorf("unknown record type %q", typ)
	}
	return nil
}

// snapshot builds the model snapshot the state describes: the same kind
// of value the engine publishes, holdings derived from the kernels.
func (st *state) snapshot() (*model.Snapshot, error) {
	m := st.meta
	s := &model.Snapshot{Seq: st.seq, Time: st.time, Node: m.Node, Source: m.Source, Mode: m.Mode, ConfigPath: m.ConfigPath,
		ConfigHash: m.ConfigHash, DraftFormat: m.DraftFormat, HostMemBytes: m.HostMemBytes, Allocator: m.Allocator,
		IdleKernels: m.IdleKernels, IdleAfter: m.IdleAfter, Issues: st.issues}
	s.Devices = append([]model.Device(nil), st.devices...)
	s.Agents = append([]model.Agent(nil), st.agents...)
	if st.totals != nil {
		// A totals record that does not decode keeps what it set before
		// the bad byte, as when it was applied at once.
		d := dec{b: st.totals}
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			kernels := int(min(d.uvarint(), 1<<31))
			held := decodeSlots(&d)
			if i < len(s.Agents) && d.err == nil {
				s.Agents[i].Kernels, s.Agents[i].Held = kernels, held
			}
		}
	}
	usage := make(map[model.DeviceKey]usageRec, len(st.usage))
	for k, b := range st.usage {
		d := dec{b: b}
		if u := decodeUsage(&d); d.err == nil {
			usage[k] = u
		}
	}
	ks, holds, derived, err := st.decodeKernels(usage)
	if err != nil {
		return nil, err
	}
	s.SetKernels(ks)
	s.Usage = make(map[model.DeviceKey]*model.DeviceUsage, len(usage)+len(derived))
	for k, u := range usage {
		du := &model.DeviceUsage{Key: k, Held: u.Held, Kernels: u.Kernels, ByAgent: u.ByAgent}
		if du.Held == nil {
			du.Held = model.ResourceSlot{}
		}
		if hs := holds[k]; len(hs) > 0 {
			du.SetHoldings(hs)
		}
		s.Usage[k] = du
	}
	for k, du := range derived {
		if hs := holds[k]; len(hs) > 0 {
			du.SetHoldings(hs)
		}
		s.Usage[k] = du
	}
	st.overlayMinute(s)
	return s, nil
}

// parallelDecode is the number of kernels from which a snapshot's
// kernels are decoded in parts, one goroutine each.
const parallelDecode = 2048

// decodeKernels decodes the kernels with their patches, and gathers what
// each holds per device and the totals of the devices usage lacks. A
// large node's kernels are decoded in parts on up to four goroutines
// (each with its own interner): the decoding is most of a seek's work
// after the replay.
func (st *state) decodeKernels(usage map[model.DeviceKey]usageRec) ([]*model.Kernel, map[model.DeviceKey][]model.Holding, map[model.DeviceKey]*model.DeviceUsage, error) {
	type entry struct {
		id   model.KernelID
		body []byte
	}
	ents := make([]entry, 0, len(st.kernels))
	for id, b := range st.kernels {
		ents = append(ents, entry{id, b})
	}
	ks := make([]*model.Kernel, len(ents))
	parts := parallel.Parts(len(ents), parallelDecode, 4)
	type partOut struct {
		holds   map[model.DeviceKey][]model.Holding
		derived map[model.DeviceKey]*model.DeviceUsage
		err     error
	}
	outs := make([]partOut, parts)
	part := func(p int) {
		o := &outs[p]
		o.holds = map[model.DeviceKey][]model.Holding{}
		var sums usageSums
		defer func() { o.derived = sums.finish() }()
		in := newInterner()
		for i := len(ents) * p / parts; i < len(ents)*(p+1)/parts; i++ {
			k, err := decodePatched(ents[i].body, st.patches[ents[i].id], in)
			if err != nil {
				o.err = err
				return
			}
			ks[i] = k
			k.Alloc.EachHeld(func(key model.DeviceKey, slot model.SlotName, amt model.Dec) {
				o.holds[key] = append(o.holds[key], model.Holding{Kernel: k.ID, Agent: k.Agent, Slot: slot, Amount: amt})
			})
			sums.add(k, usage)
		}
	}
	wait := parallel.Start(parts, part)
	part(0)
	wait()
	holds, derived := outs[0].holds, outs[0].derived
	for _, o := range outs {
		if o.err != nil {
			return nil, nil, nil, o.err
		}
	}
	for _, o := range outs[1:] {
		for key, hs := range o.holds {
			holds[key] = append(holds[key], hs...)
		}
		mergeUsage(derived, o.derived)
	}
	pruneUsage(derived)
	return ks, holds, derived, nil
}

// decodePatched decodes a kernel's record and its patches since, in
// order. A map field (allocations, slots) that a later patch sets again
// is read without being built; should any patch fail to decode (so that
// it may not set what its mask says), the kernel is decoded again with
// nothing skipped.
func decodePatched(body []byte, patches [][]byte, in *interner) (*model.Kernel, error) {
	var skips []uint32
	var later uint32
	if len(patches) > 0 {
		skips = make([]uint32, len(patches))
		for j := len(patches) - 1; j >= 0; j-- {
			skips[j] = later & skippable
			later |= patchMask(patches[j])
		}
	}
	for skipping := later&skippable != 0; ; skipping = false {
		skip := uint32(0)
		if skipping {
			skip = later & skippable
		}
		d := dec{b: body, in: in}
		k := decodeKernelSkip(&d, skip)
		if d.err != nil {
			return nil, fmt.Errorf("kernel record: %w", d.err)
		}
		failed := false
		for j, pb := range patches {
			// A patch that does not decode costs itself: what it set
			// before the bad field stands, as when it was applied at
			// once.
			pd := dec{b: pb, in: in}
			pd.id()
			if skipping {
				decodePatchSkip(&pd, k, skips[j])
			} else {
				decodePatch(&pd, k)
			}
			failed = failed || pd.err != nil
		}
		if !skipping || !failed {
			return k, nil
		}
	}
}

// overlayMinute puts the last minute's summary where the devices record
// in force was written before this moment. That record keeps the readings
// that move with every poll (utilisation, memory in use, temperature,
// power, processes) from when the devices last changed otherwise, minutes
// or hours before: shown as of this moment they named the processes of a
// kernel long gone from the device. They are dropped (not known), and the
// minute's means given where there is one.
func (st *state) overlayMinute(s *model.Snapshot) {
	if !st.devTime.Before(st.time) {
		return
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		if d.Telemetry == nil {
			continue
		}
		t := *d.Telemetry
		t.MemUsed, t.UtilGPU, t.UtilMem, t.TempC, t.PowerMW = model.Opt[uint64]{}, model.Opt[uint32]{}, model.Opt[uint32]{}, model.Opt[uint32]{}, model.Opt[uint32]{}
		t.Processes, t.ProcUtil = nil, model.Opt[bool]{}
		d.Telemetry = &t
	}
	mr := st.minute
	if mr == nil || mr.Start.Add(2*time.Minute).Before(st.time) {
		return
	}
	by := map[model.DeviceKey]*devMinute{}
	for i := range mr.Devices {
		by[mr.Devices[i].Key] = &mr.Devices[i]
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		dm := by[d.Key()]
		if dm == nil || d.Telemetry == nil {
			continue
		}
		t := *d.Telemetry
		if dm.UtilAvg != nil {
			t.UtilGPU = model.Some(uint32(*dm.UtilAvg + 0.5))
		}
		if dm.MemAvg != nil {
			t.MemUsed = model.Some(uint64(*dm.MemAvg))
		}
		d.Telemetry = &t
	}
}

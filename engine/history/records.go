package history

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/fgtop/fgtop/model"
)

// metaRec is a snapshot's fields besides devices, agents, usage, kernels
// and issues.
type metaRec struct {
	Node         string
	Mode         string `json:",omitempty"`
	ConfigPath   string `json:",omitempty"`
	ConfigHash   string `json:",omitempty"`
	DraftFormat  bool   `json:",omitempty"`
	Source       model.SourceInfo
	HostMemBytes int64 `json:",omitempty"`
	Allocator    model.Allocator
	IdleKernels  int           `json:",omitempty"`
	IdleAfter    time.Duration `json:",omitempty"`
}

func metaOf(s *model.Snapshot) metaRec {
	return metaRec{Node: s.Node, Mode: s.Mode, ConfigPath: s.ConfigPath, ConfigHash: s.ConfigHash, DraftFormat: s.DraftFormat,
		Source: s.Source, HostMemBytes: s.HostMemBytes, Allocator: s.Allocator, IdleKernels: s.IdleKernels, IdleAfter: s.IdleAfter}
}

func (m *metaRec) equal(o *metaRec) bool {
	return m.Node == o.Node && m.Mode == o.Mode && m.ConfigPath == o.ConfigPath && m.ConfigHash == o.ConfigHash &&
		m.DraftFormat == o.DraftFormat && m.Source == o.Source && m.HostMemBytes == o.HostMemBytes &&
		m.Allocator.Fractional == o.Allocator.Fractional && same(m.Allocator.Quantum, o.Allocator.Quantum) &&
		m.Allocator.AffinityPolicy == o.Allocator.AffinityPolicy && slices.Equal(m.Allocator.AllocationOrder, o.Allocator.AllocationOrder) &&
		m.IdleKernels == o.IdleKernels && m.IdleAfter == o.IdleAfter
}

// usageRec is one device's totals (its holdings follow from the kernels).
type usageRec struct {
	Key     model.DeviceKey
	Held    model.ResourceSlot
	Kernels int
	ByAgent map[model.AgentID]model.ResourceSlot `json:",omitempty"`
}

// stableDevices is the devices' JSON without what moves with every poll
// (utilisation, memory in use, temperature, power, processes): those go
// to the per-minute summary, so a device record is written only when
// something else changed.
func stableDevices(ds []model.Device) []byte {
	cp := make([]model.Device, len(ds))
	copy(cp, ds)
	for i := range cp {
		if t := cp[i].Telemetry; t != nil {
			tc := *t
			tc.MemUsed, tc.UtilGPU, tc.UtilMem, tc.TempC, tc.PowerMW = model.Opt[uint64]{}, model.Opt[uint32]{}, model.Opt[uint32]{}, model.Opt[uint32]{}, model.Opt[uint32]{}
			tc.Processes = nil
			cp[i].Telemetry = &tc
		}
	}
	b, _ := json.Marshal(cp)
	return b
}

func encodeIssues(e *enc, is []model.Issue) {
	e.uvarint(uint64(len(is)))
	for i := range is {
		encodeIssue(e, &is[i])
	}
}

func decodeIssues(d *dec) []model.Issue {
	n := d.count()
	var out []model.Issue
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, decodeIssue(d))
	}
	return out
}

// minuteRec summarises one minute of the devices' and kernels' use.
type minuteRec struct {
	Start   time.Time
	Devices []devMinute  `json:",omitempty"`
	Kernels []kernMinute `json:",omitempty"`
}

type devMinute struct {
	Key     model.DeviceKey
	Samples int
	UtilAvg *float64 `json:",omitempty"`
	UtilMax *uint32  `json:",omitempty"`
	MemAvg  *float64 `json:",omitempty"`
	MemMax  *uint64  `json:",omitempty"`
	// Since format version 2: the mean share of the device's capacity
	// held by kernels over the minute's samples (1 is all of it; more
	// when over capacity; absent when the capacity is unknown), and the
	// device's memory size, so a reader can draw memory as a share.
	HeldAvg  *float64 `json:",omitempty"`
	MemTotal *uint64  `json:",omitempty"`
}

type kernMinute struct {
	ID      model.KernelID
	Procs   int
	UtilMax *uint32 `json:",omitempty"`
	MemMax  *uint64 `json:",omitempty"`
}

// minuteAcc collects one minute's samples.
type minuteAcc struct {
	start time.Time
	devs  map[model.DeviceKey]*devAcc
	order []model.DeviceKey
	kerns map[model.KernelID]*kernMinute
}

type devAcc struct {
	n, un, mn, hn    int
	usum, msum, hsum float64
	umax             uint32
	mmax, mtotal     uint64
	hasU, hasM, hasT bool
}

func (m *minuteAcc) sample(s *model.Snapshot) {
	if m.devs == nil {
		m.devs = map[model.DeviceKey]*devAcc{}
		m.kerns = map[model.KernelID]*kernMinute{}
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		t := d.Telemetry
		if t == nil || !d.IsAccelerator() {
			continue
		}
		a := m.devs[d.Key()]
		if a == nil {
			a = &devAcc{}
			m.devs[d.Key()] = a
			m.order = append(m.order, d.Key())
		}
		a.n++
		if !d.CapacityUnknown && d.Capacity.Sign() > 0 {
			a.hn++
			a.hsum += s.Usage[d.Key()].Total().Float64() / d.Capacity.Float64()
		}
		if t.MemTotal.Valid && t.MemTotal.V > 0 {
			a.hasT, a.mtotal = true, t.MemTotal.V
		}
		if t.UtilGPU.Valid {
			a.hasU = true
			a.un++
			a.usum += float64(t.UtilGPU.V)
			a.umax = max(a.umax, t.UtilGPU.V)
		}
		if t.MemUsed.Valid {
			a.hasM = true
			a.mn++
			a.msum += float64(t.MemUsed.V)
			a.mmax = max(a.mmax, t.MemUsed.V)
		}
	}
}

// sampleKernel counts a kernel's use; the recorder calls it for every
// kernel that changed, and for those with processes when a minute closes.
func (m *minuteAcc) sampleKernel(k *model.Kernel) {
	if m.kerns == nil {
		m.devs = map[model.DeviceKey]*devAcc{}
		m.kerns = map[model.KernelID]*kernMinute{}
	}
	{
		u := k.Use
		if u == nil || u.Procs == 0 {
			return
		}
		km := m.kerns[k.ID]
		if km == nil {
			km = &kernMinute{ID: k.ID}
			m.kerns[k.ID] = km
		}
		km.Procs = max(km.Procs, u.Procs)
		if u.Util.Valid && (km.UtilMax == nil || *km.UtilMax < u.Util.V) {
			v := u.Util.V
			km.UtilMax = &v
		}
		if u.MemUsed.Valid && (km.MemMax == nil || *km.MemMax < u.MemUsed.V) {
			v := u.MemUsed.V
			km.MemMax = &v
		}
	}
}

func (m *minuteAcc) record() *minuteRec {
	if len(m.devs) == 0 && len(m.kerns) == 0 {
		return nil
	}
	r := &minuteRec{Start: m.start.UTC()}
	for _, k := range m.order {
		a := m.devs[k]
		dm := devMinute{Key: k, Samples: a.n}
		if a.hasU {
			avg, mx := a.usum/float64(a.un), a.umax
			dm.UtilAvg, dm.UtilMax = &avg, &mx
		}
		if a.hasM {
			avg, mx := a.msum/float64(a.mn), a.mmax
			dm.MemAvg, dm.MemMax = &avg, &mx
		}
		if a.hn > 0 {
			h := a.hsum / float64(a.hn)
			dm.HeldAvg = &h
		}
		if a.hasT {
			t := a.mtotal
			dm.MemTotal = &t
		}
		r.Devices = append(r.Devices, dm)
	}
	for _, km := range m.kerns {
		r.Kernels = append(r.Kernels, *km)
	}
	slices.SortFunc(r.Kernels, func(a, b kernMinute) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return r
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func encodeSlots(e *enc, r model.ResourceSlot) {
	e.uvarint(uint64(len(r)))
	// r.Names without a slice on the heap.
	var na [8]model.SlotName
	ns := na[:0]
	for n := range r {
		ns = append(ns, n)
	}
	sortStrings(ns)
	for _, n := range ns {
		e.str(string(n))
		e.dec(r[n])
	}
}

func decodeSlots(d *dec) model.ResourceSlot {
	n := d.count()
	r := make(model.ResourceSlot, n)
	for i := 0; i < n && d.err == nil; i++ {
		s := model.SlotName(d.str())
		r[s] = d.dec()
	}
	return r
}

func encodeUsage(e *enc, u *model.DeviceUsage) {
	e.str(string(u.Key.Name))
	e.str(string(u.Key.ID))
	encodeSlots(e, u.Held)
	e.uvarint(uint64(max(u.Kernels, 0)))
	var aa [4]model.AgentID
	agents := aa[:0]
	for a := range u.ByAgent {
		agents = append(agents, a)
	}
	sortStrings(agents)
	e.uvarint(uint64(len(agents)))
	for _, a := range agents {
		e.str(string(a))
		if slotsIdentical(u.ByAgent[a], u.Held) {
			e.byte(1) // one agent holds everything there: the usual node
			continue
		}
		e.byte(0)
		encodeSlots(e, u.ByAgent[a])
	}
}

func slotsIdentical(a, b model.ResourceSlot) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !same(v, w) {
			return false
		}
	}
	return true
}

// derivable reports whether a device's totals can be summed from its
// kernels with the same result: every amount a whole number (exponent
// 0), whose sums print the same whatever the order of the changes.
func derivable(u *model.DeviceUsage) bool {
	for _, v := range u.Held {
		if v.Exponent() != 0 {
			return false
		}
	}
	for _, r := range u.ByAgent {
		for _, v := range r {
			if v.Exponent() != 0 {
				return false
			}
		}
	}
	return true
}

// devNote is what the recorder keeps of a device with totals.
type devNote struct {
	// recorded: the record holds the device's totals (a U record).
	recorded bool
	// slot and agent: the one slot held there and the one agent holding
	// it, at the device's last change.
	slot  model.SlotName
	agent model.AgentID
	// last is the device's totals as last seen (the engine gives changed
	// totals a new pointer).
	last *model.DeviceUsage
}

// derivable is derivable(u); for the usual device (one slot, held by one
// agent) it looks the amounts up by the names of the last change, which
// costs less than walking three maps (most of a change touches a dozen
// such devices: its CPU cores and memory).
func (n *devNote) derivable(u *model.DeviceUsage) bool {
	if len(u.Held) != 1 || len(u.ByAgent) != 1 {
		return derivable(u)
	}
	if v, ok := u.Held[n.slot]; ok {
		if a, ok := u.ByAgent[n.agent]; ok && len(a) == 1 {
			if w, ok := a[n.slot]; ok {
				return v.Exponent() == 0 && w.Exponent() == 0
			}
		}
	}
	for s := range u.Held {
		n.slot = s
	}
	for a := range u.ByAgent {
		n.agent = a
	}
	return derivable(u)
}

// deriveUsage sums the totals of devices the record keeps none for, as
// the engine keeps them: per slot, the kernels holding anything there,
// the split by agent without zeros.
func deriveUsage(ks []*model.Kernel, have map[model.DeviceKey]usageRec) map[model.DeviceKey]*model.DeviceUsage {
	sums := usageSums{}
	for _, k := range ks {
		sums.add(k, have)
	}
	out := sums.finish()
	pruneUsage(out)
	return out
}

// usageSums sums kernels' holdings per device. Sums of parts of the
// kernels (mergeUsage) are the sums of them all: decimal addition is
// exact here, whatever the order. Whole amounts (the CPU cores and memory
// bytes such devices hold) are summed as integers and added to the
// decimals once, by finish: what adding them one by one gives, without a
// decimal a kernel.
type usageSums struct {
	devs map[model.DeviceKey]*devSums
}

// devSums is one device's totals: the decimal ones (in u) and the
// integer ones not yet added to them, a handful, searched in turn.
type devSums struct {
	u    *model.DeviceUsage
	ints []intSum
}

// intSum is the whole amounts of one slot of a device's total (byAgent
// false) or of one agent's share of it.
type intSum struct {
	slot    model.SlotName
	agent   model.AgentID
	byAgent bool
	n       int64
}

// addInt adds amt to the integer sum of (slot, agent, byAgent) when amt
// is a whole number (exponent 0) and the sum stays an int64; false: add
// it as a decimal.
func (ds *devSums) addInt(slot model.SlotName, agent model.AgentID, byAgent bool, amt model.Dec) bool {
	if amt.Exponent() != 0 {
		return false
	}
	v, err := amt.Int64()
	if err != nil {
		return false
	}
	for i := range ds.ints {
		is := &ds.ints[i]
		if is.slot == slot && is.byAgent == byAgent && is.agent == agent {
			if v > 0 && is.n > math.MaxInt64-v || v < 0 && is.n < math.MinInt64-v {
				return false
			}
			is.n += v
			return true
		}
	}
	ds.ints = append(ds.ints, intSum{slot: slot, agent: agent, byAgent: byAgent, n: v})
	return true
}

// add adds k's holdings on the devices have lacks.
func (us *usageSums) add(k *model.Kernel, have map[model.DeviceKey]usageRec) {
	if us.devs == nil {
		us.devs = map[model.DeviceKey]*devSums{}
	}
	// Devices this kernel was counted on (a kernel holding two slots on
	// one device counts once there): a few, looked up in turn; a map
	// past those, since a record may claim any number of devices.
	var few [8]model.DeviceKey
	nfew := 0
	var many map[model.DeviceKey]bool
	for slot, devs := range k.Alloc {
		name := slot.DeviceName()
		for id, amt := range devs {
			key := model.DeviceKey{Name: name, ID: id}
			if _, ok := have[key]; ok {
				continue
			}
			ds := us.devs[key]
			if ds == nil {
				ds = &devSums{u: &model.DeviceUsage{Key: key, Held: model.ResourceSlot{}, ByAgent: map[model.AgentID]model.ResourceSlot{}}}
				us.devs[key] = ds
			}
			u := ds.u
			if !ds.addInt(slot, "", false, amt) {
				u.Held[slot] = u.Held[slot].Add(amt)
			}
			if !ds.addInt(slot, k.Agent, true, amt) {
				ba := u.ByAgent[k.Agent]
				if ba == nil {
					ba = model.ResourceSlot{}
					u.ByAgent[k.Agent] = ba
				}
				ba[slot] = ba[slot].Add(amt)
			}
			seen := many[key]
			for _, f := range few[:nfew] {
				seen = seen || f == key
			}
			switch {
			case seen:
			case nfew < len(few):
				few[nfew] = key
				nfew++
				u.Kernels++
			default:
				if many == nil {
					many = map[model.DeviceKey]bool{}
				}
				many[key] = true
				u.Kernels++
			}
		}
	}
}

// finish adds the integer sums to the decimal ones and returns the totals.
func (us *usageSums) finish() map[model.DeviceKey]*model.DeviceUsage {
	out := make(map[model.DeviceKey]*model.DeviceUsage, len(us.devs))
	for key, ds := range us.devs {
		u := ds.u
		for _, is := range ds.ints {
			r := u.Held
			if is.byAgent {
				if r = u.ByAgent[is.agent]; r == nil {
					r = model.ResourceSlot{}
					u.ByAgent[is.agent] = r
				}
			}
			r[is.slot] = r[is.slot].Add(model.NewDec(is.n, 0))
		}
		out[key] = u
	}
	us.devs = nil
	return out
}

// mergeUsage adds the sums of src to dst.
func mergeUsage(dst, src map[model.DeviceKey]*model.DeviceUsage) {
	for key, su := range src {
		du := dst[key]
		if du == nil {
			dst[key] = su
			continue
		}
		du.Kernels += su.Kernels
		addSlots(du.Held, su.Held)
		for a, r := range su.ByAgent {
			if du.ByAgent[a] == nil {
				du.ByAgent[a] = model.ResourceSlot{}
			}
			addSlots(du.ByAgent[a], r)
		}
	}
}

func addSlots(dst, src model.ResourceSlot) {
	for s, v := range src {
		if w, ok := dst[s]; ok {
			dst[s] = w.Add(v)
		} else {
			dst[s] = v
		}
	}
}

// pruneUsage drops the zeros of the split by agent, as the engine does.
func pruneUsage(out map[model.DeviceKey]*model.DeviceUsage) {
	for _, u := range out {
		for a, r := range u.ByAgent {
			for s, v := range r {
				if v.IsZero() {
					delete(r, s)
				}
			}
			if len(r) == 0 {
				delete(u.ByAgent, a)
			}
		}
		if len(u.ByAgent) == 0 {
			u.ByAgent = nil
		}
	}
}

func decodeUsage(d *dec) usageRec {
	var u usageRec
	u.Key = model.DeviceKey{Name: model.DeviceName(d.str()), ID: model.DeviceID(d.str())}
	u.Held = decodeSlots(d)
	u.Kernels = int(min(d.uvarint(), 1<<31))
	if n := d.count(); n > 0 {
		u.ByAgent = make(map[model.AgentID]model.ResourceSlot, n)
		for i := 0; i < n && d.err == nil; i++ {
			a := model.AgentID(d.str())
			if d.byte() == 1 {
				u.ByAgent[a] = u.Held
			} else {
				u.ByAgent[a] = decodeSlots(d)
			}
		}
	}
	return u
}

// agentsShape is the agents without their kernel counts and totals,
// which change with nearly every kernel and go in a totals record.
func agentsShape(as []model.Agent) []model.Agent {
	out := make([]model.Agent, len(as))
	for i, a := range as {
		a.Held, a.Kernels = nil, 0
		out[i] = a
	}
	return out
}

func agentsShapeEqual(a, b []model.Agent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.ID != y.ID || x.ScratchRoot != y.ScratchRoot || !same(x.Mem, y.Mem) || x.Restart.State != y.Restart.State ||
			x.Restart.Detail != y.Restart.Detail || !slices.Equal(x.Restart.PIDs, y.Restart.PIDs) || (x.Owns == nil) != (y.Owns == nil) ||
			len(x.Owns) != len(y.Owns) || (x.Given == nil) != (y.Given == nil) || !sameSlots(x.Given, y.Given) {
			// Given is a slot-based partition's amounts: an apply that
			// changes only them is a partition change the record keeps.
			return false
		}
		for k, v := range x.Owns {
			if w, ok := y.Owns[k]; !ok || !slices.Equal(v, w) {
				return false
			}
		}
	}
	return true
}

func totalsEqual(a, b []model.Agent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kernels != b[i].Kernels || len(a[i].Held) != len(b[i].Held) {
			return false
		}
		for k, v := range a[i].Held {
			if w, ok := b[i].Held[k]; !ok || !same(v, w) {
				return false
			}
		}
	}
	return true
}

func encodeTotals(e *enc, as []model.Agent) {
	e.uvarint(uint64(len(as)))
	for i := range as {
		e.uvarint(uint64(max(as[i].Kernels, 0)))
		encodeSlots(e, as[i].Held)
	}
}

// same reports whether two amounts print the same (str(Decimal)): equal
// in value and exponent. It is Dec.Identical without building the
// strings, which the recorder would do for every amount of every change.
func same(a, b model.Dec) bool {
	if !a.IsFinite() || !b.IsFinite() || a.IsZero() {
		// NaN, infinities and zeros (-0 is not 0): rare, by their strings.
		return a.Identical(b)
	}
	return a.Exponent() == b.Exponent() && a.Cmp(b) == 0
}

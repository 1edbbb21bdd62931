package history

import (
	"encoding/json"
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
		m.Allocator.Fractional == o.Allocator.Fractional && m.Allocator.Quantum.Identical(o.Allocator.Quantum) &&
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
	n, un, mn  int
	usum, msum float64
	umax       uint32
	mmax       uint64
	hasU, hasM bool
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
	s.KernelSeq().Each(func(k *model.Kernel) {
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
	})
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

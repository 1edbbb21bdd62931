package render

import (
	"reflect"
	"slices"
	"time"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// sameButTelemetry reports whether b says what a says but for the moment
// it was taken (Seq, Time) and the devices' telemetry: what the NVML poll
// publishes every second while nothing else moves. Everything Derive reads
// besides telemetry is compared: the kernels by identity (the engine's
// sharing contract gives a changed kernel a new sequence), the rest by
// value, so a snapshot the engine rebuilt with equal agents, issues and
// usage still counts as the same. Values equal in meaning but not in
// representation (1.0 and 1.00) count as different: that only costs a
// full derivation.
func sameButTelemetry(a, b *model.Snapshot) bool {
	if a == nil || b == nil {
		return false
	}
	if a == b {
		return true
	}
	if a.KernelSeq() != b.KernelSeq() || len(a.Devices) != len(b.Devices) || len(a.Usage) != len(b.Usage) {
		return false
	}
	for k, u := range a.Usage {
		if b.Usage[k] != u {
			return false
		}
	}
	for i := range a.Devices {
		da, db := a.Devices[i], b.Devices[i]
		da.Telemetry, db.Telemetry = nil, nil
		if !reflect.DeepEqual(da, db) {
			return false
		}
	}
	ha, hb := *a, *b
	ha.Seq, hb.Seq = 0, 0
	ha.Time, hb.Time = time.Time{}, time.Time{}
	ha.Devices, hb.Devices = nil, nil
	ha.Usage, hb.Usage = nil, nil
	return reflect.DeepEqual(ha, hb)
}

// sameOptions reports whether two derivations' options draw alike.
func sameOptions(a, b DeriveOptions) bool {
	return a.Th == b.Th && a.Looks == b.Looks && reflect.DeepEqual(a.G, b.G)
}

// retelemetry is p for snapshot s, which differs from p's only in its
// time and telemetry (sameButTelemetry): the device rows get s's devices
// and their telemetry cells, the agent and issue rows point into s; every
// other row, figure and measure is p's, shared (a Derived is never
// modified once made).
func (p *Derived) retelemetry(s *model.Snapshot, o DeriveOptions) *Derived {
	d := *p
	d.Snap = s
	d.Devs = slices.Clone(p.Devs)
	for i := range d.Devs {
		r := &d.Devs[i]
		r.Dev = &s.Devices[r.devIdx]
		r.Tele = kit.FormatTelemetry(r.Dev.Telemetry, o.Th, o.G.Degree)
		r.procs = 0
		if t := r.Dev.Telemetry; t != nil {
			r.procs = len(t.Processes)
		}
	}
	d.Agents = slices.Clone(p.Agents)
	for i := range d.Agents {
		d.Agents[i].A = &s.Agents[i]
	}
	d.Issues = slices.Clone(p.Issues)
	for i := range d.Issues {
		d.Issues[i].Is = &s.Issues[i]
	}
	return &d
}

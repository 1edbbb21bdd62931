package render

import (
	"reflect"
	"slices"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// sameButTelemetry reports whether b says what a says but for the moment
// it was taken (Seq, Time) and the devices' telemetry: what the NVML poll
// publishes every second while nothing else moves. Every other field is
// compared (TestSameButTelemetrySeesEveryField keeps the list whole): the
// kernels and device usages by identity (the engine's sharing contract
// gives a changed one a new pointer), the rest by value, so a snapshot the
// engine rebuilt with equal agents and issues still counts as the same.
// Decimals equal in value but not in representation (1.0 and 1.00) count
// as different: that only costs a full derivation. It allocates nothing:
// it runs on every snapshot.
func sameButTelemetry(a, b *model.Snapshot) bool {
	switch {
	case a == nil || b == nil:
		return false
	case a == b:
		return true
	case a.KernelSeq() != b.KernelSeq(), len(a.Devices) != len(b.Devices), len(a.Usage) != len(b.Usage),
		a.Node != b.Node, a.Source != b.Source, a.Mode != b.Mode, a.ConfigPath != b.ConfigPath,
		a.ConfigHash != b.ConfigHash, a.DraftFormat != b.DraftFormat, a.HostMemBytes != b.HostMemBytes,
		a.IdleKernels != b.IdleKernels, a.IdleAfter != b.IdleAfter,
		(a.SummaryKernels == nil) != (b.SummaryKernels == nil), a.SummaryKernels != nil && *a.SummaryKernels != *b.SummaryKernels,
		!sameAllocator(&a.Allocator, &b.Allocator), !samePlugin(a.Plugin, b.Plugin),
		!slices.Equal(a.Issues, b.Issues):
		return false
	}
	for k, u := range a.Usage {
		if b.Usage[k] != u {
			return false
		}
	}
	for i := range a.Devices {
		if !sameDevice(&a.Devices[i], &b.Devices[i]) {
			return false
		}
	}
	return len(a.Agents) == len(b.Agents) && (len(a.Agents) == 0 || reflect.DeepEqual(a.Agents, b.Agents))
}

// sameDevice compares every field of two devices but their telemetry.
func sameDevice(a, b *model.Device) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Slot == b.Slot && a.SlotType == b.SlotType &&
		a.Capacity.Identical(b.Capacity) && a.CapacityUnknown == b.CapacityUnknown && a.Index == b.Index &&
		a.Model == b.Model && a.UUID == b.UUID && a.NUMANode == b.NUMANode && a.Parent == b.Parent &&
		a.MemoryBytes == b.MemoryBytes && a.Processors == b.Processors
}

func sameAllocator(a, b *model.Allocator) bool {
	return a.Fractional == b.Fractional && a.Quantum.Identical(b.Quantum) && a.AffinityPolicy == b.AffinityPolicy &&
		slices.Equal(a.AllocationOrder, b.AllocationOrder)
}

func samePlugin(a, b *model.PluginInfo) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// sameOptions reports whether two derivations' options draw alike. It is
// asked for each snapshot by each of serve's sessions (the shared
// Deriver finds their entry by it): it allocates nothing.
func sameOptions(a, b *DeriveOptions) bool {
	return a.Th == b.Th && a.Looks == b.Looks && sameGlyphs(&a.G, &b.G)
}

// sameGlyphs is reflect.DeepEqual for glyphs, field by field
// (TestSameGlyphsSeesEveryField keeps the list whole): DeepEqual boxed
// the options and walked them by reflection, 1.6 % of the server's CPU at
// 50 viewers of the demo node.
func sameGlyphs(a, b *kit.Glyphs) bool {
	return a.Held == b.Held && a.HeldAlt == b.HeldAlt && a.Free == b.Free && a.Over == b.Over &&
		slices.Equal(a.Patterns, b.Patterns) && a.Mark == b.Mark && a.Drift == b.Drift && a.DriftAlt == b.DriftAlt &&
		slices.Equal(a.Spark, b.Spark) && a.Branch == b.Branch && a.Sep == b.Sep && a.Rule == b.Rule &&
		a.Ellipsis == b.Ellipsis && a.More == b.More && a.Cursor == b.Cursor && a.Lock == b.Lock && a.Up == b.Up &&
		a.Down == b.Down && a.Degree == b.Degree && a.Dot == b.Dot &&
		a.CornerTL == b.CornerTL && a.CornerTR == b.CornerTR && a.CornerBL == b.CornerBL && a.CornerBR == b.CornerBR &&
		a.Owned == b.Owned && a.Gained == b.Gained && a.Lost == b.Lost && a.Hit == b.Hit && a.To == b.To
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

package render

import (
	"reflect"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestRetelemetryMatchesFullDerive: a snapshot where only the telemetry
// moved is derived from the previous derivation, and what comes out is
// what deriving it from scratch gives; a snapshot where anything else
// changed (an agent's health, an issue, a device's capacity) is derived
// in full.
func TestRetelemetryMatchesFullDerive(t *testing.T) {
	o := DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false), Looks: kit.LookDims{Colours: 6, Shapes: 1}}
	for name, s := range map[string]*model.Snapshot{
		"fixture": fake.Node(fake.Options{}), "degraded": fake.Node(fake.Options{Source: "degraded"}),
		"large": fake.Large(8, 40),
	} {
		t.Run(name, func(t *testing.T) {
			c := NewDeriveCache()
			Derive(s, o, c)
			check := func(s *model.Snapshot, full, reused int) {
				t.Helper()
				got := Derive(s, o, c)
				if c.Full != full || c.Reused != reused {
					t.Fatalf("derived %d in full and %d from the previous one, want %d and %d", c.Full, c.Reused, full, reused)
				}
				if want := Derive(s, o, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("snapshot %d: the derivation differs from a fresh one", s.Seq)
				}
				for i := range got.Devs {
					if r := &got.Devs[i]; r.Dev != &s.Devices[r.devIdx] {
						t.Fatalf("row %s points into another snapshot", r.Label)
					}
				}
				for i := range got.Agents {
					if got.Agents[i].A != &s.Agents[i] {
						t.Fatalf("agent row %d points into another snapshot", i)
					}
				}
			}
			for n := 1; n <= 3; n++ {
				s = fake.Tick(s, n)
				check(s, 1, n)
			}
			s = fake.Tick(s, 4)
			s.Agents[0].Health = model.AgentHealth{State: model.AgentDown, Detail: "connection refused"}
			check(s, 2, 3)
			s = fake.Tick(s, 5)
			s.Issues = append(s.Issues, model.Issue{Severity: model.SevWarning, Code: "test-issue", Message: "a new issue"})
			check(s, 3, 3)
			s = fake.Tick(s, 6)
			s.Devices[0].Capacity = model.MustDec("2.00")
			check(s, 4, 3)
			s = fake.Tick(s, 7)
			check(s, 4, 4)
		})
	}
}

// TestSameButTelemetrySeesEveryField: changing any field of a snapshot or
// of one of its devices, but the time and the telemetry, makes it another
// snapshot to derive. A field added to model.Snapshot or model.Device
// fails here until sameButTelemetry compares it.
func TestSameButTelemetrySeesEveryField(t *testing.T) {
	base := fake.Node(fake.Options{})
	base.Plugin = &model.PluginInfo{Kind: "cuda_open"}
	base.Allocator.AllocationOrder = []model.DeviceName{"cuda"}
	snapFields := map[string]func(s *model.Snapshot){
		"Seq": nil, "Time": nil, // the moment: the same snapshot
		"Gen":          nil, // a marker of content, not content: derived as ever
		"Node":         func(s *model.Snapshot) { s.Node += "x" },
		"Source":       func(s *model.Snapshot) { s.Source.Health = "degraded" },
		"Mode":         func(s *model.Snapshot) { s.Mode = "shared" },
		"ConfigPath":   func(s *model.Snapshot) { s.ConfigPath += "x" },
		"ConfigHash":   func(s *model.Snapshot) { s.ConfigHash += "x" },
		"DraftFormat":  func(s *model.Snapshot) { s.DraftFormat = !s.DraftFormat },
		"Devices":      func(s *model.Snapshot) { s.Devices = s.Devices[1:] },
		"Agents":       func(s *model.Snapshot) { s.Agents[1].Kernels++ },
		"Usage":        func(s *model.Snapshot) { s.Usage[s.Devices[0].Key()] = &model.DeviceUsage{} },
		"Issues":       func(s *model.Snapshot) { s.Issues[0].Line++ },
		"HostMemBytes": func(s *model.Snapshot) { s.HostMemBytes++ },
		"Allocator":    func(s *model.Snapshot) { s.Allocator.Quantum = model.MustDec("0.10") },
		"Plugin":       func(s *model.Snapshot) { s.Plugin = &model.PluginInfo{Kind: "cuda_fractional"} },
		"IdleKernels":  func(s *model.Snapshot) { s.IdleKernels++ },
		"IdleAfter":    func(s *model.Snapshot) { s.IdleAfter++ },
		"SummaryKernels": func(s *model.Snapshot) {
			n := 7
			s.SummaryKernels = &n
		},
		"kernels": func(s *model.Snapshot) { s.SetKernels(s.Kernels()[1:]) },
	}
	devFields := map[string]func(d *model.Device){
		"Telemetry":       nil, // what moves at rest
		"ID":              func(d *model.Device) { d.ID += "x" },
		"Name":            func(d *model.Device) { d.Name += "x" },
		"Slot":            func(d *model.Device) { d.Slot += "x" },
		"SlotType":        func(d *model.Device) { d.SlotType += "x" },
		"Capacity":        func(d *model.Device) { d.Capacity = model.MustDec("1.000") },
		"CapacityUnknown": func(d *model.Device) { d.CapacityUnknown = !d.CapacityUnknown },
		"Index":           func(d *model.Device) { d.Index++ },
		"Model":           func(d *model.Device) { d.Model += "x" },
		"UUID":            func(d *model.Device) { d.UUID += "x" },
		"NUMANode":        func(d *model.Device) { d.NUMANode++ },
		"Parent":          func(d *model.Device) { d.Parent += "x" },
		"MemoryBytes":     func(d *model.Device) { d.MemoryBytes++ },
		"Processors":      func(d *model.Device) { d.Processors++ },
	}
	for typ, names := range map[reflect.Type][]string{
		reflect.TypeFor[model.Snapshot](): keysOf(snapFields), reflect.TypeFor[model.Device](): keysOf(devFields),
	} {
		for i := range typ.NumField() {
			if f := typ.Field(i).Name; !slices.Contains(names, f) {
				t.Errorf("%s.%s is new: say in sameButTelemetry whether it changes what Derive makes, then here", typ.Name(), f)
			}
		}
	}
	for name, change := range snapFields {
		s := fake.Tick(base, 1)
		if change != nil {
			s.Issues = slices.Clone(s.Issues)
			change(s)
		}
		if got := sameButTelemetry(base, s); got != (change == nil) {
			t.Errorf("Snapshot.%s changed: sameButTelemetry says %v", name, got)
		}
	}
	for name, change := range devFields {
		s := fake.Tick(base, 1)
		if change != nil {
			change(&s.Devices[0])
		}
		if got := sameButTelemetry(base, s); got != (change == nil) {
			t.Errorf("Device.%s changed: sameButTelemetry says %v", name, got)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSameGlyphsSeesEveryField: glyphs that differ in any one field draw
// otherwise, so options with them are other options. A field added to
// kit.Glyphs fails here until sameGlyphs compares it. Comparing options
// allocates nothing (each of serve's sessions asks for each snapshot).
func TestSameGlyphsSeesEveryField(t *testing.T) {
	base := kit.UnicodeGlyphs(true)
	typ := reflect.TypeFor[kit.Glyphs]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		g := base
		g.Patterns, g.Spark = slices.Clone(base.Patterns), slices.Clone(base.Spark)
		v := reflect.ValueOf(&g).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Slice:
			// Same length, one element other: the contents are compared.
			v.Index(0).SetString(v.Index(0).String() + "x")
		default:
			t.Fatalf("kit.Glyphs.%s is a %s: sameGlyphs and this test know strings and slices of them", f.Name, f.Type)
		}
		if sameGlyphs(&base, &g) || sameGlyphs(&g, &base) {
			t.Errorf("glyphs differing in %s count as the same", f.Name)
		}
	}
	same := base
	same.Patterns, same.Spark = slices.Clone(base.Patterns), slices.Clone(base.Spark)
	if !sameGlyphs(&base, &same) {
		t.Error("equal glyphs (slices of their own) count as different")
	}
	a := DeriveOptions{Th: kit.DefaultThresholds(), G: base, Looks: kit.LookDims{Colours: 6, Shapes: 1}}
	b := a
	b.G = same
	if n := testing.AllocsPerRun(10, func() {
		if !sameOptions(&a, &b) {
			t.Fatal("equal options count as different")
		}
	}); n != 0 {
		t.Errorf("comparing options allocated %.0f times, want none", n)
	}
}

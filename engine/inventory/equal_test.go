package inventory

import (
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// equalBase is a reading with every field set, built afresh per call so a
// test can change one field of its own copy.
func equalBase() *Inventory {
	tel := func() *model.Telemetry {
		return &model.Telemetry{
			MemUsed: model.Some(uint64(1 << 30)), MemTotal: model.Some(uint64(80 << 30)), UtilGPU: model.Some(uint32(3)),
			UtilMem: model.Some(uint32(1)), TempC: model.Some(uint32(40)), PowerMW: model.Some(uint32(70_000)),
			PowerCapMW: model.Some(uint32(700_000)), MIGMode: model.Some(false), ProcUtil: model.Some(true),
			Processes: []model.Process{{PID: 7, UsedMem: model.Some(uint64(5)), SMUtil: model.Some(uint32(2)), MemUtil: model.Some(uint32(1)),
				Name: "python3", Start: 9, Container: "c0ffee", Kernel: "k1", Owner: model.ProcKernel, Detail: "d"}},
			Errors: []string{"temperature: unknown"},
		}
	}
	return &Inventory{
		Devices: []model.Device{{ID: "GPU-1", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
			Capacity: model.NewDec(1, 0), Index: 0, Model: "H100", UUID: "1", NUMANode: 0, Parent: "p",
			MemoryBytes: 80 << 30, Processors: 132, Telemetry: tel()}},
		SlotTypes:         model.SlotTypes{model.SlotCUDAShares: model.SlotTypeCount},
		Source:            model.SourceInfo{Kind: KindNVML, Health: HealthOK, Detail: "NVML"},
		Issues:            []model.Issue{{Severity: model.SevWarning, Code: "c", Message: "m", File: "f", Line: 1, Device: model.DeviceKey{Name: "cuda", ID: "GPU-1"}, Kernel: "k", Agent: "a"}},
		HostMemBytes:      1 << 40,
		Fractional:        true,
		Quantum:           model.NewDec(1, -2),
		Plugin:            &model.PluginInfo{Kind: model.PluginCUDAFractional, Source: "flag", Detail: "d", Settings: "none", SettingsOK: true},
		AgentUnregistered: map[model.AgentID]map[model.DeviceID]bool{"i-a": {"GPU-x": true}},
		Unidentified: []UnidentifiedGPU{{
			Devices:   []model.Device{{ID: "1", Name: "cuda", Index: 1, Telemetry: tel()}},
			NotListed: model.Issue{Severity: model.SevError, Code: "c", Message: "not listed"},
			Issues:    []model.Issue{{Severity: model.SevError, Code: "c", Message: "lost", Device: model.DeviceKey{Name: "cuda", ID: "1"}}},
		}},
	}
}

var decType = reflect.TypeFor[model.Dec]()

// mutateLeaf changes the n-th leaf (in walk order) under v and reports
// whether there was one; *seen counts the leaves walked.
func mutateLeaf(v reflect.Value, n int, seen *int, path string, where *string) bool {
	leaf := func(change func()) bool {
		if *seen == n {
			change()
			*where = path
			*seen++
			return true
		}
		*seen++
		return false
	}
	if v.Type() == decType {
		return leaf(func() { v.Set(reflect.ValueOf(model.NewDec(123, 0))) })
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return false
		}
		return leaf(func() { v.Set(reflect.Zero(v.Type())) }) || mutateLeaf(v.Elem(), n, seen, path+"*", where)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if mutateLeaf(v.Field(i), n, seen, path+"."+v.Type().Field(i).Name, where) {
				return true
			}
		}
		return false
	case reflect.Slice:
		if leaf(func() { v.Set(v.Slice(0, 0)) }) {
			return true
		}
		for i := range v.Len() {
			if mutateLeaf(v.Index(i), n, seen, path+"[i]", where) {
				return true
			}
		}
		return false
	case reflect.Map:
		return leaf(func() { v.Set(reflect.MakeMap(v.Type())) })
	case reflect.String:
		return leaf(func() { v.SetString(v.String() + "x") })
	case reflect.Bool:
		return leaf(func() { v.SetBool(!v.Bool()) })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return leaf(func() { v.SetInt(v.Int() + 1) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return leaf(func() { v.SetUint(v.Uint() + 1) })
	}
	panic("equal test: no mutation for " + path + " of kind " + v.Kind().String())
}

// TestEqualSeesEveryField: changing any one field of a reading, however
// deep (a device's telemetry, a process, an issue, the plugin), makes it
// unequal; a field added to the model and forgotten by Equal fails here.
func TestEqualSeesEveryField(t *testing.T) {
	if !Equal(equalBase(), equalBase()) {
		t.Fatal("two equal readings are unequal")
	}
	n := 0
	for ; ; n++ {
		b := equalBase()
		seen, where := 0, ""
		if !mutateLeaf(reflect.ValueOf(b).Elem(), n, &seen, "Inventory", &where) {
			break
		}
		if Equal(equalBase(), b) || Equal(b, equalBase()) {
			t.Errorf("%s changed, Equal still says equal", where)
		}
	}
	if n < 50 {
		t.Fatalf("walked only %d fields", n)
	}
	// No process list and an empty one say different things.
	a, b := equalBase(), equalBase()
	a.Devices[0].Telemetry.Processes, b.Devices[0].Telemetry.Processes = nil, []model.Process{}
	if Equal(a, b) {
		t.Error("nil and empty process lists compare equal")
	}
	// The same value written with another exponent prints otherwise.
	a, b = equalBase(), equalBase()
	b.Devices[0].Capacity = model.NewDec(100, -2)
	if Equal(a, b) {
		t.Error("capacity 1 and 1.00 compare equal")
	}
}

// TestSameAccelSeesEveryField: the NVML source returns its last reading
// when sameAccel says the new one reads the same, so every field of an
// accel must count; a new field without a case here fails the count.
func TestSameAccelSeesEveryField(t *testing.T) {
	base := func() *accel {
		return &accel{
			devices:   []model.Device{{ID: "0", Name: "cuda", Telemetry: &model.Telemetry{TempC: model.Some(uint32(40))}}},
			slotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount},
			source:    model.SourceInfo{Kind: KindNVML, Health: HealthOK, Detail: "1 GPU(s)"},
			issues:    []model.Issue{{Severity: model.SevWarning, Code: model.IssueDeviceSource, Message: "x"}},
			quantum:   model.NewDec(1, -2),
		}
	}
	cases := map[string]func(a *accel){
		"devices":    func(a *accel) { a.devices[0].Telemetry = &model.Telemetry{TempC: model.Some(uint32(41))} },
		"slotTypes":  func(a *accel) { a.slotTypes["cuda.mig-1g.10gb"] = model.SlotTypeUnique },
		"source":     func(a *accel) { a.source.Health = HealthDegraded },
		"issues":     func(a *accel) { a.issues = nil },
		"fractional": func(a *accel) { a.fractional = true },
		"quantum":    func(a *accel) { a.quantum = model.NewDec(5, -2) },
		"unidentified": func(a *accel) {
			a.unidentified = []UnidentifiedGPU{{Devices: []model.Device{{ID: "1", Name: "cuda", Index: 1}}}}
		},
	}
	if n := reflect.TypeOf(accel{}).NumField(); n != len(cases) {
		t.Fatalf("accel has %d fields, this test changes %d", n, len(cases))
	}
	if !sameAccel(base(), base()) {
		t.Fatal("two equal readings differ")
	}
	for name, change := range cases {
		b := base()
		change(b)
		if sameAccel(base(), b) {
			t.Errorf("%s changed, yet the readings are the same", name)
		}
	}
}

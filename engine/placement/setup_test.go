package placement

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

func TestAcceleratorsOf(t *testing.T) {
	const etcd = "/x/mock.etcd.json"
	warn := func(file, msg string) model.Issue {
		return model.Issue{Severity: model.SevWarning, File: file, Message: msg}
	}
	fail := func(file, msg string) model.Issue {
		return model.Issue{Severity: model.SevError, File: file, Message: msg}
	}
	info := model.Issue{Severity: model.SevInfo, Message: "quiet"}
	accel := []model.Device{gpu("A", 0, "1.00"), core(0, 0), memDev("1024")}
	accel[0].Telemetry = &model.Telemetry{}
	tests := []struct {
		name     string
		devices  []model.Device
		issues   []model.Issue
		etcdFile string
		devs     int
		warnings []string // message, "etcd:" marking the etcd file's
		fatal    string
	}{
		{name: "no issues: accelerators only", devices: accel, devs: 1},
		{name: "info is not warned about", devices: accel, issues: []model.Issue{info}, devs: 1},
		{name: "etcd warning and source warning keep their order", devices: accel, etcdFile: etcd,
			issues: []model.Issue{warn(etcd, "e1"), warn("/x/mock.toml", "s1")}, devs: 1, warnings: []string{"etcd:e1", "s1"}},
		{name: "etcd error with devices left is the last warning", devices: accel, etcdFile: etcd,
			issues: []model.Issue{fail(etcd, "bad mode"), warn("", "s1"), fail(etcd, "second")}, devs: 1,
			warnings: []string{"s1", "etcd:second", "etcd:bad mode"}},
		{name: "etcd error leaving no devices is fatal", devices: []model.Device{core(0, 0)}, etcdFile: etcd,
			issues: []model.Issue{warn("", "s1"), fail(etcd, "bad mode")}, warnings: []string{"s1"}, fatal: "bad mode"},
		{name: "without an etcd file its issues are the source's", devices: nil,
			issues: []model.Issue{fail(etcd, "bad mode")}, warnings: []string{"bad mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := &inventory.Inventory{Devices: slices.Clone(tt.devices), Issues: tt.issues}
			got := AcceleratorsOf(inv, tt.etcdFile)
			if len(got.Devices) != tt.devs {
				t.Fatalf("devices %v, want %d", got.Devices, tt.devs)
			}
			for _, d := range got.Devices {
				if d.Name == "cpu" || d.Name == "mem" || d.Telemetry != nil {
					t.Errorf("kept %s with telemetry %v", d.Key(), d.Telemetry)
				}
			}
			var ws []string
			for _, w := range got.Warnings {
				s := w.Message
				if w.Etcd {
					s = "etcd:" + s
				}
				ws = append(ws, s)
			}
			if !slices.Equal(ws, tt.warnings) {
				t.Errorf("warnings %q, want %q", ws, tt.warnings)
			}
			fatal := ""
			if got.EtcdFatal != nil {
				fatal = got.EtcdFatal.Message
			}
			if fatal != tt.fatal {
				t.Errorf("fatal %q, want %q", fatal, tt.fatal)
			}
		})
	}
	if accel[0].Telemetry == nil {
		t.Error("AcceleratorsOf changed the inventory's device")
	}
}

func TestSetLiveNode(t *testing.T) {
	tests := []struct {
		name    string
		live    Live
		unknown bool // a device's capacity unknown
		err     string
		cores   int
		kernels int
		planner bool
	}{
		{name: "whole node of two agents gets a planner", cores: 8, kernels: 3, planner: true},
		{name: "one agent's allocator", live: Live{Agent: "a1"}, cores: 8, kernels: 1},
		{name: "virtual host replaces the cores", live: Live{Agent: "a2", CPUs: 16, CPUNUMA: 2}, cores: 16, kernels: 2},
		{name: "no such agent names the node's", live: Live{Agent: "a3"}, err: "agent a3 [a1 a2]"},
		{name: "capacity unknown", unknown: true, err: "capacity cuda:B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := twoAgentNode()
			if tt.unknown {
				snap.Devices[1].CapacityUnknown = true
			}
			before := len(snap.Devices)
			sim := &Simulation{Types: model.DefaultSlotTypes()}
			_, err := sim.SetLiveNode(snap, tt.live, Settings{})
			var ua *UnknownAgentError
			var cu *CapacityUnknownError
			got := ""
			switch {
			case errors.As(err, &ua):
				got = fmt.Sprintf("agent %s %v", ua.Agent, ua.Have)
			case errors.As(err, &cu):
				got = fmt.Sprintf("capacity %s", cu.Device)
			case err != nil:
				t.Fatal(err)
			}
			if got != tt.err {
				t.Fatalf("error %q, want %q", got, tt.err)
			}
			if len(snap.Devices) != before {
				t.Errorf("the snapshot's devices changed")
			}
			if err != nil {
				return
			}
			cores := len(sim.Phys.bySlot[model.SlotCPU])
			if cores != tt.cores || sim.Kernels != tt.kernels || (sim.Planner != nil) != tt.planner {
				t.Errorf("cores %d kernels %d planner %v, want %d %d %v", cores, sim.Kernels, sim.Planner != nil, tt.cores, tt.kernels, tt.planner)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg := &agentconfig.Config{AffinityPolicy: "PREFER_SINGLE_NODE", AllocationOrder: []string{"cpu", "cuda"}}
	tests := []struct {
		name                string
		policySet, orderSet bool
		policy              alloc.AffinityPolicy
		order               []model.DeviceName
	}{
		{name: "config fills both", policy: alloc.PreferSingleNode, order: []model.DeviceName{"cpu", "cuda"}},
		{name: "flags win", policySet: true, orderSet: true, order: []model.DeviceName{"mem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Settings{Order: []model.DeviceName{"mem"}}
			ConfigDefaults(&s, cfg, tt.policySet, tt.orderSet)
			if s.Policy != tt.policy || !slices.Equal(s.Order, tt.order) {
				t.Errorf("policy %v order %v, want %v %v", s.Policy, s.Order, tt.policy, tt.order)
			}
		})
	}
}

func TestCheckCases(t *testing.T) {
	cases := loadCorpus(t)[:3]
	var runs []CaseRun
	ops := 0
	for i := range cases {
		node, steps, err := cases[i].Prepare(CaseOverrides{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(node, steps, RunOptions{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		ops += len(steps)
		runs = append(runs, CaseRun{Case: &cases[i], Result: res})
	}
	if got := CheckCases(runs); got.Cases != 3 || got.Operations != ops || got.Mismatched != 0 || len(got.Mismatches) != 0 {
		t.Fatalf("clean runs: %+v (operations %d)", got, ops)
	}
	// A run that lost its last step no longer matches its case.
	r := runs[1].Result
	r.Steps = r.Steps[:len(r.Steps)-1]
	got := CheckCases(runs)
	if got.Mismatched != 1 || len(got.Mismatches) != 1 || got.Mismatches[0].Case != cases[1].ID || got.Operations != ops-1 {
		t.Fatalf("truncated run: %+v", got)
	}
}

func TestCaseOverrides(t *testing.T) {
	fill, prefer, forbid := alloc.Fill, alloc.PreferSingleNode, true
	base := func() Settings {
		return Settings{Quantum: dec("0.1"), PluginStrategy: map[model.DeviceName]alloc.Strategy{"cuda": alloc.Evenly, "rocm": alloc.Evenly}}
	}
	s := base()
	CaseOverrides{}.apply(&s)
	if !s.Quantum.Equal(dec("0.1")) || s.PluginStrategy["cuda"] != alloc.Evenly || s.ForbidFragmentation || s.Policy != alloc.Interleaved {
		t.Errorf("no overrides changed %+v", s)
	}
	s = base()
	CaseOverrides{Strategy: &fill, Policy: &prefer, Quantum: dec("0.25"), ForbidFragmentation: &forbid}.apply(&s)
	if s.Strategy != alloc.Fill || s.PluginStrategy["cuda"] != alloc.Fill || s.PluginStrategy["rocm"] != alloc.Fill ||
		s.Policy != alloc.PreferSingleNode || !s.Quantum.Equal(dec("0.25")) || !s.ForbidFragmentation {
		t.Errorf("overrides gave %+v", s)
	}
}

func TestUnplacedAndDeviceList(t *testing.T) {
	devs := []model.Device{gpu("A", 0, "1.00"), core(0, 0)}
	sim := &Simulation{Types: model.DefaultSlotTypes()}
	s := Settings{Strategy: alloc.Fill}
	sim.TakeDeviceList(&s, devs)
	if s.PluginStrategy["cuda"] != alloc.Fill || s.PluginStrategy["cpu"] != alloc.Fill || s.AllocMapSlots != nil {
		t.Fatalf("device list settings %+v", s)
	}
	sim.SetDevices(devs, s)
	res, err := Run(sim.Node, steps(t, "cuda.shares=0.5", "cuda.shares=2", "free=1", "free=2", "cuda.shares=0.5"), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The 2-share request does not fit; freeing it fails but is no request.
	if n := sim.Unplaced(res); n != 1 {
		t.Errorf("unplaced %d, want 1", n)
	}
	if r := BadAmount(res); r != nil {
		t.Errorf("bad amount at %q", r.Step.Text)
	}
}

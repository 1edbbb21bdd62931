package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestDrift(t *testing.T) {
	devs := fixtureDevices()
	manualDev := func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.device-based.toml") }
	type want struct {
		code, device, agent, text string
	}
	tests := []struct {
		name    string
		cfg     func(t *testing.T) *agentconfig.Config
		devices []model.Device
		kernels []*model.Kernel
		want    []want
	}{
		{
			name:    "clean",
			cfg:     manualDev,
			devices: devs,
			kernels: []*model.Kernel{kernel("k1", agentB, gpu4, "0.50"), kernel("k2", agentA, gpu1, "1.00")},
		},
		{
			name:    "kernel on a device its agent does not own",
			cfg:     manualDev,
			devices: devs,
			kernels: []*model.Kernel{kernel("k1", agentA, gpu4, "0.50")},
			want: []want{{model.IssueDriftNotOwner, "cuda:" + gpu4, agentA,
				"kernel k1 of agent i-gpu-node01-numa0 holds 0.50 cuda.shares on cuda:" + gpu4 + ", which agent i-gpu-node01-numa0 does not own (it belongs to i-gpu-node01-numa1)"}},
		},
		{
			name: "core held outside the agent's list",
			cfg:  manualDev,
			kernels: []*model.Kernel{{ID: "k3", Agent: agentB, State: model.KernelOK,
				Alloc: model.Allocations{model.SlotCPU: {"3": model.One, "16": model.One}, model.SlotMem: {"root": model.NewDec(1<<30, 0)}}}},
			devices: devs,
			want:    []want{{model.IssueDriftNotOwner, "cpu:3", agentB, "holds 1 cpu on cpu:3"}},
		},
		{
			name:    "unowned GPU in manual mode",
			cfg:     manualDev,
			devices: hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4, "extra"}, 256),
			want:    []want{{model.IssueDriftUnowned, "cuda:extra", "", "cuda:extra is owned by no agent (manual mode)"}},
		},
		{
			// One note for every core no agent lists, in ranges.
			name:    "unowned cores in manual mode",
			cfg:     manualDev,
			devices: hostDevices(48, []string{gpu1, gpu2, gpu3, gpu4}, 256),
			want:    []want{{model.IssueDriftUnowned, "cpu:32", "", "cpu 32-47 (16 cores) are owned by no agent (manual mode)"}},
		},
		{
			name:    "mem beyond the host",
			cfg:     manualDev,
			devices: hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4}, 200),
			want:    []want{{model.IssueDriftMemBeyond, "mem:root", "", "i-gpu-node01-numa0 120g, i-gpu-node01-numa1 120g; 240g in all) is more than the host's 200g"}},
		},
		{
			name: "auto-split deal (BEP-1044 reading)",
			cfg: func(t *testing.T) *agentconfig.Config {
				return parseConfigAs(t, twoAgents("auto-split", "", ""), agentconfig.FormatDeviceBased)
			},
			devices: devs,
			// a gets 2d01, 2d02 (natural order); b holds 2d01.
			kernels: []*model.Kernel{kernel("k1", "b", gpu1, "0.2")},
			want:    []want{{model.IssueDriftNotOwner, "cuda:" + gpu1, "b", "(it belongs to a)"}},
		},
		{
			// Main's reading of the same file: devices are not exclusive.
			name:    "auto-split deal (main's reading)",
			cfg:     func(t *testing.T) *agentconfig.Config { return parseConfig(t, twoAgents("auto-split", "", "")) },
			devices: devs,
			kernels: []*model.Kernel{kernel("k1", "b", gpu1, "0.2")},
		},
		{
			name:    "shared: nothing is drift",
			cfg:     func(t *testing.T) *agentconfig.Config { return parseConfig(t, twoAgents("shared", "", "")) },
			devices: devs,
			kernels: []*model.Kernel{kernel("k1", "b", gpu1, "0.2"), kernel("k2", "a", gpu1, "0.2")},
		},
		{
			name:    "slot-based: kernels may use any device, but not beyond the agent's capacity",
			cfg:     func(t *testing.T) *agentconfig.Config { return loadFixture(t, "agent.multi-agent.slot-based.toml") },
			devices: devs,
			kernels: []*model.Kernel{kernel("k1", "i-gpu-node01-a", gpu1, "1"), kernel("k2", "i-gpu-node01-a", gpu2, "1"), kernel("k3", "i-gpu-node01-a", gpu3, "0.5")},
			want:    []want{{model.IssueOverCapacity, "cuda:", "i-gpu-node01-a", "agent i-gpu-node01-a's kernels hold 2.5 cuda.shares, more than the 2.0 its partition reports"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg(t)
			snap := snapshot(tt.devices, tt.kernels...)
			got := Drift(Effective(c, InventoryOf(snap)), snap)
			if len(got) != len(tt.want) {
				t.Fatalf("Drift = %v, want %d issues", got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Code != w.code || Key(g.Device) != w.device || g.Agent != model.AgentID(w.agent) || !strings.Contains(g.Message, w.text) {
					t.Errorf("issue %d = %s %s %s %q, want %s %s %s ~%q", i, g.Code, Key(g.Device), g.Agent, g.Message, w.code, w.device, w.agent, w.text)
				}
			}
		})
	}
}

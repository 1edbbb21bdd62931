package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// TestCapacityUnknownSaysWhyOnce: the warning that fractional capacities
// are unknown names the reason once for the GPUs it holds for. Seen with
// etcd down from the start on four GPUs: "cuda.shares capacity unknown for
// GPU-…a0 (the plugin settings were never read), GPU-…a1 (the plugin
// settings were never read), …" four times over (eight on an 8-GPU node).
func TestCapacityUnknownSaysWhyOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reading EtcdReading
		why     string
	}{
		{"etcd down", EtcdReading{Err: errors.New("connection refused")}, "(the plugin settings were never read)"},
		{"a bad unit_mem", EtcdReading{Settings: map[model.AgentID]*Settings{"i-a": Parse(map[string]string{"unit_mem": "garbage"})}}, "(unit_mem or unit_proc cannot be used)"},
	} {
		inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
			SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
			Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok"}}}
		src := NewSource(inner, Options{Inputs: Inputs{Flag: model.PluginCUDAFractional},
			Etcd: EtcdOptions{Endpoints: []string{"127.0.0.1:1"}, Agents: []model.AgentID{"i-a"}}})
		src.take(tc.reading)
		inv, err := src.Poll(context.Background())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		var msg string
		for _, iss := range inv.Issues {
			if strings.HasPrefix(iss.Message, "cuda.shares capacity unknown for ") {
				msg = iss.Message
			}
		}
		const all = "GPU-aaaaaaaa-0000-0000-0000-000000000000, GPU-bbbbbbbb-0000-0000-0000-000000000000, GPU-cccccccc-0000-0000-0000-000000000000, GPU-dddddddd-0000-0000-0000-000000000000 "
		if strings.Count(msg, tc.why) != 1 || !strings.Contains(msg, all+tc.why) {
			t.Errorf("%s: %q; want the four GPUs, then %s once", tc.name, msg, tc.why)
		}
	}
}

package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// TestEtcdAddrUnreadSaid: with [etcd] addr = 12 in agent.toml the plugin
// settings read "none", as if the agents had none, and nothing said that
// cuda_open was then only the default; only the config error hinted at it.
func TestEtcdAddrUnreadSaid(t *testing.T) {
	inner := &swapInner{inv: inventory.Inventory{Devices: fourGPUs(),
		SlotTypes: model.SlotTypes{model.SlotCUDADevice: model.SlotTypeCount, model.SlotCPU: model.SlotTypeCount},
		Source:    model.SourceInfo{Kind: inventory.KindNVML, Health: "ok", Detail: "fake: 4 GPU(s)"}}}
	src := NewSource(inner, Options{EtcdUnread: "addr must be a string, not 12"})
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inv.Plugin == nil || inv.Plugin.Source != RuleDefault || !strings.Contains(inv.Plugin.Settings, "[etcd] addr cannot be read") {
		t.Fatalf("plugin %+v: want the default rule and settings that say [etcd] addr cannot be read", inv.Plugin)
	}
	found := false
	for _, iss := range inv.Issues {
		if iss.Code == model.IssuePluginSettings && strings.Contains(iss.Message, "addr must be a string, not 12") &&
			strings.Contains(iss.Message, "cuda_open registers them only because nothing else tells") {
			found = true
		}
	}
	if !found {
		t.Errorf("no issue says cuda_open is only the default: %+v", inv.Issues)
	}
}

package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestPlanUncheckedSettingsDiffer: a plan left unchecked because the
// agents' CUDA plugin settings differ says so, in apply's refusal and the
// editor's dialog, not that the node's accelerators are unknown (whose
// remedies, --devices or --fgpu-capacity, do not settle it).
func TestPlanUncheckedSettingsDiffer(t *testing.T) {
	const a, b = "i-gpu-node01-a", "i-gpu-node01-b"
	cfg := loadFixture(t, "agent.multi-agent.slot-based.toml")
	snap := snapshot(fixtureDevices())
	snap.Plugin = &model.PluginInfo{Kind: model.PluginCUDAFractional, Settings: "etcd 127.0.0.1:2379", SettingsOK: true, SettingsDiffer: true}
	sa, _ := ParseSlotSet(a + "=cuda.shares=1.5")
	sb, _ := ParseSlotSet(b + "=cuda.shares=2.5")
	p, err := Propose(cfg, snap, Request{Slots: []SlotSet{sa, sb}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	un := p.Unchecked()
	if !p.AccelUnchecked || len(un) != 1 {
		t.Fatalf("accel unchecked %v, unchecked %q", p.AccelUnchecked, un)
	}
	if !strings.Contains(un[0], "settings differ") || strings.Contains(un[0], "--devices") {
		t.Errorf("unchecked %q: want the settings' difference, not the accelerators unknown", un[0])
	}
	if _, why := JudgeApply(p, 0, false); !strings.Contains(why, "settings differ") {
		t.Errorf("apply's refusal %q does not say the settings differ", why)
	}
}

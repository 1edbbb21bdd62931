package engine

import (
	"fmt"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

func TestScanOptions(t *testing.T) {
	cfg := &agentconfig.Config{Path: "/etc/backend.ai/agent.toml", Mode: agentconfig.ModeManual, Agents: []agentconfig.AgentConfig{
		{ID: "a", IDSet: true, ScratchRoot: "/s/shared"},
		{ID: "agents[1]", ScratchRoot: "/s/shared"},
		{ID: "c", IDSet: true, ScratchRoot: "/s/c"},
	}}
	o := ScanOptions(cfg)
	if o.ConfigPath != cfg.Path || o.Mode != cfg.Mode || !o.NoHealth || o.FollowConfig {
		t.Errorf("path %q mode %q no health %v follow %v", o.ConfigPath, o.Mode, o.NoHealth, o.FollowConfig)
	}
	if got := fmt.Sprintf("%s %s %s %s", o.Agents[0].ID, o.Agents[1].ID, o.Agents[2].ID, o.Agents[2].ScratchRoot); got != "a agents[1] c /s/c" {
		t.Errorf("agents %s", got)
	}
	if fmt.Sprint(o.MadeUpIDs) != "[agents[1]]" {
		t.Errorf("made-up ids %v", o.MadeUpIDs)
	}
	// Two agents sharing a root scan it once, as the first one's.
	if len(o.Roots) != 2 || o.Roots[0].Path != "/s/shared" || o.Roots[0].Agent != "a" || o.Roots[1].Agent != "c" {
		t.Errorf("roots %+v", o.Roots)
	}
}

package console

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// TestAgentHealthInPane: each agent's GET /health is in its header line
// (up with its version, down, unreachable) and in its detail, nothing
// before the first check.
func TestAgentHealthInPane(t *testing.T) {
	s := &model.Snapshot{Agents: []model.Agent{
		{ID: "a1", Health: model.AgentHealth{State: model.AgentUp, Version: "26.4.1", Status: "ok", URL: "http://127.0.0.1:6003/health"}},
		{ID: "a2", Health: model.AgentHealth{State: model.AgentUp, Version: "26.4.1", Status: "degraded"}},
		{ID: "a3", Health: model.AgentHealth{State: model.AgentDown, Detail: "connection refused: no agent listens there"}},
		{ID: "a4", Health: model.AgentHealth{State: model.AgentUnreachable}},
		{ID: "a5"},
	}}
	d := render.Derive(s, render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	for i, tc := range []struct {
		Text string
		Lvl  kit.Level
	}{
		{"up 26.4.1", kit.LvlOK}, {"up 26.4.1 degraded", kit.LvlWarn}, {"down", kit.LvlCrit}, {"unreachable", kit.LvlWarn}, {"", 0},
	} {
		h := d.Agents[i].Header
		last := h[len(h)-1]
		if tc.Text == "" {
			if got := spansText(h); strings.Contains(got, "up") || strings.Contains(got, "down") || strings.Contains(got, "unreachable") {
				t.Errorf("agent %d before any check: %q", i, got)
			}
			continue
		}
		if strings.TrimSpace(last.Text) != tc.Text || last.Lvl != tc.Lvl {
			t.Errorf("agent %d: header ends %+v, want %q at level %d", i, last, tc.Text, tc.Lvl)
		}
	}
	if got := agentsDown(s); got.Text != "2 agents down" || got.Lvl != kit.LvlCrit {
		t.Errorf("header says %+v, want 2 agents down (a down one and an unreachable one)", got)
	}
	if got := agentsDown(&model.Snapshot{Agents: s.Agents[:2]}); got.Text != "" {
		t.Errorf("header says %+v with every agent up", got)
	}
	var lines []string
	for _, l := range agentDetail(d, 2) {
		lines = append(lines, spansText(l.spans))
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "health down  connection refused") {
		t.Errorf("a3's detail lacks its health:\n%s", got)
	}
}

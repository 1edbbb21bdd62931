package demo

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/model"
)

// TestAgentsAnswerHealth: the simulated agents answer GET /health as a
// healthy node's agents do, so that the demo's own engine shows them up
// with their version (it showed no health at all), and so does a command
// pointed at the node's files as CommandFlags points it, which asks them
// as real agents: it asked the default 0.0.0.0:6003, where nothing
// listens, and showed both agents down. Close stops the answers.
func TestAgentsAnswerHealth(t *testing.T) {
	n := startNode(t, Options{Seed: 1, Speed: 1e-6})
	ctx := context.Background()
	pointed := n.EngineOptions()
	// What a command given CommandFlags runs with: the node's agent.toml,
	// the agents taken for processes on this host.
	pointed.NoProcs, pointed.SimulatedHealth, pointed.RestartStates = false, false, nil
	var addr string
	for name, opts := range map[string]engine.Options{"demo": n.EngineOptions(), "pointed": pointed} {
		s, err := engine.Build(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Agents) != 2 {
			t.Fatalf("%s: %d agents", name, len(s.Agents))
		}
		for _, a := range s.Agents {
			if a.Health.State != model.AgentUp || a.Health.Version != AgentVersion || a.Health.Status != "ok" {
				t.Errorf("%s: agent %s health %+v, want up %s ok", name, a.ID, a.Health, AgentVersion)
			}
			addr = a.ServiceAddr
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after Close", addr)
	}
}

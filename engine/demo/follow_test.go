package demo

import (
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// TestDemoApplyShowsInItsConsole: an apply through the demo console's desk
// (what the editor does) reaches the demo's own engine: it follows the
// node's agent.toml like a real one.
func TestDemoApplyShowsInItsConsole(t *testing.T) {
	n := startNode(t, Options{Seed: 3, Partition: agentconfig.FormatDeviceBased})
	n.Pause()
	eng := readyEngine(t, n)
	s := eng.Latest()
	if len(s.Agents) < 2 || s.Agents[0].Owns == nil {
		t.Fatalf("agents %+v", s.Agents)
	}
	from, to := s.Agents[0], s.Agents[1]
	dev := from.Owns["cuda"][0]
	desk := partition.NewDesk(partition.DeskOptions{Config: n.ConfigPath, Snapshot: eng.Latest})
	sess, err := desk.Open(agentconfig.Actor{Name: "demo", Origin: "console", Role: agentconfig.RoleOperator}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	plan := sess.Plan(partition.Request{Moves: []partition.Move{{Device: "cuda:" + string(dev), Agent: to.ID}}})
	if _, err := sess.Apply(plan, true); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	for {
		s := eng.Latest()
		for _, a := range s.Agents {
			if a.ID == to.ID && a.OwnsDevice(model.DeviceKey{Name: "cuda", ID: dev}) {
				t.Logf("the console's snapshot shows the apply %v after it returned", time.Since(applied))
				return
			}
		}
		if time.Since(applied) > time.Second {
			t.Fatalf("after 1 s %s still not owned by %s: %+v", dev, to.ID, s.Agents)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

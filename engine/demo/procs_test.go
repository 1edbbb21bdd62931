package demo

import (
	"context"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/model"
)

// TestDemoProcessesMapped runs the demo node and reads it as fgtop reads a
// real one (engine.Build: the device source's processes named through the
// node's fake /proc, the kernels' resource.txt and recovery.json): every
// GPU process is credited to the live kernel whose CID= line names its
// container, or marked not Backend.AI's; every kernel with a container
// carries its owner and session.
func TestDemoProcessesMapped(t *testing.T) {
	n := startNode(t, Options{Seed: 5, Speed: 20, WarmUp: 60 * time.Second})
	checked := 0
	for round := 0; round < 3; round++ {
		time.Sleep(300 * time.Millisecond)
		n.Pause()
		s, err := engine.Build(context.Background(), n.EngineOptions())
		n.Resume()
		if err != nil {
			t.Fatal(err)
		}
		credited := map[model.KernelID]int{}
		foreign, mapped := 0, 0
		for _, d := range s.Devices {
			if d.Name != "cuda" {
				continue
			}
			if d.Telemetry == nil || d.Telemetry.Processes == nil {
				t.Fatalf("device %s lists no processes", d.ID)
			}
			for _, p := range d.Telemetry.Processes {
				switch p.Owner {
				case model.ProcKernel:
					mapped++
					k := s.Kernel(p.Kernel)
					if k == nil {
						t.Errorf("process %d credited to %s, which is not a live kernel", p.PID, p.Kernel)
						continue
					}
					if k.Container == "" || k.Container != p.Container || p.Start == 0 || p.Name == "" {
						t.Errorf("process %+v on kernel with container %q", p, k.Container)
					}
					credited[p.Kernel]++
				case model.ProcForeign:
					foreign++
				default:
					t.Errorf("process %+v: owner %q on a paused node", p, p.Owner)
				}
			}
		}
		if foreign != 2 {
			t.Errorf("round %d: %d processes not Backend.AI's, want 2 (the display server, a hand-run container)", round, foreign)
		}
		if mapped == 0 {
			t.Errorf("round %d: no process mapped to a kernel", round)
		}
		withOwner := 0
		for _, k := range s.Kernels() {
			if k.Container == "" {
				continue
			}
			r := k.Record
			if r == nil || r.OwnerUserID == "" || r.OwnerProjectID == "" || r.SessionID == "" || r.SessionType == "" || r.Image == "" || r.AgentID != k.Agent {
				t.Errorf("kernel %s (container %s): record %+v", k.ID, k.Container, r)
				continue
			}
			withOwner++
			if c := credited[k.ID]; c > 0 && (k.Use == nil || k.Use.Procs != c || !k.Use.MemUsed.Valid) {
				t.Errorf("kernel %s: %d processes credited, use %+v", k.ID, c, k.Use)
			}
		}
		if withOwner == 0 {
			t.Errorf("round %d: no kernel carries an owner", round)
		}
		checked += mapped
	}
	t.Logf("%d process mappings checked", checked)
}

package demo

import (
	"context"
	"strings"
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
		s := buildPaused(t, n)
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

// TestDemoTelemetry reads the demo node as fgtop does and checks every
// whole GPU carries plausible utilisation, memory, temperature and power,
// consistent with its processes, that MIG slices carry memory only (as on
// real hardware), that the source says the figures are synthetic, and that
// the readings move over time.
func TestDemoTelemetry(t *testing.T) {
	n := startNode(t, Options{Seed: 7, Speed: 20, WarmUp: 60 * time.Second})
	seen := map[model.DeviceID]map[[3]uint32]bool{}
	busy := 0
	for round := 0; round < 4; round++ {
		time.Sleep(400 * time.Millisecond)
		s := buildPaused(t, n)
		if s.Source.Kind != "demo" || !strings.Contains(s.Source.Detail, DemoTelemetryNote) {
			t.Fatalf("source %+v does not say the telemetry is synthetic", s.Source)
		}
		gpus := 0
		for _, d := range s.Devices {
			if d.Name != "cuda" {
				continue
			}
			tel := d.Telemetry
			if tel == nil || !tel.MemUsed.Valid || !tel.MemTotal.Valid || tel.MemUsed.V > tel.MemTotal.V {
				t.Fatalf("%s: memory %+v", d.ID, tel)
			}
			var procMem uint64
			var procUtil uint32
			for _, p := range tel.Processes {
				procMem += p.UsedMem.V
				procUtil += p.SMUtil.V
			}
			if tel.MemUsed.V != min(procMem, tel.MemTotal.V) {
				t.Errorf("%s: memory used %d, its processes use %d", d.ID, tel.MemUsed.V, procMem)
			}
			if d.IsMIG() {
				// A slice's processes use part of the slice's memory, not
				// of the whole GPU's.
				if procMem > tel.MemTotal.V {
					t.Errorf("MIG %s: processes use %d of %d bytes", d.ID, procMem, tel.MemTotal.V)
				}
				if tel.UtilGPU.Valid || tel.TempC.Valid || tel.PowerMW.Valid {
					t.Errorf("MIG %s reads utilisation/temperature/power: %+v", d.ID, tel)
				}
				continue
			}
			gpus++
			if !tel.UtilGPU.Valid || !tel.TempC.Valid || !tel.PowerMW.Valid || !tel.PowerCapMW.Valid {
				t.Fatalf("%s: telemetry missing: %+v", d.ID, tel)
			}
			if tel.UtilGPU.V != min(procUtil, 100) {
				t.Errorf("%s: utilisation %d%%, its processes %d%%", d.ID, tel.UtilGPU.V, procUtil)
			}
			if tc := tel.TempC.V; tc < 25 || tc > 90 {
				t.Errorf("%s: %d°C", d.ID, tc)
			}
			if p := tel.PowerMW.V; p < 30_000 || p > tel.PowerCapMW.V {
				t.Errorf("%s: %d mW of %d", d.ID, p, tel.PowerCapMW.V)
			}
			// A busy GPU runs hotter and draws more than an idle one.
			if tel.UtilGPU.V >= 60 {
				busy++
				if tel.TempC.V < 50 || tel.PowerMW.V < 200_000 {
					t.Errorf("%s at %d%%: %d°C, %d mW", d.ID, tel.UtilGPU.V, tel.TempC.V, tel.PowerMW.V)
				}
			}
			if tel.UtilGPU.V == 0 && (tel.TempC.V > 40 || tel.PowerMW.V > 90_000) {
				t.Errorf("%s idle: %d°C, %d mW", d.ID, tel.TempC.V, tel.PowerMW.V)
			}
			if seen[d.ID] == nil {
				seen[d.ID] = map[[3]uint32]bool{}
			}
			seen[d.ID][[3]uint32{tel.UtilGPU.V, tel.TempC.V, tel.PowerMW.V}] = true
		}
		if gpus != 4 {
			t.Fatalf("round %d: %d GPUs with telemetry, want 4", round, gpus)
		}
	}
	moved := 0
	for _, v := range seen {
		if len(v) > 1 {
			moved++
		}
	}
	if moved < 3 {
		t.Errorf("only %d of %d GPUs' readings changed over four polls: %v", moved, len(seen), seen)
	}
	if busy == 0 {
		t.Error("no GPU was busy in four polls")
	}
}

// TestDemoTelemetryDeterministic: the synthetic figures are a function of
// the seed, the device or process and the virtual time.
func TestDemoTelemetryDeterministic(t *testing.T) {
	p := &demoProc{pid: 4101, util: 60}
	for _, at := range []time.Duration{0, 3 * time.Second, 90 * time.Second} {
		if a, b := p.utilAt(3, at), p.utilAt(3, at); a != b || a == 0 || a > 100 {
			t.Errorf("utilAt(%v) = %d, %d", at, a, b)
		}
		t1, p1 := thermal(3, "GPU-x", 50, 10<<30, at)
		t2, p2 := thermal(3, "GPU-x", 50, 10<<30, at)
		if t1 != t2 || p1 != p2 {
			t.Errorf("thermal(%v) differs between calls", at)
		}
	}
	diff := false
	for s := int64(0); s < 8; s++ {
		if p.utilAt(s, 10*time.Second) != p.utilAt(0, 10*time.Second) {
			diff = true
		}
	}
	if !diff {
		t.Error("eight seeds give the same utilisation")
	}
	idle := &demoProc{pid: 4102, util: 80, idleAt: 5 * time.Second}
	if idle.utilAt(1, 6*time.Second) != 0 {
		t.Error("a process past its work still computes")
	}
}

// buildPaused reads the node as fgtop does, with its simulation paused so
// the reading is of one moment.
func buildPaused(t *testing.T, n *Node) *model.Snapshot {
	t.Helper()
	n.Pause()
	defer n.Resume()
	s, err := engine.Build(context.Background(), n.EngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

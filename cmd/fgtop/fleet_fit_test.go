package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/model"
)

// simPlacement is one step of `simulate --json`.
type simPlacement struct {
	Error       string                       `json:"error"`
	Allocations map[string]map[string]string `json:"allocations"`
}

// simulateOn runs `fgtop simulate` on a demo node's files for one agent
// and one request, and returns its placement.
func simulateOn(t *testing.T, n *fleetNode, agent, req string, extra ...string) simPlacement {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	args := []string{"simulate", "--config", n.node.ConfigPath, "--devices", n.node.MockTOML, "--mock-etcd", n.node.MockEtcd,
		// The demo host's cores and memory (engine/demo's fake /sys and
		// /proc): 32 cores on two NUMA nodes, 256 GiB.
		"--cpus", "32", "--cpu-numa", "2", "--mem", "256g",
		"--agent", agent, "--request", req, "--json", "--compact"}
	root.SetArgs(append(args, extra...))
	// Exit 1 is a request that cannot be placed: the JSON says why.
	var ee *exitError
	if err := root.ExecuteContext(context.Background()); err != nil && !(errors.As(err, &ee) && ee.code == exitProblem) {
		t.Fatalf("simulate %s %s: %v: %s", agent, req, err, errb.String())
	}
	var doc struct {
		Placements []simPlacement `json:"placements"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Placements) != 1 {
		t.Fatalf("simulate output %q: %v", out.String(), err)
	}
	return doc.Placements[0]
}

// TestFleetFitAgreesWithSimulate is the check: on every node, the
// fleet's placement (the node's snapshot over SSH, back into a model,
// through placement.Planner) is the one `fgtop simulate` finds on the same
// node's files, agent by agent: the first agent simulate places the
// request on takes it in the fleet too, on the same devices with the same
// amounts, and where no agent takes it both say why in the same words.
func TestFleetFitAgreesWithSimulate(t *testing.T) {
	nodes, id, kh := startFleet(t, 3)
	snaps := map[string]*model.Snapshot{}
	for _, n := range nodes {
		n.node.Pause()
		s, err := engine.Build(context.Background(), n.node.EngineOptions())
		if err != nil {
			t.Fatal(err)
		}
		snaps[n.addr] = s
	}
	for _, set := range []struct {
		name  string
		flags allocFlags
		extra []string
	}{
		{"defaults", allocFlags{strategy: "evenly"}, nil},
		{"fill, no fragmentation", allocFlags{strategy: "fill", noFrag: true}, []string{"--strategy", "fill", "--no-fragmentation"}},
	} {
		t.Run(set.name, func(t *testing.T) {
			ps, err := set.flags.settings()
			if err != nil {
				t.Fatal(err)
			}
			settings := fleet.Settings{Settings: ps}
			want := map[string]string{}
			for addr, s := range snaps {
				want[addr] = fleet.Summarize(s, settings).String()
			}
			f := &fleetFlags{hosts: hostsOf(nodes), identities: []string{id}, knownHosts: []string{kh}, timeout: 10 * time.Second,
				staleAfter: fleet.DefaultStaleAfter, unreachable: fleet.DefaultUnreachableAfter, heartbeat: time.Second, alloc: set.flags}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src, err := f.start(ctx, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Wait()
			defer cancel()
			// The fleet holds each paused node's state.
			waitFleet(t, src.Tracker, "the paused nodes' state", func(fl *fleet.Fleet) bool {
				for _, n := range fl.Nodes {
					if n.Snap == nil || n.Sum.String() != want[n.Addr] {
						return false
					}
				}
				return true
			})
			fl := src.Tracker.Latest()
			checked, fits, refused := 0, 0, 0
			for _, n := range nodes {
				node := fl.Node(n.addr)
				for _, reqText := range []string{"cuda.shares=0.3", "cuda.shares=0.75", "cuda.shares=1.5", "cuda.shares=2.5",
					"cuda.shares=0.5,cpu=4,mem=16g", "cuda.shares=0.2,cpu=20,mem=200g", "cpu=2,mem=8g", "cuda.shares=0.05"} {
					req, err := fleet.ParseRequest(reqText)
					if err != nil {
						t.Fatal(err)
					}
					got := fleet.FitRequest(node.Snap, req, src.Settings)
					var firstOK string
					var firstErr string
					var okAlloc map[string]map[string]string
					for _, a := range n.node.EngineOptions().Agents {
						if !managerSends(snaps[n.addr], a.ID, req) {
							// Slot-based: the agent is given less than the
							// request beside what its kernels hold, so the
							// manager never sends it there, whatever its
							// allocator could take.
							if firstErr == "" {
								firstErr = "InsufficientResource"
							}
							continue
						}
						p := simulateOn(t, n, string(a.ID), reqText, set.extra...)
						if firstErr == "" && p.Error != "" {
							firstErr = p.Error
						}
						if p.Error == "" {
							firstOK, okAlloc = string(a.ID), p.Allocations
							break
						}
					}
					checked++
					switch {
					case firstOK == "" && got.OK:
						t.Errorf("%s %s: the fleet places it on %s, simulate on no agent", n.name, reqText, got.Agent)
					case firstOK != "" && !got.OK:
						t.Errorf("%s %s: simulate places it on %s, the fleet nowhere: %s", n.name, reqText, firstOK, got.Reason)
					case firstOK != "" && (string(got.Agent) != firstOK || placementOf(got) != placementString(okAlloc)):
						t.Errorf("%s %s: fleet %s %s, simulate %s %s", n.name, reqText, got.Agent, placementOf(got), firstOK, placementString(okAlloc))
					case firstOK == "" && got.ErrKind != firstErr:
						t.Errorf("%s %s: fleet says %s, simulate %s", n.name, reqText, got.ErrKind, firstErr)
					case firstOK != "":
						fits++
					default:
						refused++
					}
				}
			}
			if fits == 0 || refused == 0 {
				t.Fatalf("%d requests: %d fit, %d refused: the cases do not test both sides", checked, fits, refused)
			}
			t.Logf("%d node requests agree with simulate: %d fit, %d refused", checked, fits, refused)
		})
	}
}

func placementOf(f fleet.Fit) string { return placementString(fitPlacement(f)) }

// placementString prints a placement in a stable order.
func placementString(m map[string]map[string]string) string {
	b, _ := json.Marshal(m) // encoding/json sorts map keys
	return strings.TrimSpace(fmt.Sprint(string(b)))
}

// managerSends reports whether Backend.AI's manager would send req to the
// agent: in the slot-based form, every slot within the amount the agent
// is given less what its kernels hold.
func managerSends(s *model.Snapshot, id model.AgentID, req alloc.Request) bool {
	for _, a := range s.Agents {
		if a.ID != id || a.Given == nil {
			continue
		}
		for _, e := range req {
			if g, ok := a.Given[e.Slot]; ok && e.Amount.Sign() > 0 && g.Sub(a.Held[e.Slot]).Less(e.Amount) {
				return false
			}
		}
	}
	return true
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/internal/promtest"
	"github.com/fgtop/fgtop/model"
)

// TestFleetPrometheusOnce is the issue's check: three nodes, each with its
// fgtop exporter, scraped by a real Prometheus, into `fleet --prometheus
// URL --once --json`: every node's devices (held, capacity, free) equal its
// own `snapshot --json` as exact decimals, its summary (free, pieces,
// largest fit, kernels, issues) equals the one the fleet computes from that
// snapshot, and --fit through Prometheus places requests where the
// snapshot itself places them.
func TestFleetPrometheusOnce(t *testing.T) {
	promtest.Prometheus(t) // skip early, before building three nodes
	type member struct {
		name string
		n    *node
		k    int
		addr string
	}
	nodes := []*member{{name: "node-1"}, {name: "node-2"}, {name: "node-3"}}
	shares := [][]string{{"0.3", "0.25", "0.6"}, {"0.5", "0.125", "0.75", "0.2", "0.4"}, {"1.0"}}
	var targets []promtest.Target
	for i, m := range nodes {
		m.n = newNode(t)
		m.k = populate(t, m.n, shares[i]...)
		m.addr = startExporter(t, &sourceFlags{config: m.n.config, devices: m.n.mock, mockEtcd: m.n.etcd},
			&exporterFlags{listen: "127.0.0.1:0", node: m.name})
		scrapeUntil(t, m.addr, okKernels(m.k))
		targets = append(targets, promtest.Target{Addr: m.addr})
	}
	srv := promtest.Start(t, targets)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.WaitUp(t, ctx)
	srv.WaitQuery(t, ctx, `fgtop_kernels{state="ok"}`, func(v pmodel.Vector) bool {
		for _, m := range nodes {
			ok := false
			for _, s := range v {
				ok = ok || (string(s.Metric["node"]) == m.name && s.Value == pmodel.SampleValue(m.k))
			}
			if !ok {
				return false
			}
		}
		return true
	})
	out, stderr, code := runFleetCmd(t, "--prometheus", srv.URL, "--once", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got fleet.JSONFleet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Nodes) != 3 {
		t.Fatalf("%d nodes: %s", len(got.Nodes), out)
	}
	for i, m := range nodes {
		j := got.Nodes[i]
		doc := snapshotJSON(t, "--config", m.n.config, "--devices", m.n.mock, "--mock-etcd", m.n.etcd)
		doc.Node = m.name
		snap, err := doc.Model()
		if err != nil {
			t.Fatal(err)
		}
		want := fleet.Summarize(snap, fleet.Settings{})
		if j.Node != m.name || j.State != fleet.Live || j.Source != "prometheus" {
			t.Fatalf("node %d: %+v", i, j)
		}
		var gotDevs, wantDevs []string
		for _, d := range j.Devices {
			gotDevs = append(gotDevs, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
		}
		for _, d := range want.Devices {
			wantDevs = append(wantDevs, fmt.Sprintf("%s %s %s/%s free %s", d.Device, d.Slot, d.Held, d.Capacity, d.Free))
		}
		if strings.Join(gotDevs, "; ") != strings.Join(wantDevs, "; ") {
			t.Errorf("%s devices through Prometheus:\n got %s\nwant %s (its snapshot --json)", m.name, strings.Join(gotDevs, "; "), strings.Join(wantDevs, "; "))
		}
		// Exactly, trailing zeros included ("1.00", not "1"): the exporter's
		// exponent series carry what a float sample drops.
		eq := func(what string, a *model.Dec, b model.Dec) {
			if a == nil || !a.Identical(b) {
				t.Errorf("%s %s: %v through Prometheus, %s from its snapshot", m.name, what, a, b)
			}
		}
		eq("held", j.Held, want.Held)
		eq("capacity", j.Capacity, want.Capacity)
		eq("free", j.Free, want.Free)
		eq("largest fit", j.Largest, want.Largest)
		if j.Pieces != want.Pieces || j.Kernels != m.k || j.Issues != want.Issues || j.GPUs != want.GPUs {
			t.Errorf("%s: pieces %d kernels %d issues %d gpus %d; want %d %d %d %d", m.name, j.Pieces, j.Kernels, j.Issues, j.GPUs,
				want.Pieces, m.k, want.Issues, want.GPUs)
		}
		// --fit through Prometheus places as the node's own snapshot does.
		for _, reqText := range []string{"cuda.shares=0.5", "cuda.shares=1.5", "cuda.shares=3", "cuda.shares=0.2,cpu=1,mem=1g"} {
			out, _, _ := runFleetCmd(t, "--prometheus", srv.URL, "--fit", reqText, "--json", "--compact")
			var fr fleet.JSONFitReport
			if err := json.Unmarshal([]byte(out), &fr); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			req, _ := fleet.ParseRequest(reqText)
			wf := fleet.FitRequest(snap, req, fleet.Settings{})
			gf := fr.Nodes[i].Fit
			if gf.Fits != wf.OK || gf.Agent != string(wf.Agent) || gf.Error != wf.ErrKind || placementJSON(gf.Placement) != placementJSON(fitPlacement(wf)) {
				t.Errorf("%s --fit %s through Prometheus: %+v; from its snapshot: ok %v agent %s %s %s", m.name, reqText, gf, wf.OK, wf.Agent, wf.ErrKind, placementJSON(fitPlacement(wf)))
			}
		}
	}
}

func placementJSON(m map[string]map[string]string) string {
	if m == nil {
		m = map[string]map[string]string{}
	}
	// Amounts through Prometheus drop trailing zeros: compare as decimals.
	for _, devs := range m {
		for d, v := range devs {
			devs[d] = model.MustDec(v).Normalize().String()
		}
	}
	return placementString(m)
}

func fitPlacement(f fleet.Fit) map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, s := range f.Placement {
		d := map[string]string{}
		for _, sh := range s.Shares {
			d[string(sh.Device)] = sh.Amount.String()
		}
		m[string(s.Slot)] = d
	}
	return m
}

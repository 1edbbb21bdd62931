package fleet

import (
	"cmp"
	"context"
	"fmt"
	"github.com/cockroachdb/apd/v3"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/model"
)

// PromOptions configure the Prometheus source.
type PromOptions struct {
	// URL is Prometheus's base URL (http://prometheus:9090).
	URL string
	// Interval is how often the fleet is queried (default 2s).
	Interval time.Duration
	// Timeout bounds one refresh (default 10s).
	Timeout time.Duration
	// Settings are the fleet-wide allocator settings for summaries.
	Settings Settings
}

// The series one refresh reads: every one fleet-wide, one query each
// (the exporter's names, /work/notes/metrics.md; engine/metrics).
var promQueries = []string{
	"fgtop_device_info", "fgtop_device_capacity", "fgtop_device_held", "fgtop_device_kernels",
	"fgtop_allocator_info", "fgtop_agent_info", "fgtop_device_owner_info", "fgtop_agent_memory_share_bytes",
	"fgtop_agent_device_held", "fgtop_kernels", "fgtop_issues_by_severity", "fgtop_node_info",
	"fgtop_device_source_info", "fgtop_host_memory_bytes", "fgtop_snapshot_sequence",
	"fgtop_device_capacity_exponent", "fgtop_device_held_exponent",
}

// PromClient queries Prometheus's HTTP API (client_golang's
// api/prometheus/v1).
type PromClient struct {
	api v1.API
	o   PromOptions
}

// NewPromClient checks the URL and returns a client.
func NewPromClient(o PromOptions) (*PromClient, error) {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	c, err := api.NewClient(api.Config{Address: o.URL})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: %w", o.URL, err)
	}
	return &PromClient{api: v1.NewAPI(c), o: o}, nil
}

// PromNode is one node as Prometheus has it: a snapshot rebuilt from its
// series, the summary, and when it was last scraped.
type PromNode struct {
	Name    string
	Snap    *model.Snapshot
	Sum     Summary
	Scraped time.Time
}

// Refresh runs one round of queries and rebuilds every node the series
// name. Amounts come back exactly: the exporter's values are decimals with
// few digits, and a float64 printed shortest ('g', -1) parses back to the
// decimal it was made from.
func (c *PromClient) Refresh(ctx context.Context) ([]PromNode, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	now := time.Now()
	res := make([]pmodel.Vector, len(promQueries))
	errs := make(chan error, len(promQueries))
	for i, q := range promQueries {
		go func() {
			v, _, _, err := c.api.Query(ctx, q, now)
			if err != nil {
				errs <- fmt.Errorf("query %s: %w", q, err)
				return
			}
			vec, ok := v.(pmodel.Vector)
			if !ok {
				errs <- fmt.Errorf("query %s: a %s, want a vector", q, v.Type())
				return
			}
			res[i] = vec
			errs <- nil
		}()
	}
	for range promQueries {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	return buildPromNodes(res, c.o.Settings)
}

// series is one sample's labels and exact value.
type series struct {
	l pmodel.Metric
	v model.Dec
	t time.Time
}

func (s series) get(name string) string { return string(s.l[pmodel.LabelName(name)]) }

// byNode groups a vector by its node label.
func byNode(vec pmodel.Vector) (map[string][]series, error) {
	out := map[string][]series{}
	for _, smp := range vec {
		f := float64(smp.Value)
		d, err := model.ParseDec(strconv.FormatFloat(f, 'g', -1, 64))
		if err != nil {
			return nil, fmt.Errorf("%s: value %v: %w", smp.Metric, f, err)
		}
		node := string(smp.Metric["node"])
		out[node] = append(out[node], series{l: smp.Metric, v: d, t: smp.Timestamp.Time()})
	}
	return out, nil
}

// exponents maps (device, slot) to the decimal exponent an exponent
// series gives.
func exponents(xs []series) map[[2]string]int32 {
	out := make(map[[2]string]int32, len(xs))
	for _, x := range xs {
		if e, err := x.v.Int64(); err == nil && e >= -30 && e <= 30 {
			out[[2]string{x.get("device"), x.get("slot")}] = int32(e)
		}
	}
	return out
}

// withExponent gives v the exponent the node printed it with, when it is
// known and restoring it changes no digit (an older exporter sends none).
func withExponent(v model.Dec, exps map[[2]string]int32, k [2]string) model.Dec {
	e, ok := exps[k]
	if !ok {
		return v
	}
	q, err := v.Quantize(e, apd.RoundHalfEven)
	if err != nil || !q.Equal(v) {
		return v
	}
	return q
}

func buildPromNodes(res []pmodel.Vector, settings Settings) ([]PromNode, error) {
	g := make([]map[string][]series, len(res))
	for i, v := range res {
		m, err := byNode(v)
		if err != nil {
			return nil, err
		}
		g[i] = m
	}
	const (
		qInfo = iota
		qCap
		qHeld
		qDevKernels
		qAlloc
		qAgent
		qOwner
		qMemShare
		qAgentHeld
		qKernels
		qIssues
		qNode
		qSource
		qHostMem
		qSeq
		qCapExp
		qHeldExp
	)
	var names []string
	for n := range g[qSeq] {
		names = append(names, n)
	}
	for n := range g[qInfo] {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []PromNode
	for _, name := range names {
		s := &model.Snapshot{Node: name, Usage: map[model.DeviceKey]*model.DeviceUsage{}}
		pn := PromNode{Name: name}
		for _, x := range g[qSeq][name] {
			s.Seq = uint64(x.v.Float64())
			pn.Scraped = x.t
		}
		for _, x := range g[qNode][name] {
			s.Mode, s.ConfigPath = x.get("mode"), x.get("config")
		}
		for _, x := range g[qSource][name] {
			s.Source = model.SourceInfo{Kind: x.get("kind"), Health: x.get("health")}
		}
		for _, x := range g[qHostMem][name] {
			v, _ := x.v.Int64()
			s.HostMemBytes = v
		}
		for _, x := range g[qAlloc][name] {
			a := model.Allocator{Fractional: x.get("allocation_mode") == "fractional", AffinityPolicy: x.get("affinity_policy")}
			if q := x.get("quantum_size"); q != "" {
				if d, err := model.ParseDec(q); err == nil {
					a.Quantum = d
				}
			}
			if o := x.get("allocation_order"); o != "" {
				for _, n := range strings.Split(o, ",") {
					a.AllocationOrder = append(a.AllocationOrder, model.DeviceName(n))
				}
			}
			s.Allocator = a
		}
		// Devices in inventory order, with their capacity.
		type posDev struct {
			pos int
			d   model.Device
		}
		var devs []posDev
		// A float sample loses a decimal's trailing zeros ("1.00" comes back
		// as 1); the exporter's exponent series give them back, so amounts
		// read through Prometheus print as the node prints them.
		capExp, heldExp := exponents(g[qCapExp][name]), exponents(g[qHeldExp][name])
		capOf := map[[2]string]model.Dec{}
		for _, x := range g[qCap][name] {
			k := [2]string{x.get("device"), x.get("slot")}
			capOf[k] = withExponent(x.v, capExp, k)
		}
		for _, x := range g[qInfo][name] {
			pos, _ := strconv.Atoi(x.get("position"))
			idx, _ := strconv.Atoi(x.get("index"))
			numa := -1
			if v := x.get("numa_node"); v != "" {
				numa, _ = strconv.Atoi(v)
			}
			d := model.Device{ID: model.DeviceID(x.get("device")), Name: model.DeviceName(x.get("plugin")), Slot: model.SlotName(x.get("slot")),
				SlotType: model.SlotType(x.get("slot_type")), Index: idx, NUMANode: numa, Model: x.get("model"), UUID: x.get("uuid"),
				Parent: model.DeviceID(x.get("parent")), Capacity: capOf[[2]string{x.get("device"), x.get("slot")}]}
			devs = append(devs, posDev{pos, d})
		}
		slices.SortFunc(devs, func(a, b posDev) int { return cmp.Compare(a.pos, b.pos) })
		pluginOf := map[model.DeviceID][]model.DeviceName{}
		for _, d := range devs {
			s.Devices = append(s.Devices, d.d)
			pluginOf[d.d.ID] = append(pluginOf[d.d.ID], d.d.Name)
		}
		// fgtop_device_held has no plugin label: a device id shared across
		// plugins (cpu core "0", a cuda_open GPU "0") is told apart by the
		// slot's plugin.
		keyOf := func(dev, slot string) model.DeviceKey {
			return model.DeviceKey{Name: model.SlotName(slot).DeviceName(), ID: model.DeviceID(dev)}
		}
		for _, x := range g[qHeld][name] {
			k := keyOf(x.get("device"), x.get("slot"))
			u := s.Usage[k]
			if u == nil {
				u = &model.DeviceUsage{Key: k, Held: model.ResourceSlot{}}
				s.Usage[k] = u
			}
			u.Held[model.SlotName(x.get("slot"))] = withExponent(x.v, heldExp, [2]string{x.get("device"), x.get("slot")})
		}
		for _, x := range g[qDevKernels][name] {
			k := model.DeviceKey{Name: model.DeviceName(x.get("plugin")), ID: model.DeviceID(x.get("device"))}
			n, _ := x.v.Int64()
			if u := s.Usage[k]; u != nil {
				u.Kernels = int(n)
			} else if n > 0 {
				s.Usage[k] = &model.DeviceUsage{Key: k, Held: model.ResourceSlot{}, Kernels: int(n)}
			}
		}
		// Drop the zero entries the exporter lists for the capacity slot:
		// the snapshot lists only what is held.
		for k, u := range s.Usage {
			for slot, v := range u.Held {
				if v.IsZero() {
					delete(u.Held, slot)
				}
			}
			if len(u.Held) == 0 && u.Kernels == 0 {
				delete(s.Usage, k)
			}
		}
		// Agents, their partitions and what their kernels hold: one
		// allocation per agent is what the placement loads (LoadAll sums
		// the kernels anyway).
		type posAgent struct {
			pos int
			a   model.Agent
		}
		var agents []posAgent
		for _, x := range g[qAgent][name] {
			pos, _ := strconv.Atoi(x.get("position"))
			agents = append(agents, posAgent{pos, model.Agent{ID: model.AgentID(x.get("agent")), ScratchRoot: x.get("scratch_root")}})
		}
		slices.SortFunc(agents, func(a, b posAgent) int { return cmp.Compare(a.pos, b.pos) })
		owns := map[model.AgentID]map[model.DeviceName][]model.DeviceID{}
		for _, x := range g[qOwner][name] {
			a := model.AgentID(x.get("agent"))
			if owns[a] == nil {
				owns[a] = map[model.DeviceName][]model.DeviceID{}
			}
			n := model.DeviceName(x.get("plugin"))
			owns[a][n] = append(owns[a][n], model.DeviceID(x.get("device")))
		}
		mem := map[model.AgentID]model.Dec{}
		for _, x := range g[qMemShare][name] {
			mem[model.AgentID(x.get("agent"))] = x.v
		}
		alloc := map[model.AgentID]model.Allocations{}
		for _, x := range g[qAgentHeld][name] {
			a := model.AgentID(x.get("agent"))
			if alloc[a] == nil {
				alloc[a] = model.Allocations{}
			}
			slot := model.SlotName(x.get("slot"))
			if alloc[a][slot] == nil {
				alloc[a][slot] = map[model.DeviceID]model.Dec{}
			}
			alloc[a][slot][model.DeviceID(x.get("device"))] = x.v
		}
		var kernels []*model.Kernel
		for _, pa := range agents {
			a := pa.a
			a.Owns, a.Mem = owns[a.ID], mem[a.ID]
			s.Agents = append(s.Agents, a)
		}
		for a, al := range alloc {
			kernels = append(kernels, &model.Kernel{ID: model.KernelID("all kernels of " + cmp.Or(string(a), "no agent")), Agent: a,
				State: model.KernelOK, Alloc: al, AgentBy: model.AgentByRecord})
		}
		s.SetKernels(kernels)
		pn.Snap = s
		pn.Sum = Summarize(s, settings)
		// What Prometheus says itself, not the synthetic kernels above.
		pn.Sum.Kernels, pn.Sum.Issues = 0, 0
		for _, x := range g[qKernels][name] {
			n, _ := x.v.Int64()
			pn.Sum.Kernels += int(n)
		}
		for _, x := range g[qIssues][name] {
			if sev := x.get("severity"); sev == "warning" || sev == "error" {
				n, _ := x.v.Int64()
				pn.Sum.Issues += int(n)
			}
		}
		s.Time = pn.Scraped
		out = append(out, pn)
	}
	return out, nil
}

// FollowPrometheus refreshes the fleet from Prometheus every interval
// until ctx is done. A node Prometheus stops returning (its target is down:
// its series went stale) gets no event and ages out through the tracker:
// stale, then unreachable, never dropped. A failed refresh reports every
// known node.
func FollowPrometheus(ctx context.Context, t *Tracker, c *PromClient) {
	tick := time.NewTicker(c.o.Interval)
	defer tick.Stop()
	last := map[string]uint64{}
	for {
		nodes, err := c.Refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			for _, n := range t.Latest().Nodes {
				t.Send(ctx, Event{Addr: n.Addr, Err: fmt.Errorf("prometheus: %w", err)})
			}
			t.SetError(ctx, err)
		} else {
			t.SetError(ctx, nil)
			for _, n := range nodes {
				ev := Event{Addr: n.Name, At: n.Scraped, Alive: true}
				if seq, ok := last[n.Name]; !ok || seq != n.Snap.Seq {
					last[n.Name] = n.Snap.Seq
					ev = Event{Addr: n.Name, Snap: n.Snap, Sum: n.Sum, At: n.Scraped}
				}
				t.Send(ctx, ev)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// PromFleet is the fleet of one refresh, for `fleet --prometheus --once`:
// a node whose last scrape is older than staleAfter is stale.
func PromFleet(nodes []PromNode, now time.Time, staleAfter time.Duration) *Fleet {
	f := &Fleet{Seq: 1, Time: now}
	for _, n := range nodes {
		st, why := Live, ""
		if age := now.Sub(n.Scraped); age > staleAfter {
			st, why = Stale, fmt.Sprintf("last scraped %s ago", age.Round(time.Second))
		}
		f.Nodes = append(f.Nodes, Node{Addr: n.Name, Name: n.Name, Source: "prometheus", State: st, Reason: why,
			LastSeen: n.Scraped, Updated: n.Scraped, Snap: n.Snap, Sum: n.Sum})
	}
	return f
}

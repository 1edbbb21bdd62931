// Package metrics turns the engine's latest snapshot into Prometheus
// metrics: a prometheus.Collector that reads whatever snapshot the engine
// published last, so a scrape costs a walk over devices and agents (and a
// count of the kernels by state), never a scan of the scratch roots: the
// per-agent amounts come from the engine's own incremental split
// (DeviceUsage.ByAgent). Names lists the series.
package metrics

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo is what fgtop_build_info carries.
type BuildInfo struct {
	Version   string
	Revision  string
	GoVersion string
}

// Options configure a Collector.
type Options struct {
	// Latest returns the engine's latest published snapshot (nil before
	// the first): engine.(*Engine).Latest.
	Latest func() *model.Snapshot
	// Node names the node when no snapshot has been published yet.
	Node  string
	Build BuildInfo
	// Now is the scrape clock (default time.Now), for snapshot age.
	Now func() time.Time
}

// Collector is a prometheus.Collector over the engine's latest snapshot.
// It is safe for concurrent scrapes: snapshots are immutable.
type Collector struct {
	opts Options
}

// New returns a collector; register it on a prometheus.Registry.
func New(opts Options) *Collector {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Collector{opts: opts}
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// unitDescs are one amount in each of the three units a slot can count
// in, each its own metric, as Prometheus' naming rules ask (one unit per
// metric, the unit in the name): fGPU shares (..._shares: cuda.shares and
// other *.shares slots), whole devices (..._devices: CPU cores, whole
// GPUs, MIG instances) and bytes (..._bytes: mem). The slot label stays,
// so a query sums the slots of one unit only.
type unitDescs struct{ shares, devices, bytes *prometheus.Desc }

func unitDesc(base, help string, labels ...string) unitDescs {
	help = strings.TrimSuffix(help, ".")
	return unitDescs{
		shares:  desc(base+"_shares", help+", in fGPU shares (the *.shares slots).", labels...),
		devices: desc(base+"_devices", help+", in whole devices (CPU cores, whole GPUs, MIG instances).", labels...),
		bytes:   desc(base+"_bytes", help+", in bytes (mem).", labels...),
	}
}

// of is the metric that carries slot sl's amounts.
func (u unitDescs) of(sl model.SlotName) *prometheus.Desc {
	switch sl.Unit() {
	case model.UnitShares:
		return u.shares
	case model.UnitBytes:
		return u.bytes
	}
	return u.devices
}

func (u unitDescs) all() []*prometheus.Desc { return []*prometheus.Desc{u.shares, u.devices, u.bytes} }

// dcgmLabels are dcgm-exporter's label names, so that a dcgm dashboard can
// join fgtop's telemetry (on UUID, or gpu and hostname) — all but one:
// dcgm's "modelName" is "model_name" here, because promtool's lint refuses
// camelCase label names and a clean `promtool check metrics` is part of the
// contract ("UUID" passes the lint: it has no lower-case letter before an
// upper-case one).
var dcgmLabels = []string{"node", "device", "gpu", "UUID", "model_name", "hostname"}

var (
	descBuildInfo = desc("fgtop_build_info", "fgtop's build: version, VCS revision, Go toolchain (always 1).",
		"node", "version", "revision", "goversion")
	descSeq       = desc("fgtop_snapshot_sequence", "Sequence number of the exported engine snapshot (restarts with the process).", "node")
	descTimestamp = desc("fgtop_snapshot_timestamp_seconds", "When the engine published the exported snapshot, in Unix seconds.", "node")
	descAge       = desc("fgtop_snapshot_age_seconds", "Seconds between the snapshot's publication and this scrape.", "node")
	descNodeInfo  = desc("fgtop_node_info", "The node's partition mode (shared, auto-split, manual; empty without agent.toml), agent.toml path, and whether it is in the BEP-1044 device-based form (always 1).",
		"node", "mode", "config", "draft_format")
	descSourceInfo = desc("fgtop_device_source_info", "Where the accelerators come from (nvml, mock, demo, none) and how healthy that is (ok, degraded, unavailable); always 1.",
		"node", "kind", "health")
	descAllocator = desc("fgtop_allocator_info", "How the agents allocate: allocation_mode fractional or discrete, quantum_size (exact decimal, fractional mode), agent.toml affinity_policy and allocation_order (always 1).",
		"node", "allocation_mode", "quantum_size", "affinity_policy", "allocation_order")
	descPlugin = desc("fgtop_cuda_plugin_info", "The CUDA plugin the GPUs are registered as (kind open or fractional), the rule that chose it (source), where its settings come from, and whether they can be read now (settings_ok; false while etcd is unreachable); always 1, absent without NVML GPUs.",
		"node", "kind", "source", "settings", "settings_ok")
	descHostMem      = desc("fgtop_host_memory_bytes", "The host's total memory in bytes.", "node")
	descKernels      = desc("fgtop_kernels", "Kernels found under the scratch roots, by state (ok, stale, broken, pending).", "node", "state")
	descIdle         = desc("fgtop_idle_kernels", "Kernels holding an accelerator but idle: its processes at 0 % utilisation for at least idle_after_seconds (per node, never per kernel).", "node")
	descIdleAfter    = desc("fgtop_idle_after_seconds", "How long a kernel must stay at 0 % to count as idle (0: idle marking is off).", "node")
	descIssues       = desc("fgtop_issues", "Current issues by code and severity (only codes present).", "node", "code", "severity")
	descIssuesBySev  = desc("fgtop_issues_by_severity", "Current issues by severity (info, warning, error; always all three).", "node", "severity")
	descDeviceInfo   = desc("fgtop_device_info", "One device of the inventory (accelerator, MIG slice, CPU core, memory): slot, slot type, position in the inventory order, plugin index, NUMA node, model, UUID, parent GPU (always 1).", "node", "plugin", "device", "slot", "slot_type", "position", "index", "numa_node", "model", "uuid", "parent")
	descCapacity     = unitDesc("fgtop_device_capacity", "Device capacity, per slot", "node", "device", "slot")
	descCapExp       = desc("fgtop_device_capacity_exponent", "The decimal exponent of fgtop_device_capacity_* as Backend.AI prints it (str(Decimal): -2 for 1.00, 0 for 1): with it a reader restores the exact decimal from the float sample.", "node", "device", "slot")
	descGivenExp     = desc("fgtop_agent_given_exponent", "The decimal exponent of fgtop_agent_given_* as the agent's config prints it (-1 for 2.0): with it a reader restores the exact decimal from the float sample.", "node", "agent", "slot")
	descHeldExp      = desc("fgtop_device_held_exponent", "The decimal exponent of fgtop_device_held_* as Backend.AI prints it (-2 for 0.60), for the amounts held (not the 0 listed for an unheld capacity slot).", "node", "device", "slot")
	descHeld         = unitDesc("fgtop_device_held", "Amount held on the device by all kernels, per slot held (the capacity slot always present)", "node", "device", "slot")
	descFree         = unitDesc("fgtop_device_free", "Device capacity minus everything held on it (all slots; negative when over capacity), per capacity slot", "node", "device", "slot")
	descDevKernels   = desc("fgtop_device_kernels", "Kernels holding anything on the device.", "node", "plugin", "device")
	descAllocRatio   = desc("fgtop_device_alloc_ratio", "Backend.AI's gpu_alloc_map value for the device: held over capacity summed over the slots under cuda, quantized to 4 places (0-1 unless over capacity).", "node", "device")
	descOwner        = desc("fgtop_device_owner_info", "The agent's partition gives it the device (always 1).", "node", "plugin", "device", "agent")
	descOverCap      = unitDesc("fgtop_device_over_capacity", "Amount held on the device beyond its capacity (0 normally), per capacity slot", "node", "device", "slot")
	descAgentInfo    = desc("fgtop_agent_info", "One agent of the node, in agent.toml order (position), with its scratch root (always 1).", "node", "agent", "position", "scratch_root")
	descAgentKernels = desc("fgtop_agent_kernels", "Kernels attributed to the agent.", "node", "agent")
	descAgentHeld    = unitDesc("fgtop_agent_held", "What the agent's kernels hold in total, per slot", "node", "agent", "slot")
	descAgentMem     = desc("fgtop_agent_memory_share_bytes", "The memory the agent's partition gives it, in bytes (absent when mem is not partitioned).", "node", "agent")
	descAgentGiven   = unitDesc("fgtop_agent_given", "What the slot-based partition gives the agent, per slot: what it reports to the manager as its capacity, and the manager's limit on what it sends there (absent outside that form)", "node", "agent", "slot")
	descAgentDevHeld = unitDesc("fgtop_agent_device_held", "What the agent's kernels hold on the device, per slot (non-zero only)", "node", "agent", "plugin", "device", "slot")
	descRestart      = desc("fgtop_agent_restart_info", "Whether the agent's process runs the agent.toml on disk: current, restart-pending, not-running, cannot-tell (always 1).", "node", "agent", "state")
	descAgentUp      = desc("fgtop_agent_up", "Whether the agent answers GET /health on its service-addr: 1 up, 0 down or unreachable (absent before the first check, and for agents on other hosts).", "node", "agent")
	descDrift        = unitDesc("fgtop_drift_held", "Amount the agent's kernels hold on a device its partition does not give it (non-zero only)", "node", "agent", "plugin", "device", "slot")
	descUtil         = desc("fgtop_gpu_utilization_ratio", "GPU utilization from NVML, 0-1 (DCGM_FI_DEV_GPU_UTIL/100).", dcgmLabels...)
	descMemUtil      = desc("fgtop_gpu_memory_utilization_ratio", "GPU memory (copy) utilization from NVML, 0-1 (DCGM_FI_DEV_MEM_COPY_UTIL/100).", dcgmLabels...)
	descMemUsed      = desc("fgtop_gpu_memory_used_bytes", "GPU memory used, in bytes.", dcgmLabels...)
	descMemTotal     = desc("fgtop_gpu_memory_total_bytes", "GPU memory total, in bytes.", dcgmLabels...)
	descTemp         = desc("fgtop_gpu_temperature_celsius", "GPU temperature in degrees Celsius.", dcgmLabels...)
	descPower        = desc("fgtop_gpu_power_watts", "GPU power draw in watts.", dcgmLabels...)
	descPowerCap     = desc("fgtop_gpu_power_limit_watts", "GPU power limit in watts.", dcgmLabels...)
	descLost         = desc("fgtop_gpu_lost", "1 when the driver reports the GPU lost or unreachable.", dcgmLabels...)
	descProcs        = desc("fgtop_gpu_processes", "Compute processes running on the GPU.", dcgmLabels...)
)

var allDescs = slices.Concat([]*prometheus.Desc{
	descBuildInfo, descSeq, descTimestamp, descAge, descNodeInfo, descSourceInfo, descAllocator, descPlugin, descHostMem,
	descKernels, descIdle, descIdleAfter, descIssues, descIssuesBySev, descDeviceInfo, descCapExp, descHeldExp, descGivenExp, descDevKernels,
	descAllocRatio, descOwner, descAgentInfo, descAgentKernels, descAgentMem,
	descRestart, descAgentUp, descUtil, descMemUtil, descMemUsed, descMemTotal, descTemp,
	descPower, descPowerCap, descLost, descProcs,
}, descCapacity.all(), descHeld.all(), descFree.all(), descOverCap.all(), descAgentHeld.all(), descAgentDevHeld.all(), descDrift.all(), descAgentGiven.all())

// Names returns the name of every series the collector can emit, sorted as
// declared.
func Names() []string {
	out := make([]string, len(allDescs))
	for i, d := range allDescs {
		// Desc has no name accessor; its String form is stable:
		// Desc{fqName: "…", …}.
		s := d.String()
		s = s[strings.Index(s, `"`)+1:]
		out[i] = s[:strings.Index(s, `"`)]
	}
	return out
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// kernelStates are the states fgtop_kernels always lists.
var kernelStates = []model.KernelState{model.KernelOK, model.KernelStale, model.KernelBroken, model.KernelPending}

// severities fgtop_issues_by_severity always lists.
var severities = []model.Severity{model.SevInfo, model.SevWarning, model.SevError}

// gauge sends one sample. Its label values pass through the one rule for
// outside text: exposition allows any UTF-8 in a value, but `curl
// /metrics` on a terminal would act on an escape sequence a node or
// kernel name held (and a value that is not UTF-8 would make the
// registry refuse the whole scrape).
func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	for i, l := range labels {
		if !untrusted.Safe(l) {
			labels[i] = untrusted.Text(l)
		}
	}
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var s *model.Snapshot
	if c.opts.Latest != nil {
		s = c.opts.Latest()
	}
	node := c.opts.Node
	if s != nil && s.Node != "" {
		node = s.Node
	}
	b := c.opts.Build
	gauge(ch, descBuildInfo, 1, node, b.Version, b.Revision, b.GoVersion)
	if s == nil {
		// Before the first scan is published: only who we are.
		return
	}
	gauge(ch, descSeq, float64(s.Seq), node)
	gauge(ch, descTimestamp, float64(s.Time.UnixNano())/1e9, node)
	gauge(ch, descAge, max(c.opts.Now().Sub(s.Time).Seconds(), 0), node)
	gauge(ch, descNodeInfo, 1, node, s.Mode, s.ConfigPath, strconv.FormatBool(s.DraftFormat))
	gauge(ch, descSourceInfo, 1, node, s.Source.Kind, s.Source.Health)
	al := report.AllocatorOf(s.Allocator)
	gauge(ch, descAllocator, 1, node, al.AllocationMode, al.QuantumSize, al.AffinityPolicy, strings.Join(al.AllocationOrder, ","))
	if p := s.Plugin; p != nil {
		gauge(ch, descPlugin, 1, node, p.Kind, p.Source, p.Settings, strconv.FormatBool(p.SettingsOK))
	}
	if s.HostMemBytes > 0 {
		gauge(ch, descHostMem, float64(s.HostMemBytes), node)
	}
	c.collectIssues(ch, s, node)
	c.collectDevices(ch, s, node)
	c.collectAgents(ch, s, node)
}

func (c *Collector) collectIssues(ch chan<- prometheus.Metric, s *model.Snapshot, node string) {
	type key struct {
		code string
		sev  model.Severity
	}
	counts := map[key]int{}
	var order []key
	bySev := [3]int{}
	for _, i := range s.Issues {
		k := key{i.Code, i.Severity}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
		if i.Severity >= 0 && int(i.Severity) < len(bySev) {
			bySev[i.Severity]++
		}
	}
	for _, k := range order {
		gauge(ch, descIssues, float64(counts[k]), node, k.code, k.sev.String())
	}
	for _, sev := range severities {
		gauge(ch, descIssuesBySev, float64(bySev[sev]), node, sev.String())
	}
}

// f is a decimal as Prometheus carries it.
func f(d model.Dec) float64 { return d.Float64() }

func (c *Collector) collectDevices(ch chan<- prometheus.Metric, s *model.Snapshot, node string) {
	ratio := map[model.DeviceID]model.Dec{}
	for id, v := range s.AllocRatio() {
		ratio[id] = model.QuantizeAllocRatio(v)
	}
	known := make(map[model.DeviceKey]bool, len(s.Devices))
	for i := range s.Devices {
		d := &s.Devices[i]
		known[d.Key()] = true
		plugin, id, slot := string(d.Name), string(d.ID), string(d.Slot)
		numa := ""
		if d.NUMANode >= 0 {
			numa = strconv.Itoa(d.NUMANode)
		}
		gauge(ch, descDeviceInfo, 1, node, plugin, id, slot, string(d.SlotType), strconv.Itoa(i), strconv.Itoa(d.Index),
			numa, d.Model, d.UUID, string(d.Parent))
		// An unknown capacity (fractional settings never read) is left out,
		// never exported as a made-up number.
		if !d.CapacityUnknown {
			gauge(ch, descCapacity.of(d.Slot), f(d.Capacity), node, id, slot)
			gauge(ch, descCapExp, float64(d.Capacity.Exponent()), node, id, slot)
		}
		u := s.Usage[d.Key()]
		if u == nil || !hasSlot(u.Held, d.Slot) {
			gauge(ch, descHeld.of(d.Slot), 0, node, id, slot)
		}
		kernels := 0
		if u != nil {
			for _, sl := range u.Held.Names() {
				gauge(ch, descHeld.of(sl), f(u.Held[sl]), node, id, string(sl))
				gauge(ch, descHeldExp, float64(u.Held[sl].Exponent()), node, id, string(sl))
			}
			kernels = u.Kernels
		}
		total := u.Total()
		if !d.CapacityUnknown {
			gauge(ch, descFree.of(d.Slot), f(d.Capacity.Sub(total)), node, id, slot)
			gauge(ch, descOverCap.of(d.Slot), f(model.Max(total.Sub(d.Capacity), model.Zero)), node, id, slot)
		}
		gauge(ch, descDevKernels, float64(kernels), node, plugin, id)
		if d.Name == "cuda" && !d.CapacityUnknown {
			gauge(ch, descAllocRatio, f(ratio[d.ID]), node, id)
		}
		for _, a := range s.Agents {
			if a.OwnsDevice(d.Key()) {
				gauge(ch, descOwner, 1, node, plugin, id, string(a.ID))
			}
		}
		if t := d.Telemetry; t != nil && d.Name == "cuda" {
			collectTelemetry(ch, d, t, node)
		}
	}
	// Devices kernels name that the inventory lacks: what is held there
	// still counts (issue unknown-device), without capacity.
	for k, u := range s.Usage {
		if known[k] {
			continue
		}
		for _, sl := range u.Held.Names() {
			gauge(ch, descHeld.of(sl), f(u.Held[sl]), node, string(k.ID), string(sl))
			gauge(ch, descHeldExp, float64(u.Held[sl].Exponent()), node, string(k.ID), string(sl))
		}
		gauge(ch, descDevKernels, float64(u.Kernels), node, string(k.Name), string(k.ID))
		// gpu_alloc_map has such a device too (its raw amount, as
		// Backend.AI's): the same ratio snapshot's alloc_map_ratio gives.
		if v, ok := ratio[k.ID]; ok && k.Name == "cuda" {
			gauge(ch, descAllocRatio, f(v), node, string(k.ID))
		}
	}
}

func hasSlot(r model.ResourceSlot, s model.SlotName) bool {
	_, ok := r[s]
	return ok
}

func collectTelemetry(ch chan<- prometheus.Metric, d *model.Device, t *model.Telemetry, node string) {
	uuid := ""
	if d.UUID != "" {
		uuid = "GPU-" + d.UUID
		if d.IsMIG() {
			uuid = "MIG-" + d.UUID
		}
	}
	l := []string{node, string(d.ID), strconv.Itoa(d.Index), uuid, d.Model, node}
	if t.UtilGPU.Valid {
		gauge(ch, descUtil, float64(t.UtilGPU.V)/100, l...)
	}
	if t.UtilMem.Valid {
		gauge(ch, descMemUtil, float64(t.UtilMem.V)/100, l...)
	}
	if t.MemUsed.Valid {
		gauge(ch, descMemUsed, float64(t.MemUsed.V), l...)
	}
	if t.MemTotal.Valid {
		gauge(ch, descMemTotal, float64(t.MemTotal.V), l...)
	}
	if t.TempC.Valid {
		gauge(ch, descTemp, float64(t.TempC.V), l...)
	}
	if t.PowerMW.Valid {
		gauge(ch, descPower, float64(t.PowerMW.V)/1000, l...)
	}
	if t.PowerCapMW.Valid {
		gauge(ch, descPowerCap, float64(t.PowerCapMW.V)/1000, l...)
	}
	lost := 0.0
	if t.Lost {
		lost = 1
	}
	gauge(ch, descLost, lost, l...)
	gauge(ch, descProcs, float64(len(t.Processes)), l...)
}

func (c *Collector) collectAgents(ch chan<- prometheus.Metric, s *model.Snapshot, node string) {
	var states [4]int
	s.KernelSeq().Each(func(k *model.Kernel) {
		switch k.State {
		case model.KernelOK:
			states[0]++
		case model.KernelStale:
			states[1]++
		case model.KernelBroken:
			states[2]++
		case model.KernelPending:
			states[3]++
		}
	})
	for i, st := range kernelStates {
		gauge(ch, descKernels, float64(states[i]), node, string(st))
	}
	gauge(ch, descIdle, float64(s.IdleKernels), node)
	gauge(ch, descIdleAfter, s.IdleAfter.Seconds(), node)
	agents := make(map[model.AgentID]*model.Agent, len(s.Agents))
	for i := range s.Agents {
		a := &s.Agents[i]
		agents[a.ID] = a
		id := string(a.ID)
		gauge(ch, descAgentInfo, 1, node, id, strconv.Itoa(i), a.ScratchRoot)
		gauge(ch, descAgentKernels, float64(a.Kernels), node, id)
		for _, sl := range a.Held.Names() {
			gauge(ch, descAgentHeld.of(sl), f(a.Held[sl]), node, id, string(sl))
		}
		if a.Mem.Sign() > 0 {
			gauge(ch, descAgentMem, f(a.Mem), node, id)
		}
		for _, sl := range a.Given.Names() {
			gauge(ch, descAgentGiven.of(sl), f(a.Given[sl]), node, id, string(sl))
			gauge(ch, descGivenExp, float64(a.Given[sl].Exponent()), node, id, string(sl))
		}
		if a.Restart.State != "" {
			gauge(ch, descRestart, 1, node, id, string(a.Restart.State))
		}
		switch a.Health.State {
		case model.AgentUp:
			gauge(ch, descAgentUp, 1, node, id)
		case model.AgentDown, model.AgentUnreachable:
			gauge(ch, descAgentUp, 0, node, id)
		}
	}
	// Per agent and device, from the engine's own split of each device's
	// totals (kept incrementally): no walk over the kernels.
	for key, u := range s.Usage {
		plugin, dev := string(key.Name), string(key.ID)
		for agent, held := range u.ByAgent {
			a := agents[agent]
			drift := a != nil && !a.OwnsDevice(key)
			for sl, v := range held {
				if v.IsZero() {
					continue
				}
				gauge(ch, descAgentDevHeld.of(sl), f(v), node, string(agent), plugin, dev, string(sl))
				if drift {
					gauge(ch, descDrift.of(sl), f(v), node, string(agent), plugin, dev, string(sl))
				}
			}
		}
	}
}

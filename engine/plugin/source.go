package plugin

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// Options configure a Source.
type Options struct {
	// Inputs are the rules that choose the plugin (Settings is ignored:
	// the source's own settings are used).
	Inputs Inputs
	// Capacities is --fgpu-capacity.
	Capacities Capacities
	// Etcd, when it has endpoints, is where the settings are read and
	// followed (Start).
	Etcd EtcdOptions
	// File is --plugin-config, already parsed; FilePath names it. When set,
	// etcd is not read.
	File     *Settings
	FilePath string
	// EvidenceRoots are the scratch roots whose kernels' resource.txt
	// files are read again every EvidenceEvery (default 30s) while no
	// stronger rule than the kernels decides the plugin, and soon after a
	// kernel directory appears or goes (a root's modification time
	// changes); none: only Inputs.Evidence, as given.
	EvidenceRoots []string
	EvidenceEvery time.Duration
	// EtcdUnread says why agent.toml's [etcd] addr cannot be read (a
	// wrong type: "[etcd] addr: want ..."): there is an etcd, but no one can tell where, so its
	// settings are not read; "" when it can be (or none is set).
	EtcdUnread string
}

// Source wraps an NVML device source (UUID ids, cuda.device) and
// registers its GPUs as the node's CUDA plugin does, with the plugin's
// settings from etcd (followed live) or a file. Other sources' readings
// (mock, demo, none) pass through unchanged. It implements
// inventory.Source and inventory.Notifier.
type Source struct {
	inner inventory.Source
	opts  Options

	mu sync.Mutex
	// per-agent settings last read; nil before any.
	settings map[model.AgentID]*Settings
	// etcdErr is the current read failure ("" when reading works).
	etcdErr string
	// ever is set once a reading arrived (success or failure).
	ever bool
	// evidence is the kernels' evidence, read at evidenceAt.
	evidence   Evidence
	evidenceAt time.Time
	// rootStamps are the evidence roots' modification times at the last
	// look; settleAt are the moments to look again after a change (the
	// agent writes resource.txt after it makes the kernel's directory).
	rootStamps map[string]time.Time
	settleAt   []time.Time
	first      chan struct{}
	changed    chan struct{}
	// gen counts the changes of settings, etcdErr and evidence: the
	// inputs of the decision besides Options, which never change.
	gen uint64

	// The last poll's work, reused while its inputs stand, under pollMu:
	// the decision made at decGen, and the registered reading made from
	// lastInner at lastGen.
	pollMu    sync.Mutex
	dec       decision
	decGen    uint64
	decOK     bool
	lastInner *inventory.Inventory
	lastGen   uint64
	lastOut   *inventory.Inventory
	// firstSt is the merged settings of the first reading from etcd,
	// for the plugin firstKind; movedAt is when a reading first
	// registered the GPUs otherwise (zero while they register alike):
	// the plugins read their settings only at an agent's start.
	firstSt   *Settings
	firstKind string
	movedAt   time.Time

	// ctx ends the etcd watch; Close cancels it.
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

// NewSource wraps inner. With a settings file those settings are used;
// with etcd endpoints nothing is read until Start.
func NewSource(inner inventory.Source, opts Options) *Source {
	if opts.EvidenceEvery <= 0 {
		opts.EvidenceEvery = 30 * time.Second
	}
	s := &Source{inner: inner, opts: opts, first: make(chan struct{}), changed: make(chan struct{}, 1), done: make(chan struct{}),
		evidence: opts.Inputs.Evidence, evidenceAt: time.Now()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	// The roots as they are when the caller read Inputs.Evidence, so that
	// a kernel made before the first poll counts as a change.
	s.rootStamps = map[string]time.Time{}
	for _, root := range opts.EvidenceRoots {
		if fi, err := os.Stat(root); err == nil {
			s.rootStamps[root] = fi.ModTime()
		} else {
			s.rootStamps[root] = time.Time{}
		}
	}
	if opts.File != nil {
		s.settings = map[model.AgentID]*Settings{"": opts.File}
		s.ever = true
		close(s.first)
	} else if len(opts.Etcd.Endpoints) == 0 {
		s.ever = true
		close(s.first)
	}
	return s
}

// Start follows the settings in etcd until Close, and waits up to wait
// for the first answer (a reading or a failure), so that a first snapshot
// already has them; it never waits longer, etcd down or not. Call it
// once.
func (s *Source) Start(wait time.Duration) {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	if s.opts.File != nil || len(s.opts.Etcd.Endpoints) == 0 {
		close(s.done)
		return
	}
	go func() {
		defer close(s.done)
		WatchEtcd(s.ctx, s.opts.Etcd, s.take)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.first:
	case <-t.C:
	}
}

// take installs a reading from etcd.
func (s *Source) take(r EtcdReading) {
	s.mu.Lock()
	changed := false
	if r.Err != nil {
		// The first failure's words stay while etcd stays unreachable: a
		// retry failing in other words is no news to a follower.
		if s.etcdErr == "" {
			// The client's error may carry the server's own words. The
			// issue names etcd and its address itself: once is enough on
			// an 80-column header.
			msg := strings.TrimPrefix(r.Err.Error(), "etcd at "+s.opts.Etcd.Addr()+": ")
			s.etcdErr, changed = untrusted.Text(msg), true
		}
	} else {
		changed = s.etcdErr != "" || !sameSettings(s.settings, r.Settings)
		s.etcdErr = ""
		s.settings = r.Settings
	}
	if changed {
		s.gen++
	}
	if !s.ever {
		s.ever = true
		close(s.first)
	}
	s.mu.Unlock()
	if changed {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

func sameSettings(a, b map[model.AgentID]*Settings) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, v := range a {
		if !v.Equal(b[k]) {
			return false
		}
	}
	return true
}

// Changed fires when the settings or their health changed.
func (s *Source) Changed() <-chan struct{} { return s.changed }

// Close stops following etcd and closes the wrapped source.
func (s *Source) Close() error {
	s.cancel()
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return s.inner.Close()
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		// A wedged client must not hold up the exit.
	}
	return s.inner.Close()
}

// evidenceSettle are the delays after a root changes at which the kernels
// are read again: a new kernel's resource.txt comes a moment after its
// directory, and its unknown-device issues would otherwise stand until
// the next EvidenceEvery.
var evidenceSettle = []time.Duration{0, 2 * time.Second, 10 * time.Second}

// evidenceDue reports whether the kernels' evidence is to be read again:
// EvidenceEvery after the last reading, or at a moment set by a change of
// a root (one stat per root and poll).
func (s *Source) evidenceDue(last time.Time) bool {
	now := time.Now()
	// Stat before taking the lock: a slow root (NFS) must not hold up the
	// etcd side, which takes it too.
	stamps := make([]time.Time, len(s.opts.EvidenceRoots))
	for i, root := range s.opts.EvidenceRoots {
		if fi, err := os.Stat(root); err == nil {
			stamps[i] = fi.ModTime()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for i, root := range s.opts.EvidenceRoots {
		mt := stamps[i]
		if old, seen := s.rootStamps[root]; seen && !old.Equal(mt) {
			changed = true
		}
		s.rootStamps[root] = mt
	}
	if changed {
		s.settleAt = s.settleAt[:0]
		for _, d := range evidenceSettle {
			s.settleAt = append(s.settleAt, now.Add(d))
		}
	}
	due := now.Sub(last) >= s.opts.EvidenceEvery
	for len(s.settleAt) > 0 && !now.Before(s.settleAt[0]) {
		due = true
		s.settleAt = s.settleAt[1:]
	}
	return due
}

// decision is what the plugin's inputs decide, apart from the devices.
type decision struct {
	info   model.PluginInfo
	issues []model.Issue
	st     *Settings
	// masks are the agents' settings where some agent's device_mask is
	// not st's (merged, or another agent's shown), nil otherwise.
	masks map[model.AgentID]*Settings
}

// decide weighs the inputs read at gen, or returns the decision made
// from them already.
func (s *Source) decide(gen uint64, settings map[model.AgentID]*Settings, etcdErr string, evidence Evidence) decision {
	if s.decOK && s.decGen == gen {
		return s.dec
	}
	// Which plugin runs does not depend on device_mask, and how the
	// agents' masks merge depends on which plugin runs (cuda_open compares
	// items as written, the fractional plugin trimmed, with or without
	// GPU-): decide first, then merge under the plugin decided.
	in := s.opts.Inputs
	in.Settings, _, _ = s.pick(settings, model.PluginCUDAFractional)
	in.Evidence = evidence
	info, issues := Decide(in)
	st, agentIssues, differ := s.pick(settings, info.Kind)
	in.Settings = st
	issues = append(issues, agentIssues...)
	// Settings that differ register differently only where the plugin
	// reads what differs: the plugin itself (each agent's allocation_mode
	// weighed as the node's would be), the GPUs a device_mask that pick
	// could not merge leaves, and the units and quantum of fractional GPUs.
	info.SettingsDiffer = differ && registersDiffer(in, info.Kind, st, settings)
	// While etcd is down the last settings read are kept and shown, and a
	// change seen before still holds: moved weighs them too.
	if iss, ok := s.moved(info.Kind, st, settings != nil); ok {
		issues = append(issues, iss)
	}
	switch {
	case s.opts.File != nil:
		info.Settings, info.SettingsOK = "file "+s.opts.FilePath, true
	case len(s.opts.Etcd.Endpoints) > 0:
		info.Settings, info.SettingsOK = "etcd "+s.opts.Etcd.Addr(), etcdErr == ""
	case s.opts.EtcdUnread != "":
		// Not "none" as if the agents had no settings: they are in an
		// etcd agent.toml does not say where to find.
		info.Settings = "none: agent.toml's [etcd] addr cannot be read"
		unread := "a device_mask is unknown: GPUs the agents do not register may be shown (--plugin-config settles it)"
		switch {
		case info.Source == RuleDefault:
			unread = "the GPUs are shown as cuda_open registers them only because nothing else tells (the settings may say fractional, or mask GPUs; --cuda-plugin or --plugin-config settles it)"
		case info.Kind != model.PluginCUDAOpen:
			unread = "fractional capacities are unknown"
		}
		issues = append(issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("the CUDA plugin settings in etcd are not read (agent.toml's %s): %s", s.opts.EtcdUnread, unread)})
	default:
		info.Settings = "none"
	}
	if etcdErr != "" {
		kept := "the last settings read are kept"
		switch {
		case settings != nil:
		case info.Source == RuleDefault:
			// cuda_open by default is a guess here: the settings no one
			// could read may say fractional, or mask GPUs.
			kept = "none were ever read, so the GPUs are shown as cuda_open registers them only because nothing else tells (the settings may say fractional, or mask GPUs; --cuda-plugin or --plugin-config settles it)"
		case info.Kind == model.PluginCUDAOpen:
			// Decided by the kernels or a flag: the plugin is known, but
			// its device_mask is in the settings no one could read.
			kept = "none were ever read, so a device_mask is unknown: GPUs the agents do not register may be shown (--plugin-config settles it)"
		default:
			kept = "none were ever read, so fractional capacities are unknown"
		}
		issues = append(issues, model.Issue{Severity: model.SevError, Code: model.IssuePluginSettings,
			// etcd and its address first: the console's header line has
			// 80 columns on a small terminal.
			Message: fmt.Sprintf("etcd at %s: cannot read the CUDA plugin settings (%s): %s", s.opts.Etcd.Addr(), etcdErr, kept)})
	}
	if st != nil {
		for _, p := range st.Problems {
			issues = append(issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
				Message: "CUDA plugin setting " + p})
		}
	}
	var masks map[model.AgentID]*Settings
	for _, a := range settings {
		if !sameMask(a, st, info.Kind) {
			// Merged, or shown as another agent registers them: some
			// agent leaves out GPUs that are shown.
			masks = settings
			break
		}
	}
	s.dec, s.decGen, s.decOK = decision{info: info, issues: issues, st: st, masks: masks}, gen, true
	return s.dec
}

// moved says, once the settings followed in etcd register the GPUs
// otherwise than the first ones fgtop read (another device_mask, or other
// units or quantum for fractional GPUs), that the agents may not: cuda_open
// and the mock plugin read their settings only at start
// (config_watch_enabled False), so an agent that started before the change
// registers what the old settings gave until it restarts. What fgtop shows
// is what the agents register from their next start. It cannot tell which
// settings an agent started with when the change came before fgtop did.
// Called under pollMu (decide); read is whether settings were ever read
// (while etcd is down, st is the last ones read, kept).
func (s *Source) moved(kind string, st *Settings, read bool) (model.Issue, bool) {
	if len(s.opts.Etcd.Endpoints) == 0 || !read {
		return model.Issue{}, false
	}
	if s.firstSt == nil || s.firstKind != kind {
		s.firstSt, s.firstKind, s.movedAt = st, kind, time.Time{}
		return model.Issue{}, false
	}
	var what []string
	if !sameMask(s.firstSt, st, kind) {
		what = append(what, "device_mask")
	}
	if kind == model.PluginCUDAFractional && !sameUnits(s.firstSt, st) {
		what = append(what, "unit_mem, unit_proc or quantum_size")
	}
	if len(what) == 0 {
		s.movedAt = time.Time{}
		return model.Issue{}, false
	}
	if s.movedAt.IsZero() {
		s.movedAt = time.Now()
	}
	name := map[string]string{model.PluginCUDAOpen: "cuda_open", model.PluginCUDAFractional: "the fractional plugin"}[kind]
	if name == "" {
		name = "the " + kind + " plugin"
	}
	return model.Issue{Severity: model.SevWarning, Code: model.IssuePluginSettings,
		// What changed and when first: the console cuts an issue to one
		// line, about 50 columns of it at 80.
		Message: fmt.Sprintf("CUDA plugin settings changed in etcd at %s while fgtop watched (%s): %s reads its settings only when an agent starts, so an agent started before then still registers the GPUs as the old settings gave; they are shown as the agents register them from their next start",
			s.movedAt.Local().Format("15:04:05"), strings.Join(what, " and "), name)}, true
}

// Poll reads the wrapped source and registers its GPUs. A reading equal
// to the last poll's, with the same settings and evidence, returns the
// last poll's registered reading itself (readings are never changed
// after they are returned): at rest a poll then decides and registers
// nothing, and the engine's comparison is one pointer compare.
func (s *Source) Poll(ctx context.Context) (*inventory.Inventory, error) {
	inv, err := s.inner.Poll(ctx)
	if err != nil || inv == nil {
		return inv, err
	}
	if inv.Source.Kind != inventory.KindNVML {
		return inv, nil
	}
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	s.mu.Lock()
	settings, etcdErr := s.settings, s.etcdErr
	evidence, evidenceAt, gen := s.evidence, s.evidenceAt, s.gen
	s.mu.Unlock()

	d := s.decide(gen, settings, etcdErr, evidence)
	if (d.info.Source == RuleScratch || d.info.Source == RuleDefault) && len(s.opts.EvidenceRoots) > 0 && s.evidenceDue(evidenceAt) {
		// The kernels decide: kernels come and go, so look again now and
		// then (bounded: MaxEvidenceFiles files of 64 KiB).
		ev := ScanEvidence(s.opts.EvidenceRoots)
		s.mu.Lock()
		if ev != s.evidence {
			s.evidence = ev
			s.gen++
		}
		s.evidenceAt = time.Now()
		settings, etcdErr, evidence, gen = s.settings, s.etcdErr, s.evidence, s.gen
		s.mu.Unlock()
		d = s.decide(gen, settings, etcdErr, evidence)
	}
	if s.lastOut != nil && s.lastGen == gen && inventory.Equal(s.lastInner, inv) {
		return s.lastOut, nil
	}
	info, st := d.info, d.st
	issues := slices.Clone(d.issues)
	devs, innerIssues := inv.Devices, inv.Issues
	if info.Kind == model.PluginCUDAOpen {
		devs, innerIssues = listUnidentified(inv)
	}
	reg := Register(devs, info.Kind, st, s.opts.Capacities)
	issues = append(issues, reg.Issues...)

	out := *inv
	out.Devices = reg.Devices
	if info.Kind == model.PluginCUDAOpen {
		out.Unidentified = nil
	}
	out.SlotTypes = make(model.SlotTypes, len(inv.SlotTypes))
	for k, v := range inv.SlotTypes {
		if k != model.SlotCUDADevice && k != model.SlotCUDAShares {
			out.SlotTypes[k] = v
		}
	}
	if reg.Fractional {
		out.SlotTypes[model.SlotCUDAShares] = model.SlotTypeCount
	} else {
		out.SlotTypes[model.SlotCUDADevice] = model.SlotTypeCount
	}
	out.Fractional, out.Quantum = reg.Fractional, reg.Quantum
	out.Issues = slices.Clone(innerIssues)
	for i := range out.Issues {
		// The source's issue about a GPU (it is lost) belongs on the row
		// of the id the GPU is registered by.
		if id, ok := reg.IDs[out.Issues[i].Device.ID]; ok && out.Issues[i].Device.Name == "cuda" {
			out.Issues[i].Device.ID = id
		}
	}
	out.Issues = append(out.Issues, issues...)
	if len(reg.Masked) > 0 {
		out.Source.Detail += fmt.Sprintf(", %d masked by device_mask", len(reg.Masked))
	}
	out.Plugin = &info
	out.AgentUnregistered = agentUnregistered(devs, reg.Devices, info.Kind, d.masks, s.opts.Capacities)
	s.lastInner, s.lastGen, s.lastOut = inv, gen, &out
	return &out, nil
}

// listUnidentified is inv's devices with the GPUs it could not list for
// want of a UUID put in among them (each before the first GPU of a higher
// index, or the first device that is no GPU), and its issues with the one
// saying each is not listed replaced by what is said of it by index (that
// it is lost): cuda_open registers a GPU by its index, which NVML knows.
func listUnidentified(inv *inventory.Inventory) ([]model.Device, []model.Issue) {
	if len(inv.Unidentified) == 0 {
		return inv.Devices, inv.Issues
	}
	notListed := map[model.Issue]bool{}
	var said []model.Issue
	n := len(inv.Devices)
	for _, u := range inv.Unidentified {
		notListed[u.NotListed] = true
		said = append(said, u.Issues...)
		n += len(u.Devices)
	}
	devs := make([]model.Device, 0, n)
	rest := inv.Unidentified
	for _, d := range inv.Devices {
		for len(rest) > 0 && (d.Name != "cuda" || (!d.IsMIG() && d.Index > rest[0].Devices[0].Index)) {
			devs = append(devs, rest[0].Devices...)
			rest = rest[1:]
		}
		devs = append(devs, d)
	}
	for _, u := range rest {
		devs = append(devs, u.Devices...)
	}
	issues := make([]model.Issue, 0, len(inv.Issues)+len(said))
	for _, is := range inv.Issues {
		if !notListed[is] {
			issues = append(issues, is)
		}
	}
	return devs, append(issues, said...)
}

// agentUnregistered is, for each agent whose own device_mask leaves out
// GPUs that shown (the node's registration) lists, those GPUs: that
// agent's kernels cannot hold them. Nil when masks is (every agent masks
// what is shown).
func agentUnregistered(devs, shown []model.Device, kind string, masks map[model.AgentID]*Settings, c Capacities) map[model.AgentID]map[model.DeviceID]bool {
	var out map[model.AgentID]map[model.DeviceID]bool
	for ag, st := range masks {
		own := map[model.DeviceID]bool{}
		for _, d := range Register(devs, kind, st, c).Devices {
			if d.Name == "cuda" {
				own[d.ID] = true
			}
		}
		for _, d := range shown {
			if d.Name == "cuda" && !own[d.ID] {
				if out == nil {
					out = map[model.AgentID]map[model.DeviceID]bool{}
				}
				if out[ag] == nil {
					out[ag] = map[model.DeviceID]bool{}
				}
				out[ag][d.ID] = true
			}
		}
	}
	return out
}

// pick chooses the settings to register with: every agent's, when they
// agree; when they differ only in device_mask, every GPU some agent
// registers (each agent's devices are its own, and the node's are all of
// them), with an issue; the first agent's otherwise, with an issue (its
// capacities are in its own units, which cannot be summed with another's).
func (s *Source) pick(m map[model.AgentID]*Settings, kind string) (*Settings, []model.Issue, bool) {
	if len(m) == 0 {
		return nil, nil, false
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, string(id))
	}
	order := s.opts.Etcd.Agents
	if len(order) == 0 {
		sort.Strings(ids)
		order = nil
		for _, id := range ids {
			order = append(order, model.AgentID(id))
		}
	}
	first := m[order[0]]
	var differ []string
	for _, id := range order[1:] {
		if !m[id].Equal(first) {
			differ = append(differ, fmt.Sprintf("agent %s has %s", id, m[id]))
		}
	}
	if len(differ) == 0 {
		return first, nil, false
	}
	if merged, ok := maskUnion(first, order, m, kind); ok {
		var masks []string
		for _, id := range order {
			masks = append(masks, fmt.Sprintf("%s masks %s", id, maskWords(maskItems(m[id], kind))))
		}
		return merged, []model.Issue{{Severity: model.SevWarning, Code: model.IssuePluginSettings,
			Message: fmt.Sprintf("the agents' CUDA plugins mask different GPUs (device_mask, node scopes in etcd): %s; fgtop shows every GPU some agent registers (left out: %s), and each agent places work only on the GPUs it registers",
				strings.Join(masks, "; "), maskWords(maskItems(merged, kind)))}}, false
	}
	return first, []model.Issue{{Severity: model.SevWarning, Code: model.IssuePluginSettings,
		// One clause per agent: "X has …, but Y (…)" left the other
		// agents' settings without a verb.
		Message: fmt.Sprintf("the agents' CUDA plugin settings differ (node scopes in etcd): agent %s has %s; %s. fgtop shows the GPUs as agent %s registers them",
			order[0], first, strings.Join(differ, "; "), order[0])}}, true
}

// registersDiffer reports whether some agent's settings in m register the
// GPUs otherwise than shown, the settings the node is shown with (pick's
// first agent's, masks not merged), do under kind: another plugin (its
// allocation_mode decided as the node's, with the same flag, lists and
// evidence), other GPUs (device_mask), or, for fractional GPUs, other
// units or another quantum. Keys spelled otherwise with the same value
// ("20g" and "20480m") and keys the plugin does not read are alike.
func registersDiffer(in Inputs, kind string, shown *Settings, m map[model.AgentID]*Settings) bool {
	for _, st := range m {
		in.Settings = st
		if info, _ := Decide(in); info.Kind != kind {
			return true
		}
	}
	for _, st := range m {
		if !sameMask(st, shown, kind) {
			return true
		}
		if kind == model.PluginCUDAFractional && !sameUnits(st, shown) {
			return true
		}
	}
	return false
}

// sameMask: a and b mask the same GPUs under the plugin of kind (items
// compared as that plugin matches them, as maskUnion does).
func sameMask(a, b *Settings, kind string) bool {
	set := func(s *Settings) map[string]bool {
		out := map[string]bool{}
		for _, item := range maskItems(s, kind) {
			out[maskKey(kind, item)] = true
		}
		return out
	}
	return maps.Equal(set(a), set(b))
}

// sameUnits: a and b give fractional GPUs the same capacities and quantum.
func sameUnits(a, b *Settings) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UnitMem == b.UnitMem && a.UnitProc == b.UnitProc && a.BadUnits == b.BadUnits &&
		a.BadQuantum == b.BadQuantum && a.Quantum.Cmp(b.Quantum) == 0
}

// maskUnion is first with a device_mask that leaves out only the GPUs every
// agent masks, when the agents' settings differ in device_mask alone. A
// mask item is compared as the plugin of kind matches it (maskKey):
// "GPU-<uuid>" masks a GPU for one agent of the fractional plugin but
// none for an agent of cuda_open.
func maskUnion(first *Settings, order []model.AgentID, m map[model.AgentID]*Settings, kind string) (*Settings, bool) {
	count := map[string]int{}
	for _, id := range order {
		st := m[id]
		if st == nil || first == nil || !sameButMask(st, first) {
			return nil, false
		}
		seen := map[string]bool{}
		for _, item := range maskItems(st, kind) {
			if b := maskKey(kind, item); !seen[b] {
				seen[b] = true
				count[b]++
			}
		}
	}
	merged := *first
	keep := func(items []string) []string {
		var out []string
		for _, item := range items {
			if count[maskKey(kind, item)] == len(order) {
				out = append(out, item)
			}
		}
		return out
	}
	merged.DeviceMask, merged.OpenMask = keep(first.DeviceMask), keep(first.OpenMask)
	merged.Raw = maps.Clone(first.Raw)
	if items := maskItems(&merged, kind); len(items) > 0 {
		merged.Raw["device_mask"] = strings.Join(items, ",")
	} else {
		delete(merged.Raw, "device_mask")
	}
	return &merged, true
}

// sameButMask reports whether a and b hold the same values apart from
// device_mask.
func sameButMask(a, b *Settings) bool {
	if len(a.Problems) > 0 || len(b.Problems) > 0 {
		return false
	}
	strip := func(raw map[string]string) map[string]string {
		out := maps.Clone(raw)
		delete(out, "device_mask")
		return out
	}
	return maps.Equal(strip(a.Raw), strip(b.Raw))
}

// maskWords spells a device_mask for an issue.
func maskWords(mask []string) string {
	if len(mask) == 0 {
		return "none"
	}
	return strings.Join(mask, ",")
}

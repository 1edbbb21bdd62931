package engine

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/engine/recovery"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// kstate is the engine's private record of one kernel.
type kstate struct {
	pub *model.Kernel
	// contrib is what the kernel currently counts for: its last good
	// allocation (kept while the file is torn or malformed), or nil.
	contrib model.Allocations
	root    string
	// rec and recErr: the kernel's recovery.json as last read.
	rec     *model.KernelRecord
	recErr  error
	pending bool
	// torn is the current file read as Backend.AI reads it (its last line
	// has no newline), counted once it stays unchanged for the settle time.
	torn *resourcefile.Spec
	// cid is the container id of its CID= line, normalised.
	cid string
	// useEpoch is the device epoch its use was computed in.
	useEpoch uint64
	// resynced is the resync epoch of the last full scan that listed it.
	resynced uint64
}

// devAcc accumulates everything held on one device key.
type devAcc struct {
	key   model.DeviceKey
	held  model.ResourceSlot
	count map[model.SlotName]int
	// kernels holding anything on the device.
	kernels int
	// holdings lists each kernel's entries on an accelerator (CPU cores and
	// memory keep totals only). A persistent sequence: a snapshot shares
	// all but the changed chunk with the previous one, so a change costs
	// O(1) in the number of kernels on the device.
	holdings model.HoldingSeqBuilder
	// bulkHold: holdings put while the state is in bulk mode, not yet in
	// holdings (see state.bulk).
	bulkHold []model.Holding
	// byAgent is held split by the kernels' agent, kept as each kernel is
	// applied (O(1) per change, like held).
	byAgent map[model.AgentID]*slotAcc
	dirty   bool
	pub     *model.DeviceUsage
	// exps are held's terms by exponent (expCounts).
	exps expCounts
}

// slotAcc is a per-slot total with the number of entries in it, so a slot
// whose last entry goes is dropped rather than left at a zero that only
// looks like one ("0.00").
type slotAcc struct {
	held  model.ResourceSlot
	count map[model.SlotName]int
	exps  expCounts
}

func (a *devAcc) agentAcc(agent model.AgentID) *slotAcc {
	if a.byAgent == nil {
		a.byAgent = map[model.AgentID]*slotAcc{}
	}
	sa := a.byAgent[agent]
	if sa == nil {
		sa = &slotAcc{held: model.ResourceSlot{}, count: map[model.SlotName]int{}, exps: expCounts{}}
		a.byAgent[agent] = sa
	}
	return sa
}

type agentAcc struct {
	base    model.Agent
	held    model.ResourceSlot
	kernels int
	exps    expCounts
}

// state is owned by the engine's single state goroutine (or by Build for a
// one-shot snapshot); nothing in it is safe for concurrent use.
type state struct {
	// last is the last snapshot published (retimed republishes it);
	// usesMoved is set when updateUses changed a kernel's use.
	last      *model.Snapshot
	usesMoved bool

	node       string
	mode       string
	draftFmt   bool
	configPath string
	configHash string // Snapshot.ConfigHash
	now        func() time.Time
	// affinity and order are the config's [resource] settings.
	affinity string
	order    []model.DeviceName

	inv       *inventory.Inventory
	devIndex  map[model.DeviceKey]int
	partition func(inv *inventory.Inventory) ([]model.Agent, []model.Issue)

	kernels map[model.KernelID]*kstate
	// kernelList is the published kernel list: a persistent sequence, so
	// that a snapshot shares all but one chunk with the previous one
	// (a change costs O(1) in the number of kernels, not a copy of them all).
	kernelList model.KernelSeqBuilder
	// bulk: a one-shot scan is being folded. Kernels and holdings put are
	// collected (bulkKernels, devAcc.bulkHold) and go into their sequences
	// at once, sorted, by endBulk: inserting 10,000 kernels one by one in
	// directory order cost more than parsing their files. Anything that
	// deletes or reads the sequences ends bulk mode first.
	bulk        bool
	bulkKernels []*model.Kernel
	dev         map[model.DeviceKey]*devAcc
	agents      []*agentAcc
	agentIdx    map[model.AgentID]int
	rootAgent   map[string]model.AgentID
	fileIssues  map[model.KernelID]model.Issue
	kernIssues  map[model.KernelID][]model.Issue
	devIssues   map[model.DeviceKey][]model.Issue
	// sharedCores are the CPU cores that kernels of several agents hold
	// beyond capacity together, each agent within it: one node-level
	// warning lists them (collectIssues), not one per core.
	sharedCores map[model.DeviceID]sharedCore
	srcIssues   map[string]model.Issue // watcher and config problems, by key
	attrIssues  map[model.KernelID][]model.Issue
	// rootAgents lists the agents of each scratch root (Roots' paths).
	rootAgents rootAgents
	// madeUp: agents whose id the config does not set.
	madeUp map[model.AgentID]bool
	roots  []scratch.Root
	// configured: the agents come from an agent.toml (not made up from
	// --scratch-root names).
	configured      bool
	rootsFromConfig bool
	// pluginInputs: Options.PluginInputs, what the device source read.
	pluginInputs PluginInputs
	// settle is how long a file without a final newline must stay
	// unchanged before it counts (0: at once, for one-shot snapshots).
	settle      time.Duration
	tornDue     map[model.KernelID]time.Time
	restart     map[model.AgentID]model.Restart
	health      map[model.AgentID]model.AgentHealth // the last round of GET /health
	issuesDirty bool
	issues      []model.Issue
	// lossy: slots some running total of which was rounded when a term
	// was added (a hostile amount of 28 digits and more); taking a term
	// of such a slot back marks it for rebuild, summed afresh from the
	// kernels before the next snapshot (rebuildLossy).
	lossy   map[model.SlotName]bool
	rebuild map[model.SlotName]bool
	seq     uint64
	// resyncEpoch counts resyncs (kstate.resynced).
	resyncEpoch uint64

	// GPU processes -> kernels (use.go).
	// cids maps a container id to the kernel whose CID= line names it.
	cids map[string]model.KernelID
	// joined is the inventory's devices with processes joined to kernels
	// (nil: the inventory's own, no process anywhere).
	joined    []model.Device
	joinDirty bool
	// listed: some device lists its processes.
	listed bool
	// devSig is each device's devState; devEpoch counts its changes (and
	// changes of the device set): a kernel without processes whose use was
	// computed in this epoch reads the same until its idle mark is due.
	devSig   string
	devEpoch uint64
	// agg is, per kernel, what its processes use per device.
	agg map[model.KernelID]map[model.DeviceKey]*procAgg
	// useDirty: kernels whose use must be recomputed; useAll: all of them.
	useDirty  map[model.KernelID]bool
	useAll    bool
	idleAfter time.Duration
	idleCount int
}

func newState(o *Options) *state {
	s := &state{
		node: o.Node, mode: o.Mode, draftFmt: o.DraftFormat, configPath: o.ConfigPath, configHash: o.ConfigHash, now: o.Clock,
		affinity: o.AffinityPolicy, order: o.AllocationOrder,
		kernels:         map[model.KernelID]*kstate{},
		dev:             map[model.DeviceKey]*devAcc{},
		agentIdx:        map[model.AgentID]int{},
		rootAgent:       map[string]model.AgentID{},
		fileIssues:      map[model.KernelID]model.Issue{},
		kernIssues:      map[model.KernelID][]model.Issue{},
		devIssues:       map[model.DeviceKey][]model.Issue{},
		sharedCores:     map[model.DeviceID]sharedCore{},
		srcIssues:       map[string]model.Issue{},
		attrIssues:      map[model.KernelID][]model.Issue{},
		tornDue:         map[model.KernelID]time.Time{},
		devIndex:        map[model.DeviceKey]int{},
		partition:       o.Partition,
		configured:      len(o.Agents) > 0 || o.ConfigPath != "",
		rootAgents:      rootAgentsOf(o.Roots, o.Agents),
		madeUp:          idSet(o.MadeUpIDs),
		roots:           o.Roots,
		settle:          o.TornSettle,
		rootsFromConfig: o.FollowConfig && !o.RootsOverridden,
		pluginInputs:    o.PluginInputs,
		cids:            map[string]model.KernelID{},
		useDirty:        map[model.KernelID]bool{},
		idleAfter:       o.IdleAfter,
	}
	if s.idleAfter == 0 {
		s.idleAfter = DefaultIdleAfter
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, a := range o.Agents {
		s.addAgent(a)
	}
	for _, r := range o.Roots {
		s.rootAgent[r.Path] = r.Agent
		if _, ok := s.agentIdx[r.Agent]; !ok {
			s.addAgent(model.Agent{ID: r.Agent, ScratchRoot: r.Path})
		}
	}
	for _, iss := range o.Issues {
		s.srcIssues["opt:"+iss.Code+":"+iss.Message] = iss
	}
	s.setConfigIssues(o.ConfigIssues)
	s.issuesDirty = true
	return s
}

func (s *state) addAgent(a model.Agent) {
	s.agentIdx[a.ID] = len(s.agents)
	s.agents = append(s.agents, &agentAcc{base: a, held: model.ResourceSlot{}, exps: expCounts{}})
}

// setInventory installs a new device reading. Derived device issues are
// recomputed for every device when the set of devices changes.
func (s *state) setInventory(inv *inventory.Inventory) {
	old := s.inv
	s.inv = inv
	// A source's health changes what is judged on the same devices: the
	// mock's guessed mode confirmed once its settings are read.
	changed := old == nil || len(old.Devices) != len(inv.Devices) || old.Source.Health != inv.Source.Health ||
		!maps.EqualFunc(old.AgentUnregistered, inv.AgentUnregistered, maps.Equal)
	if !changed {
		for i := range inv.Devices {
			if old.Devices[i].Key() != inv.Devices[i].Key() || !old.Devices[i].Capacity.Equal(inv.Devices[i].Capacity) ||
				old.Devices[i].CapacityUnknown != inv.Devices[i].CapacityUnknown || old.Devices[i].Slot != inv.Devices[i].Slot {
				changed = true
				break
			}
		}
	}
	if changed {
		s.devIndex = make(map[model.DeviceKey]int, len(inv.Devices))
		for i := range inv.Devices {
			s.devIndex[inv.Devices[i].Key()] = i
		}
		if s.partition != nil {
			s.applyPartition(inv)
		}
		for _, acc := range s.dev {
			acc.dirty = true
			s.checkDevice(acc)
		}
		for id, ks := range s.kernels {
			s.checkKernel(id, ks)
		}
		s.devEpoch++
	}
	s.issuesDirty = true
	s.joinDirty, s.useAll = true, true
}

// applyPartition recomputes the agents' partitions for a new device set.
func (s *state) applyPartition(inv *inventory.Inventory) {
	agents, issues := s.partition(inv)
	for _, a := range agents {
		if i, ok := s.agentIdx[a.ID]; ok {
			s.agents[i].base.Owns = a.Owns
			s.agents[i].base.Mem = a.Mem
			s.agents[i].base.Given = a.Given
		}
	}
	for k := range s.srcIssues {
		if len(k) > 10 && k[:10] == "partition:" {
			delete(s.srcIssues, k)
		}
	}
	for i, iss := range issues {
		s.srcIssues[fmt.Sprintf("partition:%d", i)] = iss
	}
}

// kernelRead is one read of a kernel's config directory.
type kernelRead struct {
	root string
	id   model.KernelID
	path string
	spec *resourcefile.Spec
	err  error
	mod  time.Time
	// pending: the kernel directory exists, resource.txt does not (yet).
	pending bool
	// settled: spec is a file without a final newline, read as
	// Backend.AI reads it once it stayed unchanged.
	settled bool
	// recKnown: the read saw recovery.json (rec) or why there is none.
	recKnown bool
	rec      *model.KernelRecord
	recErr   error
}

// upsertKernel applies one read of a kernel's resource.txt: a parsed spec, a
// parse error, or "no file yet" (pending).
// The spec's Slots and Alloc are kept as they are (and published): the
// caller must not change them afterwards (specs parsed with a
// resourcefile.Shared share them). Their strings are safe to keep: the
// parser copies or shares every name it keeps.
func (s *state) upsertKernel(r kernelRead) {
	id, path, spec, err := r.id, r.path, r.spec, r.err
	ks := s.kernels[id]
	now := s.now()
	isNew := ks == nil
	if isNew {
		ks = &kstate{root: r.root}
		s.kernels[id] = ks
	}
	if r.recKnown {
		if r.rec == nil && ks.rec != nil && ks.rec.KernelID == id && recovery.BeingWritten(r.recErr) {
			// The agent rewrites the record in place: while it is
			// incomplete, its last whole version stands (as a torn
			// resource.txt keeps its last good figures), and the error
			// says so beside it.
			ks.recErr = r.recErr
		} else {
			ks.rec, ks.recErr = r.rec, r.recErr
		}
	}
	ks.pending = r.pending
	at := s.attribute(id, r.root, path, ks.rec, ks.recErr, r.pending)
	agent := at.agent
	if _, ok := s.agentIdx[agent]; !ok && agent != "" {
		s.addAgent(model.Agent{ID: agent, ScratchRoot: r.root})
	}
	putIssues(s, s.attrIssues, id, at.issues)
	k := &model.Kernel{ID: id, Agent: agent, AgentBy: at.by, Record: ks.rec, Path: path, ModTime: r.mod, Seen: now}
	if ks.pub != nil {
		k.Seen = ks.pub.Seen
		k.Slots, k.UnifiedDevices, k.Legacy = ks.pub.Slots, ks.pub.UnifiedDevices, ks.pub.Legacy
		k.Use = ks.pub.Use
	}
	var contrib model.Allocations
	switch {
	case r.pending:
		k.State = model.KernelPending
		s.setFileIssue(id, nil)
	case err == nil && spec != nil:
		k.State = model.KernelOK
		k.Slots, k.Legacy = safeSlots(spec.Slots), spec.Legacy
		k.UnifiedDevices = unifiedPairs(spec.UnifiedDevices)
		contrib = safeAlloc(spec.Alloc)
		s.setContainer(id, ks, untrusted.Text(spec.CID))
		if usable, bad := usableAmounts(contrib); bad != "" {
			// Backend.AI's Decimal reads NaN, Infinity and a minus sign,
			// but no device holds such a share: added into a total, one
			// would hide the device's load (NaN) or fake it.
			contrib = usable
			iss := model.Issue{Severity: model.SevError, Code: model.IssueParse, File: path, Kernel: id, Agent: agent,
				Message: untrusted.Text(bad) + ": not an amount a device can hold; left out of the device's total (what the kernel holds there is not known)"}
			k.Problem = &iss
			s.setFileIssue(id, &iss)
		} else if miss := requestedUnlisted(k.Slots, contrib, k.UnifiedDevices); miss != "" {
			// A file cut at a line's end parses: SLOTS comes before the
			// allocation lines, so what it asks for and is not listed
			// is held where fgtop cannot see. Before the missing final
			// newline: a file cut inside an allocation line lacks both.
			iss := model.Issue{Severity: model.SevWarning, Code: model.IssueNoAllocation, File: path, Kernel: id, Agent: agent,
				Message: "requests " + miss + " but lists no allocation of it: the agent writes its allocation lines after SLOTS, so the file looks cut short (still being written, or truncated); what the kernel holds there is not known"}
			if len(ks.contrib) > 0 && !ks.cutFromTheStart() {
				// As for a file that does not parse: the kernel did not
				// give back what it held because its file lost lines.
				k.State = model.KernelStale
				contrib = ks.contrib
				iss.Message += " (keeping its last good allocation)"
			}
			k.Problem = &iss
			s.setFileIssue(id, &iss)
		} else if r.settled {
			iss := model.Issue{Severity: model.SevWarning, Code: model.IssueNoFinalNewline, File: path, Kernel: id, Agent: agent,
				Message: "the last line has no newline; read as Backend.AI reads it, the last line included"}
			k.Problem = &iss
			s.setFileIssue(id, &iss)
		} else {
			s.setFileIssue(id, nil)
		}
	default:
		iss := fileIssue(path, id, agent, err)
		if ks.contrib != nil {
			k.State = model.KernelStale
			contrib = ks.contrib
			iss.Message += " (keeping its last good allocation)"
		} else {
			k.State = model.KernelBroken
		}
		k.Problem = &iss
		s.setFileIssue(id, &iss)
	}
	k.Alloc = contrib
	k.Container = ks.cid
	if s.listed {
		s.useDirty[id] = true
	}
	if ks.pub != nil && ks.pub.Agent != agent {
		s.subtract(ks.pub.Agent, id, ks.contrib)
		ks.contrib = nil
		s.agentKernels(ks.pub.Agent, -1)
		s.agentKernels(agent, +1)
	} else if ks.pub == nil {
		s.agentKernels(agent, +1)
	}
	s.subtract(agent, id, ks.contrib)
	s.apply(agent, id, contrib, +1)
	ks.contrib = contrib
	ks.root = r.root
	ks.pub = k
	s.putKernel(k)
	s.checkKernel(id, ks)
}

// cutFromTheStart reports whether the kernel's last read was already a
// file cut short that the engine took as it was (not stale): what it
// holds then is no last good allocation, only what the cut file listed.
func (ks *kstate) cutFromTheStart() bool {
	p := ks.pub
	return p != nil && p.State == model.KernelOK && p.Problem != nil && p.Problem.Code == model.IssueNoAllocation
}

// usableAmounts is a without the amounts no device can hold (not finite,
// or below zero), and what the first of them was, in words ("" when every
// amount is usable: a itself is returned).
func usableAmounts(a model.Allocations) (model.Allocations, string) {
	found := false
	for _, devs := range a {
		for _, v := range devs {
			found = found || !v.IsFinite() || v.Sign() < 0
		}
	}
	if !found {
		return a, ""
	}
	// The first in order, so that the message does not change from one
	// read of the same file to the next.
	var bad string
	slots := slices.Sorted(maps.Keys(a))
	for _, slot := range slots {
		for _, id := range slices.Sorted(maps.Keys(a[slot])) {
			if v := a[slot][id]; !v.IsFinite() || v.Sign() < 0 {
				bad = fmt.Sprintf("%s on device %s is %s", slot, id, v)
				break
			}
		}
		if bad != "" {
			break
		}
	}
	out := make(model.Allocations, len(a))
	for slot, devs := range a {
		m := make(map[model.DeviceID]model.Dec, len(devs))
		for id, v := range devs {
			if v.IsFinite() && v.Sign() >= 0 {
				m[id] = v
			}
		}
		if len(m) > 0 {
			out[slot] = m
		}
	}
	return out, bad
}

// promoteTorn counts every file without a final newline whose settle time
// is over, as Backend.AI reads it. It reports whether anything changed.
func (s *state) promoteTorn(now time.Time) bool {
	changed := false
	for id, due := range s.tornDue {
		if now.Before(due) {
			continue
		}
		delete(s.tornDue, id)
		ks := s.kernels[id]
		if ks == nil || ks.torn == nil {
			continue
		}
		spec := ks.torn
		ks.torn = nil
		s.upsertKernel(kernelRead{root: ks.root, id: id, path: ks.pub.Path, spec: spec, mod: ks.pub.ModTime, settled: true})
		changed = true
	}
	return changed
}

// nextTornDue is when the next file without a final newline settles (zero
// when none waits).
func (s *state) nextTornDue() time.Time {
	var next time.Time
	for _, due := range s.tornDue {
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	return next
}

// removeKernel drops a kernel and its contribution.
func (s *state) removeKernel(id model.KernelID) {
	ks := s.kernels[id]
	if ks == nil {
		return
	}
	s.endBulk()
	s.subtract(ks.pub.Agent, id, ks.contrib)
	s.agentKernels(ks.pub.Agent, -1)
	if ks.cid != "" {
		if s.cids[ks.cid] == id {
			delete(s.cids, ks.cid)
		}
		s.joinDirty = true
	}
	if u := ks.pub.Use; u != nil && u.Idle {
		s.idleCount--
	}
	delete(s.useDirty, id)
	delete(s.kernels, id)
	delete(s.tornDue, id)
	s.setFileIssue(id, nil)
	putIssues(s, s.kernIssues, id, nil)
	putIssues(s, s.attrIssues, id, nil)
	s.kernelList.Delete(id)
}

// resync drops every kernel under root that a full rescan did not find.
func (s *state) resync(root string, present []model.KernelID) {
	// Present kernels are marked with a fresh epoch instead of being put
	// in a set: after a first scan that set held every kernel (10,000 ids).
	s.resyncEpoch++
	for _, id := range present {
		if ks := s.kernels[id]; ks != nil {
			ks.resynced = s.resyncEpoch
		}
	}
	var gone []model.KernelID
	for id, ks := range s.kernels {
		if ks.root == root && ks.resynced != s.resyncEpoch {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		s.removeKernel(id)
	}
}

// putKernel publishes k in the kernel list (in bulk mode, at endBulk).
func (s *state) putKernel(k *model.Kernel) {
	if s.bulk {
		s.bulkKernels = append(s.bulkKernels, k)
		return
	}
	s.kernelList.Put(k)
}

// endBulk leaves bulk mode: what was put since it began goes into the
// sequences, as if put one by one in the same order.
func (s *state) endBulk() {
	if !s.bulk {
		return
	}
	s.bulk = false
	s.kernelList.PutAll(s.bulkKernels)
	s.bulkKernels = nil
	for _, a := range s.dev {
		if a.bulkHold != nil {
			a.holdings.PutAll(a.bulkHold)
			a.bulkHold = nil
		}
	}
}

func (s *state) agentKernels(a model.AgentID, d int) {
	if i, ok := s.agentIdx[a]; ok {
		s.agents[i].kernels += d
	}
}

func (s *state) acc(k model.DeviceKey) *devAcc {
	a := s.dev[k]
	if a == nil {
		a = &devAcc{key: k, held: model.ResourceSlot{}, count: map[model.SlotName]int{}, exps: expCounts{}}
		s.dev[k] = a
	}
	return a
}

func (s *state) subtract(agent model.AgentID, id model.KernelID, al model.Allocations) {
	s.apply(agent, id, al, -1)
}

// apply adds (sign +1) or removes (-1) one kernel's allocation: totals per
// device and slot, the device's holdings, the agent's total. The cost is
// proportional to the kernel's own entries, not to the number of kernels.
func (s *state) apply(agent model.AgentID, id model.KernelID, al model.Allocations, sign int) {
	var ag *agentAcc
	if i, ok := s.agentIdx[agent]; ok {
		ag = s.agents[i]
	}
	// The slots with their plugin names, in one pass over the map: whether
	// another slot of the same plugin comes first is then asked of this
	// list, not of the map once per slot.
	type slotOf struct {
		slot model.SlotName
		name model.DeviceName
		devs map[model.DeviceID]model.Dec
	}
	var buf [8]slotOf
	slots := buf[:0]
	for slot, devs := range al {
		slots = append(slots, slotOf{slot, slot.DeviceName(), devs})
	}
	for _, e := range slots {
		slot, name, devs := e.slot, e.name, e.devs
		track := model.CarriesHoldings(name)
		// Most kernels hold one slot per plugin, and then every device of
		// the slot counts; only otherwise is firstSlotOn asked per device.
		alone := true
		for _, o := range slots {
			if o.name == name && o.slot < slot {
				alone = false
				break
			}
		}
		for dev, amt := range devs {
			a := s.acc(model.DeviceKey{Name: name, ID: dev})
			if alone || firstSlotOn(al, slot, name, dev) {
				a.kernels += sign
			}
			sa := a.agentAcc(agent)
			if sign > 0 {
				old := a.held[slot]
				sum, exact := old.AddExact(amt)
				a.held[slot] = sum
				a.count[slot]++
				a.exps.add(slot, amt)
				sa.exps.add(slot, amt)
				// Decs are immutable: where the agent's total on the
				// device is the very value the device's total was (one
				// agent holds everything there, the usual node), its new
				// total is the same sum, not another allocation.
				if so := sa.held[slot]; so == old {
					sa.held[slot] = sum
				} else {
					var ok bool
					sa.held[slot], ok = so.AddExact(amt)
					exact = exact && ok
				}
				sa.count[slot]++
				if track {
					h := model.Holding{Kernel: id, Agent: agent, Slot: slot, Amount: amt}
					if s.bulk {
						a.bulkHold = append(a.bulkHold, h)
					} else {
						a.holdings.Put(h)
					}
				}
				if ag != nil {
					ag.exps.add(slot, amt)
					// The same for the agent's node-wide total (one
					// device of the plugin: one GPU, mem's "root").
					if prev := ag.held[slot]; prev == old {
						ag.held[slot] = sum
					} else {
						var ok bool
						ag.held[slot], ok = prev.AddExact(amt)
						exact = exact && ok
					}
				}
				if !exact {
					s.markLossy(slot)
				}
			} else {
				if s.lossy[slot] {
					if s.rebuild == nil {
						s.rebuild = map[model.SlotName]bool{}
					}
					s.rebuild[slot] = true
				}
				var old, diff model.Dec
				kept := false
				a.count[slot]--
				a.exps.remove(slot, amt)
				sa.exps.remove(slot, amt)
				if a.count[slot] <= 0 {
					delete(a.count, slot)
					delete(a.held, slot)
				} else {
					old = a.held[slot]
					diff, kept = a.exps.fit(slot, old.Sub(amt)), true
					a.held[slot] = diff
				}
				sa.count[slot]--
				if sa.count[slot] <= 0 {
					delete(sa.count, slot)
					delete(sa.held, slot)
					if len(sa.count) == 0 {
						delete(a.byAgent, agent)
					}
				} else if so := sa.held[slot]; kept && so == old {
					sa.held[slot] = diff
				} else {
					sa.held[slot] = sa.exps.fit(slot, so.Sub(amt))
				}
				if track {
					s.endBulk()
					a.holdings.Delete(id, slot)
				}
				if ag != nil {
					ag.exps.remove(slot, amt)
					if prev := ag.held[slot]; kept && prev == old {
						ag.held[slot] = diff
					} else {
						ag.held[slot] = ag.exps.fit(slot, prev.Sub(amt))
					}
				}
			}
			a.dirty = true
		}
	}
}

// markLossy notes that a running total of slot was rounded.
func (s *state) markLossy(slot model.SlotName) {
	if s.lossy == nil {
		s.lossy = map[model.SlotName]bool{}
	}
	s.lossy[slot] = true
}

// rebuildLossy sums afresh, from the kernels' allocations, the totals of
// the slots marked for rebuild (per device, per agent on each device, per
// agent): a running total that was rounded once cannot take a term back
// exactly. It costs a pass over the kernels, and only a node that was
// given a hostile amount pays it.
func (s *state) rebuildLossy() {
	ids := make([]model.KernelID, 0, len(s.kernels))
	for id := range s.kernels {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for slot := range s.rebuild {
		name := slot.DeviceName()
		devSum := map[model.DeviceID]model.Dec{}
		onDev := map[model.DeviceID]map[model.AgentID]model.Dec{}
		agSum := map[model.AgentID]model.Dec{}
		exact := true
		add := func(v model.Dec, amt model.Dec) model.Dec {
			r, ok := v.AddExact(amt)
			exact = exact && ok
			return r
		}
		for _, id := range ids {
			ks := s.kernels[id]
			devs := ks.contrib[slot]
			if len(devs) == 0 {
				continue
			}
			agent := ks.pub.Agent
			_, known := s.agentIdx[agent]
			for _, dev := range slices.Sorted(maps.Keys(devs)) {
				amt := devs[dev]
				devSum[dev] = add(devSum[dev], amt)
				m := onDev[dev]
				if m == nil {
					m = map[model.AgentID]model.Dec{}
					onDev[dev] = m
				}
				m[agent] = add(m[agent], amt)
				if known {
					agSum[agent] = add(agSum[agent], amt)
				}
			}
		}
		for key, a := range s.dev {
			if key.Name != name || a.count[slot] <= 0 {
				continue
			}
			a.held[slot] = devSum[key.ID]
			for agent, sa := range a.byAgent {
				if sa.count[slot] > 0 {
					sa.held[slot] = onDev[key.ID][agent]
				}
			}
			a.dirty = true
		}
		for _, ag := range s.agents {
			if v, ok := agSum[ag.base.ID]; ok {
				ag.held[slot] = v
			} else {
				delete(ag.held, slot)
			}
		}
		if exact {
			delete(s.lossy, slot)
		}
	}
	clear(s.rebuild)
}

// firstSlotOn reports whether slot is the first of al's slots (in name
// order) that lists device dev of plugin name, so that a kernel holding two
// slots on one device (cuda.shares and cuda.device) counts once there. Most
// kernels hold one slot per plugin, which needs no comparison at all.
func firstSlotOn(al model.Allocations, slot model.SlotName, name model.DeviceName, dev model.DeviceID) bool {
	for other, devs := range al {
		if other < slot && other.DeviceName() == name {
			if _, ok := devs[dev]; ok {
				return false
			}
		}
	}
	return true
}

// kernelsOn lists the kernels holding the device, sorted, when they are
// at most max (nil otherwise, and for a device whose plugin keeps no
// holdings).
func (a *devAcc) kernelsOn(max int) []model.KernelID {
	if a.holdings.Len()+len(a.bulkHold) > max {
		return nil
	}
	var out []model.KernelID
	for _, h := range append(a.holdings.Seq().Slice(), a.bulkHold...) {
		if !slices.Contains(out, h.Kernel) {
			out = append(out, h.Kernel)
		}
	}
	slices.Sort(out)
	return out
}

// joinKernels is ids in a sentence.
func joinKernels(ids []model.KernelID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// unregisteredBy is the issue for kernels holding the device whose agent's
// own plugin does not register it (un: inventory.AgentUnregistered): the
// node shows the GPU because another agent registers it, but that agent's
// allocator has no such device, so what they hold there is counted
// nowhere by it.
func (a *devAcc) unregisteredBy(un map[model.AgentID]map[model.DeviceID]bool) (model.Issue, bool) {
	if len(un) == 0 {
		return model.Issue{}, false
	}
	var agents []string
	for ag, sa := range a.byAgent {
		if un[ag][a.key.ID] && len(sa.held) > 0 {
			agents = append(agents, string(ag))
		}
	}
	if len(agents) == 0 {
		return model.Issue{}, false
	}
	slices.Sort(agents)
	iss := model.Issue{Severity: model.SevError, Code: model.IssueUnknownDevice, Device: a.key,
		Message: fmt.Sprintf("%s is held by kernels of %s, whose CUDA plugin does not register it (its device_mask leaves it out; another agent registers it)",
			a.key, strings.Join(agents, ", "))}
	var ks []model.KernelID
	for _, h := range append(a.holdings.Seq().Slice(), a.bulkHold...) {
		if un[h.Agent][a.key.ID] && !slices.Contains(ks, h.Kernel) && len(ks) < 8 {
			ks = append(ks, h.Kernel)
		}
	}
	slices.Sort(ks)
	if len(ks) == 1 {
		iss.Kernel = ks[0]
		iss.Message += fmt.Sprintf("; kernel %s", ks[0])
	} else if len(ks) > 1 {
		iss.Message += fmt.Sprintf("; kernels %s", joinKernels(ks))
	}
	return iss, true
}

// entries is the number of (kernel, slot) entries held on the device.
func (a *devAcc) entries() int {
	n := 0
	for _, c := range a.count {
		n += c
	}
	return n
}

// agentTerms is, where kernels of more than one agent hold the device,
// what each agent holds there, as terms of the total: on a slot-based node
// every agent allocates over every device, and this is why one is over its
// capacity. "" for a device one agent holds.
func (a *devAcc) agentTerms() string {
	if len(a.byAgent) < 2 {
		return ""
	}
	agents := make([]model.AgentID, 0, len(a.byAgent))
	for ag := range a.byAgent {
		agents = append(agents, ag)
	}
	slices.Sort(agents)
	terms := make([]string, len(agents))
	for i, ag := range agents {
		name := string(ag)
		if name == "" {
			name = "no agent"
		}
		terms[i] = name + " " + sumHeld(a.byAgent[ag].held).String()
	}
	return " (" + strings.Join(terms, " + ") + ": each agent's allocator sees only its own kernels)"
}

// overSeverity is how bad the device being held beyond capacity is: an
// error, but a warning for a CPU core over which only agents together go
// (each within it): main's slot-based agents each allocate over every
// core, so kernels of two agents pinned to one core are that form's
// ordinary state, and the core is time-shared; nothing fails, unlike a
// GPU whose memory is overbooked.
func (a *devAcc) overSeverity(capacity model.Dec) model.Severity {
	if a.key.Name != "cpu" || len(a.byAgent) < 2 {
		return model.SevError
	}
	for _, sa := range a.byAgent {
		if capacity.Less(sumHeld(sa.held)) {
			return model.SevError
		}
	}
	return model.SevWarning
}

// checkDevice recomputes the issues derived from one device's totals.
func (s *state) checkDevice(a *devAcc) {
	var out []model.Issue
	var shared *sharedCore
	if n := a.entries(); n > 0 {
		i, known := s.devIndex[a.key]
		switch {
		case !known:
			sev := model.SevError
			msg := fmt.Sprintf("%d kernel allocation(s) on %s, which the device inventory does not list", n, a.key)
			switch {
			case s.inv == nil || (a.key.Name == "cuda" && s.inv.Source.Health == "unavailable"):
				sev = model.SevWarning
				msg += " (the device source is unavailable, so this may be a device it cannot see)"
			case !s.hasPlugin(a.key.Name):
				sev = model.SevWarning
				msg += fmt.Sprintf(" (the inventory lists no %s devices at all)", a.key.Name)
			case a.key.Name == "cuda":
				msg += s.otherNameHint(a.key.ID)
			}
			iss := model.Issue{Severity: sev, Code: model.IssueUnknownDevice, Message: msg, Device: a.key}
			// Whose: at 3 a.m. the operator had to hunt for the kernel.
			if ks := a.kernelsOn(8); len(ks) == 1 {
				iss.Kernel = ks[0]
				iss.Message += fmt.Sprintf("; kernel %s", ks[0])
			} else if len(ks) > 1 {
				iss.Message += fmt.Sprintf("; kernels %s", joinKernels(ks))
			}
			out = append(out, iss)
		default:
			d := &s.inv.Devices[i]
			if total := sumHeld(a.held); !d.CapacityUnknown && !partition.GuessedHeld(s.inv.Source, a.held) && d.Capacity.Less(total) {
				if sev := a.overSeverity(d.Capacity); sev == model.SevWarning {
					shared = &sharedCore{held: total, capacity: d.Capacity, agents: a.agentList()}
				} else {
					out = append(out, model.Issue{Severity: sev, Code: model.IssueOverCapacity, Device: a.key,
						Message: fmt.Sprintf("%s is held beyond its capacity: %s of %s%s", a.key, total, d.Capacity, a.agentTerms())})
				}
			}
			if iss, ok := a.unregisteredBy(s.inv.AgentUnregistered); ok {
				out = append(out, iss)
			}
		}
	}
	if a.key.Name == "cpu" {
		s.putSharedCore(a.key.ID, shared)
	}
	putIssues(s, s.devIssues, a.key, out)
}

// sharedCore is a CPU core time-shared across agents: what all their
// kernels hold there, its capacity, and the agents (joined by agentSep).
type sharedCore struct {
	held, capacity model.Dec
	agents         string
}

// putSharedCore records (c != nil) or clears core id as time-shared, and
// marks the issue list dirty only when that changed.
func (s *state) putSharedCore(id model.DeviceID, c *sharedCore) {
	old, had := s.sharedCores[id]
	switch {
	case c == nil && had:
		delete(s.sharedCores, id)
	case c != nil && (!had || old != *c):
		s.sharedCores[id] = *c
	default:
		return
	}
	s.issuesDirty = true
}

// maxSharedCoresNamed bounds the cores the time-shared warning names one
// by one: on a 128-core node the list would otherwise fill the issues pane.
const maxSharedCoresNamed = 8

// sharedCoresIssue is the one warning for all the CPU cores time-shared
// across agents (nil for none). Its identity (model.Issue.Identity) leaves
// the cores out, so the console flashes it when time-sharing starts, not
// each time a kernel adds or frees a core.
func (s *state) sharedCoresIssue() *model.Issue {
	if len(s.sharedCores) == 0 {
		return nil
	}
	ids := make([]model.DeviceID, 0, len(s.sharedCores))
	agents := map[string]bool{}
	for id, c := range s.sharedCores {
		ids = append(ids, id)
		for _, ag := range strings.Split(c.agents, agentSep) {
			agents[ag] = true
		}
	}
	slices.SortFunc(ids, cmpCoreID)
	names := slices.Sorted(maps.Keys(agents))
	var b strings.Builder
	fmt.Fprintf(&b, "%d CPU core(s) time-shared across agents, each held beyond its capacity by several agents' kernels together (each agent within it): ", len(ids))
	for i, id := range ids {
		if i == maxSharedCoresNamed {
			fmt.Fprintf(&b, ", and %d more", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		c := s.sharedCores[id]
		fmt.Fprintf(&b, "cpu:%s %s of %s", id, c.held, c.capacity)
	}
	fmt.Fprintf(&b, " (agents %s: each agent's allocator sees only its own kernels)", strings.Join(names, ", "))
	return &model.Issue{Severity: model.SevWarning, Code: model.IssueOverCapacity, Message: b.String()}
}

// cmpCoreID orders CPU core ids as numbers where both are (cpu:2 before
// cpu:10), else as text.
func cmpCoreID(a, b model.DeviceID) int {
	x, errA := strconv.Atoi(string(a))
	y, errB := strconv.Atoi(string(b))
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(string(a), string(b))
}

// agentList is the agents whose kernels hold the device, sorted, joined
// by agentSep ("no agent" for kernels without one).
func (a *devAcc) agentList() string {
	names := make([]string, 0, len(a.byAgent))
	for ag := range a.byAgent {
		name := string(ag)
		if name == "" {
			name = "no agent"
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, agentSep)
}

// agentSep joins a sharedCore's agents, so the struct stays comparable and
// an id with ", " in it stays whole (a NUL is no character of a real id).
const agentSep = "\x00"

// putIssues stores the issues derived for key in m and marks the issue
// list dirty only when they changed: most file changes leave every issue as
// it was, and re-sorting all issues per change would be wasted work.
func putIssues[K comparable](s *state, m map[K][]model.Issue, key K, out []model.Issue) {
	old, had := m[key]
	if len(out) == 0 {
		if had {
			delete(m, key)
			s.issuesDirty = true
		}
		return
	}
	if had && slices.Equal(old, out) {
		return
	}
	m[key] = out
	s.issuesDirty = true
}

// setFileIssue records (iss != nil) or clears the parse issue of a kernel.
func (s *state) setFileIssue(id model.KernelID, iss *model.Issue) {
	old, had := s.fileIssues[id]
	switch {
	case iss == nil && had:
		delete(s.fileIssues, id)
	case iss != nil && (!had || old != *iss):
		s.fileIssues[id] = *iss
	default:
		return
	}
	s.issuesDirty = true
}

// takeInventory installs the result of an inventory poll: the devices, or
// the error as an issue. It returns the slot types to parse files with.
func (s *state) takeInventory(inv *inventory.Inventory, err error) model.SlotTypes {
	if err != nil {
		s.srcIssues["inventory"] = model.Issue{Severity: model.SevError, Code: model.IssueDeviceSource, Message: fmt.Sprintf("device inventory: %v", err)}
		s.issuesDirty = true
		return model.DefaultSlotTypes()
	}
	if _, had := s.srcIssues["inventory"]; had {
		delete(s.srcIssues, "inventory")
		s.issuesDirty = true
	}
	s.setInventory(inv)
	if inv.SlotTypes != nil {
		return inv.SlotTypes
	}
	return model.DefaultSlotTypes()
}

// hasPlugin reports whether the inventory lists any device of the plugin.
func (s *state) hasPlugin(name model.DeviceName) bool {
	if s.inv == nil {
		return false
	}
	for i := range s.inv.Devices {
		if s.inv.Devices[i].Name == name {
			return true
		}
	}
	return false
}

// otherNameHint says, for an allocation on an unlisted cuda id, which
// listed GPU that id names in another plugin's form (its bare UUID,
// GPU-<uuid>, or its CUDA index): the sign that the agents run another
// CUDA plugin than the one the GPUs are registered as. "" when none.
func (s *state) otherNameHint(id model.DeviceID) string {
	for i := range s.inv.Devices {
		d := &s.inv.Devices[i]
		if d.Name != "cuda" || d.IsMIG() || d.UUID == "" || d.ID == id {
			continue
		}
		form := ""
		switch string(id) {
		case d.UUID:
			form = "bare UUID"
		case "GPU-" + d.UUID:
			form = "UUID"
		case strconv.Itoa(d.Index):
			form = "CUDA index"
		default:
			continue
		}
		as := "the CUDA plugin fgtop decided on names them"
		if p := s.inv.Plugin; p != nil {
			name := map[string]string{model.PluginCUDAOpen: "cuda_open", model.PluginCUDAFractional: "the fractional plugin"}[p.Kind]
			if name == "" {
				name = "the " + p.Kind + " plugin"
			}
			as = fmt.Sprintf("%s names them (rule: %s)", name, p.Source)
		}
		return fmt.Sprintf(" (that is %s's %s; the GPUs are registered as %s; if the agents run another CUDA plugin, say so with --cuda-plugin)", d.Key(), form, as)
	}
	return ""
}

func sumHeld(r model.ResourceSlot) model.Dec {
	t := model.Zero
	for _, n := range r.Names() {
		t = t.Add(r[n])
	}
	return t
}

// checkKernel recomputes the issues derived from one kernel: slots no
// device provides, devices its agent's partition does not own.
func (s *state) checkKernel(id model.KernelID, ks *kstate) {
	var out []model.Issue
	k := ks.pub
	if s.inv != nil && s.inv.SlotTypes != nil && !knownSlots(ks.contrib, s.inv.SlotTypes) {
		for _, slot := range sortedSlots(ks.contrib) {
			if _, ok := s.inv.SlotTypes[slot]; ok || partition.Guessed(s.inv.Source, slot) {
				// A slot of the mode fgtop only guessed may well be
				// the one the agent's plugin registers.
				continue
			}
			for _, v := range ks.contrib[slot] {
				if !v.IsZero() {
					msg := fmt.Sprintf("kernel %s holds %s, a slot no device on this node provides (Backend.AI: UnsupportedResource)", short(id), slot)
					if slot.DeviceName() == "cuda" && s.inv.Source.Health == "unavailable" {
						// fgtop's blindness, not the agent's refusal: the
						// GPUs that provide it are the ones it cannot see.
						msg = fmt.Sprintf("kernel %s holds %s, a slot no device fgtop sees provides: the device source is unavailable, so the GPUs that provide it may be ones it cannot see", short(id), slot)
					} else if p := s.inv.Plugin; p != nil && slot.DeviceName() == "cuda" {
						// The kernel's plugin and the one fgtop mirrors disagree.
						msg += fmt.Sprintf("; fgtop registers the GPUs as the %s CUDA plugin (decided by %s: %s): if the agents run the other one, say so with --cuda-plugin", p.Kind, p.Source, p.Detail)
					}
					out = append(out, model.Issue{Severity: model.SevWarning, Code: model.IssueUnsupported, Kernel: id, Agent: k.Agent, File: k.Path,
						Message: msg})
					break
				}
			}
		}
	}
	if i, ok := s.agentIdx[k.Agent]; ok && s.agents[i].base.Owns != nil {
		out = append(out, partition.NotOwner(k, s.agents[i].base.OwnsDevice, s.owners)...)
	}
	putIssues(s, s.kernIssues, id, out)
}

// owners returns the agents whose partition includes device key, in
// config order (for the drift issue's "it belongs to").
func (s *state) owners(key model.DeviceKey) []model.AgentID {
	var out []model.AgentID
	for i := range s.agents {
		if a := &s.agents[i].base; a.Owns != nil && a.OwnsDevice(key) {
			out = append(out, a.ID)
		}
	}
	return out
}

// knownSlots reports whether every slot of a is one of types: the usual
// case, checked without sorting anything.
func knownSlots(a model.Allocations, types model.SlotTypes) bool {
	for slot := range a {
		if _, ok := types[slot]; !ok {
			return false
		}
	}
	return true
}

func sortedSlots(a model.Allocations) []model.SlotName {
	out := make([]model.SlotName, 0, len(a))
	for k := range a {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func short(id model.KernelID) string {
	if len(id) > 8 {
		return string(id[:8])
	}
	return string(id)
}

func unifiedPairs(v any) [][2]string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out [][2]string
	for _, x := range list {
		p, ok := x.([]any)
		if !ok || len(p) != 2 {
			continue
		}
		a, _ := p[0].(string)
		b, _ := p[1].(string)
		out = append(out, [2]string{untrusted.Text(a), untrusted.Text(b)})
	}
	return out
}

func fileIssue(path string, id model.KernelID, agent model.AgentID, err error) model.Issue {
	var ie *issueErr
	if errors.As(err, &ie) {
		iss := ie.iss
		iss.Kernel, iss.Agent = id, agent
		iss.Message = untrusted.Text(iss.Message)
		return iss
	}
	iss := model.Issue{Severity: model.SevError, Code: model.IssueParse, File: path, Kernel: id, Agent: agent, Message: err.Error()}
	var pe *resourcefile.ParseError
	if errors.As(err, &pe) {
		iss.Line = pe.Line
		iss.Message = pe.Reason()
		if pe.Torn {
			iss.Severity = model.SevWarning
		}
	}
	// A reason may quote the file's own bytes.
	iss.Message = untrusted.Text(iss.Message)
	return iss
}

// requestedUnlisted names the slots a kernel requests a non-zero amount of
// (SLOTS) with no allocation line listing any of it, "" when every one is
// listed. A unified slot (UNIFIED_DEVICES) has no line of its own.
func requestedUnlisted(slots model.ResourceSlot, alloc model.Allocations, unified [][2]string) string {
	unlisted := func(slot model.SlotName) bool {
		v := slots[slot]
		return !v.IsZero() && v.Sign() > 0 && len(alloc[slot]) == 0 &&
			!slices.ContainsFunc(unified, func(p [2]string) bool { return p[1] == string(slot) })
	}
	// Every kernel read passes here: the sorted list is made only for a
	// file that lacks something.
	lacks := false
	for slot := range slots {
		if unlisted(slot) {
			lacks = true
			break
		}
	}
	if !lacks {
		return ""
	}
	var miss []string
	for _, slot := range slots.Names() {
		if !unlisted(slot) {
			continue
		}
		amount := slots[slot].String()
		if slot == model.SlotMem {
			amount = model.FormatBinarySize(slots[slot])
		}
		miss = append(miss, amount+" "+string(slot))
	}
	return strings.Join(miss, ", ")
}

// issueErr is a read of a kernel's file that failed with the watcher's
// own issue (permission denied): the kernel is judged as for a file that
// does not parse, under that issue.
type issueErr struct{ iss model.Issue }

func (e *issueErr) Error() string { return e.iss.Message }

// snapshot publishes the current state as an immutable Snapshot.
func (s *state) snapshot() *model.Snapshot {
	s.endBulk()
	if len(s.rebuild) > 0 {
		s.rebuildLossy()
	}
	s.seq++
	snap := &model.Snapshot{
		Seq: s.seq, Time: s.now(), Node: s.node, Mode: s.mode, ConfigPath: s.configPath, ConfigHash: s.configHash, DraftFormat: s.draftFmt,
		Gen: nextGen(),
	}
	s.last = snap
	if s.joinDirty {
		s.join()
	}
	if s.useAll || len(s.useDirty) > 0 {
		s.updateUses()
	}
	snap.IdleKernels, snap.IdleAfter = s.idleCount, max(s.idleAfter, 0)
	snap.SetKernelSeq(s.kernelList.Seq())
	snap.Allocator.AffinityPolicy, snap.Allocator.AllocationOrder = s.affinity, s.order
	if s.inv != nil {
		snap.Devices = s.devices()
		snap.Source = s.inv.Source
		snap.HostMemBytes = s.inv.HostMemBytes
		snap.Allocator.Fractional, snap.Allocator.Quantum = s.inv.Fractional, s.inv.Quantum
		snap.Plugin = s.inv.Plugin
	} else {
		snap.Source = model.SourceInfo{Kind: "none", Health: "unavailable", Detail: "no device source"}
	}
	usage := make(map[model.DeviceKey]*model.DeviceUsage, len(s.dev))
	for k, a := range s.dev {
		if a.dirty {
			s.checkDevice(a)
		}
		if a.entries() == 0 {
			delete(s.dev, k)
			continue
		}
		if a.dirty || a.pub == nil {
			held := make(model.ResourceSlot, len(a.held))
			for sl, v := range a.held {
				held[sl] = v
			}
			a.pub = &model.DeviceUsage{Key: k, Held: held, Kernels: a.kernels}
			if len(a.byAgent) > 0 {
				a.pub.ByAgent = make(map[model.AgentID]model.ResourceSlot, len(a.byAgent))
				for ag, sa := range a.byAgent {
					r := make(model.ResourceSlot, len(sa.held))
					for sl, v := range sa.held {
						if !v.IsZero() {
							r[sl] = v
						}
					}
					if len(r) > 0 {
						a.pub.ByAgent[ag] = r
					}
				}
			}
			if a.holdings.Len() > 0 {
				a.pub.SetHoldingSeq(a.holdings.Seq())
			}
			a.dirty = false
		}
		usage[k] = a.pub
	}
	snap.Usage = usage
	snap.Agents = make([]model.Agent, len(s.agents))
	for i, a := range s.agents {
		ag := a.base
		ag.Kernels = a.kernels
		if r, ok := s.restart[ag.ID]; ok {
			ag.Restart = r
		}
		if h, ok := s.health[ag.ID]; ok {
			ag.Health = h
		}
		if ag.Restart.State == model.RestartNotRunning && ag.Health.State == model.AgentUp {
			// It answers, so it runs: its process is out of this /proc's
			// sight (a containerised agent's PID namespace), and which file
			// it loaded cannot be told from here.
			ag.Restart = model.Restart{State: model.RestartUnknown,
				Detail: "cannot tell whether the agent runs this agent.toml: it answers GET /health at " + ag.Health.URL + ", but no process of it is visible here (another PID namespace?)"}
		}
		ag.Held = make(model.ResourceSlot, len(a.held))
		for sl, v := range a.held {
			if !v.IsZero() {
				ag.Held[sl] = v
			}
		}
		snap.Agents[i] = ag
	}
	if s.issuesDirty {
		s.issues = s.collectIssues()
		s.issuesDirty = false
	}
	snap.Issues = s.issues
	return snap
}

// retimed publishes the last snapshot's content again at a new time and
// under the next Seq, with its Gen: nothing but the clock moved.
func (s *state) retimed() *model.Snapshot {
	s.seq++
	snap := *s.last
	snap.Seq, snap.Time = s.seq, s.now()
	s.last = &snap
	return &snap
}

// sameReading reports whether an inventory poll read what the state
// holds and changed nothing else: then the snapshot to publish is the
// last one retimed. Time passing is still applied (a kernel at 0 % may
// cross its idle mark), and a move there is a change.
func (s *state) sameReading(inv *inventory.Inventory, err error) bool {
	if err != nil || s.last == nil || s.inv == nil || !inventory.Equal(s.inv, inv) {
		return false
	}
	if _, had := s.srcIssues["inventory"]; had {
		return false // the reading that failed last time is back: news
	}
	s.useAll, s.usesMoved = true, false
	s.updateUses()
	return !s.usesMoved
}

// genNext hands out content generations. It is shared by the engines of
// a process and starts at a random value, so that snapshots of two
// engines (a node's engine restarted behind a viewer) never share one.
var genNext atomic.Uint64

func init() { genNext.Store(rand.Uint64() >> 1) }

func nextGen() uint64 { return genNext.Add(1) }

func (s *state) collectIssues() []model.Issue {
	var out []model.Issue
	if s.inv != nil {
		out = append(out, s.inv.Issues...)
	}
	for _, iss := range s.srcIssues {
		out = append(out, iss)
	}
	for _, iss := range s.fileIssues {
		out = append(out, iss)
	}
	for _, l := range s.kernIssues {
		out = append(out, l...)
	}
	for _, l := range s.attrIssues {
		out = append(out, l...)
	}
	for _, l := range s.devIssues {
		out = append(out, l...)
	}
	if iss := s.sharedCoresIssue(); iss != nil {
		out = append(out, *iss)
	}
	slices.SortFunc(out, func(a, b model.Issue) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		if c := cmpDeviceKey(a.Device, b.Device); c != 0 {
			return c
		}
		if c := cmp.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Compare(a.Message, b.Message)
	})
	return out
}

// cmpDeviceKey orders device keys as their String() forms ("name:id")
// compare, without building them: the issue sort runs on most changes,
// and formatting both keys per comparison was most of an update's
// allocations.
func cmpDeviceKey(a, b model.DeviceKey) int {
	pa := [3]string{string(a.Name), ":", string(a.ID)}
	pb := [3]string{string(b.Name), ":", string(b.ID)}
	i, j := 0, 0 // part
	x, y := 0, 0 // offset in the part
	for {
		for i < 3 && x == len(pa[i]) {
			i, x = i+1, 0
		}
		for j < 3 && y == len(pb[j]) {
			j, y = j+1, 0
		}
		switch {
		case i == 3 && j == 3:
			return 0
		case i == 3:
			return -1
		case j == 3:
			return 1
		}
		if c := cmp.Compare(pa[i][x], pb[j][y]); c != 0 {
			return c
		}
		x, y = x+1, y+1
	}
}

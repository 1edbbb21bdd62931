// Package engine owns fgtop's live account of the node: who holds how much
// of which device. One goroutine owns the state; scratch events and
// inventory polls are applied to it incrementally (one kernel's file changed:
// only that kernel's contribution is subtracted and re-added), and every
// change publishes an immutable *model.Snapshot to any number of
// subscribers through latest-wins channels, so a slow subscriber skips
// frames and never blocks the engine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fgtop/fgtop/engine/agenthealth"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// Options configure an Engine.
type Options struct {
	// Roots are the scratch roots to follow, each with its agent.
	Roots []scratch.Root
	// Agents known from the agent config, with their partitions; agents of
	// Roots that are missing here are added.
	Agents []model.Agent
	// Inventory is the device source; nil means no devices are known.
	Inventory inventory.Source
	// PollEvery is the inventory poll interval (default 1 s).
	PollEvery  time.Duration
	Node       string
	Mode       string
	ConfigPath string
	// DraftFormat: the config is in the BEP-1044 device-based form
	// (Snapshot.DraftFormat).
	DraftFormat bool
	// ConfigHash is the hex SHA-256 of the config as read (Snapshot.ConfigHash).
	ConfigHash string
	// AffinityPolicy and AllocationOrder are the agent config's [resource]
	// settings (Snapshot.Allocator; ConfigView.Apply sets them).
	AffinityPolicy  string
	AllocationOrder []model.DeviceName
	// Issues to show from the start (for example agent.toml warnings).
	Issues []model.Issue
	// Clock is injectable for tests (default time.Now).
	Clock func() time.Time
	// Watch tunes the scratch watcher.
	Watch scratch.Options
	// Partition, when set, is called with every new set of devices. It
	// returns the agents with their partitions filled in (Owns, Mem) and the
	// issues that depend only on the partition and the devices (a device no
	// agent owns, mem assigned beyond the host's). Kernel-level drift (a
	// kernel on a device its agent does not own) is then checked live, per
	// kernel, from the agents' Owns.
	Partition func(inv *inventory.Inventory) ([]model.Agent, []model.Issue)
	// ConfigIssues are the agent.toml's own problems; they are replaced
	// when the file is read again (FollowConfig).
	ConfigIssues []model.Issue
	// MadeUpIDs are agents the config gives no id (ConfigView.MadeUpIDs).
	MadeUpIDs []model.AgentID
	// PluginInputs is what of the config the device source read its
	// plugins' settings and choice from at start (ConfigView.Apply): a
	// config read again with other ones is an issue (restart fgtop).
	PluginInputs PluginInputs
	// FollowConfig watches ConfigPath: a change on disk (editors and fgtop
	// replace it by rename) is read again and replaces the mode, the
	// agents' partitions and the config issues for every subscriber. A
	// file that cannot be used keeps the last good partition, with an issue.
	FollowConfig bool
	// RootsOverridden says Roots do not come from the config
	// (--scratch-root): a config naming other roots is then no news.
	RootsOverridden bool
	// ConfigDebounce is how long the config must stay quiet after a change
	// before it is read (default 50ms).
	ConfigDebounce time.Duration
	// ProcRoot is where /proc is mounted (default "/proc"), to find the
	// agent processes and whether they run the file as it is (restart
	// pending). Tests point it at a fake tree.
	ProcRoot string
	// ProcSearchPaths are where an agent started without -f finds its
	// agent.toml (default agentconfig.SearchPaths()).
	ProcSearchPaths []string
	// RestartEvery is how often the agent processes are looked for
	// (default 5s; also after every config change).
	RestartEvery time.Duration
	// NoProcs: the agents are not processes on this host (the demo's
	// simulated agents); their restart state and (unless SimulatedHealth)
	// health are not looked for.
	NoProcs bool
	// NoHealth: the agents' GET /health is not asked.
	NoHealth bool
	// SimulatedHealth: the agents are not processes here (NoProcs) but
	// answer GET /health on their service-addr all the same (the demo's
	// simulated agents): it is asked as on a real node.
	SimulatedHealth bool
	// HealthEvery is how often each agent's GET /health is asked (default
	// 5s; also at once after a config change). HealthTimeout bounds one
	// check (default agenthealth.DefaultTimeout).
	HealthEvery   time.Duration
	HealthTimeout time.Duration
	// RestartStates, when set, says each agent's restart state instead of
	// looking for processes (the demo's simulated agents, each of which
	// restarts on its own). It is asked every RestartEvery and after every
	// config change.
	RestartStates func() map[model.AgentID]model.Restart
	// IdleAfter is how long a kernel must hold an accelerator at 0 %
	// utilisation before it is marked holding but idle (default
	// DefaultIdleAfter; negative: never).
	IdleAfter time.Duration
	// TornSettle is how long a resource.txt whose last line has no newline
	// must stay unchanged before it is read as Backend.AI reads it
	// (default 2s; Build reads it at once).
	TornSettle time.Duration
}

// defaultTornSettle is how long a file without a final newline must stay
// unchanged before it counts: the agent writes resource.txt in well under
// a second, so a file still torn after 2 s is what it is.
const defaultTornSettle = 2 * time.Second

// Engine is the live allocation account. Create it with New, start it with
// Run, read it with Subscribe or Latest.
type Engine struct {
	opts   Options
	latest atomic.Pointer[model.Snapshot]
	ready  chan struct{}

	mu   sync.Mutex
	subs map[*subscriber]struct{}

	// align carries the phase AlignPoll asked for to the poll.
	align chan time.Time
}

type subscriber struct {
	ch chan *model.Snapshot
}

// New returns an engine; nothing runs until Run.
func New(opts Options) *Engine {
	if opts.PollEvery <= 0 {
		opts.PollEvery = time.Second
	}
	if opts.TornSettle <= 0 {
		opts.TornSettle = defaultTornSettle
	}
	if opts.ConfigDebounce <= 0 {
		opts.ConfigDebounce = 50 * time.Millisecond
	}
	if opts.RestartEvery <= 0 {
		opts.RestartEvery = 5 * time.Second
	}
	if opts.HealthEvery <= 0 {
		opts.HealthEvery = 5 * time.Second
	}
	return &Engine{opts: opts, ready: make(chan struct{}), subs: map[*subscriber]struct{}{}, align: make(chan time.Time, 1)}
}

// AlignPoll puts the inventory polls on at + k*PollEvery from the next one
// on. A console's program runs a timer of its own at a period of a second
// (Bubble Tea's renderer ticker, which it cannot stop): two timers at two
// phases wake the process twice a second, and the Go runtime's monitor
// spins down after each wake-up, so at rest both timers at one phase cost
// about half. The latest phase asked for wins; it never blocks.
func (e *Engine) AlignPoll(at time.Time) {
	for {
		select {
		case e.align <- at:
			return
		default:
		}
		select {
		case <-e.align:
		default:
		}
	}
}

// nextPoll is the first instant of phase + k*every after now.
func nextPoll(phase, now time.Time, every time.Duration) time.Time {
	if phase.After(now) {
		return phase
	}
	return phase.Add((now.Sub(phase)/every + 1) * every)
}

// Latest returns the last published snapshot (nil before the first).
func (e *Engine) Latest() *model.Snapshot { return e.latest.Load() }

// RootPaths are the scratch roots the engine follows (Options.Roots): a
// recorder takes only a kernel file under one of them as this node's
// (history.Options.Roots).
func (e *Engine) RootPaths() []string {
	paths := make([]string, len(e.opts.Roots))
	for i, r := range e.opts.Roots {
		paths[i] = r.Path
	}
	return paths
}

// Ready is closed once the initial scan of every root is published.
func (e *Engine) Ready() <-chan struct{} { return e.ready }

// Subscribe returns a channel that always offers the newest snapshot: when
// the reader is slow, older snapshots are dropped, never queued. The latest
// snapshot, if any, is offered at once. The subscription ends (and the
// channel is closed) when ctx is done.
func (e *Engine) Subscribe(ctx context.Context) <-chan *model.Snapshot {
	sub := &subscriber{ch: make(chan *model.Snapshot, 1)}
	e.mu.Lock()
	e.subs[sub] = struct{}{}
	if s := e.latest.Load(); s != nil {
		sub.ch <- s
	}
	e.mu.Unlock()
	go func() {
		<-ctx.Done()
		e.mu.Lock()
		delete(e.subs, sub)
		close(sub.ch)
		e.mu.Unlock()
	}()
	return sub.ch
}

// publish stores snap and offers it to every subscriber without blocking.
func (e *Engine) publish(snap *model.Snapshot) {
	e.latest.Store(snap)
	e.mu.Lock()
	defer e.mu.Unlock()
	for sub := range e.subs {
		select {
		case sub.ch <- snap:
			continue
		default:
		}
		// Full: drop the stale snapshot, then offer the new one. The engine
		// is the only sender, so the second send cannot block.
		select {
		case <-sub.ch:
		default:
		}
		select {
		case sub.ch <- snap:
		default:
		}
	}
}

// Subscribers returns the number of live subscriptions.
func (e *Engine) Subscribers() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.subs)
}

type invResult struct {
	inv *inventory.Inventory
	err error
}

// Run follows the scratch roots and the inventory until ctx is done. It
// returns nil on cancellation, or the error that stopped it.
func (e *Engine) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newState(&e.opts)
	types := model.DefaultSlotTypes()
	if e.opts.Inventory != nil {
		types = st.takeInventory(e.opts.Inventory.Poll(ctx))
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	batches := make(chan []scratch.Event[*kread], 16)
	w, err := scratch.NewWatcher(e.opts.Roots, parser(types, resourcefile.NewShared()), e.opts.Watch)
	if err != nil {
		return fmt.Errorf("start scratch watcher: %w", err)
	}
	w.SetCompanion(recordCompanion())
	watchErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		watchErr <- w.Run(ctx, batches)
	}()

	invCh := make(chan invResult, 1)
	if e.opts.Inventory != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A timer set to the next instant of a fixed phase, not a
			// Ticker: AlignPoll moves the phase.
			every := e.opts.PollEvery
			phase := time.Now()
			t := time.NewTimer(every)
			defer t.Stop()
			// A source whose reading changes for reasons of its own (plugin
			// settings in etcd) is polled at once, not at the next tick.
			var changed <-chan struct{}
			if n, ok := e.opts.Inventory.(inventory.Notifier); ok {
				changed = n.Changed()
			}
			for {
				select {
				case <-ctx.Done():
					return
				case phase = <-e.align:
					t.Reset(time.Until(nextPoll(phase, time.Now(), every)))
					continue
				case <-changed:
				case <-t.C:
					t.Reset(time.Until(nextPoll(phase, time.Now(), every)))
				}
				{
					inv, err := e.opts.Inventory.Poll(ctx)
					select {
					case invCh <- invResult{inv, err}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}

	cfgCh := make(chan configRead, 1)
	restartCh := make(chan model.Restart, 1)
	var kick chan struct{}
	if e.opts.FollowConfig && e.opts.ConfigPath != "" {
		kick = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.followConfig(ctx, cfgCh, kick)
		}()
	}
	restartsCh := make(chan map[model.AgentID]model.Restart, 1)
	if e.opts.RestartStates != nil {
		st.setRestarts(e.opts.RestartStates())
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.watchRestarts(ctx, restartsCh, kick)
		}()
	}
	if e.opts.ConfigPath != "" && !e.opts.NoProcs && e.opts.RestartStates == nil {
		// The first look is part of the first snapshot: a follower's first
		// line is then complete, not followed at once by the restart state.
		first := e.restartStatus()
		st.setRestart(first)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.watchRestart(ctx, restartCh, kick, first)
		}()
	}
	healthCh := make(chan map[model.AgentID]model.AgentHealth, 1)
	var healthTargets chan []healthTarget
	if e.opts.healthOn() {
		healthTargets = make(chan []healthTarget, 1)
		ts := st.healthTargets()
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.watchHealth(ctx, healthTargets, healthCh, ts)
		}()
		// The first round is part of the first snapshot when it is quick
		// (an agent answers in milliseconds, a closed port at once), so a
		// follower's first line is complete; a hung agent arrives later.
		select {
		case h := <-healthCh:
			st.setHealth(h)
		case <-time.After(firstHealthWait):
		}
	}
	settle := stoppedTimer()
	defer settle.Stop()
	armSettle := func() {
		settle.Stop()
		if due := st.nextTornDue(); !due.IsZero() {
			settle.Reset(max(time.Until(due), 0))
		}
	}

	pendingRoots := map[string]bool{}
	for _, r := range e.opts.Roots {
		pendingRoots[r.Path] = true
	}
	markReady := func() {
		select {
		case <-e.ready:
		default:
			close(e.ready)
		}
	}
	if len(pendingRoots) == 0 {
		e.publish(st.snapshot())
		markReady()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-watchErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("scratch watcher: %w", err)
		case r := <-invCh:
			if st.sameReading(r.inv, r.err) {
				// At rest every poll reads the same: the last content
				// at the poll's time, which subscribers adopt as it is.
				e.publish(st.retimed())
				continue
			}
			// Slot types are fixed at start: the watcher parses with them.
			st.takeInventory(r.inv, r.err)
			e.publish(st.snapshot())
		case cr := <-cfgCh:
			if cr.err != nil {
				st.configFailed(e.opts.ConfigPath, cr.err)
			} else {
				st.setConfig(cr.view)
				if healthTargets != nil {
					offerTargets(healthTargets, st.healthTargets())
				}
			}
			e.publish(st.snapshot())
		case h := <-healthCh:
			if st.setHealth(h) {
				e.publish(st.snapshot())
			}
		case r := <-restartCh:
			if st.setRestart(r) {
				e.publish(st.snapshot())
			}
		case rs := <-restartsCh:
			if st.setRestarts(rs) {
				e.publish(st.snapshot())
			}
		case <-settle.C:
			if st.promoteTorn(time.Now()) {
				e.publish(st.snapshot())
			}
			armSettle()
		case batch := <-batches:
			// Drain whatever else is queued so a burst costs one snapshot.
			for more := true; more; {
				for _, ev := range batch {
					st.applyEvent(ev)
					// A root counts as scanned once it resynced, or once it
					// turned out missing or unreadable (it never will).
					switch {
					case ev.Kind == scratch.Resynced, ev.Kind == scratch.RootMissing,
						ev.Kind == scratch.Problem && ev.Kernel == "" && ev.Issue != nil && ev.Issue.Code == model.IssuePermission:
						delete(pendingRoots, ev.Root)
					}
				}
				select {
				case batch = <-batches:
				default:
					more = false
				}
			}
			armSettle()
			e.publish(st.snapshot())
			if len(pendingRoots) == 0 {
				markReady()
			}
		}
	}
}

// applyEvent folds one watcher event into the state.
func (st *state) applyEvent(ev scratch.Event[*kread]) {
	if ev.Kernel != "" && ev.Kind != scratch.Problem {
		// A kernel's watcher Problem holds until the kernel's next event.
		// Looked up through a stack buffer: nearly every kernel has no
		// such Problem, and building the key string per event was one
		// allocation per kernel of a scan.
		var buf [80]byte
		key := appendKernelProblemKey(buf[:0], ev.Kernel)
		if _, ok := st.srcIssues[string(key)]; ok {
			delete(st.srcIssues, string(key))
			st.issuesDirty = true
		}
	}
	switch ev.Kind {
	case scratch.KernelUpdated:
		delete(st.tornDue, ev.Kernel)
		r := kernelRead{root: ev.Root, id: ev.Kernel, path: ev.Path, err: ev.Err, mod: ev.ModTime}
		if v := ev.Value; v != nil {
			r.spec, r.rec, r.recErr, r.recKnown = v.spec, v.rec, v.recErr, true
		}
		if r.err != nil && errors.Is(r.err, fs.ErrNotExist) {
			r.err, r.pending = nil, true
			st.upsertKernel(r)
			return
		}
		var torn *resourcefile.Spec
		if ev.Value != nil && r.err != nil {
			torn = ev.Value.torn
		}
		if torn != nil && st.settle <= 0 {
			// A one-shot read: no later read can complete the file.
			r.spec, r.err, r.settled = torn, nil, true
			torn = nil
		}
		st.upsertKernel(r)
		if torn != nil {
			st.kernels[ev.Kernel].torn = torn
			st.tornDue[ev.Kernel] = time.Now().Add(st.settle)
		} else if ks := st.kernels[ev.Kernel]; ks != nil {
			ks.torn = nil
		}
	case scratch.KernelPending:
		delete(st.tornDue, ev.Kernel)
		st.upsertKernel(kernelRead{root: ev.Root, id: ev.Kernel, path: ev.Path, mod: ev.ModTime, pending: true})
	case scratch.KernelRemoved:
		st.removeKernel(ev.Kernel)
	case scratch.Resynced:
		st.resync(ev.Root, ev.Present)
		delete(st.srcIssues, "root:"+ev.Root)
		// The root was listed: a problem listing it (permission denied,
		// an I/O error) is over. It stayed up after chmod gave the root
		// back, its kernels followed again.
		for _, code := range []string{model.IssuePermission, model.IssueRootMissing} {
			delete(st.srcIssues, "watch:"+code+":"+ev.Path)
			delete(st.srcIssues, "watch:"+code+":"+ev.Root)
		}
		st.issuesDirty = true
	case scratch.RootMissing:
		what := "is missing; waiting for it to come back"
		if fi, err := os.Stat(ev.Root); err == nil && !fi.IsDir() {
			what = "is not a directory; waiting for a directory there"
		}
		st.srcIssues["root:"+ev.Root] = model.Issue{Severity: model.SevError, Code: model.IssueRootMissing, File: ev.Root, Agent: ev.Agent,
			Message: fmt.Sprintf("scratch root %s of agent %s %s", ev.Root, ev.Agent, what)}
		st.issuesDirty = true
	case scratch.RootRestored:
		delete(st.srcIssues, "root:"+ev.Root)
		st.issuesDirty = true
	case scratch.Problem:
		if ev.Issue != nil && ev.Kernel != "" && ev.Issue.Code == model.IssuePermission {
			// A kernel whose file cannot be read is judged as one whose
			// file does not parse: stale on its last good figures, or
			// broken with none, and listed either way. It read "ok", and
			// a one-shot snapshot (--alloc-map too) left it out without
			// a word.
			delete(st.tornDue, ev.Kernel)
			st.upsertKernel(kernelRead{root: ev.Root, id: ev.Kernel, path: ev.Path, err: &issueErr{iss: *ev.Issue}})
			if ks := st.kernels[ev.Kernel]; ks != nil {
				ks.torn = nil
			}
			return
		}
		if ev.Issue != nil {
			key := "watch:" + ev.Issue.Code + ":" + ev.Issue.File
			if ev.Kernel != "" {
				// The kernel's current state (a symlink), replacing its
				// earlier one until its next event.
				key = kernelProblemKey(ev.Kernel)
				if ks := st.kernels[ev.Kernel]; ks != nil && ks.pending && ks.contrib == nil {
					// A directory seen before its file, whose file is then
					// refused: not a kernel "pending" its file, and not
					// one a one-shot snapshot lists; the issue names it.
					st.removeKernel(ev.Kernel)
				}
			}
			st.srcIssues[key] = *ev.Issue
			st.issuesDirty = true
		}
	}
}

// kernelProblemKey is where a kernel-scoped watcher Problem (a symlink,
// permission denied) is kept: one per kernel, replaced by the next.
func kernelProblemKey(id model.KernelID) string { return string(appendKernelProblemKey(nil, id)) }

// appendKernelProblemKey appends kernelProblemKey(id) to b.
func appendKernelProblemKey(b []byte, id model.KernelID) []byte {
	return append(append(b, "kernel:"...), id...)
}

// Build computes a snapshot from a one-off scan: the same accounting as the
// live engine, without watching. It is what `fgtop snapshot` prints and what
// tests compare the live engine against.
//
// Each file is folded into the state as soon as it is parsed (in listing
// order, the order Backend.AI's own scan adds them up in), while the other
// files are still being read: the scan never holds more than a few chunks
// of parsed files, and the folding runs on whichever core is free.
func Build(ctx context.Context, opts Options) (*model.Snapshot, error) {
	opts.TornSettle = 0
	st := newState(&opts)
	types := model.DefaultSlotTypes()
	if opts.Inventory != nil {
		types = st.takeInventory(opts.Inventory.Poll(ctx))
	}
	workers := opts.Watch.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	st.bulk = true
	scratch.ScanEachWith(ctx, opts.Roots, parser(types, resourcefile.NewShared()), recordCompanion(), workers, st.applyEvent)
	st.endBulk()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case opts.RestartStates != nil:
		st.setRestarts(opts.RestartStates())
	case opts.ConfigPath != "" && !opts.NoProcs:
		st.setRestart((&Engine{opts: opts}).restartStatus())
	}
	if opts.healthOn() {
		// One round, every agent at once, each bounded by its timeout.
		c := agenthealth.NewChecker(opts.HealthTimeout)
		st.setHealth(checkAll(ctx, c, st.healthTargets()))
		c.Close()
	}
	return st.snapshot(), nil
}

package scratch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/fgtop/fgtop/model"
)

// Watcher follows the kernels under a set of scratch roots: a full scan
// first, then fsnotify (watches on each root, on each kernel's config/
// directory, and on a kernel directory until its config/ exists), with
// per-kernel debouncing, reconciling rescans after an inotify overflow or a
// root's return, polling for missing roots, and periodic rescans where
// inotify watches ran out.
type Watcher[T any] struct {
	s       scanner[T]
	opts    Options
	roots   []*rootState
	started atomic.Bool
	// testErrs feeds errors into the handling path as if fsnotify had sent
	// them (injectWatchError).
	testErrs chan error

	// Owned by Run's goroutine.
	fsw       *fsnotify.Watcher
	startErr  error // why inotify could not be started
	dirty     map[dirtyKey]dirtyTimes
	debounce  *time.Timer
	dueAt     time.Time
	armed     bool
	poll      *time.Timer
	pollArmed bool
	fallback  *time.Timer
	fbArmed   bool
}

// rootStatus is what the watcher knows of a root.
type rootStatus int

const (
	rootUnknown rootStatus = iota // not scanned yet
	rootOK
	rootMissing // does not exist: RootMissing was sent
	rootDenied  // cannot be listed: a Problem was sent
)

// rootState is one root as the watcher follows it.
type rootState struct {
	root   Root
	path   string // cleaned; the prefix of every path and event name
	prefix string // path + "/"
	status rootStatus
	// degraded: some inotify watch could not be set; the root is rescanned
	// every FallbackRescan until a rescan sets them all.
	degraded bool
	// quiet: the root was degraded when the current rescan began, so a
	// watch failure during it was reported already.
	quiet   bool
	kernels map[string]*kstate
	// refused are the kernel directories last found to be symlinks: not
	// kernels, but the engine holds each one's Problem until the kernel's
	// next event, which their removal must send (refusedGone).
	refused map[string]bool
}

// refusedGone keeps whether kid's last read refused its directory as a
// symlink (now), and says whether an earlier read did and this one does
// not: that Problem is out of date, and the engine is told the kernel
// is gone.
func (rs *rootState) refusedGone(kid string, now bool) bool {
	was := rs.refused[kid]
	switch {
	case now && !was:
		if rs.refused == nil {
			rs.refused = map[string]bool{}
		}
		rs.refused[kid] = true
	case !now && was:
		delete(rs.refused, kid)
	}
	return was && !now
}

// kstate is what the watcher remembers of one kernel.
type kstate struct {
	hashed   bool
	hash     uint64 // of the content last read, for rescans
	cfgWatch bool   // a watch on config/ was added
	dirWatch bool   // a watch on the kernel directory was added
}

type dirtyKey struct {
	rs  *rootState
	kid string
}

// dirtyTimes are the first and the latest change seen for a kernel since
// its last read.
type dirtyTimes struct{ first, last time.Time }

// errNoWatcher stands for "inotify could not be started" in watch errors.
var errNoWatcher = errors.New("inotify is not available")

// NewWatcher checks its arguments; nothing is opened until Run.
func NewWatcher[T any](roots []Root, parse ParseFunc[T], opts Options) (*Watcher[T], error) {
	if parse == nil {
		return nil, errors.New("scratch: nil parse function")
	}
	if len(roots) == 0 {
		return nil, errors.New("scratch: no scratch roots")
	}
	if opts.Debounce <= 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.RootPoll <= 0 {
		opts.RootPoll = defaultRootPoll
	}
	if opts.FallbackRescan <= 0 {
		opts.FallbackRescan = defaultFallbackRescan
	}
	if opts.RescanInterval < 0 {
		opts.RescanInterval = 0
	}
	w := &Watcher[T]{
		s:        scanner[T]{parse: parse, workers: opts.Workers},
		opts:     opts,
		testErrs: make(chan error, 4),
	}
	seen := map[string]bool{}
	for _, r := range roots {
		if r.Path == "" {
			return nil, errors.New("scratch: empty scratch root path")
		}
		p := cleanRoot(r.Path)
		if seen[p] {
			return nil, fmt.Errorf("scratch: scratch root %s given twice", p)
		}
		seen[p] = true
		w.roots = append(w.roots, &rootState{root: r, path: p, prefix: strings.TrimSuffix(p, "/") + "/", kernels: map[string]*kstate{}})
	}
	return w, nil
}

// SetCompanion makes the watcher read a companion file beside every
// resource.txt (see Companion). It must be called before Run.
func (w *Watcher[T]) SetCompanion(c Companion[T]) { w.s.comp = c }

// Run sends the initial scan (one batch per root, in the order given), then
// a batch for each debounced set of changes, rescan or root event. It
// returns nil when ctx is cancelled, after closing its inotify instance and
// with no goroutine of its own left. Run may be called once.
//
// If inotify cannot be started at all, Run still works: every root gets a
// Problem and is rescanned every FallbackRescan.
func (w *Watcher[T]) Run(ctx context.Context, out chan<- []Event[T]) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("scratch: Watcher.Run called twice")
	}
	var evC <-chan fsnotify.Event
	var errC <-chan error
	fsw, fswErr := fsnotify.NewWatcher()
	if fswErr == nil {
		w.fsw = fsw
		defer fsw.Close()
		evC, errC = fsw.Events, fsw.Errors
	}
	w.dirty = map[dirtyKey]dirtyTimes{}
	w.debounce = stoppedTimer()
	w.poll = stoppedTimer()
	w.fallback = stoppedTimer()
	defer w.debounce.Stop()
	defer w.poll.Stop()
	defer w.fallback.Stop()
	var rescanC <-chan time.Time
	if w.opts.RescanInterval > 0 {
		t := time.NewTicker(w.opts.RescanInterval)
		defer t.Stop()
		rescanC = t.C
	}

	w.startErr = fswErr
	// Phase 1: read every kernel and send the result before setting any
	// kernel watch, so the engine's first snapshot waits for the reads only
	// (an inotify watch costs about as much as a read). The root watches are
	// set first, so kernels made meanwhile are seen.
	if !w.sendAll(ctx, out, w.resync(ctx, w.roots, false, false)) {
		return nil
	}
	// Phase 2: watch each kernel, then read it again; only what changed
	// since phase 1 is sent (normally nothing but each root's Resynced).
	if !w.sendAll(ctx, out, w.resync(ctx, w.rootsWhere(func(rs *rootState) bool { return rs.status == rootOK }), true, true)) {
		return nil
	}
	for {
		w.arm()
		var batches [][]Event[T]
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-evC:
			if !ok {
				evC = nil
				continue
			}
			batches = w.handleFS(ctx, ev)
		case err, ok := <-errC:
			if !ok {
				errC = nil
				continue
			}
			batches = w.handleWatchError(ctx, err)
		case err := <-w.testErrs:
			batches = w.handleWatchError(ctx, err)
		case <-w.debounce.C:
			w.armed = false
			batches = w.flush(ctx, time.Now())
		case <-w.poll.C:
			w.pollArmed = false
			batches = w.pollRoots(ctx)
		case <-w.fallback.C:
			w.fbArmed = false
			batches = w.resync(ctx, w.rootsWhere(func(rs *rootState) bool { return rs.status == rootOK && rs.degraded }), true, true)
		case <-rescanC:
			batches = w.resync(ctx, w.rootsWhere(func(rs *rootState) bool { return rs.status == rootOK }), true, true)
		}
		if !w.sendAll(ctx, out, batches) {
			return nil
		}
	}
}

// injectWatchError pushes err into the handling path as if fsnotify had sent
// it on its Errors channel (tests: fsnotify.ErrEventOverflow).
func (w *Watcher[T]) injectWatchError(err error) { w.testErrs <- err }

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// sendAll sends the non-empty batches; false when ctx was cancelled first.
func (w *Watcher[T]) sendAll(ctx context.Context, out chan<- []Event[T], batches [][]Event[T]) bool {
	for _, b := range batches {
		if len(b) == 0 {
			continue
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// arm starts the poll and fallback timers when some root needs them. They
// stay stopped otherwise, so an idle watcher does not wake up.
func (w *Watcher[T]) arm() {
	if !w.pollArmed && len(w.rootsWhere(func(rs *rootState) bool { return rs.status == rootMissing || rs.status == rootDenied })) > 0 {
		w.poll.Reset(w.opts.RootPoll)
		w.pollArmed = true
	}
	if !w.fbArmed && len(w.rootsWhere(func(rs *rootState) bool { return rs.status == rootOK && rs.degraded })) > 0 {
		w.fallback.Reset(w.opts.FallbackRescan)
		w.fbArmed = true
	}
}

func (w *Watcher[T]) rootsWhere(pred func(*rootState) bool) []*rootState {
	var out []*rootState
	for _, rs := range w.roots {
		if pred(rs) {
			out = append(out, rs)
		}
	}
	return out
}

// addWatch adds an inotify watch on a directory.
func (w *Watcher[T]) addWatch(p string) error {
	if w.s.fault != nil {
		if err := w.s.fault(faultWatch, p); err != nil {
			return err
		}
	}
	if w.fsw == nil {
		return errNoWatcher
	}
	return w.fsw.Add(p)
}

// removeWatch drops a watch. Errors are expected (inotify drops the watch of
// a deleted directory by itself) and ignored.
func (w *Watcher[T]) removeWatch(p string) {
	if w.fsw != nil {
		_ = w.fsw.Remove(p)
	}
}

// watchErrorMatters reports whether a failed watch means missed changes. A
// path that is gone is not a failure: its removal is handled by the read.
func watchErrorMatters(err error) bool {
	return err != nil && !isMissing(err)
}

// problem builds a root-level Problem.
func (w *Watcher[T]) problem(rs *rootState, sev model.Severity, msg string) Event[T] {
	return Event[T]{Kind: Problem, Root: rs.root.Path, Agent: rs.root.Agent, Path: rs.path,
		Issue: &model.Issue{Severity: sev, Code: model.IssueWatch, Message: msg, File: rs.path, Agent: rs.root.Agent}}
}

// watchFailed records a failed watch on a root: the root falls back to
// periodic rescans, and the first failure is reported.
func (w *Watcher[T]) watchFailed(rs *rootState, path string, err error) (Event[T], bool) {
	if rs.degraded {
		return Event[T]{}, false
	}
	rs.degraded = true
	if rs.quiet {
		return Event[T]{}, false
	}
	var msg string
	switch {
	case errors.Is(err, errNoWatcher):
		msg = fmt.Sprintf("cannot start inotify: %v (limit: fs.inotify.max_user_instances); changes are found by rescans every %v",
			w.startErr, w.opts.FallbackRescan)
	case errors.Is(err, syscall.ENOSPC):
		limit := "?"
		if b, rerr := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); rerr == nil {
			limit = strings.TrimSpace(string(b))
		}
		msg = fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches = %s; fgtop needs one per kernel plus one per root): "+
			"raise it, e.g. sysctl -w fs.inotify.max_user_watches=524288; until then this root is rescanned every %v",
			limit, w.opts.FallbackRescan)
	default:
		msg = fmt.Sprintf("cannot watch %s: %v; this root is rescanned every %v instead", path, err, w.opts.FallbackRescan)
	}
	ev := w.problem(rs, model.SevWarning, msg)
	ev.Path = path
	return ev, true
}

// forget drops every watch and everything known about a root's kernels.
func (w *Watcher[T]) forget(rs *rootState) {
	for kid, ks := range rs.kernels {
		if ks.cfgWatch {
			w.removeWatch(configDir(rs.path, kid))
		}
		if ks.dirWatch {
			w.removeWatch(kernelDir(rs.path, kid))
		}
	}
	clear(rs.kernels)
	w.removeWatch(rs.path)
	for k := range w.dirty {
		if k.rs == rs {
			delete(w.dirty, k)
		}
	}
}

// resync runs a full reconciling scan of the roots, all kernels in one
// worker pool, and returns one batch per root. With useSkip, files whose
// content has not changed since the last read are not parsed or reported.
// With watchKernels, each kernel's watch is set (before its read); without,
// only the root's.
func (w *Watcher[T]) resync(ctx context.Context, roots []*rootState, useSkip, watchKernels bool) [][]Event[T] {
	targets := make([]*scanTarget[T], len(roots))
	werrs := make([]error, len(roots))
	states := make(map[*scanTarget[T]]*rootState, len(roots))
	for i, rs := range roots {
		// Watch the root before listing it, so a kernel created after the
		// listing is not missed.
		werrs[i] = w.addWatch(rs.path)
		targets[i] = &scanTarget[T]{root: rs.root, path: rs.path}
		states[targets[i]] = rs
	}
	// prep runs on this goroutine while it lists: the kernel states are
	// made here, so workers only ever touch their own kernel's state.
	prep := func(c *chunk[T]) {
		rs := states[c.t]
		c.ks = make([]*kstate, len(c.kids))
		for i, kid := range c.kids {
			k := rs.kernels[kid]
			if k == nil {
				k = &kstate{}
				rs.kernels[kid] = k
			}
			c.ks[i] = k
		}
	}
	finished := w.s.stream(ctx, targets, prep, func(c *chunk[T], i int) {
		if watchKernels {
			c.res[i] = w.syncKernel(ctx, c.t, c.kids[i], c.ks[i], useSkip, false)
		} else {
			c.res[i] = w.readOnly(c.t, c.kids[i], c.ks[i])
		}
	})
	batches := make([][]Event[T], len(roots))
	for i, rs := range roots {
		t := targets[i]
		if t.listEv != nil {
			batches[i] = w.rootUnavailable(rs, t)
			t.close()
			continue
		}
		if rs.status == rootMissing {
			batches[i] = append(batches[i], Event[T]{Kind: RootRestored, Root: rs.root.Path, Agent: rs.root.Agent, Path: rs.path})
		}
		rs.status = rootOK
		// A rescan sets every watch again; the root stays degraded only if
		// one fails this time (and is reported again only if it was not).
		rs.quiet, rs.degraded = rs.degraded, false
		if watchErrorMatters(werrs[i]) {
			if ev, ok := w.watchFailed(rs, rs.path, werrs[i]); ok {
				batches[i] = append(batches[i], ev)
			}
		}
		present := make(map[string]bool, len(t.entries))
		for _, e := range t.entries {
			present[e.kid] = true
			if err := e.res.watchErr; err != nil {
				if ev, ok := w.watchFailed(rs, e.res.watchPath, err); ok {
					batches[i] = append(batches[i], ev)
				}
			}
			if e.res.status == kGone {
				delete(rs.kernels, e.kid)
			}
			refusedNow := e.res.status == kGone && e.res.has && e.res.ev.Kind == Problem
			if rs.refusedGone(e.kid, refusedNow) && e.res.status == kGone {
				batches[i] = append(batches[i], Event[T]{Kind: KernelRemoved, Root: rs.root.Path, Agent: rs.root.Agent,
					Kernel: model.KernelID(e.kid), Path: resourcePath(rs.path, e.kid)})
			}
		}
		// Symlinked kernel directories gone since the last scan: their
		// Problems go too.
		for kid := range rs.refused {
			if !present[kid] {
				delete(rs.refused, kid)
				batches[i] = append(batches[i], Event[T]{Kind: KernelRemoved, Root: rs.root.Path, Agent: rs.root.Agent,
					Kernel: model.KernelID(kid), Path: resourcePath(rs.path, kid)})
			}
		}
		// Kernels gone since the last scan: their watches go too.
		for kid, k := range rs.kernels {
			if !present[kid] {
				w.dropKernel(rs, kid, k)
			}
		}
		batches[i] = t.appendEvents(batches[i], finished)
		t.close()
		if rs.quiet && !rs.degraded {
			// The warning that sent this root to periodic rescans is out of
			// date: say so under the same code and file, which replaces it.
			batches[i] = append(batches[i], w.problem(rs, model.SevInfo,
				"every inotify watch is set again: changes are followed live, no more periodic rescans"))
		}
		rs.quiet = false
	}
	return batches
}

// dropKernel forgets a kernel and removes its watches.
func (w *Watcher[T]) dropKernel(rs *rootState, kid string, k *kstate) {
	if k.cfgWatch {
		w.removeWatch(configDir(rs.path, kid))
	}
	if k.dirWatch {
		w.removeWatch(kernelDir(rs.path, kid))
	}
	delete(rs.kernels, kid)
}

// rootUnavailable handles a root that cannot be listed: everything known
// about it is dropped (its watches too), and the event is sent on a change
// of status only, so polling does not repeat it.
func (w *Watcher[T]) rootUnavailable(rs *rootState, t *scanTarget[T]) []Event[T] {
	var out []Event[T]
	st := rootDenied
	if t.missing {
		st = rootMissing
		// A root that does not exist holds no kernels, which is what a
		// re-scan says; an unlistable one keeps its kernels' figures.
		out = w.removedKernels(rs)
	}
	w.forget(rs)
	if rs.status == st {
		return out
	}
	rs.status = st
	return append(out, *t.listEv)
}

// removedKernels reports every kernel known under a root as removed (the
// root itself is gone), in kernel order.
func (w *Watcher[T]) removedKernels(rs *rootState) []Event[T] {
	kids := make([]string, 0, len(rs.kernels))
	for kid := range rs.kernels {
		kids = append(kids, kid)
	}
	slices.Sort(kids)
	out := make([]Event[T], 0, len(kids)+1)
	for _, kid := range kids {
		out = append(out, Event[T]{Kind: KernelRemoved, Root: rs.root.Path, Agent: rs.root.Agent,
			Kernel: model.KernelID(kid), Path: resourcePath(rs.path, kid)})
	}
	return out
}

// syncKernel brings one kernel's watches in line with its directories and
// reads its file. It runs in pool workers; it touches only its own kstate.
//
// useSkip: the content is compared with the last read and only a change is
// reported (rescans). stat: the event gets the file's ModTime (rereads after
// a change; full scans skip the fstat for speed).
func (w *Watcher[T]) syncKernel(ctx context.Context, t *scanTarget[T], kid string, ks *kstate, useSkip, stat bool) kernelResult[T] {
	cfg, kdir := configDir(t.path, kid), kernelDir(t.path, kid)
	for attempt := 0; ; attempt++ {
		// Watch before reading, so that no write after the read goes unseen.
		// inotify follows symlinks: a watch that lands on a symlinked config/
		// is removed again below once the read has refused the link.
		cfgErr := w.addWatch(cfg)
		if cfgErr == nil {
			ks.cfgWatch = true
		}
		o := readOpts{hash: true, stat: stat}
		if useSkip && ks.hashed {
			o.prev = &ks.hash
		}
		res := w.s.readKernel(t.root, t.path, t.dir, kid, o)
		switch res.status {
		case kConfig:
			if watchErrorMatters(cfgErr) {
				res.watchErr, res.watchPath = cfgErr, cfg
			}
			if ks.dirWatch {
				w.removeWatch(kdir)
				ks.dirWatch = false
			}
		case kNoConfig:
			if cfgErr == nil {
				w.removeWatch(cfg)
				ks.cfgWatch = false
			}
			if err := w.addWatch(kdir); err == nil {
				ks.dirWatch = true
			} else if watchErrorMatters(err) {
				res.watchErr, res.watchPath = err, kdir
			}
			// config/ may have been made between the read and the watch on
			// the kernel directory: then its creation event was not seen.
			if attempt == 0 && isRealDir(cfg) && ctx.Err() == nil {
				continue
			}
		case kGone:
			if cfgErr == nil || ks.cfgWatch {
				w.removeWatch(cfg)
			}
			if ks.dirWatch {
				w.removeWatch(kdir)
			}
			ks.cfgWatch, ks.dirWatch = false, false
		}
		ks.hashed, ks.hash = res.hashed, res.hash
		return res
	}
}

// readOnly reads a kernel without touching watches (phase 1 of Run),
// keeping the content's hash for phase 2's comparison.
func (w *Watcher[T]) readOnly(t *scanTarget[T], kid string, ks *kstate) kernelResult[T] {
	res := w.s.readKernel(t.root, t.path, t.dir, kid, readOpts{hash: true})
	ks.hashed, ks.hash = res.hashed, res.hash
	return res
}

func isRealDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// locate finds the root an event path belongs to (the longest matching
// root, should roots nest) and the path relative to it.
func (w *Watcher[T]) locate(name string) (*rootState, string) {
	var best *rootState
	var rel string
	for _, rs := range w.roots {
		switch {
		case name == rs.path:
			if best == nil || len(rs.path) > len(best.path) {
				best, rel = rs, ""
			}
		case strings.HasPrefix(name, rs.prefix):
			if best == nil || len(rs.path) > len(best.path) {
				best, rel = rs, name[len(rs.prefix):]
			}
		}
	}
	return best, rel
}

// handleFS handles one fsnotify event. Kernel events only mark the kernel
// dirty: the debounced flush works out what happened from the file system,
// which also covers events that arrive out of order or are coalesced.
func (w *Watcher[T]) handleFS(ctx context.Context, ev fsnotify.Event) [][]Event[T] {
	rs, rel := w.locate(ev.Name)
	if rs == nil || rs.status != rootOK {
		return nil
	}
	if rel == "" {
		switch {
		case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
			return [][]Event[T]{w.rootGone(rs)}
		case ev.Has(fsnotify.Chmod):
			// The root may have become unlistable (or listable again).
			return w.resync(ctx, []*rootState{rs}, true, true)
		}
		return nil
	}
	kid, rest, _ := strings.Cut(rel, "/")
	if !isKernelID(kid) {
		return nil
	}
	switch {
	case rest == "", rest == "config", rest == "config/resource.txt":
		w.markDirty(rs, kid, time.Now())
	case w.s.comp.Fold != nil && strings.HasPrefix(rest, "config/") && rest[len("config/"):] == w.s.comp.Name:
		w.markDirty(rs, kid, time.Now())
	}
	return nil
}

// rootGone handles the root's own removal or rename: RootMissing, then
// polling for its return. Its return is noticed by polling rather than
// right away because a root recreated at once would race with inotify's
// teardown of the old root's watch.
//
// Its kernels are reported removed first: while the root is gone they hold
// nothing (a re-scan finds none), and they come back with the root's
// rescan.
func (w *Watcher[T]) rootGone(rs *rootState) []Event[T] {
	out := w.removedKernels(rs)
	w.forget(rs)
	rs.status = rootMissing
	rs.degraded = false
	return append(out, Event[T]{Kind: RootMissing, Root: rs.root.Path, Agent: rs.root.Agent, Path: rs.path,
		Issue: &model.Issue{Severity: model.SevError, Code: model.IssueRootMissing, File: rs.path, Agent: rs.root.Agent,
			Message: "scratch root was removed or renamed; watching for it to return"}})
}

// handleWatchError handles an error from fsnotify. An overflow means events
// were lost: every root is rescanned.
func (w *Watcher[T]) handleWatchError(ctx context.Context, err error) [][]Event[T] {
	ok := w.rootsWhere(func(rs *rootState) bool { return rs.status == rootOK })
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		batches := w.resync(ctx, ok, true, true)
		for i, rs := range ok {
			p := w.problem(rs, model.SevWarning,
				"inotify event queue overflowed (fs.inotify.max_queued_events): changes may have been missed; the root was rescanned")
			batches[i] = append([]Event[T]{p}, batches[i]...)
		}
		return batches
	}
	var batches [][]Event[T]
	for _, rs := range ok {
		batches = append(batches, []Event[T]{w.problem(rs, model.SevWarning, fmt.Sprintf("inotify: %v", err))})
	}
	return batches
}

// markDirty schedules a kernel for a re-read: Debounce after its latest
// change, but no later than maxDebounceFactor×Debounce after the first.
func (w *Watcher[T]) markDirty(rs *rootState, kid string, now time.Time) {
	k := dirtyKey{rs, kid}
	d, ok := w.dirty[k]
	if !ok {
		d.first = now
	}
	d.last = now
	w.dirty[k] = d
	if due := w.due(d); !w.armed || due.Before(w.dueAt) {
		w.setDebounce(due, now)
	}
}

func (w *Watcher[T]) due(d dirtyTimes) time.Time {
	due := d.last.Add(w.opts.Debounce)
	if limit := d.first.Add(maxDebounceFactor * w.opts.Debounce); limit.Before(due) {
		due = limit
	}
	return due
}

func (w *Watcher[T]) setDebounce(due, now time.Time) {
	w.debounce.Reset(max(due.Sub(now), 0))
	w.dueAt, w.armed = due, true
}

// flush re-reads every kernel whose debounce expired, one batch per root.
func (w *Watcher[T]) flush(ctx context.Context, now time.Time) [][]Event[T] {
	byRoot := map[*rootState][]string{}
	for k, d := range w.dirty {
		if !w.due(d).After(now) {
			delete(w.dirty, k)
			if k.rs.status == rootOK {
				byRoot[k.rs] = append(byRoot[k.rs], k.kid)
			}
		}
	}
	// Re-arm for the kernels still settling.
	var next time.Time
	for _, d := range w.dirty {
		if due := w.due(d); next.IsZero() || due.Before(next) {
			next = due
		}
	}
	if !next.IsZero() {
		w.setDebounce(next, now)
	}
	var batches [][]Event[T]
	for _, rs := range w.roots {
		kids := byRoot[rs]
		if len(kids) == 0 {
			continue
		}
		batches = append(batches, w.rereadKernels(ctx, rs, kids)...)
	}
	return batches
}

// rereadKernels syncs some kernels of a root after changes.
func (w *Watcher[T]) rereadKernels(ctx context.Context, rs *rootState, kids []string) [][]Event[T] {
	slices.Sort(kids)
	rd, err := openRoot(rs.path)
	if err != nil {
		// The root itself is in trouble; a full scan works out how.
		return w.resync(ctx, []*rootState{rs}, true, true)
	}
	t := &scanTarget[T]{root: rs.root, path: rs.path, dir: rd}
	defer t.close()
	ks := make([]*kstate, len(kids))
	known := make([]bool, len(kids))
	for j, kid := range kids {
		k := rs.kernels[kid]
		known[j] = k != nil
		if k == nil {
			k = &kstate{}
		}
		ks[j] = k
	}
	results := make([]kernelResult[T], len(kids))
	runPool(ctx, len(kids), w.s.nworkers(), func(j int) {
		results[j] = w.syncKernel(ctx, t, kids[j], ks[j], false, true)
	})
	var batch []Event[T]
	for j, kid := range kids {
		res := &results[j]
		if res.watchErr != nil {
			if ev, ok := w.watchFailed(rs, res.watchPath, res.watchErr); ok {
				batch = append(batch, ev)
			}
		}
		refusedNow := res.status == kGone && res.has && res.ev.Kind == Problem
		if res.status == kGone {
			delete(rs.kernels, kid)
			if rs.refusedGone(kid, refusedNow) || known[j] {
				batch = append(batch, Event[T]{Kind: KernelRemoved, Root: rs.root.Path, Agent: rs.root.Agent,
					Kernel: model.KernelID(kid), Path: resourcePath(rs.path, kid)})
			}
		} else {
			rs.refusedGone(kid, false)
			rs.kernels[kid] = ks[j]
		}
		if res.has {
			batch = append(batch, res.ev)
		}
	}
	return [][]Event[T]{batch}
}

// pollRoots checks missing and unlistable roots; one that is back gets a
// full scan.
func (w *Watcher[T]) pollRoots(ctx context.Context) [][]Event[T] {
	var back []*rootState
	for _, rs := range w.roots {
		switch rs.status {
		case rootMissing:
			if fi, err := os.Stat(rs.path); err == nil && fi.IsDir() {
				back = append(back, rs)
			}
		case rootDenied:
			back = append(back, rs)
		}
	}
	if len(back) == 0 {
		return nil
	}
	return w.resync(ctx, back, false, true)
}
